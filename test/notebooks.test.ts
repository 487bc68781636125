// Kubeflow Notebooks end to end, with tenancy on: a team's owner applies a Notebook with Kubeflow's
// jupyter-scipy image and a PVC home, runs code in a kernel over the proxy's WebSocket (Jupyter's wire
// protocol), `pip install --user`s a package built in the notebook and writes a file in the home;
// after a stop and a start (the kubeflow-resource-stopped annotation) both are still there. Another
// team's owner is refused at the proxy, HTTP and WebSocket alike. The server answers only with its
// token, which the proxy sends: a request straight to the Pod's address without it is refused.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { startSkiff, type Skiff } from '../src/server/main.js';
import { clientsPython, kubectlBin, pollUntil, repoRoot, runProgram, tokenKubeconfig } from './harness.js';
import { execute } from './jupyter.js';

/** a notebook server takes its time to start on a loaded machine */
const until = <T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> => pollUntil(what, fn, timeoutMs);


const skip = !existsSync(kubectlBin) || !existsSync(clientsPython) ? 'the clients\' environment (.venv-clients) is not set up'
  : !existsSync(join(repoRoot, '.venv-notebooks', 'bin', 'jupyter-lab')) ? 'the notebooks\' environment (.venv-notebooks) is not set up' : false;

