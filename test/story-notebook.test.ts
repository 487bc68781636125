// The notebook story (examples/stories/notebook/), end to end with tenancy on: an admin applies
// Kubeflow's default Profile, its owner applies a Notebook running as the namespace's default-editor,
// uploads the story's notebook and runs its cells over the kernel's WebSocket as JupyterLab does. The
// cells train a model in the kernel, then submit a pipeline with kfp.Client() and a PyTorchJob with
// TrainingClient(), neither given any configuration: both find Skiff from inside the Pod (the
// in-cluster Service names, the service account's token) and act as that service account. The run and
// the job land in the notebook's namespace, succeed, and the dashboard shows both.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openUi, type Ui } from './browser.js';
import { TestServer, clientsPython, kubectlBin, pollUntil, repoRoot, runProgram, tokenKubeconfig } from './harness.js';
import { execute, type Execution } from './jupyter.js';

const story = join(repoRoot, 'examples', 'stories', 'notebook');
const skip = !existsSync(kubectlBin) || !existsSync(clientsPython) ? 'the clients\' environment (.venv-clients) is not set up'
  : !existsSync(join(repoRoot, '.venv-notebooks', 'bin', 'jupyter-lab')) ? 'the notebooks\' environment (.venv-notebooks) is not set up' : false;

interface NotebookFile {
  cells: { cell_type: string; source: string[] }[];
}

