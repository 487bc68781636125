// The dashboard's Model Registry pages in real Chromium against a real server: a model with two
// versions registered through the REST API (v1 a scikit-learn model saved with joblib, v2 the Model
// artifact of a real pipeline run, so Skiff fills its lineage), the Models list and its archived
// toggle, the model and version pages (custom properties as values, lineage links to the run and the
// artifact), archive and restore through the buttons, a deploy through the button that serves v1, and
// aliases set, moved and removed through the page, with their history.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openUi, type Ui } from './browser.js';
import { repoRoot, TestServer } from './harness.js';

const python = join(repoRoot, '.venv', 'bin', 'python');
const skip = existsSync(python) ? false : 'the Python environment (.venv) is not set up';
const API = '/api/model_registry/v1alpha3';
const pipeline = join(repoRoot, 'examples', 'pipelines', 'metrics_report.yaml');
const isvcPath = '/apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices';

const TRAIN = `
import sys, os, joblib
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
X, y = load_iris(return_X_y=True)
os.makedirs(sys.argv[1], exist_ok=True)
joblib.dump(LogisticRegression(max_iter=500).fit(X, y), os.path.join(sys.argv[1], "model.joblib"))
`;

const str = (v: string) => ({ metadataType: 'MetadataStringValue', string_value: v });

