import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LAST_APPLIED_ANNOTATION, deepEqual, merge3, prepareCreate, prepareUpdate } from './merge.js';
import type { KObject } from './types.js';

const manifest: KObject = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'pi', labels: { app: 'pi' } },
  spec: { parallelism: 2, template: { spec: { containers: [{ name: 'pi', image: 'perl' }], restartPolicy: 'Never' } } },
};

/** What the server would hold after creating `manifest`: defaults filled in, status set. */
function liveFrom(body: KObject): KObject {
  const spec = body.spec as { template: { spec: { containers: Record<string, unknown>[] } } };
  return {
    ...body,
    metadata: { ...body.metadata, namespace: 'default', uid: 'u1', resourceVersion: '7', creationTimestamp: '2025-01-01T00:00:00Z' },
    spec: {
      ...(body.spec as object),
      backoffLimit: 6,
      completions: 1,
      template: { spec: { ...spec.template.spec, containers: spec.template.spec.containers.map((c) => ({ ...c, imagePullPolicy: 'IfNotPresent' })) } },
    },
    status: { active: 1 },
  };
}

void test('create records the manifest in the last-applied annotation', () => {
  const body = prepareCreate(manifest);
  const recorded = JSON.parse(body.metadata?.annotations?.[LAST_APPLIED_ANNOTATION] ?? '{}') as KObject;
  assert.ok(deepEqual(recorded, manifest));
  assert.equal(manifest.metadata?.annotations, undefined, 'input not mutated');
});

void test('re-applying the same manifest over server defaults is unchanged', () => {
  const live = liveFrom(prepareCreate(manifest));
  const { changed } = prepareUpdate(live, manifest);
  assert.equal(changed, false);
});

void test('a changed field is configured; defaults, status and resourceVersion are kept', () => {
  const live = liveFrom(prepareCreate(manifest));
  const next = structuredClone(manifest);
  (next.spec as { parallelism: number }).parallelism = 3;
  const { body, changed } = prepareUpdate(live, next);
  assert.equal(changed, true);
  assert.equal((body.spec as { parallelism: number }).parallelism, 3);
  assert.equal((body.spec as { backoffLimit: number }).backoffLimit, 6);
  assert.equal(body.metadata?.resourceVersion, '7');
  assert.deepEqual(body.status, { active: 1 });
  const c = (body.spec as { template: { spec: { containers: Record<string, unknown>[] } } }).template.spec.containers[0];
  assert.equal(c?.imagePullPolicy, 'IfNotPresent');
});

void test('fields removed from the manifest since the last apply are removed', () => {
  const live = liveFrom(prepareCreate(manifest));
  const next = structuredClone(manifest);
  delete (next.spec as { parallelism?: number }).parallelism;
  delete next.metadata?.labels;
  const { body, changed } = prepareUpdate(live, next);
  assert.equal(changed, true);
  assert.equal((body.spec as { parallelism?: number }).parallelism, undefined);
  assert.equal(body.metadata?.labels, undefined);
  assert.equal((body.spec as { completions?: number }).completions, 1, 'server default untouched');
});

void test('label and annotation changes count; key order does not', () => {
  const live = liveFrom(prepareCreate(manifest));
  const relabeled = structuredClone(manifest);
  relabeled.metadata = { ...relabeled.metadata, labels: { app: 'pi', tier: 'x' } };
  assert.equal(prepareUpdate(live, relabeled).changed, true);
  const reordered: KObject = { kind: 'Job', spec: manifest.spec, metadata: { labels: { app: 'pi' }, name: 'pi' }, apiVersion: 'batch/v1' };
  assert.equal(prepareUpdate(live, reordered).changed, false);
});

void test('merge3: arrays that do not line up are replaced', () => {
  const live = { cs: [{ name: 'a', x: 1 }, { name: 'b', x: 2 }] };
  assert.deepEqual(merge3(live, { cs: [{ name: 'b' }, { name: 'a' }] }, undefined), { cs: [{ name: 'b' }, { name: 'a' }] });
  assert.deepEqual(merge3(live, { cs: [{ name: 'a' }, { name: 'b' }] }, undefined), live);
  assert.deepEqual(merge3({ args: ['1', '2'] }, { args: ['3'] }, undefined), { args: ['3'] });
});