describe('the notebook story: train, then submit a pipeline and a PyTorchJob from the notebook', { skip, timeout: 900_000 }, () => {
  let s: TestServer;
  let ui: Ui | undefined;
  const ns = 'kubeflow-user-example-com';
  const prefix = `/notebook/${ns}/story`;
  /** kubectl as the admin (the kubeconfig `skiff up` wrote) or as the user, in the Profile's namespace */
  const kubectl = (who: 'admin' | 'user', args: string[]): ReturnType<typeof runProgram> =>
    runProgram(kubectlBin, ['-n', ns, ...args], { KUBECONFIG: who === 'admin' ? join(s.dataDir, 'kubeconfig') : tokenKubeconfig(s.dataDir, join(s.dataDir, 'kubeconfig-user'), 'user-token', ns), HOME: s.dataDir });
  // Jupyter's XSRF check, as JupyterLab passes it: the `_xsrf` cookie its page sets, echoed in a header
  let xsrf = '';
  const user = async (method: string, path: string, body?: unknown): Promise<{ status: number; text: string; headers: Headers }> => {
    const r = await fetch(`${s.url}${path}`, {
      method, redirect: 'manual',
      headers: {
        authorization: 'Bearer user-token', ...(body ? { 'content-type': 'application/json' } : {}),
        ...(xsrf ? { cookie: `_xsrf=${xsrf}`, 'x-xsrftoken': xsrf } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: r.status, text: await r.text(), headers: r.headers };
  };
  /** each code cell's execution, in order */
  const outputs: Execution[] = [];
  let runId = '';

  before(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'skiff-story-notebook-'));
    // Kubeflow's default user; the admin is the kubeconfig's
    writeFileSync(join(dataDir, 'tokens.csv'), 'user-token,user@example.com,1001\n');
    s = await TestServer.start({ dataDir, config: { tokenAuthFile: 'tokens.csv', pythonZygote: false } });
  });
  after(async () => {
    await ui?.close();
    await s?.cleanup();
  });

  it('runs the notebook\'s cells in a Notebook of the Profile\'s namespace, as its default-editor', async () => {
    const t0 = Date.now();
    const profile = await kubectl('admin', ['apply', '-f', join(story, 'profile.yaml')]);
    assert.equal(profile.code, 0, profile.stderr);
    await pollUntil('the default-editor ServiceAccount', async () => (await kubectl('admin', ['get', 'serviceaccount', 'default-editor', '-o', 'name'])).code === 0 || undefined);
    const applied = await kubectl('user', ['apply', '-f', join(story, 'notebook.yaml')]);
    assert.equal(applied.code, 0, applied.stderr);
    await pollUntil('the notebook server', async () => (await user('GET', `${prefix}/api/status`)).status === 200 || undefined, 180_000);
    const lab = await user('GET', `${prefix}/lab`);
    assert.equal(lab.status, 200, lab.text.slice(0, 500));
    xsrf = /_xsrf=([^;]+)/.exec(lab.headers.get('set-cookie') ?? '')?.[1] ?? '';
    assert.ok(xsrf, 'JupyterLab\'s page sets the _xsrf cookie');

    // as a user drops the file into JupyterLab and opens it: the contents API, then a session with a kernel
    const nb = JSON.parse(readFileSync(join(story, 'notebook-story.ipynb'), 'utf8')) as NotebookFile;
    const put = await user('PUT', `${prefix}/api/contents/notebook-story.ipynb`, { type: 'notebook', format: 'json', content: nb });
    assert.equal(put.status, 201, put.text);
    const session = await user('POST', `${prefix}/api/sessions`, { path: 'notebook-story.ipynb', name: 'notebook-story.ipynb', type: 'notebook', kernel: { name: 'python3' } });
    assert.equal(session.status, 201, session.text);
    const kernel = (JSON.parse(session.text) as { kernel: { id: string } }).kernel.id;
    const channels = `${s.url.replace(/^http/, 'ws')}${prefix}/api/kernels/${kernel}/channels?session_id=${randomUUID()}`;
    for (const cell of nb.cells.filter((c) => c.cell_type === 'code')) {
      const out = await execute(channels, 'user-token', cell.source.join(''), 600_000);
      assert.equal(out.status, 'ok', `${cell.source[0] ?? ''}\n${out.stdout}`);
      outputs.push(out);
    }
    console.log(`# the notebook's cells ran in ${Math.round((Date.now() - t0) / 1000)} s (from the Profile's apply)`);

    const [local, clients, , submit, job, waited] = outputs as [Execution, Execution, Execution, Execution, Execution, Execution];
    const accuracy = Number(/accuracy (\d\.\d+)/.exec(local.stdout)?.[1]);
    assert.ok(accuracy > 0.9, local.stdout);
    // no configuration: the in-cluster names, KFP's Service and the kubernetes Service's HTTPS endpoint
    assert.match(clients.stdout, new RegExp(`namespace ${ns}\\n`));
    assert.match(clients.stdout, /KFP API ml-pipeline\.kubeflow\.svc\.cluster\.local:8888\n/);
    assert.match(clients.stdout, /Kubernetes API https:\/\/\S+:\d+\n/);
    runId = /run id ([0-9a-f-]{36})/.exec(submit.stdout)?.[1] ?? '';
    assert.ok(runId, submit.stdout);
    // the links the SDK shows in a notebook, relative to where Kubeflow's dashboard serves KFP's UI
    assert.ok(submit.displays.some((d) => d.includes(`href="/pipeline/#/runs/details/${runId}"`)), submit.displays.join('\n'));
    assert.match(job.stdout, new RegExp(`PyTorchJob digits-ddp created in ${ns}`));
    assert.match(waited.stdout, new RegExp(`run ${runId} SUCCEEDED`));
    assert.match(waited.stdout, /PyTorchJob digits-ddp Succeeded/);
    const losses = [...waited.stdout.matchAll(/epoch \d+ loss (\d+\.\d+)/g)].map((m) => Number(m[1]));
    assert.equal(losses.length, 6, waited.stdout);
    assert.ok((losses.at(-1) ?? 1) < (losses[0] ?? 0) / 2, `the loss falls: ${losses.join(', ')}`);
  });

  it('the run and the job are in the notebook\'s namespace, made by its service account', async () => {
    assert.ok(runId, 'the notebook ran');
    const get = async (path: string): Promise<any> => {
      const r = await user('GET', path);
      assert.equal(r.status, 200, `${path}: ${r.text}`);
      return JSON.parse(r.text);
    };
    const run = await get(`/apis/pipelines.kubeflow.org/v2beta1/namespaces/${ns}/runs/${runId}`);
    assert.equal(run.metadata.namespace, ns);
    const kfpRun = await get(`/apis/v2beta1/runs/${runId}`);
    assert.equal(kfpRun.state, 'SUCCEEDED');
    const experiment = await get(`/apis/v2beta1/experiments/${kfpRun.experiment_id as string}`);
    assert.equal(experiment.display_name, 'notebook-story');
    assert.equal(experiment.namespace, ns);
    const tasks = (kfpRun.run_details?.task_details ?? []) as { display_name: string; state: string }[];
    for (const step of ['prepare-digits', 'train-digits']) assert.ok(tasks.some((t) => t.display_name === step && t.state === 'SUCCEEDED'), `${step}: ${JSON.stringify(tasks.map((t) => [t.display_name, t.state]))}`);
    const pj = await get(`/apis/kubeflow.org/v1/namespaces/${ns}/pytorchjobs/digits-ddp`);
    assert.equal(pj.metadata.namespace, ns);
    assert.ok((pj.status.conditions as { type: string; status: string }[]).some((c) => c.type === 'Succeeded' && c.status === 'True'));
    assert.deepEqual(Object.keys(pj.spec.pytorchReplicaSpecs).sort(), ['Master', 'Worker']);
    // the notebook acted as its Pod's service account, which the Profile's editor binding allows
    const pod = await get(`/api/v1/namespaces/${ns}/pods/story-0`);
    assert.equal(pod.spec.serviceAccountName, 'default-editor');
    const env = (pod.spec.containers[0].env ?? []) as { name: string }[];
    assert.ok(!env.some((e) => e.name === 'KF_PIPELINES_ENDPOINT'), 'no endpoint in the Pod spec');
  });

  it('the dashboard shows the run (through the link the notebook printed) and the PyTorchJob', async () => {
    assert.ok(runId, 'the notebook ran');
    ui = await openUi(s);
    await ui.context.addInitScript(() => sessionStorage.setItem('skiff-token', 'user-token'));
    await ui.open(`/pipeline/#/runs/details/${runId}`);
    try {
      await ui.page.waitForURL((u) => u.pathname === `/ui/${ns}/runs/${runId}`);
    } catch (e) {
      await ui.shot('story-notebook-failed');
      throw new Error(`${(e as Error).message}\nat ${ui.page.url()} (build/test-output/screenshots/story-notebook-failed.png)\n${ui.errors.join('\n')}`);
    }
    await ui.page.locator('.objhead .badge', { hasText: 'SUCCEEDED' }).waitFor();
    await ui.page.locator('[data-testid=run-graph][data-ready=true]').waitFor();
    await ui.shot('story-notebook-run');
    await ui.open(`/ui/${ns}/pytorchjobs/digits-ddp`);
    await ui.page.getByRole('region', { name: 'Master replicas' }).getByRole('link', { name: 'digits-ddp-master-0' }).waitFor();
    await ui.page.locator('.objhead .badge', { hasText: 'Succeeded' }).waitFor();
    await ui.shot('story-notebook-pytorchjob');
  });
});

