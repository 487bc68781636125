// The dashboard's frame in real Chromium: served by `skiff up` at /ui/, deep links, lists and object
// pages kept live by watches, the YAML editor showing the server's refusal on the field's line, a
// deleted object's page, the KFP UI's links, and the banner when the server goes away.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openUi, type Ui } from './browser.js';
import WebSocket from 'ws';
import { TestServer } from './harness.js';

const jobs = '/apis/batch/v1/namespaces/default/jobs';
const job = (name: string, code = 'print(1)') => ({
  apiVersion: 'batch/v1', kind: 'Job', metadata: { name },
  spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command: ['python3', '-c', code] }] } } },
});

describe('the dashboard', () => {
  let s: TestServer;
  let ui: Ui;
  before(async () => {
    s = await TestServer.start();
    ui = await openUi(s);
  });
  after(async () => {
    await ui?.close();
    await s?.cleanup();
  });

  it('sends / to /ui/ and serves every page of the app from one index.html', async () => {
    const root = await fetch(`${s.url}/`, { redirect: 'manual' });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/ui/');
    const deep = await fetch(`${s.url}/ui/default/jobs/pi`);
    assert.equal(deep.status, 200);
    assert.match(await deep.text(), /<div id="root">/);
    const missing = await fetch(`${s.url}/ui/assets/nope.js`);
    assert.equal(missing.status, 404);
    const escape = await fetch(`${s.url}/ui/..%2f..%2fpackage.json`);
    assert.notEqual(escape.status, 500);
    assert.doesNotMatch(await escape.text(), /"name": "skiff"/);
  });

  it('multiplexes many streams over one WebSocket, each answered as its own GET would be', async () => {
    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/skiff/v1/streams`);
    await new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });
    const got = new Map<number, { status?: number; data: string; end?: boolean; error?: string }>();
    ws.on('message', (raw) => {
      const m = JSON.parse(String(raw));
      const e = got.get(m.id) ?? { data: '' };
      if (m.status !== undefined) e.status = m.status;
      if (m.data !== undefined) e.data += m.data;
      if (m.end) e.end = true;
      if (m.error) e.error = m.error;
      got.set(m.id, e);
    });
    // more watches than a browser's six connections, all open at once
    for (let id = 1; id <= 10; id++) ws.send(JSON.stringify({ op: 'open', id, path: `/apis/batch/v1/namespaces/default/jobs?watch=true&labelSelector=n%3D${id}` }));
    ws.send(JSON.stringify({ op: 'open', id: 11, path: '/apis/batch/v1/namespaces/default/jobs/missing' }));
    ws.send(JSON.stringify({ op: 'open', id: 12, path: '/ui/' }));
    await s.create(jobs, { ...job('mux-7'), metadata: { name: 'mux-7', labels: { n: '7' } } });
    await s.until('the watch with n=7 to see its job', async () => got.get(7)?.data.includes('"mux-7"'));
    assert.equal(got.get(3)?.data.includes('mux-7'), false);
    await s.until('the 404 and the refusal', async () => got.get(11)?.end && got.get(12)?.error);
    assert.equal(got.get(11)?.status, 404);
    assert.match(got.get(11)?.data ?? '', /"reason":"NotFound"/);
    assert.match(got.get(12)?.error ?? '', /API path/);
    ws.send(JSON.stringify({ op: 'close', id: 7 }));
    ws.close();
    await s.req('DELETE', `${jobs}/mux-7?propagationPolicy=Background`);
    await s.until('mux-7 gone', async () => (await s.req('GET', `${jobs}/mux-7`)).status === 404);
  });

  it('shows a list that changes live and a deep-linked object page', async () => {
    await ui.open('/ui/default/jobs');
    await ui.page.getByRole('heading', { name: 'jobs' }).waitFor();
    await ui.page.getByText('No jobs in default.').waitFor();
    await s.create(jobs, job('hello'));
    // no reload: the watch brings the row
    await ui.page.getByRole('link', { name: 'hello' }).waitFor();
    await ui.page.getByRole('link', { name: 'hello' }).click();
    await ui.urlBecomes((u) => u.pathname === '/ui/default/jobs/hello', '/ui/default/jobs/hello');
    await ui.page.locator('.objhead .badge', { hasText: 'Complete' }).waitFor({ timeout: 60_000 });
    await ui.shot('job');
  });

  it('edits YAML and shows the server’s refusal on the line of the field', async () => {
    await ui.open('/ui/default/jobs/hello?tab=yaml');
    await ui.page.getByRole('button', { name: 'Edit' }).click();
    const area = ui.page.getByRole('textbox', { name: 'YAML' });
    const text = await area.inputValue();
    const bad = text.replace(/backoffLimit: 0/, 'backoffLimit: -3');
    assert.notEqual(bad, text);
    // the text is monospaced, as its line numbers are, so that YAML's indentation lines up
    const fonts = await ui.page.locator('.yaml-editor textarea, .yaml-editor .gutter').evaluateAll((els) => els.map((e) => getComputedStyle(e).fontFamily));
    assert.equal(fonts.length, 2);
    assert.equal(fonts[0], fonts[1]);
    assert.match(fonts[0] ?? '', /mono/i);
    await area.fill(bad);
    await ui.page.getByRole('button', { name: 'Save' }).click();
    const alert = ui.page.getByRole('alert').filter({ hasText: 'spec.backoffLimit' });
    await alert.waitFor();
    const line = bad.split('\n').findIndex((l) => l.includes('backoffLimit: -3')) + 1;
    assert.match(await alert.innerText(), new RegExp(`line ${line}`));
    assert.equal(await ui.page.locator('.gutter .bad').innerText(), String(line));
    await ui.shot('yaml-error');
  });

  it('says so when the object it shows is deleted', async () => {
    await ui.open('/ui/default/jobs/hello');
    await ui.page.locator('.objhead').waitFor();
    const r = await s.req('DELETE', `${jobs}/hello?propagationPolicy=Background`);
    assert.equal(r.status, 200);
    await ui.page.getByText('was deleted').waitFor();
  });

  it('switches namespaces and lists every kind', async () => {
    await s.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
    await s.create('/apis/batch/v1/namespaces/team-a/jobs', job('in-team-a'));
    await ui.open('/ui/default/jobs');
    await ui.page.getByLabel('Namespace').selectOption('team-a');
    await ui.page.getByRole('link', { name: 'in-team-a' }).waitFor();
    await ui.urlBecomes((u) => u.pathname === '/ui/team-a/jobs', '/ui/team-a/jobs');
    await ui.open('/ui/default/kinds');
    await ui.page.getByRole('link', { name: 'InferenceService', exact: true }).waitFor();
    await ui.open('/ui/default/nonsense');
    await ui.page.getByText('serves no kind called').waitFor();
  });

  it('gives a kind without a page of its own the generic page: conditions, Events, owned objects, YAML', async () => {
    const profiles = '/apis/kubeflow.org/v1/profiles';
    const profile = (name: string) => ({ apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name }, spec: { owner: { kind: 'User', name: 'alice@example.com' } } });
    // a Profile whose namespace someone else already has: its controller says so in a condition and an Event
    await s.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'taken' } });
    await s.create(profiles, profile('taken'));
    await ui.open('/ui/cluster/profiles/taken');
    const why = 'namespace already exist, but not owned by profile creator alice@example.com';
    const cond = ui.page.getByRole('row').filter({ hasText: why });
    await cond.waitFor();
    assert.match(await cond.innerText(), /^Failed\s+True/);
    await ui.page.getByRole('tab', { name: 'Events' }).click();
    await ui.page.getByRole('row').filter({ hasText: why }).filter({ hasText: 'Warning' }).waitFor();
    // one that works owns its namespace and what the controller put in it
    await s.create(profiles, profile('team-b'));
    await ui.open('/ui/cluster/profiles/team-b?tab=owned');
    const owned = (plural: string) => ui.page.getByRole('rowgroup', { name: `owned ${plural}` });
    await owned('namespaces').getByRole('link', { name: 'team-b', exact: true }).waitFor();
    await owned('rolebindings').getByRole('link', { name: 'namespaceAdmin' }).waitFor();
    await owned('serviceaccounts').getByRole('link', { name: 'default-editor' }).waitFor();
    await ui.shot('generic-object');
    await ui.page.getByRole('tab', { name: 'YAML' }).click();
    assert.match(await ui.page.getByRole('textbox', { name: 'YAML' }).inputValue(), /^kind: Profile$/m);
  });

  it('resolves the links kfp.Client prints (#/experiments/details/<id>)', async () => {
    const exp = (await s.req('POST', '/apis/v2beta1/experiments', { display_name: 'exp-one' })).body;
    await ui.open(`/#/experiments/details/${exp.experiment_id}`);
    await ui.page.waitForURL((u) => u.pathname === `/ui/default/experiments/${exp.experiment_id}`);
  });

  it('shows a banner while the server is away and resumes its watches when it is back, without a reload', async () => {
    await ui.open('/ui/default/jobs');
    await ui.page.getByText('No jobs in default.').waitFor();
    // a mark on this page: a reload or a navigation would lose it
    await ui.page.evaluate(() => ((window as unknown as { samePage?: boolean }).samePage = true));
    await s.crash();
    await ui.page.getByText('Lost the connection').waitFor({ timeout: 30_000 });
    await ui.shot('connection-lost');
    // back at the same address, as `skiff up` restarted on its port is
    await s.launch({ samePort: true });
    await ui.page.getByText('Lost the connection').waitFor({ state: 'detached', timeout: 30_000 });
    await s.create(jobs, job('after-restart'));
    // the list's watch resumed: the new Job arrives on the page that saw the server go
    await ui.page.getByRole('link', { name: 'after-restart' }).waitFor({ timeout: 30_000 });
    assert.equal(await ui.page.evaluate(() => (window as unknown as { samePage?: boolean }).samePage), true);
  });
});
