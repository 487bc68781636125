// The Job controller over time: deadlines, ttl, per-index backoff, foreign pods and deletion.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { JobLabels } from '../../api/batch.js';
import type { Condition } from '../../api/conditions.js';
import { Kinds } from '../../api/index.js';
import { GarbageCollector } from '../../control/gc.js';
import { FakeClock } from '../../testing/clock.js';
import { TestEnv } from '../../testing/fake-agent.js';
import { JobAnnotations, completionIndexOf, hasTrackingFinalizer } from './pods.js';
import { makeJob, makePod } from './testing.js';

let env: TestEnv;
let clock: FakeClock;

beforeEach(async () => {
  env = await TestEnv.start();
  clock = new FakeClock();
});

afterEach(async () => {
  await env.close();
});

function cond(job: { status?: { conditions?: Condition[] } } | undefined, type: string): Condition | undefined {
  return job?.status?.conditions?.find((c) => c.type === type);
}

void describe('activeDeadlineSeconds', () => {
  void it('wakes up at the deadline, deletes the pods, and fails with DeadlineExceeded', async () => {
    env.agent.script = () => undefined;
    const { ctrl } = env.runController({ now: clock.now });
    await env.createJob(makeJob('slow').parallelism(2).completions(2).activeDeadlineSeconds(30).obj());
    await env.waitFor('pods running', async () => (await env.job('slow'))?.status?.ready === 2);
    const job = await env.job('slow');
    const started = Date.parse(job?.status?.startTime ?? '');
    const r = await ctrl.opts.reconcile({ namespace: 'default', name: 'slow' });
    const expected = 30_000 - (clock.ms() - started);
    assert.ok(r && r.requeueAfter !== undefined && Math.abs(r.requeueAfter - expected) <= 1, `requeueAfter ${r?.requeueAfter} ≈ ${expected}`);

    clock.set(started + 30_000);
    ctrl.enqueue({ namespace: 'default', name: 'slow' });
    const failed = await env.waitForCondition('slow', 'Failed');
    assert.equal(cond(failed, 'FailureTarget')?.reason, 'DeadlineExceeded');
    assert.equal(cond(failed, 'Failed')?.reason, 'DeadlineExceeded');
    assert.equal(cond(failed, 'Failed')?.message, 'Job was active longer than specified deadline');
    assert.equal(failed.status?.failed, 2, 'pods stopped by a failing Job count as failed');
    assert.equal(failed.status?.active, undefined);
    assert.equal(failed.status?.terminating, 0);
    assert.equal((await env.pods()).length, 0);
    // the controller records the event once its status write is answered, a moment after readers see it
    await env.waitFor('the DeadlineExceeded event', async () => env.recorder.events.some((e) => e.reason === 'DeadlineExceeded' && e.type === 'Warning') || undefined);
    assert.equal(env.recorder.reasons().filter((r) => r === 'SuccessfulDelete').length, 2);
  });

  void it('counts the deadline from the resume, not from creation', async () => {
    env.agent.script = () => undefined;
    const { ctrl } = env.runController({ now: clock.now });
    await env.createJob(makeJob('later').activeDeadlineSeconds(10).suspend().obj());
    await env.waitForCondition('later', 'Suspended');
    clock.advance(60_000);
    await env.setSuspend('later', false);
    const job = await env.waitFor('running', async () => {
      const j = await env.job('later');
      return j?.status?.ready === 1 ? j : undefined;
    });
    assert.equal(Date.parse(job.status?.startTime ?? ''), Math.floor(clock.ms() / 1000) * 1000);
    const r = await ctrl.opts.reconcile({ namespace: 'default', name: 'later' });
    assert.ok((r?.requeueAfter ?? 0) > 9000);
    assert.equal(cond(await env.job('later'), 'FailureTarget'), undefined);
  });
});

void describe('ttlSecondsAfterFinished', () => {
  void it('deletes a finished Job at once when ttl is 0; the garbage collector takes its pods', async () => {
    const gc = new GarbageCollector(env.client, env.store, env.registry);
    await gc.start();
    try {
      env.runController();
      await env.createJob(makeJob('brief').ttlSecondsAfterFinished(0).obj());
      await env.waitFor('job deleted', async () => (await env.job('brief')) === undefined);
      await env.waitFor('pods deleted', async () => (await env.pods()).length === 0);
      assert.ok(env.recorder.reasons().includes('Completed'));
    } finally {
      await gc.stop();
    }
  });

  void it('waits ttl after the finish before deleting', async () => {
    const { ctrl } = env.runController({ now: clock.now });
    await env.createJob(makeJob('kept').ttlSecondsAfterFinished(100).obj());
    const done = await env.waitForCondition('kept', 'Complete');
    const finished = Date.parse(cond(done, 'Complete')?.lastTransitionTime ?? '');
    const r = await ctrl.opts.reconcile({ namespace: 'default', name: 'kept' });
    assert.equal(r?.requeueAfter, finished + 100_000 - clock.ms());
    clock.set(finished + 100_000);
    ctrl.enqueue({ namespace: 'default', name: 'kept' });
    await env.waitFor('job deleted', async () => (await env.job('kept')) === undefined);
  });
});

