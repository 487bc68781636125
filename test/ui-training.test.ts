// The dashboard's Jobs, training jobs and Pods in real Chromium against a real server: a PyTorchJob
// applied with kubectl shows its Master and Worker replicas with their states, a replica's log
// streams while it runs, the job turns Succeeded without a reload; an Indexed Job lists its Pods by
// index; a Pod's page charts CPU and memory from Skiff's usage history; a Pod that cannot be scheduled
// says why it is Pending.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { openUi, type Ui } from './browser.js';
import { TestServer } from './harness.js';

const loop = (label: string, n: number): string[] => ['python3', '-u', '-c', `import time\nfor i in range(${n}):\n  print('${label} step', i, flush=True)\n  time.sleep(0.5)\nprint('${label} done')`];

const pytorchJob = {
  apiVersion: 'kubeflow.org/v1',
  kind: 'PyTorchJob',
  metadata: { name: 'ddp', namespace: 'default' },
  spec: {
    pytorchReplicaSpecs: {
      Master: { replicas: 1, restartPolicy: 'OnFailure', template: { spec: { containers: [{ name: 'pytorch', image: 'pytorch/pytorch', command: loop('master', 16) }] } } },
      Worker: { replicas: 1, restartPolicy: 'OnFailure', template: { spec: { containers: [{ name: 'pytorch', image: 'pytorch/pytorch', command: loop('worker', 12) }] } } },
    },
  },
};

