// The story of NVIDIA's GPU pipeline, on CPU (examples/stories/gpu-pipeline/): the compiled pipeline
// submitted with kfp.Client preprocesses generated images, trains a small ResNet, exports it to ONNX
// and deploys it as an InferenceService on KServe's Triton runtime; then the web app, a Pod behind a
// Service, is reached through the API server's service proxy as a browser reaches it. An image of
// each class gets the class the trained network gives it in Python (torch, from the training step's
// saved model), a text file a 400 with PIL's message, and Chromium shows the page after an upload.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromiumPath, openUi } from './browser.js';
import { TestServer, kubectlBin, repoRoot, runProgram } from './harness.js';

const python = join(repoRoot, '.venv', 'bin', 'python');
const story = join(repoRoot, 'examples', 'stories', 'gpu-pipeline');
const skip = !existsSync(python) || !existsSync(kubectlBin) ? 'the Python environments (.venv, .venv-clients) are not set up' : false;
const proxyBase = '/api/v1/namespaces/default/services/shapes-webapp/proxy';

// submits the compiled pipeline as a user would, and waits for the run
const SUBMIT = `
import json, sys, warnings
warnings.filterwarnings('ignore')
import kfp
c = kfp.Client(host=sys.argv[1])
run = c.create_run_from_pipeline_package(sys.argv[2], run_name='gpu-pipeline-story', enable_caching=False)
done = c.wait_for_run_completion(run.run_id, timeout=900)
print('RESULT ' + json.dumps({'run_id': run.run_id, 'state': str(done.state), 'error': str(getattr(done, 'error', None))}))
`;

// draws one test image per class (not the pipeline's own images: other sizes, colours, places), and
// classifies each with the trained network in Python as the pipeline's preprocessing prepares it
const EXPECT = `
import json, os, sys
import numpy as np, torch
from PIL import Image, ImageDraw
model_dir, out_dir = sys.argv[1], sys.argv[2]
spec = json.load(open(os.path.join(model_dir, 'preprocess.json')))
net = torch.jit.load(os.path.join(model_dir, 'model.pt')).eval()
out = {}
for i, kind in enumerate(spec['classes']):
    img = Image.new('RGB', (80, 80), (20 + 10 * i, 30, 50))
    d = ImageDraw.Draw(img)
    box = [18 + 3 * i, 16, 62, 60 - 2 * i]
    if kind == 'circle':
        d.ellipse(box, fill=(250, 200, 60))
    elif kind == 'square':
        d.rectangle(box, fill=(90, 220, 240))
    else:
        d.polygon([((box[0] + box[2]) // 2, box[1]), (box[0], box[3]), (box[2], box[3])], fill=(240, 120, 200))
    path = os.path.join(out_dir, kind + '.png')
    img.save(path)
    x = np.asarray(Image.open(path).convert('RGB').resize((spec['size'], spec['size']), Image.BILINEAR), dtype=np.float32) / 255.0
    x = (x.transpose(2, 0, 1) - np.array(spec['mean'], dtype=np.float32)[:, None, None]) / np.array(spec['std'], dtype=np.float32)[:, None, None]
    with torch.no_grad():
        scores = net(torch.from_numpy(x[None].astype(np.float32)))[0]
    out[kind] = {'file': path, 'predicted': spec['classes'][int(scores.argmax())], 'scores': scores.tolist()}
print('RESULT ' + json.dumps(out))
`;

function result(stdout: string): any {
  const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
  assert.ok(line, stdout);
  return JSON.parse(line.slice('RESULT '.length));
}

/** every file named `name` under `dir` */
function findFiles(dir: string, name: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isDirectory()) findFiles(p, name, out);
    else if (e === name) out.push(p);
  }
  return out;
}

