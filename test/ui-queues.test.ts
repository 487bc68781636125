// The dashboard's Queues pages and GPU cards in real Chromium against a real server: a ClusterQueue
// with a small cpu quota, a LocalQueue and three Jobs, two admitted and one waiting; the queue's page
// shows its usage as bars, the waiting Workload first in line with the reason it waits, and the
// admitted ones linked to their Jobs. On a node with two declared GPUs, a shared Pod shows on its
// card and in the node's allocation (HAMi's memory and cores against the cards'). Each page is
// screenshotted light and dark at 1280×800.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { openUi, type Ui } from './browser.js';
import { TestServer } from './harness.js';

const ns = 'default';
const jobs = `/apis/batch/v1/namespaces/${ns}/jobs`;
const setup = [
  { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ResourceFlavor', metadata: { name: 'default-flavor' } },
  {
    apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ClusterQueue', metadata: { name: 'team' },
    spec: {
      cohortName: 'research',
      namespaceSelector: {},
      resourceGroups: [{ coveredResources: ['cpu', 'memory'], flavors: [{ name: 'default-flavor', resources: [{ name: 'cpu', nominalQuota: '250m' }, { name: 'memory', nominalQuota: '1Gi' }] }] }],
    },
  },
  { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'LocalQueue', metadata: { namespace: ns, name: 'user-queue' }, spec: { clusterQueue: 'team' } },
];

const job = (name: string, cpu: string) => ({
  apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: ns, labels: { 'kueue.x-k8s.io/queue-name': 'user-queue' } },
  spec: { template: { spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'sh', command: ['sleep', '600'], resources: { requests: { cpu, memory: '64Mi' } } }] } } },
});

const sharedPod = {
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'gpu-share' },
  spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'sh', command: ['sleep', '600'], resources: { limits: { 'nvidia.com/gpu': '1', 'nvidia.com/gpumem': '10000', 'nvidia.com/gpucores': '30' } } }] },
};

