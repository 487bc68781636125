import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { Environments } from '../substrate/local/environments.js';
import { compileConfig } from './config.js';

it('built-in images: Katib\'s pytorch-mnist images get their program, and a user\'s rule wins over them', () => {
  const mine = { path: ['/mine/bin'] };
  const config = compileConfig({ dataDir: '/tmp/skiff-config-test', environments: [{ image: 'ghcr.io/kubeflow/katib/pytorch-mnist-gpu*', environment: mine }] });
  const envs = new Environments(config.environments, {});
  for (const image of ['ghcr.io/kubeflow/katib/pytorch-mnist-cpu:latest', 'docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727', 'kubeflowkatib/pytorch-mnist-cpu']) {
    const env = envs.forImage(image);
    assert.equal(env.files?.[0]?.path, '/opt/pytorch-mnist', image);
    assert.ok(existsSync(join(env.files?.[0]?.source ?? '', 'mnist.py')), `${image}: ${env.files?.[0]?.source}/mnist.py`);
    assert.deepEqual(env.dirs, ['/katib']);
    assert.deepEqual(env.entrypoint, ['python3', '/opt/pytorch-mnist/mnist.py']);
  }
  assert.deepEqual(envs.forImage('ghcr.io/kubeflow/katib/pytorch-mnist-gpu:latest'), { ...mine, env: {} });
  assert.equal(envs.forImage('ghcr.io/kubeflow/katib/pytorch-mnist:latest').files, undefined, 'neither -cpu nor -gpu: not Katib\'s image');
  assert.throws(() => compileConfig({ environments: { image: 'x' } as never }), /^Error: environments: must be a list/);
});

it('built-in images: Katib\'s simple-pbt image gets its program, its WORKDIR, ENTRYPOINT and own checkpoint directory', () => {
  const envs = new Environments(compileConfig({ dataDir: '/tmp/skiff-config-test' }).environments, {});
  for (const image of ['ghcr.io/kubeflow/katib/simple-pbt:latest', 'docker.io/kubeflowkatib/simple-pbt:v0.14.0', 'kubeflowkatib/simple-pbt']) {
    const env = envs.forImage(image);
    assert.deepEqual(env.files?.map((f) => f.path), ['/opt/pbt'], image);
    assert.ok(existsSync(join(env.files?.[0]?.source ?? '', 'pbt_test.py')), `${image}: ${env.files?.[0]?.source}/pbt_test.py`);
    assert.deepEqual(env.dirs, ['/var/log/katib/checkpoints']);
    assert.equal(env.workingDir, '/opt/pbt');
    assert.deepEqual(env.entrypoint, ['python3', '/opt/pbt/pbt_test.py']);
  }
  assert.equal(envs.forImage('ghcr.io/kubeflow/katib/simple-pbt-other/x').files?.[0]?.path, '/opt/pbt', 'the rule is a prefix, as the mnist ones');
  assert.equal(envs.forImage('ghcr.io/kubeflow/katib/pbt:latest').files, undefined);
});

it('built-in images: Kubeflow\'s Jupyter images run JupyterLab under NB_PREFIX with HOME at /home/jovyan', () => {
  const envs = new Environments(compileConfig({ dataDir: '/tmp/skiff-config-test' }).environments, {});
  for (const image of ['ghcr.io/kubeflow/kubeflow/notebook-servers/jupyter-scipy:latest', 'kubeflownotebookswg/jupyter-pytorch-full:v1.9.0', 'docker.io/kubeflownotebookswg/jupyter-tensorflow-cuda-full:v1.8.0', 'ghcr.io/kubeflow/kubeflow/notebook-servers/jupyter:latest']) {
    const env = envs.forImage(image);
    assert.equal(env.env?.HOME, '/home/jovyan', image);
    assert.equal(env.env?.PYTHONUSERBASE, '/home/jovyan/.local', image);
    assert.deepEqual(env.dirs, ['/home/jovyan']);
    assert.match(env.entrypoint?.join(' ') ?? '', /jupyter lab .*--port=8888 .*--ServerApp\.base_url="\$\{NB_PREFIX\}"/);
    assert.ok(env.path?.some((p) => p.endsWith('.venv-notebooks/bin')), image);
  }
  assert.equal(envs.forImage('ghcr.io/kubeflow/kubeflow/notebook-servers/codeserver-python:latest').entrypoint, undefined, 'code-server is no Jupyter image');
});