describe('story: NVIDIA\'s GPU pipeline on CPU', { skip, timeout: 1_200_000 }, () => {
  let s: TestServer;
  let work: string;
  let expected: Record<string, { file: string; predicted: string; scores: number[] }> = {};

  /** an upload to the web app through the service proxy, as a browser's form sends it */
  const upload = async (file: string, name: string, type: string, accept = 'application/json'): Promise<{ status: number; text: string }> => {
    const form = new FormData();
    form.append('image', new Blob([readFileSync(file)], { type }), name);
    const r = await fetch(`${s.url}${proxyBase}/classify`, { method: 'POST', body: form, headers: { accept } });
    return { status: r.status, text: await r.text() };
  };

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'skiff-gpu-story-'));
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('the pipeline runs: preprocess, train, export to ONNX, deploy on the Triton runtime', async () => {
    const t0 = Date.now();
    const r = await runProgram(python, ['-c', SUBMIT, s.url, join(story, 'gpu_pipeline.yaml')], { PYTHONWARNINGS: 'ignore' });
    const out = result(r.stdout + r.stderr);
    console.log(`pipeline run ${out.run_id}: ${out.state} in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
    assert.equal(out.state, 'SUCCEEDED', `${JSON.stringify(out)}\n${r.stderr.slice(-3000)}`);
    const isvc = await s.get('/apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices/shapes-resnet');
    assert.equal(isvc.status.conditions.find((c: any) => c.type === 'Ready')?.status, 'True');
    assert.equal(isvc.status.clusterServingRuntimeName, 'kserve-tritonserver');
    const uri: string = isvc.spec.predictor.model.storageUri;
    console.log(`InferenceService shapes-resnet serves ${uri}`);
    // the training step's saved model, beside the exported one in the run's pipeline root
    const models = findFiles(s.dataDir, 'model.pt').filter((p) => existsSync(join(p, '..', 'state.pt')));
    assert.equal(models.length, 1, models.join('\n'));
    const e = await runProgram(python, ['-c', EXPECT, join(models[0] as string, '..'), work], { PYTHONWARNINGS: 'ignore' });
    assert.equal(e.code, 0, e.stderr);
    expected = result(e.stdout);
    console.log(`the trained network in Python: ${Object.entries(expected).map(([k, v]) => `${k} -> ${v.predicted}`).join(', ')}`);
    // the shapes are easy: a network that learnt them names each one (the pipeline's seed is fixed)
    for (const [kind, want] of Object.entries(expected)) assert.equal(want.predicted, kind, `the trained network calls the ${kind} a ${want.predicted}`);
    const cm = await s.get('/api/v1/namespaces/default/configmaps/shapes-resnet-preprocess');
    assert.deepEqual(JSON.parse(cm.data['preprocess.json']).classes, ['circle', 'square', 'triangle']);
  });

  it('the web app is reached through the service proxy once its Pod is ready, and answers the class the model gives', async () => {
    const none = await s.req('GET', `${proxyBase}/`);
    assert.equal(none.status, 404, 'no Service yet');
    const cm = await s.kubectl(['create', 'configmap', 'shapes-webapp', `--from-file=${join(story, 'webapp.py')}`]);
    assert.equal(cm.code, 0, cm.stderr);
    const apply = await s.kubectl(['apply', '-f', join(story, 'webapp.yaml')]);
    assert.equal(apply.code, 0, apply.stderr);
    // 503 until the Pod runs and its server listens; then the page
    const page = await s.until('the web app\'s page through the service proxy', async () => {
      const r = await s.req('GET', `${proxyBase}/`);
      if (r.status === 503) assert.match(r.body.message, /no endpoints available for service "shapes-webapp"|error trying to reach/);
      return r.status === 200 ? r.text : undefined;
    }, 120_000);
    assert.match(page, /<form method="post" action="classify" enctype="multipart\/form-data">/);
    const raw = await s.kubectl(['get', '--raw', `${proxyBase}/healthz`]);
    assert.equal(raw.stdout, 'ok', raw.stderr);
    // what a person with kubectl opens in a browser: kubectl proxy, then the same path on it
    const kp = spawn(kubectlBin, ['proxy', '--port=0'], { env: { ...process.env, KUBECONFIG: s.kubeconfig, HOME: s.dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const at = await new Promise<string>((resolve, reject) => {
        let out = '';
        kp.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /Starting to serve on (\S+)/.exec(out);
          if (m) resolve(m[1] as string);
        });
        kp.once('exit', (code) => reject(new Error(`kubectl proxy exited with ${code}: ${out}`)));
      });
      const viaKubectl = await fetch(`http://${at}${proxyBase}/`);
      assert.equal(viaKubectl.status, 200);
      assert.match(await viaKubectl.text(), /Which shape is it\?/);
    } finally {
      kp.kill();
    }
    const moved = await fetch(`${s.url}${proxyBase}`, { redirect: 'manual' });
    assert.equal(moved.status, 301);
    assert.equal(moved.headers.get('location'), `${proxyBase}/`);
    for (const [kind, want] of Object.entries(expected)) {
      const r = await upload(want.file, `${kind}.png`, 'image/png');
      assert.equal(r.status, 200, r.text);
      const got = JSON.parse(r.text);
      console.log(`web app: ${kind}.png -> ${got.class} (${JSON.stringify(got.probabilities)})`);
      assert.equal(got.class, want.predicted, `${kind}: the web app says ${got.class}, the network in Python ${want.predicted}`);
      const served = Object.values(got.scores as Record<string, number>);
      want.scores.forEach((v, i) => assert.ok(Math.abs(v - (served[i] as number)) < 1e-3, `${kind}: score ${i} served ${served[i]}, ${v} in Python`));
      const html = await upload(want.file, `${kind}.png`, 'image/png', 'text/html');
      assert.match(html.text, new RegExp(`<span class="class" id="class">${want.predicted}</span>`));
    }
  });

  it('a file that is not an image is 400, with PIL\'s message naming it', async () => {
    const notes = join(work, 'notes.txt');
    writeFileSync(notes, 'these are notes, not a picture\n');
    const r = await upload(notes, 'notes.txt', 'text/plain', 'text/html');
    assert.equal(r.status, 400, r.text);
    assert.match(r.text, /that file is not an image: cannot identify image file &#x27;notes.txt&#x27;/);
    const j = await upload(notes, 'notes.txt', 'text/plain');
    assert.equal(j.status, 400);
    assert.match(JSON.parse(j.text).error, /not an image: cannot identify image file 'notes.txt'/);
  });

  it('in Chromium: the page, a file chosen, the class shown', { skip: !existsSync(chromiumPath) && 'no Chromium' }, async () => {
    const ui = await openUi(s, { width: 900, height: 700 });
    try {
      await ui.open(`${proxyBase}/`);
      const kind = 'triangle';
      await ui.page.setInputFiles('input[type=file]', expected[kind]?.file as string);
      await Promise.all([ui.page.waitForNavigation(), ui.page.click('button[type=submit]')]);
      assert.equal(new URL(ui.page.url()).pathname, `${proxyBase}/classify`);
      assert.equal(await ui.page.textContent('#class'), expected[kind]?.predicted);
      console.log(`screenshot: ${await ui.shot('story-gpu-pipeline-webapp')}`);
      assert.deepEqual(ui.errors, []);
    } finally {
      await ui.close();
    }
  });
});
