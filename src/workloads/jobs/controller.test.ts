// The Job controller end to end: the real controller on an in-memory store, a fake node agent.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Condition } from '../../api/conditions.js';
import { JobLabels } from '../../api/batch.js';
import { Kinds } from '../../api/index.js';
import { TestEnv } from '../../testing/fake-agent.js';
import { completionIndexOf, hasTrackingFinalizer } from './pods.js';
import { makeJob } from './testing.js';

let env: TestEnv;

beforeEach(async () => {
  env = await TestEnv.start();
});

afterEach(async () => {
  await env.close();
});

function cond(job: { status?: { conditions?: Condition[] } } | undefined, type: string): Condition | undefined {
  return job?.status?.conditions?.find((c) => c.type === type);
}

void describe('Job controller', () => {
  void it('runs a NonIndexed job to completion, counting each pod once', async () => {
    env.runController();
    await env.createJob(makeJob('pi').completions(3).parallelism(2).obj());
    const job = await env.waitForCondition('pi', 'Complete');
    assert.equal(job.status?.succeeded, 3);
    assert.equal(job.status?.failed, undefined);
    assert.equal(job.status?.active, undefined);
    assert.equal(job.status?.ready, 0);
    assert.equal(job.status?.terminating, 0);
    assert.deepEqual(job.status?.uncountedTerminatedPods, {});
    assert.ok(job.status?.startTime);
    assert.ok(job.status?.completionTime);
    const met = cond(job, 'SuccessCriteriaMet');
    assert.equal(met?.reason, 'CompletionsReached');
    assert.equal(met?.message, 'Reached expected number of succeeded pods');
    assert.equal(cond(job, 'Complete')?.reason, 'CompletionsReached');
    assert.equal(env.agent.created.length, 3);
    const pods = await env.pods();
    assert.equal(pods.length, 3);
    assert.ok(pods.every((p) => !hasTrackingFinalizer(p)));
    assert.ok(pods.every((p) => p.metadata.name.startsWith('pi-') && p.metadata.ownerReferences?.[0]?.uid === job.metadata.uid));
    const reasons = env.recorder.reasons();
    assert.equal(reasons.filter((r) => r === 'SuccessfulCreate').length, 3);
    assert.equal(reasons.filter((r) => r === 'Completed').length, 1);
    assert.ok(env.recorder.events.some((e) => e.message === `Created pod: ${pods[0]?.metadata.name}`));
  });

  void it('completes an Indexed job with completedIndexes "0-2"', async () => {
    env.runController();
    await env.createJob(makeJob('idx').indexed(3).obj());
    const job = await env.waitForCondition('idx', 'Complete');
    assert.equal(job.status?.completedIndexes, '0-2');
    assert.equal(job.status?.succeeded, 3);
    const pods = await env.pods();
    assert.deepEqual(pods.map(completionIndexOf).sort(), [0, 1, 2]);
    for (const p of pods) {
      const ix = completionIndexOf(p);
      assert.ok(p.metadata.name.startsWith(`idx-${ix}-`));
      assert.equal(p.spec.hostname, `idx-${ix}`);
      assert.equal(p.metadata.labels?.[JobLabels.completionIndex], String(ix));
      assert.equal(p.metadata.labels?.[JobLabels.jobName], 'idx');
      const env0 = p.spec.containers[0]?.env?.find((e) => e.name === 'JOB_COMPLETION_INDEX');
      assert.equal(env0?.valueFrom?.fieldRef?.fieldPath, "metadata.labels['batch.kubernetes.io/job-completion-index']");
    }
  });
});