describe('the dashboard: Model Registry', { skip, timeout: 420_000 }, () => {
  let s: TestServer;
  let ui: Ui;
  let run = '';
  let model = '';
  let v1 = '';
  let v2 = '';

  const post = async (path: string, body: unknown): Promise<any> => {
    const r = await s.req('POST', API + path, body);
    assert.equal(r.status, 201, `POST ${path}: ${r.text}`);
    return r.body;
  };

  before(async () => {
    s = await TestServer.start();
    const dir = join(s.dataDir, 'models', 'iris-v1');
    mkdirSync(dir, { recursive: true });
    const trained = spawnSync(python, ['-c', TRAIN, dir], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(trained.status, 0, trained.stderr);
    const r = await s.cli(['run', pipeline, '--watch']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    run = /run\.pipelines\.kubeflow\.org\/(\S+) created/.exec(r.stdout)?.[1] ?? '';
    assert.ok(run, r.stdout);
    const done = await s.get(`/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs/${run}`).catch(() => undefined);
    const modelUri: string | undefined = done?.status?.tasks?.train?.outputs?.artifacts?.model?.[0]?.uri;
    assert.ok(modelUri, `the run recorded no train/model artifact: ${JSON.stringify(done?.status?.tasks?.train?.outputs ?? null)}`);

    model = (await post('/registered_models', {
      name: 'iris', owner: 'ada', description: 'Iris species from petal and sepal sizes',
      customProperties: { team: str('vision'), epochs: { metadataType: 'MetadataIntValue', int_value: '10' }, reviewed: { metadataType: 'MetadataBoolValue', bool_value: true } },
    })).id;
    v1 = (await post('/model_versions', { name: 'v1', author: 'ada', registeredModelId: model, customProperties: { accuracy: { metadataType: 'MetadataDoubleValue', double_value: 0.97 } } })).id;
    await post(`/model_versions/${v1}/artifacts`, { artifactType: 'model-artifact', name: 'iris-v1', uri: `file://${dir}`, modelFormatName: 'sklearn', modelFormatVersion: '1' });
    v2 = (await post('/model_versions', { name: 'v2', author: 'bea', registeredModelId: model })).id;
    await post(`/model_versions/${v2}/artifacts`, { artifactType: 'model-artifact', name: 'iris-v2', uri: modelUri, modelFormatName: 'sklearn', modelFormatVersion: '1' });
    const old = (await post('/registered_models', { name: 'legacy-svm', owner: 'carl' })).id;
    assert.equal((await s.req('PATCH', `${API}/registered_models/${old}`, { state: 'ARCHIVED' })).status, 200);
    ui = await openUi(s);
  });
  after(async () => {
    await ui?.close();
    await s?.cleanup();
  });

  it('lists the namespace\'s models from the navigation, archived ones behind a toggle', async () => {
    await ui.open('/ui/default');
    await ui.page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Models' }).click();
    await ui.page.waitForURL((u) => u.pathname === '/ui/default/registeredmodels');
    const row = ui.page.locator('.dt-row', { hasText: 'iris' });
    await row.waitFor();
    const cells = (await row.locator('.td').allInnerTexts()).map((c) => c.trim());
    assert.deepEqual(cells.slice(0, 5), ['iris', 'ada', 'Live', 'v2', '2']);
    assert.match(cells[5] ?? '', /ago$/);
    assert.equal(await ui.page.locator('.dt-row', { hasText: 'legacy-svm' }).count(), 0);
    await ui.page.getByLabel(/Show archived/).check();
    await ui.page.locator('.dt-row', { hasText: 'legacy-svm' }).waitFor();
    assert.match(await ui.page.locator('.dt-row', { hasText: 'legacy-svm' }).innerText(), /Archived/);
    await ui.shot('registry-models');
  });

  it('shows a model\'s description, custom properties as values, and its versions', async () => {
    await ui.open(`/ui/default/registeredmodels/${model}`);
    await ui.page.getByRole('heading', { name: /^iris/ }).waitFor();
    await ui.page.getByText('Iris species from petal and sepal sizes').waitFor();
    const props = ui.page.getByRole('table', { name: 'Model properties' });
    assert.deepEqual(await props.locator('tbody tr').allInnerTexts(), ['epochs\t10', 'reviewed\ttrue', 'team\tvision']);
    assert.doesNotMatch(await ui.page.locator('main').innerText(), /metadataType|string_value/);
    const versions = ui.page.getByRole('table', { name: 'Versions' });
    const rows = versions.locator('tbody tr');
    await rows.nth(1).waitFor();
    const first = await rows.nth(0).locator('td').allInnerTexts();
    const second = await rows.nth(1).locator('td').allInnerTexts();
    assert.equal(first[0]?.trim(), 'v2');
    assert.deepEqual([second[0]?.trim(), second[1], second[2], second[5]], ['v1', 'Live', 'ada', 'sklearn 1']);
    assert.match(second[4] ?? '', /^file:\/\/.*iris-v1$/);
    await ui.page.getByText('No aliases.').waitFor();
    await ui.page.getByText('Not deployed').waitFor();
    await ui.shot('registry-model');
  });

  it('shows a version\'s metadata and lineage back to the pipeline run and its artifact', async () => {
    await ui.open(`/ui/default/registeredmodels/${model}`);
    await ui.page.getByRole('table', { name: 'Versions' }).getByRole('link', { name: 'v2' }).click();
    await ui.page.waitForURL((u) => u.pathname === `/ui/default/modelversions/${v2}`);
    assert.equal(await ui.page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Models' }).getAttribute('aria-current'), 'page');
    const lineage = ui.page.locator('.mr-lineage');
    await lineage.getByRole('link', { name: /artifact train\/model/ }).waitFor();
    assert.equal(await lineage.getByRole('link').first().getAttribute('href'), `/ui/default/runs/${run}`);
    const art = await lineage.getByRole('link', { name: /artifact train\/model/ }).getAttribute('href');
    assert.equal(art, `/ui/default/artifact?run=${run}&task=train&output=model&index=0`);
    assert.match(await lineage.innerText(), /from the URI, by Skiff/);
    await ui.shot('registry-version-lineage');
    // and back: the artifact's page names the version registered from it
    await lineage.getByRole('link', { name: /artifact train\/model/ }).click();
    await ui.page.locator('section.psec', { hasText: 'Registered model versions' }).getByRole('link', { name: 'v2', exact: true }).waitFor();

    await ui.open(`/ui/default/modelversions/${v1}`);
    await ui.page.getByRole('table', { name: 'Version properties' }).getByText('0.97').waitFor();
    assert.match(await ui.page.locator('.mr-lineage, .mr-artifact').first().innerText(), /not recorded/);
  });

  it('archives a version after asking, and restores it', async () => {
    await ui.open(`/ui/default/registeredmodels/${model}`);
    let asked = '';
    const onDialog = (d: import('playwright-core').Dialog): void => {
      asked = d.message();
      void d.accept();
    };
    ui.page.on('dialog', onDialog);
    try {
      await ui.page.getByRole('button', { name: 'Archive version v1' }).click();
      await s.until('v1 archived', async () => (await s.get(`${API}/model_versions/${v1}`)).state === 'ARCHIVED');
      assert.match(asked, /^Archive version v1\?/);
      const row = ui.page.getByRole('table', { name: 'Versions' }).locator('tbody tr', { hasText: 'v1' });
      await row.getByText('Archived').waitFor();
      // an archived version is not deployed from here
      assert.equal(await row.getByRole('button', { name: 'Deploy v1' }).count(), 0);
      await ui.shot('registry-archived-version');
      asked = '';
      await ui.page.getByRole('button', { name: 'Restore version v1' }).click();
      await s.until('v1 live again', async () => (await s.get(`${API}/model_versions/${v1}`)).state === 'LIVE');
      assert.equal(asked, '', 'restoring does not ask');
      await row.getByText('Live').waitFor();
    } finally {
      ui.page.off('dialog', onDialog);
    }
  });

  it('deploys a version with the button and shows where it serves', async () => {
    await ui.open(`/ui/default/registeredmodels/${model}`);
    await ui.page.getByRole('button', { name: 'Deploy v1' }).click();
    const form = ui.page.getByRole('form', { name: 'Deploy iris v1' });
    assert.equal(await form.getByLabel('InferenceService').inputValue(), 'iris');
    await form.getByText('model-registry://iris/v1').waitFor();
    await ui.shot('registry-deploy-form');
    await form.getByRole('button', { name: 'Deploy' }).click();
    await ui.page.waitForURL((u) => u.pathname === '/ui/default/inferenceservices/iris');
    const isvc = await s.get(`${isvcPath}/iris`);
    assert.equal(isvc.spec.predictor.model.storageUri, 'model-registry://iris/v1');
    assert.deepEqual(isvc.spec.predictor.model.modelFormat, { name: 'sklearn', version: '1' });
    await s.until('iris Ready', async () => (await s.get(`${isvcPath}/iris`)).status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True', 120_000);

    // the registry's record of the deployment shows on the model's page, linking to the service
    await ui.open(`/ui/default/registeredmodels/${model}`);
    const row = ui.page.getByRole('table', { name: 'Versions' }).locator('tbody tr', { hasText: 'v1' });
    await row.getByRole('link', { name: 'iris' }).waitFor({ timeout: 60_000 });
    const deployments = ui.page.getByRole('table', { name: 'Deployments' });
    await deployments.getByText('Deployed').waitFor();
    assert.match(await deployments.locator('tbody tr').first().innerText(), /^iris\tDeployed\tv1\t\s*v1 since \S+ ago$/);
    await ui.shot('registry-deployed');

    // the same name again: the API's refusal is shown as it says it
    await ui.page.getByRole('button', { name: 'Deploy v2' }).click();
    const again = ui.page.getByRole('form', { name: 'Deploy iris v2' });
    // `iris` is taken: the proposal names the version too
    assert.equal(await again.getByLabel('InferenceService').inputValue(), 'iris-v2');
    await again.getByLabel('InferenceService').fill('iris');
    await again.getByRole('button', { name: 'Deploy' }).click();
    await again.getByRole('alert').filter({ hasText: /already exists/ }).waitFor();
    await ui.shot('registry-deploy-taken');
  });

  it('shows aliases as badges, sets, moves and removes them, and lists their history', async () => {
    // one alias set through the API before the page opens; the rest through the page
    const set = await s.req('PUT', `${API}/registered_models/${model}/aliases/production`, { modelVersionId: v1 });
    assert.equal(set.status, 200, set.text);
    await ui.open(`/ui/default/registeredmodels/${model}`);
    const versions = ui.page.getByRole('table', { name: 'Versions' });
    await versions.locator('tbody tr', { hasText: 'v1' }).getByText('@production').waitFor();
    const panel = ui.page.getByRole('region', { name: 'Aliases' });
    // move production to v2, and give v2 a second alias
    await panel.getByLabel('Alias name').fill('production');
    await panel.getByLabel('Version for the alias').selectOption(v2);
    await panel.getByRole('button', { name: 'Set alias' }).click();
    await versions.locator('tbody tr', { hasText: 'v2' }).getByText('@production').waitFor();
    await panel.getByLabel('Alias name').fill('staging');
    await panel.getByRole('button', { name: 'Set alias' }).click();
    await versions.locator('tbody tr', { hasText: 'v2' }).getByText('@staging').waitFor();
    const stored = (await s.get(`${API}/registered_models/${model}/aliases`)).items.map((a: any) => [a.name, a.modelVersionId]);
    assert.deepEqual(stored, [['production', v2], ['staging', v2]]);
    // a name the API refuses: its message, as it says it
    await panel.getByLabel('Alias name').fill('Prod!');
    await panel.getByRole('button', { name: 'Set alias' }).click();
    await panel.getByRole('alert').filter({ hasText: /alias: "Prod!"/ }).waitFor();
    const history = panel.getByRole('table', { name: 'Alias history' });
    // the history and the aliases are read apart: wait for the history to show the third move
    const expected = ['@staging | set on v2 | skiff-admin', '@production | moved from v1 to v2 | skiff-admin', '@production | set on v1 | skiff-admin'];
    let rows: string[] = [];
    for (const t0 = Date.now(); Date.now() - t0 < 10_000; await new Promise((r) => setTimeout(r, 100))) {
      rows = (await history.locator('tbody tr').allInnerTexts()).map((r) => r.split('\t').slice(1).join(' | '));
      if (rows.length === expected.length && rows.every((r, i) => r === expected[i])) break;
    }
    assert.deepEqual(rows, expected);
    await ui.shot('registry-aliases');
    await history.scrollIntoViewIfNeeded();
    await ui.shot('registry-alias-history');
    // removing asks first
    ui.page.once('dialog', (d) => void d.accept());
    await panel.getByRole('button', { name: 'Remove alias staging' }).click();
    await history.getByText('removed from v2').waitFor();
    await versions.getByText('@staging').waitFor({ state: 'detached' });
    assert.deepEqual((await s.get(`${API}/registered_models/${model}/aliases`)).items.map((a: any) => a.name), ['production']);
    await ui.open(`/ui/default/modelversions/${v2}`);
    await ui.page.getByRole('heading', { name: /v2/ }).getByText('@production').waitFor();
    assert.deepEqual(ui.errors.filter((e) => !/status of 40[049]/.test(e)), []);
  });

  it('looks right in the dark theme', async () => {
    const dark = await openUi(s, { dark: true });
    try {
      await dark.open(`/ui/default/registeredmodels/${model}`);
      await dark.page.getByRole('table', { name: 'Versions' }).locator('tbody tr').nth(1).waitFor();
      await dark.shot('registry-model-dark');
      await dark.open(`/ui/default/modelversions/${v2}`);
      await dark.page.locator('.mr-lineage').getByRole('link', { name: /artifact train\/model/ }).waitFor();
      await dark.shot('registry-version-dark');
    } finally {
      await dark.close();
    }
  });
});

describe('the dashboard: Model Registry with tenancy on', { timeout: 180_000 }, () => {
  let s: TestServer;
  let model = '';
  const admin = { authorization: 'Bearer admin-token' };
  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  const TEAM = `/model-registry/team-a${API}`;

  before(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'skiff-e2e-'));
    const tokens = join(dataDir, 'tokens.csv');
    writeFileSync(tokens, 'admin-token,admin,0,system:masters\nalice-token,alice@example.com,1001\ncarol-token,carol@example.com,1003\n');
    s = await TestServer.start({ dataDir, config: { tokenAuthFile: tokens, pythonZygote: false } });
    const profile = { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: 'team-a' }, spec: { owner: { kind: 'User', name: 'alice@example.com' } } };
    assert.equal((await s.req('POST', '/apis/kubeflow.org/v1/profiles', profile, admin)).status, 201);
    await s.until('alice\'s binding', async () => (await s.req('GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/namespaceAdmin', undefined, admin)).status === 200);
    // carol may view team-a, as the Profile page's "View" makes her
    const rb = {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'user-carol-example-com-clusterrole-view', namespace: 'team-a', annotations: { role: 'view', user: 'carol@example.com' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubeflow-view' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'carol@example.com' }],
    };
    assert.equal((await s.req('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings', rb, admin)).status, 201);
    // the authorizer learns of a new binding from its watch, a moment after the binding is stored (as on
    // a cluster): alice's first write is tried again while it is refused
    const m = await s.until('alice may register a model in team-a', async () => {
      const r = await s.req('POST', `${TEAM}/registered_models`, { name: 'iris', owner: 'alice' }, as('alice-token'));
      return r.status === 403 ? undefined : r;
    });
    assert.equal(m.status, 201, m.text);
    model = m.body.id;
    const v = await s.req('POST', `${TEAM}/model_versions`, { name: 'v1', registeredModelId: model }, as('alice-token'));
    assert.equal(v.status, 201, v.text);
    assert.equal((await s.req('POST', `${TEAM}/model_versions/${v.body.id}/artifacts`, { artifactType: 'model-artifact', uri: 's3://models/iris/1', modelFormatName: 'sklearn' }, as('alice-token'))).status, 201);
    // v2's artifact names no format; v3 has no artifact at all
    const v2 = await s.req('POST', `${TEAM}/model_versions`, { name: 'v2', registeredModelId: model }, as('alice-token'));
    assert.equal((await s.req('POST', `${TEAM}/model_versions/${v2.body.id}/artifacts`, { artifactType: 'model-artifact', uri: 's3://models/iris/2' }, as('alice-token'))).status, 201);
    assert.equal((await s.req('POST', `${TEAM}/model_versions`, { name: 'v3', registeredModelId: model }, as('alice-token'))).status, 201);
  });
  after(async () => {
    await s?.cleanup();
  });

  const signedIn = async (token: string): Promise<Ui> => {
    const u = await openUi(s);
    await u.context.addInitScript((t) => sessionStorage.setItem('skiff-token', t), token);
    return u;
  };

  it('shows a viewer the model without the buttons she could only fail with; its owner has them', async () => {
    assert.equal((await s.req('PATCH', `${TEAM}/registered_models/${model}`, { state: 'ARCHIVED' }, as('carol-token'))).status, 403);
    const carol = await signedIn('carol-token');
    try {
      await carol.open(`/ui/team-a/registeredmodels/${model}`);
      await carol.page.locator('.whoami', { hasText: 'carol@example.com' }).waitFor();
      await carol.page.getByRole('table', { name: 'Versions' }).getByRole('link', { name: 'v1' }).waitFor();
      // the access review has answered: the page says why there is nothing to press
      await carol.page.getByText('View only: changing the registry of team-a needs the Edit role there.').waitFor();
      assert.equal(await carol.page.getByRole('button', { name: /Archive|Restore|Deploy/ }).count(), 0);
      assert.equal(await carol.page.getByRole('button', { name: 'Set alias' }).count(), 0);
      await carol.shot('registry-viewer');
    } finally {
      await carol.close();
    }
    const alice = await signedIn('alice-token');
    try {
      await alice.open(`/ui/team-a/registeredmodels/${model}`);
      await alice.page.getByRole('button', { name: 'Deploy v1' }).waitFor();
      await alice.page.getByRole('button', { name: 'Archive model iris' }).waitFor();
      await alice.page.getByRole('button', { name: 'Archive version v1' }).waitFor();
      assert.equal(await alice.page.getByText(/^View only/).count(), 0);

      // a version with no model artifact cannot be deployed; one whose artifact names no format asks for it
      await alice.page.getByRole('button', { name: 'Deploy v3' }).click();
      const none = alice.page.getByRole('form', { name: 'Deploy iris v3' });
      await none.getByText('This version has no model artifact').waitFor();
      assert.equal(await none.getByRole('button', { name: 'Deploy' }).isDisabled(), true);
      await none.getByRole('button', { name: 'Cancel' }).click();
      await alice.page.getByRole('button', { name: 'Deploy v2' }).click();
      const form = alice.page.getByRole('form', { name: 'Deploy iris v2' });
      assert.equal(await form.getByRole('button', { name: 'Deploy' }).isDisabled(), true);
      await form.getByLabel('Model format').fill('sklearn');
      await alice.shot('registry-deploy-format');
      await form.getByRole('button', { name: 'Deploy' }).click();
      await alice.page.waitForURL((u) => u.pathname === '/ui/team-a/inferenceservices/iris');
      const isvc = (await s.req('GET', '/apis/serving.kserve.io/v1beta1/namespaces/team-a/inferenceservices/iris', undefined, admin)).body;
      assert.deepEqual(isvc.spec.predictor.model, { modelFormat: { name: 'sklearn' }, storageUri: 'model-registry://iris/v2' });
    } finally {
      await alice.close();
    }
  });
});
