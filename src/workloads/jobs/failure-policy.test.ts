import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodFailurePolicyRule } from '../../api/batch.js';
import type { PodObject } from './pods.js';
import { matchPodFailurePolicy } from './failure-policy.js';
import { makePod } from './testing.js';

const pod = (b: ReturnType<typeof makePod>): PodObject => b.obj() as PodObject;
const policy = (...rules: PodFailurePolicyRule[]): { rules: PodFailurePolicyRule[] } => ({ rules });

void describe('podFailurePolicy matching', () => {
  void it('counts every failure when there is no policy or no rule matches', () => {
    assert.deepEqual(matchPodFailurePolicy(undefined, pod(makePod('p').failedWith(1))), { countFailed: true });
    assert.deepEqual(matchPodFailurePolicy(policy({ action: 'Ignore', onExitCodes: { operator: 'In', values: [2] } }), pod(makePod('p').failedWith(1))), { countFailed: true });
  });

  void it('FailJob on an exit code, with Kubernetes\' message', () => {
    const m = matchPodFailurePolicy(
      policy({ action: 'Ignore', onExitCodes: { operator: 'In', values: [1] } }, { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } }),
      pod(makePod('pi-abcde').failedWith(42)),
    );
    assert.deepEqual(m, { action: 'FailJob', rule: 1, countFailed: true, message: 'Container main for pod default/pi-abcde failed with exit code 42 matching FailJob rule at index 1' });
  });

  void it('NotIn matches any other non-zero code; exit code 0 never matches', () => {
    const rules = policy({ action: 'Count', onExitCodes: { operator: 'NotIn', values: [1, 2] } });
    assert.equal(matchPodFailurePolicy(rules, pod(makePod('p').failedWith(3))).action, 'Count');
    assert.equal(matchPodFailurePolicy(rules, pod(makePod('p').failedWith(2))).action, undefined);
    assert.equal(matchPodFailurePolicy(rules, pod(makePod('p').succeeded())).action, undefined);
  });

  void it('containerName restricts which container is looked at; init containers are looked at too', () => {
    const p = makePod('p').failedWith(5).obj() as PodObject;
    p.spec.containers.push({ name: 'side', image: 'python' });
    p.status?.containerStatuses?.push({ name: 'side', ready: false, restartCount: 0, state: { terminated: { exitCode: 9 } }, lastState: {} });
    p.status!.initContainerStatuses = [{ name: 'init', ready: false, restartCount: 0, state: { terminated: { exitCode: 11 } }, lastState: {} }];
    const on = (containerName: string | undefined, values: number[]): string | undefined =>
      matchPodFailurePolicy(policy({ action: 'FailJob', onExitCodes: { containerName, operator: 'In', values } }), p).message;
    assert.match(on('side', [9]) ?? '', /^Container side for pod default\/p failed with exit code 9/);
    assert.equal(on('side', [5]), undefined);
    assert.match(on(undefined, [5]) ?? '', /^Container main /);
    assert.match(on('init', [11]) ?? '', /^Container init /);
  });

  void it('onPodConditions: status defaults to True; Ignore does not count; FailIndex counts', () => {
    const disrupted = pod(makePod('p').failedWith(137).condition({ type: 'DisruptionTarget', status: 'True' }));
    assert.deepEqual(matchPodFailurePolicy(policy({ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }), disrupted), { action: 'Ignore', rule: 0, countFailed: false });
    assert.equal(matchPodFailurePolicy(policy({ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'False' }] }), disrupted).action, undefined);
    assert.deepEqual(matchPodFailurePolicy(policy({ action: 'FailIndex', onPodConditions: [{ type: 'DisruptionTarget' }] }), disrupted), { action: 'FailIndex', rule: 0, countFailed: true });
    assert.equal(
      matchPodFailurePolicy(policy({ action: 'FailJob', onPodConditions: [{ type: 'DisruptionTarget' }] }), disrupted).message,
      'Pod default/p has condition DisruptionTarget matching FailJob rule at index 0',
    );
  });

  void it('a container still running has no exit code to match', () => {
    assert.equal(matchPodFailurePolicy(policy({ action: 'FailJob', onExitCodes: { operator: 'NotIn', values: [0] } }), pod(makePod('p').running())).action, undefined);
  });
});
