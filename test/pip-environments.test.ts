// A lightweight component's pip install is the local node's image pull: it happens while the Pod
// waits, and never holds up another Run. Run by the real server; the package is built offline from
// a source tree whose build waits on a gate file, so the test decides when the install may finish.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { TestServer, repoRoot } from './harness.js';

const NS = '/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs';

/** An in-tree PEP 517 backend (no build requirements: pip needs no index) that waits for `gate`. */
function slowPackage(dir: string, gate: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'pyproject.toml'), '[build-system]\nrequires = []\nbuild-backend = "slow_backend"\nbackend-path = ["."]\n');
  writeFileSync(join(dir, 'slow_backend.py'), `import base64, hashlib, os, time, zipfile
def get_requires_for_build_wheel(config_settings=None):
    return []
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    for _ in range(3000):
        if os.path.exists(${JSON.stringify(gate)}):
            break
        time.sleep(0.1)
    files = {
        'skiff_slow_pkg.py': b'VALUE = "slow-pkg-ok"\\n',
        'skiff_slow_pkg-1.0.dist-info/METADATA': b'Metadata-Version: 2.1\\nName: skiff-slow-pkg\\nVersion: 1.0\\n',
        'skiff_slow_pkg-1.0.dist-info/WHEEL': b'Wheel-Version: 1.0\\nGenerator: skiff-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n',
    }
    record = ''.join('%s,sha256=%s,%d\\n' % (n, base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode(), len(d)) for n, d in files.items())
    files['skiff_slow_pkg-1.0.dist-info/RECORD'] = (record + 'skiff_slow_pkg-1.0.dist-info/RECORD,,\\n').encode()
    name = 'skiff_slow_pkg-1.0-py3-none-any.whl'
    with zipfile.ZipFile(os.path.join(wheel_directory, name), 'w') as z:
        for n, d in files.items():
            z.writestr(n, d)
    return name
`);
}

/** One task whose container is the kfp SDK's pip bootstrap in front of `python3 -c code`. */
function pipPipeline(name: string, pip: string, code: string): Record<string, unknown> {
  const script = `\nif ! [ -x "$(command -v pip)" ]; then\n    python3 -m ensurepip || python3 -m ensurepip --user || apt-get install python3-pip\nfi\n\nPIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip install --quiet --no-warn-script-location ${pip} && "$0" "$@"\n`;
  return {
    pipelineInfo: { name },
    schemaVersion: '2.1.0',
    sdkVersion: 'kfp-2.14.3',
    components: { 'comp-use': { executorLabel: 'exec-use' } },
    deploymentSpec: { executors: { 'exec-use': { container: { image: 'python:3.11', command: ['sh', '-c', script, 'python3', '-c', code] } } } },
    root: { dag: { tasks: { use: { componentRef: { name: 'comp-use' }, taskInfo: { name: 'use' } } } } },
  };
}

/** Plain shell tasks, one after the other. */
function plainPipeline(name: string, n: number): Record<string, unknown> {
  const tasks: Record<string, unknown> = {};
  const executors: Record<string, unknown> = {};
  const components: Record<string, unknown> = {};
  for (let i = 1; i <= n; i++) {
    components[`comp-step-${i}`] = { executorLabel: `exec-step-${i}` };
    executors[`exec-step-${i}`] = { container: { image: 'alpine', command: ['sh', '-c', `echo step ${i}`] } };
    tasks[`step-${i}`] = { componentRef: { name: `comp-step-${i}` }, taskInfo: { name: `step-${i}` }, ...(i > 1 ? { dependentTasks: [`step-${i - 1}`] } : {}) };
  }
  return { pipelineInfo: { name }, schemaVersion: '2.1.0', sdkVersion: 'kfp-2.14.3', components, deploymentSpec: { executors }, root: { dag: { tasks } } };
}