it('built-in images: the Jupyter server\'s token is JUPYTER_TOKEN\'s, and empty without it', () => {
  const env = new Environments(compileConfig({ dataDir: '/tmp/skiff-config-test' }).environments, {}).forImage('kubeflownotebookswg/jupyter-scipy:v1.9.0');
  const [shell, flag, script] = env.entrypoint ?? [];
  assert.ok(shell && flag && script);
  // a `jupyter` that prints its arguments, one a line, stands in for the real one
  const bin = mkdtempSync(join(tmpdir(), 'skiff-jupyter-'));
  try {
    writeFileSync(join(bin, 'jupyter'), '#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n');
    chmodSync(join(bin, 'jupyter'), 0o755);
    const tokenArg = (extra: Record<string, string>): string | undefined => {
      const r = spawnSync(shell, [flag, script], { env: { PATH: `${bin}:/usr/bin:/bin`, NB_PREFIX: '/notebook/a/b', ...extra }, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout.split('\n').find((a) => a.startsWith('--ServerApp.token='));
    };
    assert.equal(tokenArg({ JUPYTER_TOKEN: 'a b$c\'"' }), '--ServerApp.token=a b$c\'"', 'passed as one argument, as it is');
    assert.equal(tokenArg({}), '--ServerApp.token=', 'no token, as Kubeflow\'s images run');
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
});

it('built-in images: TensorFlow\'s images and the TFJob examples\' images run in the TensorFlow environment', () => {
  const envs = new Environments(compileConfig({ dataDir: '/tmp/skiff-config-test' }).environments, {});
  for (const image of [
    'tensorflow/tensorflow', 'tensorflow/tensorflow:2.15.0', 'tensorflow/tensorflow:latest-gpu', 'docker.io/tensorflow/tensorflow:2.20.0',
    'tensorflow/tensorflow@sha256:0123', 'kubeflow/tf-mnist-with-summaries:latest', 'kubeflow/tf-dist-mnist-test:latest',
    'kubeflow/tf-multi-worker-strategy:latest', 'gcr.io/kubeflow-ci/tf-dist-mnist-test:1.0', 'docker.io/kubeflow/tf-sample:latest',
  ]) {
    const env = envs.forImage(image);
    assert.ok(env.path?.[0]?.endsWith('/.venv-tensorflow/bin'), `${image}: ${JSON.stringify(env.path)}`);
    assert.ok(env.env?.VIRTUAL_ENV?.endsWith('/.venv-tensorflow'), image);
    assert.equal(env.entrypoint, undefined, `${image}: its program is not shipped, so no entrypoint stands in for it`);
  }
  // the TF Serving runtime's model server: TensorFlow's python3 first, then python/skiff-model-server
  const server = envs.forImage('skiff/model-server-tensorflow');
  assert.ok(server.path?.[0]?.endsWith('/.venv-tensorflow/bin'), JSON.stringify(server.path));
  assert.ok(server.path?.[1]?.endsWith('/python'), JSON.stringify(server.path));
  assert.ok(!envs.forImage('skiff/model-server').path?.some((p) => p.includes('.venv-tensorflow')));
  for (const image of ['tensorflow/serving:2.15.0', 'tensorflow/tensorflow-other:1', 'kubeflownotebookswg/jupyter-tensorflow-full:v1.9.0', 'python:3.11']) {
    assert.ok(!envs.forImage(image).path?.some((p) => p.includes('.venv-tensorflow')), image);
  }
});
