import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Container, Pod } from '../../api/core-types.js';
import { PythonEnvironments } from './python-envs.js';
import { PythonPods } from './python-pods.js';

const RUNNER = ['sh', '-ec', 'program_path=$(mktemp -d)\nprintf "%s" "$0" > "$program_path/ephemeral_component.py"\n_KFP_RUNTIME=true python3 -m kfp.dsl.executor_main --component_module_path "$program_path/ephemeral_component.py" "$@"\n', 'def f():\n    pass\n'];
const container = (pip: string): Container => ({ name: 'main', image: 'python:3.11', command: ['sh', '-c', `PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip install --quiet ${pip} && "$0" "$@"\n`, ...RUNNER], args: ['--function_to_execute', 'f'] });
const pod = (c: Container): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: [c] } });

describe('PythonPods', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-pypods-'));
  // the runner is never called: these cases decide without building anything
  const envs = new PythonEnvironments({ root: dir, basePython: '/nonexistent/python', run: () => Promise.reject(new Error('no process may start here')) });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("reads the bootstrap's packages without kfp's pin, and keeps the rest of the command", () => {
    const pull = new PythonPods(envs, undefined).pull(container(`'kfp==2.14.3' '--no-deps' 'yapf'`));
    assert.ok(pull);
    assert.deepEqual(pull.packages, ['yapf']);
    assert.deepEqual(pull.rest.command, RUNNER);
  });

  it('needs no environment for a kfp-only bootstrap: the container runs the rest of its command on the base', async () => {
    const py = new PythonPods(envs, undefined);
    const c = container(`'kfp==2.14.3' '--no-deps'`);
    const pull = py.pull(c);
    assert.ok(pull && py.present(pull));
    assert.deepEqual(await py.prepare(pull), {});
    assert.deepEqual(await py.launch(pod(c), c, { pull }), { command: RUNNER, args: ['--function_to_execute', 'f'], env: {} });
  });

  it('puts a prepared environment first on PATH and names it VIRTUAL_ENV', async () => {
    const py = new PythonPods(envs, undefined);
    const c = container(`'yapf'`);
    const pull = py.pull(c);
    assert.ok(pull && !py.present(pull));
    const launch = await py.launch(pod(c), c, { pull, binDir: '/envs/abc/bin' });
    assert.deepEqual(launch, { command: RUNNER, args: ['--function_to_execute', 'f'], env: { VIRTUAL_ENV: '/envs/abc' }, pathPrefix: '/envs/abc/bin' });
  });

  it('leaves containers without a bootstrap, and every container when there are no cached environments, as written', async () => {
    const plain: Container = { name: 'main', image: 'alpine', command: ['sh', '-c', 'echo hi'] };
    assert.equal(new PythonPods(envs, undefined).pull(plain), undefined);
    assert.equal(await new PythonPods(envs, undefined).launch(pod(plain), plain), undefined);
    assert.equal(new PythonPods(undefined, undefined).pull(container(`'yapf'`)), undefined);
  });
});