describe('pip environments as image pulls', { skip: !existsSync(join(repoRoot, '.venv', 'bin', 'python')) && 'no .venv: run scripts/setup.sh' }, () => {
  let s: TestServer;
  let work: string;
  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'skiff-pip-'));
    s = await TestServer.start();
  });
  after(async () => {
    await s.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  async function submit(spec: Record<string, unknown>): Promise<string> {
    const file = join(work, `${(spec['pipelineInfo'] as { name: string }).name}.yaml`);
    writeFileSync(file, YAML.stringify(spec));
    const r = await s.cli(['run', file]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const name = /run\.pipelines\.kubeflow\.org\/(\S+) created/.exec(r.stdout)?.[1];
    assert.ok(name, r.stdout);
    return name;
  }
  const run = (name: string): Promise<any> => s.get(`${NS}/${name}`);
  const podOf = async (runName: string): Promise<any> => (await s.get(`/api/v1/namespaces/default/pods?labelSelector=pipelines.kubeflow.org/run=${runName}`)).items[0];
  const eventsOf = async (pod: string): Promise<any[]> => (await s.get(`/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${pod}`)).items;
  const finished = (name: string): Promise<any> => s.until(`run ${name} to finish`, async () => {
    const r = await run(name);
    return ['SUCCEEDED', 'FAILED', 'CANCELED'].includes(r.status?.state) && r;
  }, 180_000);

  it("prepares a run's fresh pip environment while another run's tasks start and finish", async () => {
    const gate = join(work, 'release');
    const src = join(work, 'slow-pkg');
    slowPackage(src, gate);
    const a = await submit(pipPipeline('needs-slow-pkg', `--no-index '${src}'`, 'import skiff_slow_pkg; print(skiff_slow_pkg.VALUE)'));
    // A's Pod waits for its environment, as for an image being pulled
    const podA = await s.until('run A to have a Pod that is pulling', async () => {
      const p = await podOf(a);
      if (!p) return undefined;
      const evs = await eventsOf(p.metadata.name);
      return evs.some((e) => e.reason === 'Pulling') && p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ContainerCreating' && p;
    });
    const pulling = (await eventsOf(podA.metadata.name)).find((e) => e.reason === 'Pulling');
    assert.match(pulling.message, /preparing Python environment for pip packages .*slow-pkg/);
    assert.match(podA.status.containerStatuses[0].state.waiting.message, /preparing Python environment/);

    // B's plain tasks start and B finishes while A's install is still held at the gate
    const b = await submit(plainPipeline('plain', 3));
    const doneB = await finished(b);
    assert.equal(doneB.status.state, 'SUCCEEDED', JSON.stringify(doneB.status));
    const nowA = await podOf(a);
    assert.equal(nowA.status.phase, 'Pending');
    assert.ok(!(await eventsOf(nowA.metadata.name)).some((e) => e.reason === 'Pulled'), 'A was not Pulled before B finished');
    assert.equal((await run(a)).status.state, 'RUNNING');

    // the install may finish now: A's component runs in the new environment
    writeFileSync(gate, '');
    const doneA = await finished(a);
    assert.equal(doneA.status.state, 'SUCCEEDED', JSON.stringify(doneA.status));
    const evsA = await eventsOf(podA.metadata.name);
    const pulled = evsA.find((e) => e.reason === 'Pulled');
    assert.ok(pulled, JSON.stringify(evsA.map((e) => e.reason)));
    assert.match(pulled.message, /Successfully prepared Python environment for pip packages .* in \d+\.\ds/);
    // one recorder writes a Pod's events in the order they happened: resourceVersions say that order
    const order = [...evsA].sort((x, y) => Number(x.metadata.resourceVersion) - Number(y.metadata.resourceVersion)).map((e) => e.reason).filter((r) => ['Pulling', 'Pulled', 'Started'].includes(r));
    assert.deepEqual(order, ['Pulling', 'Pulled', 'Started']);
    const logs = await s.req('GET', `/api/v1/namespaces/default/pods/${podA.metadata.name}/log`);
    assert.match(logs.text, /slow-pkg-ok/);

    // a second run with the same packages finds the environment there
    const again = await submit(pipPipeline('needs-slow-pkg-again', `--no-index '${src}'`, 'import skiff_slow_pkg; print(skiff_slow_pkg.VALUE)'));
    assert.equal((await finished(again)).status.state, 'SUCCEEDED');
    const evsAgain = await eventsOf((await podOf(again)).metadata.name);
    assert.ok(!evsAgain.some((e) => e.reason === 'Pulling'));
    assert.match(evsAgain.find((e) => e.reason === 'Pulled')?.message ?? '', /already present on machine/);
  });

  it("fails the task naming pip's error when the environment cannot be made", async () => {
    const c = await submit(pipPipeline('missing-pkg', '--no-index skiff-no-such-pkg-xyz', 'print(1)'));
    const done = await finished(c);
    assert.equal(done.status.state, 'FAILED');
    assert.match(done.status.tasks.use.message, /No matching distribution found for skiff-no-such-pkg-xyz/);
    const pod = await podOf(c);
    assert.equal(pod.status.phase, 'Failed');
    assert.equal(pod.status.reason, 'PythonEnvironmentFailed');
    assert.match(pod.status.message, /pip install skiff-no-such-pkg-xyz failed/);
    const failed = (await eventsOf(pod.metadata.name)).find((e) => e.reason === 'Failed');
    assert.equal(failed?.type, 'Warning');
    assert.match(failed?.message ?? '', /No matching distribution found for skiff-no-such-pkg-xyz/);
  });
});
