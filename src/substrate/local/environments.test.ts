import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Environments, imageBinds, imageDirOnHost } from './environments.js';

const mnist = { files: [{ path: '/opt/pytorch-mnist', source: '/repo/images/katib-pytorch-mnist' }], dirs: ['/katib'], entrypoint: ['python3', '/opt/pytorch-mnist/mnist.py'] };

describe('environments: the files an image provides', () => {
  it('binds the image files read-only and gives each container its own writable directories', () => {
    assert.deepEqual(imageBinds(mnist, '/pods/p1', 'training-container'), [
      { source: '/repo/images/katib-pytorch-mnist', target: '/opt/pytorch-mnist', readOnly: true },
      { source: '/pods/p1/image/training-container/%2Fkatib', target: '/katib', readOnly: false },
    ]);
    assert.equal(imageDirOnHost('/pods/p1', 'training-container', '/katib'), '/pods/p1/image/training-container/%2Fkatib');
    assert.notEqual(imageDirOnHost('/pods/p1', 'c', '/a/b'), imageDirOnHost('/pods/p1', 'c', '/a_b'));
    assert.deepEqual(imageBinds({ path: ['/venv/bin'] }, '/pods/p1', 'c'), []);
  });

  it('keeps an image\'s files with the image that matched, on top of the default environment', () => {
    const envs = new Environments([{ image: 'ghcr.io/kubeflow/katib/pytorch-mnist-cpu*', environment: mnist }], { path: ['/venv/bin'], env: { SKIFF_HOME: '/repo' } });
    const hit = envs.forImage('ghcr.io/kubeflow/katib/pytorch-mnist-cpu:latest');
    assert.deepEqual(hit.files, mnist.files);
    assert.deepEqual(hit.dirs, ['/katib']);
    assert.deepEqual(hit.path, ['/venv/bin']);
    assert.deepEqual(hit.env, { SKIFF_HOME: '/repo' });
    assert.equal(envs.forImage('ghcr.io/kubeflow/katib/pytorch-mnist-gpu:latest').files, undefined);
    assert.equal(envs.forImage('python:3.11').files, undefined);
  });

  it('takes the first rule that matches, so rules listed earlier win', () => {
    const own = { path: ['/mine/bin'] };
    const envs = new Environments([
      { image: 'ghcr.io/kubeflow/katib/pytorch-mnist-cpu:v2', environment: own },
      { image: 'ghcr.io/kubeflow/katib/pytorch-mnist-cpu*', environment: mnist },
    ], {});
    assert.deepEqual(envs.forImage('ghcr.io/kubeflow/katib/pytorch-mnist-cpu:v2'), { ...own, env: {} });
    assert.deepEqual(envs.forImage('ghcr.io/kubeflow/katib/pytorch-mnist-cpu:latest').files, mnist.files);
  });

  it('refuses a rule whose paths are not absolute, naming the field', () => {
    const bad = (environment: unknown): (() => unknown) => () => new Environments([{ image: 'a', environment: {} }, { image: 'b*', environment: environment as never }], {});
    assert.throws(bad({ files: [{ path: 'opt/x', source: '/s' }] }), /^Error: environments\[1\]\.environment\.files\[0\]\.path: "opt\/x" is not an absolute path$/);
    assert.throws(bad({ files: [{ path: '/opt/x', source: 'images/x' }] }), /environments\[1\]\.environment\.files\[0\]\.source: "images\/x" is not an absolute path/);
    assert.throws(bad({ files: { path: '/opt/x', source: '/s' } }), /environments\[1\]\.environment\.files: must be a list/);
    assert.throws(bad({ dirs: ['/katib', 'tmp'] }), /environments\[1\]\.environment\.dirs\[1\]: "tmp" is not an absolute path/);
    assert.throws(bad(undefined), /environments\[1\]\.environment: required/);
    assert.throws(() => new Environments([{ image: '', environment: {} }], {}), /environments\[0\]\.image: an image name pattern is required/);
  });
});
