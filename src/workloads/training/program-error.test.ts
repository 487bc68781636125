import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container, Pod } from '../../api/core-types.js';
import { renderTrainingJob } from './render.js';
import { programErrorOf } from './pass.js';
import { makePyTorchJob } from './testing.js';

function failedPod(message: string | undefined, exitCode = 1, where: 'state' | 'lastState' = 'state'): Pod {
  const terminated = { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', ...(message === undefined ? {} : { message }), startedAt: '', finishedAt: '' };
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'pytorch' }] },
    status: { phase: 'Failed', containerStatuses: [{ name: 'pytorch', image: '', imageID: '', ready: false, restartCount: 0, state: {}, lastState: {}, [where]: { terminated } }] },
  } as Pod;
}

describe("a failed replica's program error", () => {
  it('is the exception line of its termination message, even when more lines follow it', () => {
    const log = 'epoch 0\nTraceback (most recent call last):\n  File "train.py", line 3, in <module>\nValueError: the column "label" is missing\nLAUNCH ERROR container failed';
    assert.equal(programErrorOf(failedPod(log)), 'ValueError: the column "label" is missing');
    assert.equal(programErrorOf(failedPod('oops\n', 1, 'lastState')), 'oops');
    assert.equal(programErrorOf(failedPod('paddle.base.core.EnforceNotMet: shape mismatch')), 'paddle.base.core.EnforceNotMet: shape mismatch');
  });
  it('is nothing for a success, a run without a message or a start error', () => {
    assert.equal(programErrorOf(failedPod('done', 0)), undefined);
    assert.equal(programErrorOf(failedPod(undefined)), undefined);
    const start = failedPod('exec: no such file');
    (start.status?.containerStatuses?.[0]?.state.terminated as { reason: string }).reason = 'StartError';
    assert.equal(programErrorOf(start), undefined);
  });
  it('is kept by every rendered replica container (FallbackToLogsOnError), unless the template chose a policy', () => {
    const job = makePyTorchJob('j');
    const specs = (job.spec as { pytorchReplicaSpecs: Record<string, { template: { spec: { containers: Container[] } } }> }).pytorchReplicaSpecs;
    const chosen = specs.Worker?.template.spec.containers[0];
    if (chosen) chosen.terminationMessagePolicy = 'File';
    const pods = renderTrainingJob(job).replicas.map((r) => r.pod);
    assert.deepEqual(pods.map((p) => p.spec.containers.map((c) => c.terminationMessagePolicy)), [['FallbackToLogsOnError'], ['File']]);
  });
});
