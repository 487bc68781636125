// The counting protocol as pure plans: record → release → flush.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JobStatus } from '../../api/batch.js';
import type { JobObject, PodObject } from './pods.js';
import { JobAnnotations } from './pods.js';
import { buildView, planFlush, planTracking } from './tracking.js';
import type { Finishing } from './tracking.js';
import { makeJob, makePod } from './testing.js';
import type { JobBuilder, PodBuilder } from './testing.js';

function stored(b: JobBuilder, status: JobStatus = {}): JobObject {
  const j = b.obj();
  return { ...j, metadata: { ...j.metadata, uid: 'job-uid', resourceVersion: '1', creationTimestamp: '2024-01-01T00:00:00Z' }, status } as JobObject;
}

function pod(job: JobObject, name: string, f: (b: PodBuilder) => PodBuilder = (b) => b): PodObject {
  return f(makePod(name).ownedBy(job)).obj() as PodObject;
}

function plan(job: JobObject, pods: PodObject[], finishing?: Finishing, deleting = false): { status?: JobStatus; release: string[] } {
  const p = planTracking(buildView(job, pods), finishing, deleting);
  return { status: p.status, release: p.release.map((x) => x.metadata.name) };
}

void describe('tracking plans', () => {
  const base = makeJob('pi').completions(3).parallelism(3);

  void it('records a finished pod before its finalizer goes, then releases it, then flushes it', () => {
    let job = stored(base);
    const done = pod(job, 'a', (b) => b.succeeded());
    const failed = pod(job, 'b', (b) => b.failedWith(1));
    const running = pod(job, 'c', (b) => b.running());
    const step1 = plan(job, [done, failed, running]);
    assert.deepEqual(step1.release, []);
    assert.deepEqual(step1.status?.uncountedTerminatedPods, { succeeded: ['uid-a'], failed: ['uid-b'] });

    job = stored(base, step1.status);
    const view = buildView(job, [done, failed, running]);
    assert.equal(view.succeeded, 1);
    assert.equal(view.failed, 1);
    const step2 = plan(job, [done, failed, running]);
    assert.equal(step2.status, undefined);
    assert.deepEqual(step2.release, ['a', 'b']);
    assert.equal(planFlush(job, [done, failed, running]), undefined, 'nothing moves while the finalizers are held');

    // one finalizer went before a crash; the flush counts that one only
    const released = { ...done, metadata: { ...done.metadata, finalizers: [] } };
    const flushed = planFlush(job, [released, failed, running]);
    assert.equal(flushed?.succeeded, 1);
    assert.equal(flushed?.failed, undefined);
    assert.deepEqual(flushed?.uncountedTerminatedPods, { failed: ['uid-b'] });
    // a pod that is gone altogether counts too
    const gone = planFlush(stored(base, flushed), [released, running]);
    assert.equal(gone?.succeeded, 1);
    assert.equal(gone?.failed, 1);
    assert.deepEqual(gone?.uncountedTerminatedPods, {});
  });

  void it('lets ignored failures go uncounted', () => {
    const job = stored(base.clone().podFailurePolicy({ action: 'Ignore', onExitCodes: { operator: 'In', values: [3] } }));
    const p = plan(job, [pod(job, 'a', (b) => b.failedWith(3))]);
    assert.equal(p.status, undefined);
    assert.deepEqual(p.release, ['a']);
    assert.equal(buildView(job, [pod(job, 'a', (b) => b.failedWith(3))]).failed, 0);
  });

  void it('a deleted pod counts as failed unless only failed pods are replaced', () => {
    const job = stored(base);
    const deleted = pod(job, 'a', (b) => b.running().deletionTimestamp('2024-01-01T00:00:05Z'));
    assert.deepEqual(plan(job, [deleted]).status?.uncountedTerminatedPods, { failed: ['uid-a'] });
    const onlyFailed = stored(base.clone().podReplacementPolicy('Failed'));
    assert.deepEqual(plan(onlyFailed, [deleted]), { status: undefined, release: [] });
  });

  void it('while failing, every pod that did not succeed counts as failed', () => {
    const job = stored(base);
    const p = plan(job, [pod(job, 'a', (b) => b.running()), pod(job, 'b', (b) => b.succeeded())], 'failure');
    assert.deepEqual(p.status?.uncountedTerminatedPods, { succeeded: ['uid-b'], failed: ['uid-a'] });
  });

  void it('while succeeding, or while the Job is deleted, running pods go uncounted', () => {
    const job = stored(base);
    assert.deepEqual(plan(job, [pod(job, 'a', (b) => b.running())], 'success'), { status: undefined, release: ['a'] });
    assert.deepEqual(plan(job, [pod(job, 'a', (b) => b.running())], undefined, true), { status: undefined, release: ['a'] });
  });

  void it('Indexed: successes go to completedIndexes (idempotent), not to uncounted', () => {
    let job = stored(makeJob('pi').indexed(3));
    const a = pod(job, 'a', (b) => b.index(0).succeeded());
    const dup = pod(job, 'dup', (b) => b.index(0).succeeded());
    const c = pod(job, 'c', (b) => b.index(2).succeeded());
    const beyond = pod(job, 'x', (b) => b.index(7).succeeded());
    const step1 = plan(job, [a, dup, c, beyond]);
    assert.equal(step1.status?.completedIndexes, '0,2');
    assert.equal(step1.status?.succeeded, 2);
    assert.deepEqual(step1.status?.uncountedTerminatedPods, {});
    assert.deepEqual(step1.release, []);
    job = stored(makeJob('pi').indexed(3), step1.status);
    assert.deepEqual(plan(job, [a, dup, c, beyond]).release.sort(), ['a', 'c', 'dup', 'x']);
    assert.equal(buildView(job, [a, dup, c, beyond]).succeeded, 2);
  });

  void it('backoffLimitPerIndex: keeps the failed pod until its replacement runs, then counts it; fails the index at the limit', () => {
    const b = makeJob('pi').indexed(2).backoffLimitPerIndex(1);
    const job = stored(b);
    const first = pod(job, 'f0', (x) => x.index(0).annotation(JobAnnotations.indexFailureCount, '0').failedWith(1));
    let view = buildView(job, [first]);
    assert.equal(view.delayed.get(0)?.metadata.name, 'f0');
    assert.deepEqual(plan(job, [first]), { status: { failedIndexes: '', uncountedTerminatedPods: {} }, release: [] });
    const j2 = stored(b, { failedIndexes: '', uncountedTerminatedPods: {} });
    assert.deepEqual(plan(j2, [first]), { status: undefined, release: [] });
    const replacement = pod(job, 'r0', (x) => x.index(0).annotation(JobAnnotations.indexFailureCount, '1').running());
    assert.deepEqual(plan(j2, [first, replacement]).status?.uncountedTerminatedPods, { failed: ['uid-f0'] });
    const second = pod(job, 'r0', (x) => x.index(0).annotation(JobAnnotations.indexFailureCount, '1').failedWith(1));
    view = buildView(j2, [second]);
    assert.equal(view.failedIndexes?.length, 1);
    assert.equal(view.delayed.size, 0);
    const p = plan(j2, [second]);
    assert.equal(p.status?.failedIndexes, '0');
    assert.deepEqual(p.status?.uncountedTerminatedPods, { failed: ['uid-r0'] });
  });
});