void describe('Job controller: failures', () => {
  void it('fails with BackoffLimitExceeded once failures pass backoffLimit', async () => {
    env.agent.script = () => ({ exitCode: 1 });
    env.runController();
    await env.createJob(makeJob('pi').backoffLimit(2).obj());
    const job = await env.waitForCondition('pi', 'Failed');
    assert.equal(job.status?.failed, 3);
    assert.equal(job.status?.succeeded, undefined);
    assert.equal(job.status?.completionTime, undefined);
    for (const type of ['FailureTarget', 'Failed']) {
      assert.equal(cond(job, type)?.reason, 'BackoffLimitExceeded');
      assert.equal(cond(job, type)?.message, 'Job has reached the specified backoff limit');
    }
    assert.equal(env.agent.created.length, 3);
    const ev = env.recorder.events.find((e) => e.reason === 'BackoffLimitExceeded');
    assert.deepEqual(ev && { type: ev.type, message: ev.message }, { type: 'Warning', message: 'Job has reached the specified backoff limit' });
  });

  void it('waits the pod backoff before replacing a failed pod', async () => {
    env.agent.script = () => ({ exitCode: 1 });
    env.runController({ podBackoffBaseMs: 150, podBackoffMaxMs: 1000 });
    await env.createJob(makeJob('pi').backoffLimit(1).obj());
    await env.waitForCondition('pi', 'Failed');
    assert.equal(env.agent.createdAt.length, 2);
    assert.ok((env.agent.createdAt[1] ?? 0) - (env.agent.createdAt[0] ?? 0) >= 140, 'second pod created after the backoff');
  });

  void it('counts restarts of running containers against backoffLimit when restartPolicy is OnFailure', async () => {
    env.agent.script = () => ({ restarts: 2 });
    env.runController();
    await env.createJob(makeJob('pi').restartPolicy('OnFailure').backoffLimit(2).obj());
    const job = await env.waitForCondition('pi', 'Failed');
    assert.equal(cond(job, 'Failed')?.reason, 'BackoffLimitExceeded');
    // the running pod is deleted and, as the Job failed, counted as failed
    assert.equal(job.status?.failed, 1);
    await env.waitFor('pods gone', async () => (await env.pods()).length === 0);
  });

  void it('fails the Job on a podFailurePolicy FailJob rule, with Kubernetes\' message', async () => {
    env.agent.script = () => ({ exitCode: 42 });
    env.runController();
    await env.createJob(makeJob('pi').backoffLimit(6)
      .podFailurePolicy({ action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } }).obj());
    const job = await env.waitForCondition('pi', 'Failed');
    const pod = env.agent.created[0];
    const message = `Container main for pod default/${pod} failed with exit code 42 matching FailJob rule at index 0`;
    assert.equal(cond(job, 'FailureTarget')?.reason, 'PodFailurePolicy');
    assert.equal(cond(job, 'Failed')?.message, message);
    assert.equal(job.status?.failed, 1);
    assert.equal(env.agent.created.length, 1);
    assert.ok(env.recorder.events.some((e) => e.reason === 'PodFailurePolicy' && e.type === 'Warning' && e.message === message));
  });

  void it('does not count failures that match an Ignore rule (exit code or DisruptionTarget)', async () => {
    let n = 0;
    env.agent.script = () => {
      n++;
      if (n === 1) return { exitCode: 3 };
      if (n === 2) return { exitCode: 137, conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler' }] };
      return { exitCode: 0 };
    };
    env.runController();
    await env.createJob(makeJob('pi').backoffLimit(0).podFailurePolicy(
      { action: 'Ignore', onExitCodes: { operator: 'In', values: [3] } },
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] },
      { action: 'FailJob', onExitCodes: { operator: 'NotIn', values: [0] } },
    ).obj());
    const job = await env.waitForCondition('pi', 'Complete');
    assert.equal(job.status?.failed, undefined);
    assert.equal(job.status?.succeeded, 1);
    assert.equal(env.agent.created.length, 3);
  });

  void it('counts failures that match a Count rule', async () => {
    env.agent.script = () => ({ exitCode: 5 });
    env.runController();
    await env.createJob(makeJob('pi').backoffLimit(0).podFailurePolicy({ action: 'Count', onExitCodes: { operator: 'In', values: [5] } }).obj());
    const job = await env.waitForCondition('pi', 'Failed');
    assert.equal(cond(job, 'Failed')?.reason, 'BackoffLimitExceeded');
    assert.equal(job.status?.failed, 1);
  });
});