void describe('backoffLimitPerIndex', () => {
  void it('fails an index after its own limit, carries the failure count, and fails the Job with FailedIndexes', async () => {
    env.agent.script = (pod) => ({ exitCode: completionIndexOf(pod) === 1 ? 1 : 0 });
    env.runController();
    await env.createJob(makeJob('per').indexed(3).backoffLimitPerIndex(1).obj());
    const job = await env.waitForCondition('per', 'Failed');
    assert.equal(cond(job, 'Failed')?.reason, 'FailedIndexes');
    assert.equal(cond(job, 'Failed')?.message, 'Job has failed indexes');
    assert.equal(job.status?.failedIndexes, '1');
    assert.equal(job.status?.completedIndexes, '0,2');
    assert.equal(job.status?.succeeded, 2);
    assert.equal(job.status?.failed, 2);
    const pods = (await env.pods()).filter((p) => completionIndexOf(p) === 1);
    const counts = pods.map((p) => p.metadata.annotations?.[JobAnnotations.indexFailureCount]).sort();
    assert.deepEqual(counts, ['0', '1']);
    assert.equal(env.agent.created.length, 4);
  });

  void it('fails the Job once more indexes failed than maxFailedIndexes', async () => {
    env.agent.script = (pod) => ({ exitCode: completionIndexOf(pod) === 0 ? 0 : 1 });
    env.runController();
    await env.createJob(makeJob('maxf').indexed(4, 1).backoffLimitPerIndex(0).maxFailedIndexes(1).obj());
    const job = await env.waitForCondition('maxf', 'Failed');
    assert.equal(cond(job, 'Failed')?.reason, 'MaxFailedIndexesExceeded');
    assert.equal(cond(job, 'Failed')?.message, 'Job has exceeded the specified maximal number of failed indexes');
    assert.equal(job.status?.failedIndexes, '1,2');
  });

  void it('fails an index at once on a FailIndex rule', async () => {
    env.agent.script = (pod) => ({ exitCode: completionIndexOf(pod) === 2 ? 7 : 0 });
    env.runController();
    await env.createJob(makeJob('fi').indexed(3).backoffLimitPerIndex(5)
      .podFailurePolicy({ action: 'FailIndex', onExitCodes: { operator: 'In', values: [7] } }).obj());
    const job = await env.waitForCondition('fi', 'Failed');
    assert.equal(job.status?.failedIndexes, '2');
    assert.equal(job.status?.completedIndexes, '0,1');
    assert.equal(env.agent.created.length, 3);
  });
});

void describe('pods that are not the Job\'s own', () => {
  void it('ignores pods controlled by another Job of the same name, releasing their finalizers', async () => {
    const job = await env.createJob(makeJob('pi').obj());
    const foreign = makePod('pi-old').ownedBy({ ...job, metadata: { ...job.metadata, uid: 'an-older-job' } }).obj();
    await env.client.create(foreign);
    await env.client.create(makePod('stray').obj()); // no owner, no finalizer: untouched
    env.runController();
    const done = await env.waitForCondition('pi', 'Complete');
    assert.equal(done.status?.succeeded, 1);
    const old = await env.client.find(Kinds.Pod, { namespace: 'default', name: 'pi-old' });
    assert.ok(old && !hasTrackingFinalizer(old));
    assert.equal(env.agent.created.filter((n) => n !== 'pi-old' && n !== 'stray').length, 1);
  });

  void it('releases the pods of a deleted Job so the garbage collector can remove them', async () => {
    env.agent.script = () => undefined;
    env.runController();
    await env.createJob(makeJob('gone').parallelism(2).completions(2).obj());
    await env.waitFor('running', async () => (await env.job('gone'))?.status?.ready === 2);
    await env.client.delete(Kinds.Job, { namespace: 'default', name: 'gone' }, { propagationPolicy: 'Background' });
    await env.waitFor('finalizers released', async () => {
      const pods = await env.pods();
      return pods.length === 2 && pods.every((p) => !hasTrackingFinalizer(p));
    });
    // as the garbage collector would: the pods are deleted, stopped, and gone
    for (const p of await env.pods()) await env.client.delete(Kinds.Pod, { namespace: 'default', name: p.metadata.name });
    await env.waitFor('pods gone', async () => (await env.pods()).length === 0);
  });

  void it('releases pods orphaned by the garbage collector (no controller reference left)', async () => {
    const orphan = makePod('orphan').ownedBy({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'x', uid: 'u', resourceVersion: '1', creationTimestamp: '' } }).obj();
    orphan.metadata.ownerReferences = [];
    orphan.metadata.labels = { ...orphan.metadata.labels, [JobLabels.jobName]: 'x' };
    env.agent.script = () => undefined;
    env.runController();
    await env.client.create(orphan);
    await env.waitFor('released', async () => {
      const p = await env.client.find(Kinds.Pod, { namespace: 'default', name: 'orphan' });
      return p !== undefined && !hasTrackingFinalizer(p);
    });
  });

  void it('counts the finished pods of a Job being deleted in the foreground, and creates none', async () => {
    let n = 0;
    env.agent.script = () => (n++ === 0 ? { exitCode: 0 } : undefined);
    env.runController();
    await env.createJob(makeJob('fg').parallelism(2).completions(3).obj());
    await env.waitFor('one done, two running', async () => {
      const j = await env.job('fg');
      return (j?.status?.succeeded ?? 0) === 1 && j?.status?.ready === 2;
    });
    await env.client.delete(Kinds.Job, { namespace: 'default', name: 'fg' }, { propagationPolicy: 'Foreground' });
    await env.waitFor('finalizers released', async () => (await env.pods()).every((p) => !hasTrackingFinalizer(p)));
    const job = await env.job('fg');
    assert.equal(job?.status?.succeeded, 1);
    assert.equal(env.agent.created.length, 3);
  });
});
