// The dashboard with tenancy on, in real Chromium against a real server started with a token file:
// the sign-in page, alice signed in seeing only her namespace (live updates coming through the
// stream mux as her), bob's namespace answering kube's 403 message, a contributor added and removed
// on the Profile page as KFAM bindings, and signing out. The sign-in and Profile pages are
// screenshotted light and dark.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openUi, type Ui } from './browser.js';
import { TestServer } from './harness.js';

const admin = { authorization: 'Bearer admin-token' };
const profile = (name: string, owner: string) => ({
  apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name },
  spec: { owner: { kind: 'User', name: owner }, resourceQuotaSpec: { hard: { cpu: '4', memory: '8Gi', 'requests.nvidia.com/gpu': '1' } } },
});
const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } });

describe('the dashboard: tenancy', { timeout: 240_000 }, () => {
  let s: TestServer;
  let ui: Ui;
  /** what came over the page's WebSockets (the stream mux) */
  const frames: string[] = [];
  before(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'skiff-e2e-'));
    const tokens = join(dataDir, 'tokens.csv');
    writeFileSync(tokens, 'admin-token,admin,0,system:masters\nalice-token,alice@example.com,1001\nbob-token,bob@example.com,1002\ncarol-token,carol@example.com,1003\n');
    s = await TestServer.start({ dataDir, config: { tokenAuthFile: tokens, pythonZygote: false } });
    for (const [name, owner] of [['team-a', 'alice@example.com'], ['team-b', 'bob@example.com']] as const) {
      const r = await s.req('POST', '/apis/kubeflow.org/v1/profiles', profile(name, owner), admin);
      assert.equal(r.status, 201, r.text);
    }
    await s.until('the owners\' bindings and quotas', async () => {
      for (const ns of ['team-a', 'team-b']) {
        if ((await s.req('GET', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings/namespaceAdmin`, undefined, admin)).status !== 200) return false;
        if ((await s.req('GET', `/api/v1/namespaces/${ns}/resourcequotas/kf-resource-quota`, undefined, admin)).body?.status?.hard === undefined) return false;
      }
      return true;
    });
    ui = await openUi(s);
    ui.page.on('websocket', (ws) => ws.on('framereceived', (f) => frames.push(String(f.payload))));
  });
  after(async () => {
    await ui?.close();
    await s?.cleanup();
  });

  const dark = async (on: boolean): Promise<void> => {
    const isDark = (await ui.page.evaluate(() => document.documentElement.dataset.theme)) === 'dark';
    if (isDark !== on) await ui.page.getByRole('button', { name: /Switch to the (dark|light) theme/ }).click();
  };

  it('asks for a token, refuses a wrong one, and signs alice in', async () => {
    await ui.open('/ui/');
    await ui.page.getByRole('heading', { name: 'Sign in to Skiff' }).waitFor();
    await ui.shot('tenancy-signin');
    await dark(true);
    await ui.shot('tenancy-signin-dark');
    await dark(false);
    await ui.page.getByLabel('Access token').fill('not-a-token');
    await ui.page.getByRole('button', { name: 'Sign in' }).click();
    await ui.page.getByRole('alert').filter({ hasText: 'did not accept this token' }).waitFor();
    await ui.page.getByLabel('Access token').fill('Bearer alice-token');
    await ui.page.getByRole('button', { name: 'Sign in' }).click();
    await ui.page.locator('.whoami', { hasText: 'alice@example.com' }).waitFor();
    assert.equal(await ui.page.evaluate(() => sessionStorage.getItem('skiff-token')), 'alice-token');
  });

  it('shows only alice\'s namespace, and lands her in it', async () => {
    await ui.page.waitForURL((u) => u.pathname === '/ui/team-a');
    const options = await ui.page.getByLabel('Namespace').locator('option').allInnerTexts();
    assert.deepEqual(options, ['team-a']);
  });

  it('streams live updates as alice through the stream mux', async () => {
    await ui.open('/ui/team-a/configmaps');
    await ui.page.locator('.whoami', { hasText: 'alice@example.com' }).waitFor();
    // made after the page listed: only the watch (over the mux's WebSocket, with alice's token) brings it
    await ui.page.getByRole('rowgroup').first().waitFor();
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await s.req('POST', '/api/v1/namespaces/team-a/configmaps', configMap('notes'), admin)).status, 201);
    await ui.page.getByRole('link', { name: 'notes', exact: true }).waitFor();
    assert.ok(frames.some((f) => f.includes('\\"name\\":\\"notes\\"')), 'the ConfigMap came over the stream mux');
    assert.equal(await ui.page.getByText('Lost the connection to the server').count(), 0);
  });

  it('answers a deep link into bob\'s namespace with kube\'s 403 message', async () => {
    await ui.open('/ui/team-b/configmaps');
    await ui.page.getByText('configmaps is forbidden: User "alice@example.com" cannot list resource "configmaps" in API group "" in the namespace "team-b"').waitFor();
    // the stream mux, asked directly with alice's token, is refused the same way: never bob's objects
    assert.equal((await s.req('POST', '/api/v1/namespaces/team-b/configmaps', configMap('secret-plans'), admin)).status, 201);
    const seen = await ui.page.evaluate(async () => {
      const b64 = btoa('alice-token').replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
      const ws = new WebSocket(`ws://${location.host}/skiff/v1/streams`, ['skiff.streams.v1', `base64url.bearer.authorization.k8s.io.${b64}`]);
      const frames: string[] = [];
      await new Promise<void>((resolve, reject) => {
        ws.onopen = () => ws.send(JSON.stringify({ op: 'open', id: 1, path: '/api/v1/namespaces/team-b/configmaps?watch=true' }));
        ws.onmessage = (e) => {
          frames.push(String(e.data));
          if (String(e.data).includes('"end":true')) resolve();
        };
        ws.onerror = () => reject(new Error('the stream endpoint refused the connection'));
        setTimeout(resolve, 5000);
      });
      ws.close();
      return frames.join('\n');
    });
    assert.match(seen, /"status":403/);
    assert.doesNotMatch(seen, /secret-plans/);
  });

  it('adds carol as a viewer and removes a contributor on the Profile page', async () => {
    await ui.open('/ui/team-a/profile');
    await ui.page.getByText('Owned by').waitFor();
    assert.match(await ui.page.locator('.profile .meta').innerText(), /alice@example\.com \(you\)/);
    await ui.page.locator('[aria-label=quota] tr[data-resource="requests.nvidia.com/gpu"]').waitFor();
    await ui.page.getByLabel('Email').fill('carol@example.com');
    await ui.page.getByLabel('Role').selectOption('view');
    await ui.page.getByRole('button', { name: 'Add contributor' }).click();
    await ui.page.locator('[aria-label=contributors] tr[data-user="carol@example.com"]', { hasText: 'View' }).waitFor();
    const rb = await s.req('GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/user-carol-example-com-clusterrole-view', undefined, admin);
    assert.equal(rb.status, 200, rb.text);
    assert.equal(rb.body.roleRef.name, 'kubeflow-view');
    assert.deepEqual(rb.body.subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'carol@example.com' }]);
    // carol may now read team-a
    assert.equal((await s.req('GET', '/api/v1/namespaces/team-a/configmaps', undefined, { authorization: 'Bearer carol-token' })).status, 200);

    await ui.page.getByLabel('Email').fill('dan@example.com');
    await ui.page.getByLabel('Role').selectOption('edit');
    await ui.page.getByRole('button', { name: 'Add contributor' }).click();
    await ui.page.locator('[aria-label=contributors] tr[data-user="dan@example.com"]', { hasText: 'Edit' }).waitFor();
    await ui.shot('tenancy-profile');
    await dark(true);
    await ui.shot('tenancy-profile-dark');
    await dark(false);
    await ui.page.getByRole('button', { name: 'Remove dan@example.com' }).click();
    await ui.page.locator('[aria-label=contributors] tr[data-user="dan@example.com"]').waitFor({ state: 'detached' });
    assert.equal((await s.req('GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/user-dan-example-com-clusterrole-edit', undefined, admin)).status, 404);
  });

  it('shows bob\'s Profile to alice without the means to change it', async () => {
    await ui.open('/ui/team-b/profile');
    await ui.page.getByText('Only the namespace\'s owner or a cluster admin may add or remove contributors.').waitFor();
    assert.equal(await ui.page.getByRole('button', { name: 'Add contributor' }).count(), 0);
  });

  it('signs out: the token is forgotten and the sign-in page is back', async () => {
    await ui.open('/ui/team-a');
    await ui.page.getByRole('button', { name: 'Sign out' }).click();
    await ui.page.getByRole('heading', { name: 'Sign in to Skiff' }).waitFor();
    await ui.page.getByText('You are signed out.').waitFor();
    assert.equal(await ui.page.evaluate(() => sessionStorage.getItem('skiff-token')), null);
    await ui.page.reload();
    await ui.page.getByRole('heading', { name: 'Sign in to Skiff' }).waitFor();
  });
});