describe('the dashboard: queues and GPU cards', () => {
  let s: TestServer;
  let ui: Ui;
  let node: string;
  before(async () => {
    s = await TestServer.start({ config: { node: { gpus: 2, gpuMemory: '80Gi' } } });
    const r = await s.kubectl(['apply', '-f', '-'], setup.map((o) => YAML.stringify(o)).join('---\n'));
    assert.equal(r.code, 0, r.stderr);
    for (const n of ['first', 'second']) await s.create(jobs, job(n, '100m'));
    await s.until('two admitted', async () => (await s.get('/apis/kueue.x-k8s.io/v1beta2/clusterqueues/team')).status?.admittedWorkloads === 2);
    await s.create(jobs, job('third', '100m'));
    await s.until('one pending', async () => (await s.get('/apis/kueue.x-k8s.io/v1beta2/clusterqueues/team')).status?.pendingWorkloads === 1);
    // the queue counts a Workload as pending as soon as it is queued; the reason it waits comes when
    // admission has tried it, and the pages below show that reason
    await s.until('third tried', async () => {
      const w = (await s.get(`/apis/kueue.x-k8s.io/v1beta2/namespaces/${ns}/workloads`)).items
        .find((x: { metadata: { name: string } }) => x.metadata.name.startsWith('job-third-'));
      return (w?.status?.conditions ?? []).some((c: { type: string; status: string; message?: string }) => c.type === 'QuotaReserved' && c.status === 'False' && /insufficient unused quota/.test(c.message ?? ''));
    });
    await s.create(`/api/v1/namespaces/${ns}/pods`, sharedPod);
    await s.until('gpu-share running', async () => (await s.get(`/api/v1/namespaces/${ns}/pods/gpu-share`)).status?.phase === 'Running');
    node = (await s.get('/api/v1/nodes')).items[0].metadata.name;
    await s.until('node metrics', async () => (await s.req('GET', `/apis/metrics.k8s.io/v1beta1/nodes/${node}`)).status === 200);
    ui = await openUi(s);
  });
  after(async () => {
    await ui?.close();
    await s?.cleanup();
  });

  it('lists the ClusterQueue with its cohort, usage bars and counts', async () => {
    await ui.open('/ui/cluster/clusterqueues');
    const card = ui.page.locator('[data-clusterqueue="team"]');
    await card.waitFor();
    const cpu = card.locator('[data-resource="cpu"] [role=meter]');
    assert.equal(await cpu.getAttribute('aria-valuenow'), '0.2');
    assert.equal(await cpu.getAttribute('aria-valuemax'), '0.25');
    assert.match(await card.locator('[data-resource="cpu"] .quota-text').innerText(), /^200m \/ 250m/);
    assert.equal(await card.locator('[data-count="admitted"]').innerText(), '2');
    assert.equal(await card.locator('[data-count="pending"]').innerText(), '1');
    assert.match(await card.innerText(), /research/);
    assert.match(await card.innerText(), /Active/);
  });

  it('shows the pending Workload with its position and reason, and the admitted ones with their Jobs', async () => {
    await ui.page.getByRole('link', { name: 'team', exact: true }).click();
    await ui.page.waitForURL((u) => u.pathname === '/ui/cluster/clusterqueues/team');
    const pending = ui.page.getByRole('table', { name: 'pending workloads' });
    const row = pending.locator('tbody tr');
    await row.first().waitFor();
    assert.equal(await row.count(), 1);
    assert.match(await row.getAttribute('data-workload') ?? '', /^job-third-/);
    assert.equal(await row.locator('[data-position]').getAttribute('data-position'), '0');
    const text = await row.innerText();
    assert.match(text, /^1 \(1 in its local queue\)/);
    assert.match(text, /default\/user-queue/);
    assert.match(text, /insufficient unused quota for cpu in flavor default-flavor, 50m more needed/);
    const admitted = ui.page.getByRole('table', { name: 'admitted workloads' });
    await admitted.getByRole('link', { name: 'job/first' }).waitFor();
    await admitted.getByRole('link', { name: 'job/second' }).waitFor();
    assert.match(await ui.page.getByRole('table', { name: 'local queues' }).innerText(), /user-queue\s+default\s+2\s+1\s+Active/);
    await pending.getByRole('link', { name: 'job/third' }).click();
    await ui.page.waitForURL((u) => u.pathname === '/ui/default/jobs/third');
  });

  it('lists Workloads with their queue, state and Job', async () => {
    await ui.open('/ui/default/workloads');
    const body = ui.page.getByRole('rowgroup', { name: 'workloads' });
    const third = body.getByRole('row').filter({ has: ui.page.getByRole('link', { name: 'job/third' }) });
    await third.waitFor();
    assert.match(await third.innerText(), /Pending[\s\S]*user-queue[\s\S]*insufficient unused quota/);
    const first = body.getByRole('row').filter({ has: ui.page.getByRole('link', { name: 'job/first' }) });
    assert.match(await first.innerText(), /Admitted[\s\S]*team/);
  });

  it('shows the GPU cards with the shared Pod’s memory and cores', async () => {
    await ui.open(`/ui/cluster/nodes/${node}`);
    const cards = ui.page.locator('.gpucard');
    await cards.first().waitFor();
    assert.equal(await cards.count(), 2);
    const holder = ui.page.locator('.gpucard', { has: ui.page.locator('tr[data-pod="gpu-share"]') });
    await holder.waitFor();
    assert.match(await holder.locator('tr[data-pod="gpu-share"]').innerText(), /default\/gpu-share\s+main\s+10000 MiB\s+30%/);
    assert.equal(await holder.locator('[data-resource="cores"] [role=meter]').getAttribute('aria-valuenow'), '30');
    // the allocation card reckons HAMi's memory and cores on the cards: two of 80Gi, 100 cores each
    const gpumem = ui.page.locator('.alloc-row[data-resource="nvidia.com/gpumem"] [role=meter]');
    await gpumem.waitFor();
    assert.deepEqual([await gpumem.getAttribute('aria-valuenow'), await gpumem.getAttribute('aria-valuemax')], ['10000', '163840']);
    const gpucores = ui.page.locator('.alloc-row[data-resource="nvidia.com/gpucores"] [role=meter]');
    assert.deepEqual([await gpucores.getAttribute('aria-valuenow'), await gpucores.getAttribute('aria-valuemax')], ['30', '200']);
    assert.match(await ui.page.locator('.alloc-row[data-resource="nvidia.com/gpumem"]').innerText(), /10000 MiB \/ 163840 MiB/);
    assert.doesNotMatch(await ui.page.locator('.alloc').first().innerText(), /none offered/);
    // the overview shows the same cards under the node, and the same allocation
    await ui.open('/ui/cluster/cluster-overview');
    await ui.page.locator('.gpucard tr[data-pod="gpu-share"]').waitFor();
    await ui.page.locator('.alloc-row[data-resource="nvidia.com/gpucores"] [role=meter][aria-valuenow="30"]').waitFor();
  });

  it('screenshots the queue and GPU pages, light and dark, at 1280×800', async () => {
    const shots: [string, string][] = [
      ['clusterqueues', '/ui/cluster/clusterqueues'],
      ['clusterqueue', '/ui/cluster/clusterqueues/team'],
      ['localqueues', '/ui/default/localqueues'],
      ['workloads', '/ui/default/workloads'],
      ['node-gpus', `/ui/cluster/nodes/${node}`],
    ];
    for (const dark of [false, true]) {
      const v = await openUi(s, { width: 1280, height: 800, dark });
      try {
        for (const [name, path] of shots) {
          await v.open(path);
          await v.page.locator('main h1').first().waitFor();
          await v.page.locator('.empty', { hasText: 'Loading' }).waitFor({ state: 'detached' });
          if (name === 'node-gpus') await v.page.locator('.gpucard').first().waitFor();
          if (name === 'clusterqueue') await v.page.locator('td[data-position]').first().waitFor();
          await v.shot(`queues-${name}-1280x800-${dark ? 'dark' : 'light'}`);
        }
        assert.deepEqual(v.errors, []);
      } finally {
        await v.close();
      }
    }
    assert.deepEqual(ui.errors, []);
  });
});
