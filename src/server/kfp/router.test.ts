import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Route } from './router.js';
import { Router, splitPath } from './router.js';

const handle = async (): Promise<unknown> => ({});
const r = (method: string, pattern: string): Route<null> => ({ method, pattern, handle });

describe('KFP route table', () => {
  const routes = [
    r('POST', '/pipelines/upload'),
    r('GET', '/pipelines/names/{name}'),
    r('GET', '/pipelines/{pipeline_id}'),
    r('GET', '/pipelines/{pipeline_id}/versions'),
    r('POST', '/runs/{run_id}:archive'),
    r('POST', '/runs/{run_id}:{verb}'),
    r('GET', '/runs/{run_id}/nodes/{node_id}/artifacts/{artifact_name}:read'),
  ];
  const router = new Router(routes);
  const match = (method: string, path: string): [string, Record<string, string>] | undefined => {
    const m = router.match(method, `/apis/v2beta1${path}`);
    return m && [m.route.pattern, m.params];
  };

  it('takes the first route whose method, segments and verb match, with its parameters', () => {
    assert.deepEqual(match('POST', '/pipelines/upload'), ['/pipelines/upload', {}]);
    assert.deepEqual(match('GET', '/pipelines/upload'), ['/pipelines/{pipeline_id}', { pipeline_id: 'upload' }]);
    assert.deepEqual(match('GET', '/pipelines/names/versions'), ['/pipelines/names/{name}', { name: 'versions' }]);
    assert.deepEqual(match('GET', '/pipelines/p1/versions'), ['/pipelines/{pipeline_id}/versions', { pipeline_id: 'p1' }]);
    assert.deepEqual(match('POST', '/runs/r1:archive'), ['/runs/{run_id}:archive', { run_id: 'r1' }]);
    assert.deepEqual(match('POST', '/runs/r1:retry'), ['/runs/{run_id}:{verb}', { run_id: 'r1', verb: 'retry' }]);
    assert.deepEqual(match('GET', '/runs/r1/nodes/task-a/artifacts/model:read'), ['/runs/{run_id}/nodes/{node_id}/artifacts/{artifact_name}:read', { run_id: 'r1', node_id: 'task-a', artifact_name: 'model' }]);
  });

  it('decodes each segment', () => {
    assert.deepEqual(match('GET', '/pipelines/names/my%20pipeline'), ['/pipelines/names/{name}', { name: 'my pipeline' }]);
  });

  it('matches nothing for another method, a missing or extra verb, or another length', () => {
    assert.equal(match('DELETE', '/pipelines/p1'), undefined);
    assert.equal(match('POST', '/runs/r1'), undefined);
    assert.equal(match('GET', '/pipelines/p1:archive'), undefined);
    assert.equal(match('GET', '/runs/r1/nodes/t/artifacts/m'), undefined);
    assert.equal(match('GET', '/pipelines/p1/versions/v1/extra'), undefined);
  });

  it('splits the verb off the last segment only', () => {
    assert.deepEqual(splitPath('/apis/v2beta1/runs/r1:terminate'), { segs: ['runs', 'r1'], verb: 'terminate' });
    assert.deepEqual(splitPath('/apis/v2beta1/runs/r1'), { segs: ['runs', 'r1'], verb: undefined });
  });
});