describe('Kubeflow Notebooks through the proxy, with tenancy on', { skip, timeout: 600_000 }, () => {
  let skiff: Skiff;
  let dir: string;
  const kubeconfigOf = (token: string): string => tokenKubeconfig(join(dir, 'data'), join(dir, `kubeconfig-${token}`), token, 'team-a');
  const kubectl = (who: string, args: string[], stdin?: string): ReturnType<typeof runProgram> =>
    who === 'admin'
      ? runProgram(kubectlBin, args, { KUBECONFIG: join(dir, 'data', 'kubeconfig'), HOME: dir }, stdin)
      : runProgram(kubectlBin, args, { KUBECONFIG: kubeconfigOf(`${who}-token`), HOME: dir }, stdin);
  // Jupyter's XSRF check, as JupyterLab passes it: the `_xsrf` cookie a page sets, echoed in a header
  let xsrf = '';
  const http = async (who: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string; headers: Headers }> => {
    const r = await fetch(`${skiff.url}${path}`, {
      method, redirect: 'manual',
      headers: {
        ...(who ? { authorization: `Bearer ${who}-token` } : {}), ...(body ? { 'content-type': 'application/json' } : {}),
        ...(xsrf ? { cookie: `_xsrf=${xsrf}`, 'x-xsrftoken': xsrf } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: r.status, text: await r.text(), headers: r.headers };
  };
  const prefix = '/notebook/team-a/nb';
  const newKernel = async (): Promise<string> => {
    const r = await http('alice', 'POST', `${prefix}/api/kernels`, { name: 'python3' });
    assert.equal(r.status, 201, r.text);
    return (JSON.parse(r.text) as { id: string }).id;
  };
  const channels = (kernel: string): string => `${skiff.url.replace(/^http/, 'ws')}${prefix}/api/kernels/${kernel}/channels?session_id=${randomUUID()}`;
  const waitServing = (): Promise<true> => until('the notebook server', async () => {
    const r = await http('alice', 'GET', `${prefix}/api/status`);
    return r.status === 200 || undefined;
  });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skiff-notebooks-'));
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, 'alice-token,alice@example.com,1001\nbob-token,bob@example.com,1002\n');
    skiff = await startSkiff({ dataDir: join(dir, 'data'), port: 0, tokenAuthFile: tokens, pythonZygote: false });
    for (const [name, owner] of [['team-a', 'alice@example.com'], ['team-b', 'bob@example.com']] as const) {
      const r = await kubectl('admin', ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name }, spec: { owner: { kind: 'User', name: owner } } }));
      assert.equal(r.code, 0, r.stderr);
    }
    await until('the owners\' bindings', async () => {
      const r = await kubectl('admin', ['get', 'rolebindings', '-A', '-o', 'name']);
      return (r.stdout.match(/namespaceadmin/gi) ?? []).length === 2 || undefined;
    });
  });
  after(async () => {
    await skiff?.stop({ containers: 'stop' });
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a kernel over the proxy, and keeps the home\'s files and user packages across stop and start', async () => {
    const manifest = [
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'nb-workspace' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
      {
        apiVersion: 'kubeflow.org/v1beta1', kind: 'Notebook', metadata: { name: 'nb', annotations: { 'notebooks.kubeflow.org/server-type': 'jupyter' } },
        spec: { template: { spec: {
          volumes: [{ name: 'home', persistentVolumeClaim: { claimName: 'nb-workspace' } }],
          containers: [{ name: 'nb', image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0', resources: { requests: { cpu: '100m', memory: '256Mi' } }, volumeMounts: [{ name: 'home', mountPath: '/home/jovyan' }] }],
        } } },
      },
    ].map((o) => YAML.stringify(o)).join('---\n');
    const applied = await kubectl('alice', ['apply', '-f', '-'], manifest);
    assert.equal(applied.code, 0, applied.stderr);
    const svc = await until('the Service', async () => {
      const r = await kubectl('alice', ['get', 'service', 'nb', '-o', 'json']);
      return r.code === 0 ? JSON.parse(r.stdout) as { spec: { ports: unknown[] } } : undefined;
    });
    assert.deepEqual(svc.spec.ports, [{ name: 'http-nb', port: 80, targetPort: 8888, protocol: 'TCP' }]);
    await until('readyReplicas 1', async () => {
      const r = await kubectl('alice', ['get', 'notebook', 'nb', '-o', 'jsonpath={.status.readyReplicas}']);
      return r.stdout === '1' || undefined;
    });
    await waitServing();
    const status = await http('alice', 'GET', `${prefix}/api/status`);
    assert.ok('started' in (JSON.parse(status.text) as object), status.text);

    const lab = await http('alice', 'GET', `${prefix}/lab`);
    assert.equal(lab.status, 200, lab.text.slice(0, 500));
    xsrf = /_xsrf=([^;]+)/.exec(lab.headers.get('set-cookie') ?? '')?.[1] ?? '';
    assert.ok(xsrf, 'JupyterLab\'s page sets the _xsrf cookie');
    let kernel = await newKernel();
    assert.equal((await execute(channels(kernel), 'alice-token', '1+1')).result, '2');
    const install = await execute(channels(kernel), 'alice-token', [
      'import os, subprocess, sys',
      "src = os.path.expanduser('~/src/skiffhello')",
      'os.makedirs(src, exist_ok=True)',
      "open(os.path.join(src, 'skiffhello.py'), 'w').write('GREETING = \"hello from the home volume\"\\n')",
      "open(os.path.join(src, 'setup.py'), 'w').write('from setuptools import setup\\nsetup(name=\"skiffhello\", version=\"0.1\", py_modules=[\"skiffhello\"])\\n')",
      "r = subprocess.run([sys.executable, '-m', 'pip', 'install', '--user', '--no-index', '--no-build-isolation', '--disable-pip-version-check', src], capture_output=True, text=True)",
      "print('pip', r.returncode, r.stderr[-800:])",
      "open(os.path.expanduser('~/notes.txt'), 'w').write('kept')",
      "print(os.environ['HOME'], os.environ['NB_PREFIX'])",
    ].join('\n'));
    assert.match(install.stdout, /pip 0 /, install.stdout);
    assert.match(install.stdout, /\/home\/jovyan \/notebook\/team-a\/nb/);

    // stop: the Pod goes and the status says so
    const stop = await kubectl('alice', ['annotate', 'notebook', 'nb', `kubeflow-resource-stopped=${new Date().toISOString()}`]);
    assert.equal(stop.code, 0, stop.stderr);
    await until('the Pod deleted', async () => {
      const r = await kubectl('alice', ['get', 'pod', 'nb-0', '-o', 'name']);
      return r.code !== 0 || undefined;
    });
    await until('readyReplicas 0', async () => {
      const r = await kubectl('alice', ['get', 'notebook', 'nb', '-o', 'jsonpath={.status.readyReplicas}']);
      return r.stdout === '0' || undefined;
    });
    assert.equal((await http('alice', 'GET', `${prefix}/api/status`)).status, 503);

    // start: a new Pod on the same home
    const start = await kubectl('alice', ['annotate', 'notebook', 'nb', 'kubeflow-resource-stopped-']);
    assert.equal(start.code, 0, start.stderr);
    await waitServing();
    kernel = await newKernel();
    const back = await execute(channels(kernel), 'alice-token', "import os, skiffhello\nprint(skiffhello.GREETING, open(os.path.expanduser('~/notes.txt')).read(), skiffhello.__file__)");
    assert.match(back.stdout, /hello from the home volume kept \/home\/jovyan\/\.local\/lib\//, back.stdout);
  });

  it('answers at the Pod\'s address only with its token, kept in a Secret the Pod refers to', async () => {
    const env = await kubectl('alice', ['get', 'pod', 'nb-0', '-o', 'jsonpath={.spec.containers[0].env}']);
    assert.deepEqual((JSON.parse(env.stdout) as { name: string }[]).find((e) => e.name === 'JUPYTER_TOKEN'),
      { name: 'JUPYTER_TOKEN', valueFrom: { secretKeyRef: { name: 'nb-notebook-token', key: 'token' } } }, 'by reference: the Pod spec holds no token');
    const secret = await kubectl('alice', ['get', 'secret', 'nb-notebook-token', '-o', 'jsonpath={.data.token}']);
    assert.equal(secret.code, 0, secret.stderr);
    const token = Buffer.from(secret.stdout, 'base64').toString();
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    const ip = (await kubectl('alice', ['get', 'pod', 'nb-0', '-o', 'jsonpath={.status.podIP}'])).stdout;
    assert.ok(ip, 'the Pod has an address');
    const direct = async (headers: Record<string, string>): Promise<number> => {
      const r = await fetch(`http://${ip}:8888${prefix}/api/kernels`, { headers });
      await r.body?.cancel();
      return r.status;
    };
    // Jupyter's own answer to a request without the token, or with another
    assert.equal(await direct({}), 403);
    assert.equal(await direct({ authorization: 'token guessed' }), 403);
    assert.equal(await direct({ authorization: `token ${token}` }), 200);
    // through the proxy the user's own credentials are enough; any token they send is not the server's
    assert.equal((await http('alice', 'GET', `${prefix}/api/kernels`)).status, 200);
  });

  it('refuses the proxy to users without access to the namespace', async () => {
    assert.equal((await http('bob', 'GET', `${prefix}/api/status`)).status, 403);
    assert.equal((await http('', 'GET', `${prefix}/api/status`)).status, 401);
    assert.equal((await http('bob', 'POST', `${prefix}/api/kernels`, { name: 'python3' })).status, 403);
    await assert.rejects(execute(`${skiff.url.replace(/^http/, 'ws')}${prefix}/api/kernels/x/channels`, 'bob-token', '1'), /WebSocket refused: 403/);
    assert.equal((await http('alice', 'GET', '/notebook/team-a/missing/api/status')).status, 404);
  });
});
