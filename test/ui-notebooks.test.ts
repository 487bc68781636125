// The dashboard's Notebooks page with tenancy on, in real Chromium against a real server: alice signs
// in, a GPU beyond her namespace's quota is refused on the form with the server's 403, a notebook with
// the jupyter-scipy image is spawned from the form and turns Running live, Connect opens JupyterLab in
// a new tab through the proxy with the HttpOnly notebook cookie (no Authorization header), Stop and
// Start flip the status, and the last-activity column follows the annotation. The list and the form
// are screenshotted.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openUi, type Ui } from './browser.js';
import { repoRoot, TestServer } from './harness.js';

const admin = { authorization: 'Bearer admin-token' };
const skip = !existsSync(join(repoRoot, '.venv-notebooks', 'bin', 'jupyter-lab')) ? 'the notebooks\' environment (.venv-notebooks) is not set up' : false;

describe('the dashboard: Notebooks', { skip, timeout: 240_000 }, () => {
  let s: TestServer;
  let ui: Ui;
  const row = (): ReturnType<Ui['page']['locator']> => ui.page.getByRole('row').filter({ has: ui.page.getByRole('link', { name: 'lab', exact: true }) });

  before(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'skiff-e2e-'));
    const tokens = join(dataDir, 'tokens.csv');
    writeFileSync(tokens, 'admin-token,admin,0,system:masters\nalice-token,alice@example.com,1001\n');
    s = await TestServer.start({ dataDir, config: { tokenAuthFile: tokens, pythonZygote: false } });
    const profile = {
      apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: 'team-a' },
      spec: { owner: { kind: 'User', name: 'alice@example.com' }, resourceQuotaSpec: { hard: { cpu: '4', memory: '8Gi', 'requests.nvidia.com/gpu': '1' } } },
    };
    assert.equal((await s.req('POST', '/apis/kubeflow.org/v1/profiles', profile, admin)).status, 201);
    await s.until('alice\'s binding and quota', async () =>
      (await s.req('GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/namespaceAdmin', undefined, admin)).status === 200 &&
      (await s.req('GET', '/api/v1/namespaces/team-a/resourcequotas/kf-resource-quota', undefined, admin)).body?.status?.hard !== undefined);
    ui = await openUi(s);
  });
  after(async () => {
    await ui?.close();
    await s?.cleanup();
  });

  it('signs alice in, and gives the notebook proxy her token as an HttpOnly cookie only it gets', async () => {
    await ui.open('/ui/');
    await ui.page.getByLabel('Access token').fill('alice-token');
    await ui.page.getByRole('button', { name: 'Sign in' }).click();
    await ui.page.locator('.whoami', { hasText: 'alice@example.com' }).waitFor();
    await s.until('the notebook cookie', async () => (await ui.context.cookies()).some((c) => c.name === 'skiff-notebook-token'));
    const c = (await ui.context.cookies()).find((x) => x.name === 'skiff-notebook-token');
    assert.deepEqual([c?.value, c?.path, c?.httpOnly, c?.sameSite], ['alice-token', '/notebook/', true, 'Strict']);
    assert.equal(await ui.page.evaluate(() => document.cookie.includes('skiff-notebook-token')), false);
    // the cookie opens nothing but notebooks: the API answers it 401
    assert.equal((await s.req('GET', '/api/v1/namespaces/team-a/pods', undefined, { cookie: 'skiff-notebook-token=alice-token' })).status, 401);
  });

  it('refuses a GPU beyond the quota on the form, with the server\'s words', async () => {
    await ui.open('/ui/team-a/notebooks');
    await ui.page.getByText('No notebooks in team-a').waitFor();
    await ui.page.getByRole('button', { name: 'New notebook' }).click();
    await ui.page.getByLabel('Name', { exact: true }).fill('lab');
    await ui.shot('notebooks-form');
    await ui.page.getByLabel('GPUs', { exact: true }).selectOption('2');
    await ui.page.getByRole('button', { name: 'Launch' }).click();
    const problem = ui.page.locator('#nb-gpus-problem');
    await problem.waitFor();
    assert.match(await problem.innerText(), /exceeded quota: kf-resource-quota, requested: requests\.nvidia\.com\/gpu=2, used: requests\.nvidia\.com\/gpu=0, limited: requests\.nvidia\.com\/gpu=1/);
    await ui.shot('notebooks-form-quota');
    // nothing was made by the refused launch
    assert.equal((await s.req('GET', '/apis/kubeflow.org/v1/namespaces/team-a/notebooks/lab', undefined, admin)).status, 404);
    assert.equal((await s.req('GET', '/api/v1/namespaces/team-a/persistentvolumeclaims/lab-workspace', undefined, admin)).status, 404);
  });

  it('spawns a jupyter-scipy notebook with a workspace volume, and shows it Running live', async () => {
    await ui.page.getByLabel('GPUs', { exact: true }).selectOption('none');
    await ui.page.getByRole('button', { name: 'Launch' }).click();
    await ui.page.getByRole('region', { name: 'New notebook' }).waitFor({ state: 'detached' });
    const nb = await s.req('GET', '/apis/kubeflow.org/v1/namespaces/team-a/notebooks/lab', undefined, admin);
    assert.equal(nb.status, 200, nb.text);
    assert.match(nb.body.spec.template.spec.containers[0].image, /jupyter-scipy/);
    assert.equal(nb.body.metadata.annotations['notebooks.kubeflow.org/creator'], 'alice@example.com');
    assert.equal((await s.req('GET', '/api/v1/namespaces/team-a/persistentvolumeclaims/lab-workspace', undefined, admin)).status, 200);
    await row().getByText('Running', { exact: true }).waitFor({ timeout: 90_000 });
    await ui.shot('notebooks-list');
  });

  it('connects: JupyterLab in a new tab through the proxy, with the cookie', async () => {
    const [tab] = await Promise.all([ui.context.waitForEvent('page'), row().getByRole('link', { name: 'Connect' }).click()]);
    await tab.waitForURL(/\/notebook\/team-a\/lab\/lab/);
    // Running is the Pod's container running (the images have no readiness probe, as upstream's):
    // JupyterLab may need a few seconds more to listen, and the proxy answers 503 until it does
    await s.until('JupyterLab listening', async () => {
      if (!(await tab.locator('pre', { hasText: 'ECONNREFUSED' }).count())) return true;
      await new Promise((r) => setTimeout(r, 1000));
      await tab.reload();
      return false;
    });
    await tab.locator('.jp-Launcher').first().waitFor({ timeout: 60_000 });
    await ui.shot('notebooks-list-after-connect');
    await tab.close();
  });

  it('stops and starts the notebook, and shows its last activity', async () => {
    await row().getByRole('button', { name: 'Stop lab' }).click();
    await row().getByText('Stopped', { exact: true }).waitFor({ timeout: 30_000 });
    const stopped = await s.req('GET', '/apis/kubeflow.org/v1/namespaces/team-a/notebooks/lab', undefined, admin);
    assert.match(stopped.body.metadata.annotations['kubeflow-resource-stopped'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    await row().getByRole('button', { name: 'Start lab' }).click();
    await row().getByText('Running', { exact: true }).waitFor({ timeout: 60_000 });
    const when = new Date(Date.now() - 3 * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const r = await s.req('PATCH', '/apis/kubeflow.org/v1/namespaces/team-a/notebooks/lab', { metadata: { annotations: { 'notebooks.kubeflow.org/last-activity': when } } }, { ...admin, 'content-type': 'application/merge-patch+json' });
    assert.equal(r.status, 200, r.text);
    await row().locator('.nb-activity', { hasText: '3m ago' }).waitFor();
  });

  it('opens the notebook\'s page with its log', async () => {
    await row().getByRole('link', { name: 'lab', exact: true }).click();
    await ui.page.waitForURL((u) => u.pathname === '/ui/team-a/notebooks/lab');
    await ui.page.getByRole('tab', { name: 'Logs' }).click();
    await ui.page.getByText(/Jupyter Server .* is running at/).first().waitFor({ timeout: 30_000 });
  });

  it('signs out: the notebook cookie is cleared', async () => {
    await ui.page.getByRole('button', { name: 'Sign out' }).click();
    await ui.page.getByRole('heading', { name: 'Sign in to Skiff' }).waitFor();
    await s.until('the cookie cleared', async () => !(await ui.context.cookies()).some((c) => c.name === 'skiff-notebook-token'));
  });
});