void describe('Job controller: suspend', () => {
  void it('suspends (deleting pods, uncounted), resumes, and completes', async () => {
    let hold = true;
    env.agent.script = () => (hold ? undefined : { exitCode: 0 });
    env.runController();
    await env.createJob(makeJob('pi').completions(2).parallelism(2).suspend().obj());
    let job = await env.waitForCondition('pi', 'Suspended');
    assert.equal(cond(job, 'Suspended')?.reason, 'JobSuspended');
    assert.equal(cond(job, 'Suspended')?.message, 'Job suspended');
    assert.equal(job.status?.startTime, undefined);
    assert.equal(env.agent.created.length, 0);

    await env.setSuspend('pi', false);
    job = await env.waitFor('resumed and running', async () => {
      const j = await env.job('pi');
      return j?.status?.active === 2 && j.status.ready === 2 ? j : undefined;
    });
    assert.equal(cond(job, 'Suspended')?.status, 'False');
    assert.equal(cond(job, 'Suspended')?.reason, 'JobResumed');
    assert.ok(job.status?.startTime);

    await env.setSuspend('pi', true);
    job = await env.waitFor('suspended again, pods gone', async () => {
      const j = await env.job('pi');
      const pods = await env.pods();
      return j?.status?.conditions?.some((c) => c.type === 'Suspended' && c.status === 'True') && pods.length === 0 && !j.status?.terminating ? j : undefined;
    });
    assert.equal(job.status?.startTime, undefined);
    assert.equal(job.status?.failed, undefined, 'pods deleted by a suspend are not failures');
    assert.equal(job.status?.active, undefined);

    hold = false;
    await env.setSuspend('pi', false);
    job = await env.waitForCondition('pi', 'Complete');
    assert.equal(job.status?.succeeded, 2);
    assert.equal(job.status?.failed, undefined);
    assert.equal(env.agent.created.length, 4);
    const reasons = env.recorder.reasons();
    assert.equal(reasons.filter((r) => r === 'Suspended').length, 2);
    assert.equal(reasons.filter((r) => r === 'Resumed').length, 2);
    assert.equal(reasons.filter((r) => r === 'SuccessfulDelete').length, 2);
  });
});

void describe('Job controller: parallelism', () => {
  void it('work queue (no completions): done once a pod succeeded and none is active, creating no more after a success', async () => {
    env.runController();
    await env.createJob(makeJob('wq').parallelism(3).obj());
    const job = await env.waitForCondition('wq', 'Complete');
    assert.equal(job.spec.completions, undefined);
    assert.equal(job.status?.succeeded, 3);
    assert.equal(env.agent.created.length, 3);
  });

  void it('scales down by deleting surplus pods, which are not counted as failures', async () => {
    let hold = true;
    env.agent.script = () => (hold ? undefined : { exitCode: 0 });
    env.runController();
    await env.createJob(makeJob('sc').completions(4).parallelism(3).obj());
    await env.waitFor('three ready', async () => (await env.job('sc'))?.status?.ready === 3);
    await env.client.patch(Kinds.Job, { namespace: 'default', name: 'sc' }, { spec: { parallelism: 1 } }, 'merge');
    await env.waitFor('one left', async () => {
      const j = await env.job('sc');
      return j?.status?.active === 1 && (await env.pods()).length === 1;
    });
    hold = false;
    env.agent.finish((await env.pods())[0]?.metadata.name ?? '', { exitCode: 0 });
    const job = await env.waitForCondition('sc', 'Complete');
    assert.equal(job.status?.succeeded, 4);
    assert.equal(job.status?.failed, undefined);
    assert.equal(env.agent.created.length, 6);
    assert.equal(env.recorder.reasons().filter((r) => r === 'SuccessfulDelete').length, 2);
  });
});
