// The dashboard's cluster pages in real Chromium against a real server: a node's allocation moving when
// a Pod that requests 1 CPU starts, an unschedulable Pod in the overview's Pending list with the
// scheduler's reason, and the Events page's filters. Each page is screenshotted light and dark, at
// 1280×800 and 1024×700.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openUi, type Ui } from './browser.js';
import { TestServer } from './harness.js';

const pods = '/api/v1/namespaces/default/pods';
const pod = (name: string, cpu: string) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'sh', command: ['sleep', '600'], resources: { requests: { cpu, memory: '64Mi' }, limits: { cpu, memory: '128Mi' } } }] },
});

describe('the dashboard: cluster pages', () => {
  let s: TestServer;
  let ui: Ui;
  let node: string;
  before(async () => {
    s = await TestServer.start();
    ui = await openUi(s);
    node = (await s.get('/api/v1/nodes')).items[0].metadata.name;
    // the metrics API answers 404 until its first sample: pages opened before say so, but the
    // browser logs the 404 too, and this test wants a clean console
    await s.until('node metrics', async () => (await s.req('GET', `/apis/metrics.k8s.io/v1beta1/nodes/${node}`)).status === 200);
  });
  after(async () => {
    await ui?.close();
    await s?.cleanup();
  });

  const cpuMeter = () => ui.page.locator('[data-resource="cpu"] [role=meter]');

  it('shows a node’s allocation, which grows when a Pod requesting 1 CPU starts', async () => {
    await ui.open(`/ui/cluster/nodes/${node}`);
    await cpuMeter().waitFor();
    const allocatable = Number(await cpuMeter().getAttribute('aria-valuemax'));
    assert.ok(allocatable >= 1, `the node offers ${allocatable} cpu`);
    const before = Number(await cpuMeter().getAttribute('aria-valuenow'));
    await s.create(pods, pod('one-cpu', '1'));
    await s.until('one-cpu running', async () => (await s.get(`${pods}/one-cpu`)).status?.phase === 'Running');
    // no reload: the Pod's watch event moves the bar
    await ui.page.waitForFunction((want) => document.querySelector('[data-resource="cpu"] [role=meter]')?.getAttribute('aria-valuenow') === String(want), before + 1);
    assert.match(await ui.page.locator('[data-resource="cpu"] .alloc-text').innerText(), new RegExp(`^${before + 1} / ${allocatable} `));
    const row = ui.page.getByRole('row').filter({ has: ui.page.getByRole('link', { name: 'one-cpu' }) });
    await row.waitFor();
    assert.match(await row.innerText(), /1 \/ 1/);
    assert.match(await row.innerText(), /64Mi \/ 128Mi/);
    await ui.page.getByRole('link', { name: 'one-cpu' }).click();
    await ui.page.waitForURL((u) => u.pathname === '/ui/default/pods/one-cpu');
  });

  it('lists an unschedulable Pod as Pending with the scheduler’s reason', async () => {
    await s.create(pods, pod('too-big', '64'));
    await ui.open('/ui/cluster/cluster-overview');
    const row = ui.page.locator('tr[data-pod="too-big"]');
    await row.waitFor();
    const text = await row.innerText();
    assert.match(text, /Unschedulable/);
    assert.match(text, /0\/1 nodes are available: Insufficient cpu/);
    // the warnings list cuts a long message to its column, with the whole of it on hover
    const msg = ui.page.getByRole('rowgroup', { name: 'events' }).getByRole('cell').filter({ hasText: '0/1 nodes are available' }).first();
    assert.match((await msg.getAttribute('title')) ?? '', /^0\/1 nodes are available: Insufficient cpu \(requested 64, free \d+ of \d+\)\.$/);
    assert.equal(await msg.locator('.cell-text').evaluate((e) => getComputedStyle(e).textOverflow), 'ellipsis');
    // the node's card counts what holds the node, not the Pod that does not fit
    assert.equal(Number(await cpuMeter().getAttribute('aria-valuenow')), 1);
    await ui.page.locator('[data-phase="Pending"] .n', { hasText: '1' }).waitFor();
    await ui.page.getByRole('link', { name: 'pod/too-big' }).first().waitFor();
    // a node page's breadcrumb `cluster` leads here too
    await ui.open('/ui/cluster');
    await ui.page.locator('tr[data-pod="too-big"]').waitFor();
  });

  it('filters Events by type, reason and object, in the URL, and links to the object', async () => {
    await ui.open('/ui/default/events');
    const body = ui.page.getByRole('rowgroup', { name: 'events' });
    await body.getByText('FailedScheduling').first().waitFor();
    await body.getByText('Started').first().waitFor();
    await ui.page.getByLabel('Event type').selectOption('Warning');
    await ui.page.waitForURL((u) => u.searchParams.get('type') === 'Warning');
    await ui.page.waitForFunction(() => !document.querySelector('[aria-label=events]')?.textContent?.includes('Started'));
    const warnings = await body.getByRole('row').allInnerTexts();
    assert.ok(warnings.length > 0 && warnings.every((t) => t.startsWith('Warning')), warnings.join('\n'));
    await ui.page.getByLabel('Event type').selectOption('');
    await ui.page.getByLabel('Event reason').selectOption('Started');
    await ui.page.getByLabel('Event object').fill('pod/one-cpu');
    await ui.page.waitForURL((u) => u.searchParams.get('object') === 'pod/one-cpu' && u.searchParams.get('reason') === 'Started');
    await ui.page.waitForFunction(() => document.querySelectorAll('[aria-label=events] [role=row]').length === 1);
    assert.match(await body.getByRole('row').innerText(), /Started[\s\S]*pod\/one-cpu/);
    // a shared link opens with the same filters
    await ui.open('/ui/default/events?object=pod%2Ftoo-big');
    await body.getByRole('link', { name: 'pod/too-big' }).first().waitFor();
    assert.equal(await body.getByText('one-cpu').count(), 0);
    await body.getByRole('link', { name: 'pod/too-big' }).first().click();
    await ui.page.waitForURL((u) => u.pathname === '/ui/default/pods/too-big');
    await ui.open('/ui/default/events?type=Normal&object=nothing-like-this');
    await ui.page.getByText('No events match these filters.').waitFor();
  });

  it('screenshots every cluster page, light and dark, at 1280×800 and 1024×700', async () => {
    const shots: [string, string][] = [
      ['cluster-overview', '/ui/cluster/cluster-overview'],
      ['nodes', '/ui/cluster/nodes'],
      ['node', `/ui/cluster/nodes/${node}`],
      ['events', '/ui/all/events'],
    ];
    for (const dark of [false, true]) {
      for (const [width, height] of [[1280, 800], [1024, 700]] as const) {
        const v = await openUi(s, { width, height, dark });
        try {
          for (const [name, path] of shots) {
            await v.open(path);
            await v.page.locator('main h1').first().waitFor();
            await v.page.locator('.empty', { hasText: 'Loading' }).waitFor({ state: 'detached' });
            await v.shot(`${name}-${width}x${height}-${dark ? 'dark' : 'light'}`);
          }
          assert.deepEqual(v.errors, []);
        } finally {
          await v.close();
        }
      }
    }
    assert.deepEqual(ui.errors, []);
  });
});
