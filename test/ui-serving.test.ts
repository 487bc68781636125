// The serving pages in real Chromium against a real server and a real scikit-learn model server:
// the list with the traffic split, "try it" answered by the model and counted on the live chart
// without a reload, a canary's percent moved with the page's control (the object's spec changes and
// the page shows the new split), then promotion. Screenshots in light and dark.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openUi, type Ui } from './browser.js';
import { TestServer, repoRoot } from './harness.js';

const python = join(repoRoot, '.venv', 'bin', 'python');
const skip = !existsSync(python) ? 'the Python environment (.venv) is not set up' : false;
const isvcs = '/apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices';

// two small models on 4 features: a logistic regression, and one that always answers 9 (the canary)
const TRAIN = `
import os, sys, joblib, numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.dummy import DummyClassifier
out = sys.argv[1]
rng = np.random.default_rng(0)
X = rng.normal(size=(200, 4)); y = (X[:, 0] > 0).astype(int)
for d, m in (("lr", LogisticRegression().fit(X, y)), ("const", DummyClassifier(strategy="constant", constant=9).fit(X, np.full(200, 9)))):
    os.makedirs(os.path.join(out, d), exist_ok=True)
    joblib.dump(m, os.path.join(out, d, "model.joblib"))
`;

describe('the serving pages', { skip, timeout: 300_000 }, () => {
  let s: TestServer;
  let ui: Ui;
  let models: string;
  const isvc = (): Promise<any> => s.get(`${isvcs}/digits`);
  const split = (o: any): string =>
    (o.status?.components?.predictor?.traffic ?? [])
      .map((t: any) => `${t.revisionName}=${t.percent}`)
      .sort()
      .join(',');

  before(async () => {
    s = await TestServer.start();
    models = join(s.dataDir, 'models');
    mkdirSync(models, { recursive: true });
    const r = spawnSync(python, ['-c', TRAIN, models], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    await s.create(isvcs, { apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'digits' }, spec: { predictor: { sklearn: { storageUri: `file://${join(models, 'lr')}` } } } });
    await s.until('digits Ready', async () => ((await isvc()).status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True' ? true : undefined), 120_000);
    ui = await openUi(s);
  });
  after(async () => {
    await ui?.close();
    await s?.cleanup();
  });

  it('lists the service with its URL, model, runtime and traffic', async () => {
    await ui.open('/ui/default/inferenceservices');
    const row = ui.page.getByRole('row', { name: /digits/ });
    await row.waitFor();
    const text = await row.innerText();
    assert.match(text, /http:\/\/digits\.default\.example\.com/);
    assert.match(text, /sklearn · kserve-sklearnserver/);
    assert.match(text, /100% r1/);
    assert.match(text, /Ready/);
    await ui.shot('serving-list');
  });

  it('sends a request from "try it", shows the answer, and counts it on the chart without a reload', async () => {
    const { page } = ui;
    await ui.open('/ui/default/inferenceservices/digits?tab=try');
    // the example is shaped from the model's V2 metadata: 4 features
    await page.getByText(/example shaped from the model's inputs/).waitFor();
    const body = page.getByRole('textbox', { name: 'request body' });
    assert.deepEqual(JSON.parse(await body.inputValue()), { instances: [[0, 0, 0, 0]] });
    await page.getByRole('tab', { name: 'Metrics' }).click();
    const counter = page.getByTestId('traffic-requests');
    // the metadata request is the service's first
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="traffic-requests"]')?.textContent) >= 1);
    const before = Number(await counter.innerText());
    await page.getByRole('tab', { name: 'Try it' }).click();
    await body.fill(JSON.stringify({ instances: [[3, 0, 0, 0], [-3, 0, 0, 0]] }));
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('tryit-status').filter({ hasText: '200' }).waitFor();
    assert.deepEqual(JSON.parse(await page.getByTestId('tryit-answer').innerText()), { predictions: [1, 0] });
    await ui.shot('serving-tryit');
    // a refused request shows the server's answer
    await body.fill(JSON.stringify({ instancez: [] }));
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('tryit-status').filter({ hasText: '400' }).waitFor();
    assert.match(await page.getByTestId('tryit-answer').innerText(), /instances/);
    // V2: the example is the model's input tensor, from its metadata; the answer is V2's
    await page.getByRole('button', { name: 'V2 infer' }).click();
    // the example follows the protocol a render later
    await page.waitForFunction(() => document.querySelector<HTMLInputElement>('input[aria-label="request path"]')?.value === '/v2/models/digits/infer');
    assert.deepEqual(JSON.parse(await body.inputValue()).inputs.map((t: any) => [t.name, t.datatype, t.shape]), [['input-0', 'FP64', [1, 4]]]);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('tryit-status').filter({ hasText: '200' }).waitFor();
    const v2 = JSON.parse(await page.getByTestId('tryit-answer').innerText());
    assert.equal(v2.model_name, 'digits');
    assert.equal(v2.outputs?.[0]?.data?.length, 1);
    await ui.shot('serving-tryit-v2');
    await page.getByRole('tab', { name: 'Metrics' }).click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="traffic-requests"]')?.textContent) >= n + 2, before);
    await ui.urlBecomes((u) => u.searchParams.get('tab') === 'metrics', '?tab=metrics');
    // the chart draws the series the page was given
    await page.locator('.isvc-chart canvas').first().waitFor();
    assert.match(await page.locator('.u-legend').first().innerText(), /requests\/s/);
    await ui.shot('serving-metrics');
  });

  it('moves a canary with the control, then promotes it and rolls back', async () => {
    const { page } = ui;
    // a new model with 20% of the traffic
    const r = await s.req('PATCH', `${isvcs}/digits`, JSON.stringify({ spec: { predictor: { canaryTrafficPercent: 20, model: { storageUri: `file://${join(models, 'const')}` } } } }), { 'content-type': 'application/merge-patch+json' });
    assert.equal(r.status, 200, r.text);
    await s.until('the canary split', async () => (split(await isvc()) === 'digits-predictor-00001=80,digits-predictor-00002=20' ? true : undefined), 120_000);
    await page.getByRole('tab', { name: 'Revisions & traffic' }).click();
    const bar = page.getByTestId('traffic-split');
    await bar.filter({ hasText: '20% r2' }).waitFor();
    assert.match(await bar.innerText(), /80% r1/);
    await ui.shot('serving-canary');

    await page.getByRole('spinbutton', { name: 'canary traffic percent (number)' }).fill('50');
    await page.getByRole('button', { name: 'Set canary to 50%' }).click();
    await s.until('spec at 50%', async () => ((await isvc()).spec.predictor.canaryTrafficPercent === 50 ? true : undefined));
    await s.until('the 50/50 split', async () => (split(await isvc()) === 'digits-predictor-00001=50,digits-predictor-00002=50' ? true : undefined));
    await bar.filter({ hasText: '50% r2' }).waitFor();
    assert.match(await bar.innerText(), /50% r1/);

    await page.getByRole('button', { name: 'Promote r2' }).click();
    await s.until('promoted', async () => {
      const o = await isvc();
      return o.spec.predictor.canaryTrafficPercent === undefined && split(o) === 'digits-predictor-00002=100' ? true : undefined;
    });
    await bar.filter({ hasText: '100% r2' }).waitFor();
    // now there is an earlier revision to go back to
    await page.getByRole('button', { name: 'Roll back to r1' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Promote r2' }).isDisabled(), true);
    await ui.shot('serving-promoted');
    // roll back: canaryTrafficPercent 0 pins traffic on the previous revision
    await page.getByRole('button', { name: 'Roll back to r1' }).click();
    await s.until('rolled back', async () => {
      const o = await isvc();
      return o.spec.predictor.canaryTrafficPercent === 0 && split(o).includes('digits-predictor-00001=100') ? true : undefined;
    });
    await bar.filter({ hasText: '100% r1' }).waitFor();
    // the browser logs the refused "try it" request (400) itself; nothing else may fail
    assert.deepEqual(ui.errors.filter((e) => !/status of 400/.test(e)), []);
  });

  it('serves the traffic history as JSON and as a stream, and refuses a bad name', async () => {
    const base = `${s.url}/skiff/v1/namespaces/default/inferenceservices`;
    const h = (await (await fetch(`${base}/digits/traffic`)).json()) as any;
    assert.equal(h.bucketSeconds, 5);
    const total = h.buckets.reduce((n: number, b: any) => n + b.requests, 0);
    assert.ok(total >= 3, `${total} requests in the history`);
    assert.ok(h.buckets.some((b: any) => b.revisions['digits-predictor-00001']?.requests > 0 && b.p50 > 0));
    const bad = await fetch(`${base}/Not_A_Name/traffic`);
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /Not_A_Name/);
    const ctl = new AbortController();
    const res = await fetch(`${base}/digits/traffic?watch=true`, { signal: ctl.signal });
    assert.equal(res.headers.get('content-type'), 'application/x-ndjson');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('\n')) text += new TextDecoder().decode((await reader.read()).value);
    assert.equal(JSON.parse(text.split('\n')[0] as string).type, 'HISTORY');
    // a request now arrives on the open stream as a bucket
    await s.req('POST', '/serving/default/digits/v1/models/digits:predict', JSON.stringify({ instances: [[1, 0, 0, 0]] }), { 'content-type': 'application/json' });
    while (!text.includes('"BUCKET"')) text += new TextDecoder().decode((await reader.read()).value);
    ctl.abort();
  });

  it('looks right in the dark theme', async () => {
    const dark = await openUi(s, { dark: true });
    try {
      for (const [path, name] of [
        ['/ui/default/inferenceservices', 'serving-list-dark'],
        ['/ui/default/inferenceservices/digits', 'serving-overview-dark'],
        ['/ui/default/inferenceservices/digits?tab=traffic', 'serving-canary-dark'],
        ['/ui/default/inferenceservices/digits?tab=metrics', 'serving-metrics-dark'],
        ['/ui/cluster/clusterservingruntimes/kserve-sklearnserver', 'serving-runtime-dark'],
      ] as const) {
        await dark.open(path);
        await dark.page.locator('.page h1').first().waitFor();
        if (name === 'serving-metrics-dark') await dark.page.locator('.isvc-chart canvas').first().waitFor();
        await dark.shot(name);
      }
      assert.deepEqual(dark.errors, []);
    } finally {
      await dark.close();
    }
  });
});