describe('the dashboard: jobs, training jobs and Pods', () => {
  let s: TestServer;
  let ui: Ui;
  let dark: Ui;
  before(async () => {
    // samples every second, so a short Pod has a few
    s = await TestServer.start({ config: { metricsResolution: '1s' } });
    ui = await openUi(s);
    dark = await openUi(s, { dark: true });
  });
  after(async () => {
    await ui?.close();
    await dark?.close();
    await s?.cleanup();
  });

  it('a PyTorchJob: Master and Worker replicas with their states, a replica log streamed live, Succeeded without reload', async () => {
    const applied = await s.kubectl(['apply', '-f', '-'], YAML.stringify(pytorchJob));
    assert.equal(applied.code, 0, applied.stderr);
    await ui.open('/ui/default/pytorchjobs/ddp');
    const master = ui.page.getByRole('region', { name: 'Master replicas' });
    const worker = ui.page.getByRole('region', { name: 'Worker replicas' });
    await master.getByRole('link', { name: 'ddp-master-0' }).waitFor();
    await worker.getByRole('link', { name: 'ddp-worker-0' }).waitFor();
    await master.locator('h3 .badge', { hasText: 'Running' }).waitFor();
    await worker.locator('td .badge', { hasText: 'Running' }).waitFor();
    await ui.shot('training-pytorchjob-running');
    await dark.open('/ui/default/pytorchjobs/ddp');
    await dark.page.getByRole('region', { name: 'Worker replicas' }).locator('td .badge', { hasText: 'Running' }).waitFor();
    await dark.shot('training-pytorchjob-running-dark');

    // the replica's log, from the row's Logs button: lines arrive while the job still runs
    await master.getByRole('button', { name: 'logs of ddp-master-0' }).click();
    await ui.urlBecomes((u) => u.searchParams.get('tab') === 'logs', '?tab=logs');
    const log = ui.page.getByLabel('log of ddp-master-0');
    await log.getByText('master step 2', { exact: false }).waitFor();
    const job = await s.req('GET', '/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/ddp');
    const conds = (job.body.status?.conditions ?? []) as { type: string; status: string }[];
    assert.ok(!conds.some((c) => c.type === 'Succeeded' && c.status === 'True'), 'the log showed lines before the job ended');
    await ui.shot('training-pytorchjob-logs');
    // the Worker's log through the picker
    await ui.page.getByRole('group', { name: 'Pod' }).getByRole('button', { name: /Worker 0/ }).click();
    await ui.page.getByLabel('log of ddp-worker-0').getByText('worker step 1', { exact: false }).waitFor();
    await ui.page.getByLabel('log of ddp-worker-0').getByText('worker done').waitFor({ timeout: 60_000 });

    // the page turns Succeeded by itself
    await ui.page.locator('.objhead .badge', { hasText: 'Succeeded' }).waitFor({ timeout: 90_000 });
    await ui.page.getByRole('tab', { name: 'Replicas' }).click();
    await master.locator('h3 .badge', { hasText: 'Succeeded' }).waitFor();
    assert.match(await master.locator('tbody tr').first().innerText(), /Succeeded[\s\S]*\b0\b/);
    // each replica's Pod is named whole, not cut to fit its column
    for (const group of [master, worker]) {
      const cell = group.locator('tbody tr').first().locator('td').nth(1);
      assert.ok(await cell.evaluate((e) => e.scrollWidth <= e.clientWidth), `the Pod cell ${await cell.innerText()} is cut`);
    }
    await ui.shot('training-pytorchjob-succeeded');
    // on a smaller laptop screen too, without scrolling sideways
    const small = await openUi(s, { width: 1024, height: 700 });
    try {
      await small.open('/ui/default/pytorchjobs/ddp');
      await small.page.getByRole('region', { name: 'Worker replicas' }).getByRole('link', { name: 'ddp-worker-0' }).waitFor();
      assert.ok(await small.page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), 'the page scrolls sideways at 1024×700');
      await small.shot('training-pytorchjob-1024x700');
    } finally {
      await small.close();
    }

    // CPU and memory of each replica Pod, kept after they ended, from one stream for the page
    await ui.page.getByRole('tab', { name: 'CPU and memory' }).click();
    await ui.page.getByRole('figure', { name: /^Memory/ }).nth(1).waitFor({ timeout: 30_000 });
    assert.equal(await ui.page.getByRole('figure', { name: /^Memory/ }).count(), 2);
    await ui.shot('training-pytorchjob-usage');
    await dark.open('/ui/default/pytorchjobs/ddp?tab=usage');
    await dark.page.getByRole('figure', { name: /^Memory/ }).nth(1).waitFor({ timeout: 30_000 });
    await dark.shot('training-pytorchjob-usage-dark');
    const both = await s.req('GET', '/skiff/v1/namespaces/default/usage?pod=ddp-master-0&pod=ddp-worker-0&pod=nope');
    assert.equal(both.status, 200);
    assert.deepEqual(Object.keys(both.body.pods).sort(), ['ddp-master-0', 'ddp-worker-0']);
    assert.ok(both.body.pods['ddp-master-0'].length >= 1);

    // the list: replica counts and state
    await ui.open('/ui/default/pytorchjobs');
    const row = ui.page.getByRole('row').filter({ hasText: 'ddp' });
    await row.getByText('1 Master · 1 Worker').waitFor();
    await row.locator('.badge', { hasText: 'Succeeded' }).waitFor();
    await ui.shot('training-pytorchjobs');
    await dark.open('/ui/default/pytorchjobs/ddp?tab=policy');
    await dark.page.getByText('never (Pods stay after the job ends)').waitFor();
    await dark.shot('training-pytorchjob-policy-dark');
  });

  it('an Indexed Job: its Pods by index with exit codes, and its progress in the list', async () => {
    await s.create('/apis/batch/v1/namespaces/default/jobs', {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'idx' },
      spec: {
        completions: 2, parallelism: 2, completionMode: 'Indexed', backoffLimit: 0,
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command: ['python3', '-c', 'import os; print("index", os.environ["JOB_COMPLETION_INDEX"])'] }] } },
      },
    });
    await ui.open('/ui/default/jobs/idx');
    await ui.page.locator('.objhead .badge', { hasText: 'Complete' }).waitFor({ timeout: 60_000 });
    const rows = ui.page.locator('table.podtable tbody tr');
    await rows.nth(1).waitFor();
    assert.match(await rows.nth(0).innerText(), /^0\s+idx-0-/);
    assert.match(await rows.nth(1).innerText(), /^1\s+idx-1-/);
    assert.match(await rows.nth(1).innerText(), /Succeeded/);
    await ui.page.getByText('2/2 (Indexed)').waitFor();
    await ui.shot('jobs-indexed');
    await ui.page.getByRole('tab', { name: 'Logs' }).click();
    await ui.page.getByRole('group', { name: 'Pod' }).getByRole('button', { name: /#1/ }).click();
    await ui.page.getByText('index 1').waitFor();
    await ui.open('/ui/default/jobs');
    const row = ui.page.getByRole('row').filter({ hasText: 'idx' });
    await row.getByText('2/2').waitFor();
    await ui.shot('jobs-list');
    await dark.open('/ui/default/jobs/idx');
    await dark.page.locator('table.podtable tbody tr').nth(1).waitFor();
    await dark.shot('jobs-indexed-dark');
  });

  it('a Pod page charts CPU and memory from the usage history, appended live', async () => {
    await s.create('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'busy' },
      spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command: ['python3', '-c', 'import time\nx = []\nfor i in range(30):\n  x.append(bytearray(4_000_000)); sum(range(300_000)); time.sleep(0.3)'] }] },
    });
    await ui.open('/ui/default/pods/busy');
    const chart = ui.page.getByRole('figure', { name: /^Memory/ });
    await chart.waitFor({ timeout: 60_000 });
    const points = async (): Promise<number> => Number(await chart.getAttribute('data-points'));
    assert.ok((await points()) >= 1);
    const first = await points();
    // no reload: the stream appends the next samples
    await s.until('a second sample on the page', async () => (await points()) > first);
    assert.match(await ui.page.getByRole('figure', { name: /^CPU/ }).innerText(), /CPU \(cores\) · now/);
    await ui.shot('pod-usage');
    await dark.open('/ui/default/pods/busy');
    await dark.page.getByRole('figure', { name: /^Memory/ }).waitFor({ timeout: 60_000 });
    await dark.shot('pod-usage-dark');

    // the history the page reads, from the API
    const h = await s.req('GET', '/skiff/v1/namespaces/default/pods/busy/usage');
    assert.equal(h.status, 200);
    assert.ok(h.body.samples.length >= 1);
    assert.equal(h.body.samples[0].containers[0].name, 'main');
    assert.ok(h.body.samples[0].containers[0].memoryBytes > 0);
    const missing = await s.req('GET', '/skiff/v1/namespaces/default/pods/nope/usage');
    assert.equal(missing.status, 404);
  });

  it('a Pod that cannot be scheduled says why it is Pending, in the list and on its page', async () => {
    await s.create('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'greedy' },
      spec: { containers: [{ name: 'main', image: 'python', command: ['python3', '-c', 'print(1)'], resources: { requests: { cpu: '1000' } } }] },
    });
    await ui.open('/ui/default/pods');
    const row = ui.page.getByRole('row').filter({ hasText: 'greedy' });
    await row.getByText(/Insufficient cpu/).waitFor();
    // too long for its column: cut with an ellipsis, whole on hover
    const reason = row.locator('.pendingwhy');
    assert.match((await reason.getAttribute('title')) ?? '', /^Unschedulable: 0\/1 nodes are available: Insufficient cpu/);
    assert.equal(await reason.evaluate((e) => getComputedStyle(e).textOverflow), 'ellipsis');
    await ui.shot('pods-list');
    await ui.open('/ui/default/pods/greedy');
    const why = ui.page.getByRole('status').filter({ hasText: 'Why it is pending' });
    await why.waitFor();
    assert.match(await why.innerText(), /Unschedulable: .*Insufficient cpu/);
    await ui.shot('pod-pending');
    await dark.open('/ui/default/pods/greedy');
    await dark.page.getByRole('status').filter({ hasText: 'Why it is pending' }).waitFor();
    await dark.shot('pod-pending-dark');
    assert.deepEqual(ui.errors, []);
    assert.deepEqual(dark.errors, []);
  });
});
