import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { JobLabels } from '../../api/batch.js';
import type { Pod } from '../../api/core-types.js';
import { Kinds, defaultRegistry } from '../../api/index.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { failuresAfterLastSuccess, remainingBackoff, remainingIndexBackoff } from './backoff.js';
import type { JobObject, PodObject } from './pods.js';
import { JobAnnotations, buildPod, completionIndexOf, sortForRemoval } from './pods.js';
import { makeJob, makePod } from './testing.js';

async function stored(b: ReturnType<typeof makeJob>): Promise<JobObject> {
  const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  return client.create(b.obj());
}

void describe('builders', () => {
  void it('makeJob and makePod make valid objects', async () => {
    const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    const job = await client.create(makeJob('pi').indexed(3).backoffLimitPerIndex(1).obj());
    await client.create(makePod('p').ownedBy(job).index(0).obj());
    assert.ok(await client.find(Kinds.Pod, { namespace: 'default', name: 'p' }));
  });
});

void describe('buildPod', () => {
  void it('NonIndexed: template labels, owner, finalizer, generateName <job>-', async () => {
    const job = await stored(makeJob('pi').label('app', 'x').annotation('note', 'y'));
    const pod = buildPod(job);
    assert.equal(pod.metadata.generateName, 'pi-');
    assert.equal(pod.metadata.namespace, 'default');
    assert.deepEqual(pod.metadata.finalizers, [JobLabels.trackingFinalizer]);
    assert.deepEqual(pod.metadata.ownerReferences, [{ apiVersion: 'batch/v1', kind: 'Job', name: 'pi', uid: job.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    assert.equal(pod.metadata.labels?.app, 'x');
    for (const k of [JobLabels.controllerUid, JobLabels.legacyControllerUid]) assert.equal(pod.metadata.labels?.[k], job.metadata.uid);
    for (const k of [JobLabels.jobName, JobLabels.legacyJobName]) assert.equal(pod.metadata.labels?.[k], 'pi');
    assert.equal(pod.metadata.annotations?.note, 'y');
    assert.equal(pod.spec.hostname, undefined);
    assert.equal(pod.spec.containers[0]?.env, undefined);
  });

  void it('Indexed: index annotation and label, hostname, JOB_COMPLETION_INDEX in every container, failure counts', async () => {
    const job = await stored(makeJob('pi').indexed(3).backoffLimitPerIndex(2).initContainer('init').container('side'));
    const pod = buildPod(job, { index: 2, failureCount: 1, ignoredFailureCount: 3 });
    assert.equal(pod.metadata.generateName, 'pi-2-');
    assert.equal(completionIndexOf(pod), 2);
    assert.equal(pod.metadata.labels?.[JobLabels.completionIndex], '2');
    assert.equal(pod.spec.hostname, 'pi-2');
    assert.equal(pod.metadata.annotations?.[JobAnnotations.indexFailureCount], '1');
    assert.equal(pod.metadata.annotations?.[JobAnnotations.indexIgnoredFailureCount], '3');
    const all = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
    assert.equal(all.length, 3);
    for (const c of all) {
      assert.deepEqual(c.env, [{ name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { fieldPath: "metadata.labels['batch.kubernetes.io/job-completion-index']" } } }]);
    }
    // the template is not touched
    assert.equal(job.spec.template.spec.containers[0]?.env, undefined);
  });

  void it('keeps generated names within 63 characters', async () => {
    const long = 'a'.repeat(60);
    const job = await stored(makeJob(long).indexed(20));
    assert.equal(buildPod(job, { index: 12 }).metadata.generateName, `${'a'.repeat(54)}-12-`);
    assert.equal(buildPod({ ...job, spec: { ...job.spec, completionMode: 'NonIndexed' } }).metadata.generateName?.length, 58);
  });
});

void describe('pods for removal', () => {
  void it('deletes unscheduled before scheduled, pending before running, not ready before ready', () => {
    const a = makePod('a').nodeName('n').running(true).obj() as PodObject;
    const b = makePod('b').nodeName('n').running(false).obj() as PodObject;
    const c = makePod('c').nodeName('n').obj() as PodObject;
    const d = makePod('d').obj() as PodObject;
    assert.deepEqual(sortForRemoval([a, b, c, d]).map((p) => p.metadata.name), ['d', 'c', 'b', 'a']);
  });
});

void describe('pod backoff', () => {
  const opts = { baseMs: 10_000, maxMs: 360_000 };
  void it('doubles from the base per failure, capped, counted from the last failure', () => {
    assert.equal(remainingBackoff(0, 0, 1000, opts), 0);
    assert.equal(remainingBackoff(1, 1000, 1000, opts), 10_000);
    assert.equal(remainingBackoff(1, 1000, 5000, opts), 6_000);
    assert.equal(remainingBackoff(3, 0, 0, opts), 40_000);
    assert.equal(remainingBackoff(20, 0, 0, opts), 360_000);
    assert.equal(remainingBackoff(2, 0, 25_000, opts), 0);
  });

  void it('counts failures since the last success, not pods the controller deleted itself', () => {
    const failed = (name: string, at: string): PodObject => makePod(name).failedWith(1, undefined, at).obj() as PodObject;
    const ok = makePod('ok').succeeded('2024-01-01T00:01:00Z').obj() as PodObject;
    const early = failed('early', '2024-01-01T00:00:30Z');
    const late1 = failed('late1', '2024-01-01T00:02:00Z');
    const late2 = failed('late2', '2024-01-01T00:03:00Z');
    const deleted = makePod('del').deletionTimestamp('2024-01-01T00:04:00Z').running().obj() as PodObject;
    const isFailed = (p: Pod): boolean => p.status?.phase === 'Failed' || Boolean(p.metadata.deletionTimestamp);
    assert.deepEqual(failuresAfterLastSuccess([early, ok, late1, late2, deleted], isFailed), { count: 2, lastFailureMs: Date.parse('2024-01-01T00:03:00Z') });
    assert.deepEqual(failuresAfterLastSuccess([early], isFailed), { count: 1, lastFailureMs: Date.parse('2024-01-01T00:00:30Z') });
  });

  void it('per index: the failure counts of the pod being replaced, plus its own failure', () => {
    const at = Date.parse('2024-01-01T00:00:10Z');
    const p = makePod('p').annotation(JobAnnotations.indexFailureCount, '1').annotation(JobAnnotations.indexIgnoredFailureCount, '1').failedWith(1).obj() as PodObject;
    assert.equal(remainingIndexBackoff(p, at, opts), 40_000);
    assert.equal(remainingIndexBackoff(undefined, at, opts), 0);
  });
});
