// spec.podFailurePolicy: which rule, if any, a failed Pod matches, and what that means for counting.
// Pure; mirrors kubernetes/kubernetes pkg/controller/job/pod_failure_policy.go.
import type { PodFailurePolicyRule } from '../../api/batch.js';
import type { ContainerStatus, Pod } from '../../api/core-types.js';

export type FailurePolicyAction = PodFailurePolicyRule['action'];

export interface PolicyMatch {
  /** the rule's action; undefined when no rule matched */
  action?: FailurePolicyAction;
  /** whether the failure counts against backoffLimit (false only for Ignore) */
  countFailed: boolean;
  /** set for FailJob: the message the Job's failure condition carries */
  message?: string;
  /** the index of the matching rule */
  rule?: number;
}

export function matchPodFailurePolicy(policy: { rules: PodFailurePolicyRule[] } | undefined, pod: Pod): PolicyMatch {
  if (!policy) return { countFailed: true };
  const ns = pod.metadata.namespace ?? '';
  const name = pod.metadata.name ?? '';
  for (const [i, rule] of policy.rules.entries()) {
    if (rule.onExitCodes) {
      const c = matchOnExitCodes(pod, rule.onExitCodes);
      if (!c) continue;
      const code = c.state.terminated?.exitCode;
      return outcome(rule.action, i, `Container ${c.name} for pod ${ns}/${name} failed with exit code ${code} matching ${rule.action} rule at index ${i}`);
    }
    if (rule.onPodConditions && rule.onPodConditions.length > 0) {
      const cond = (pod.status?.conditions ?? []).find((pc) => rule.onPodConditions?.some((p) => p.type === pc.type && (p.status ?? 'True') === pc.status));
      if (!cond) continue;
      return outcome(rule.action, i, `Pod ${ns}/${name} has condition ${cond.type} matching ${rule.action} rule at index ${i}`);
    }
  }
  return { countFailed: true };
}

function outcome(action: FailurePolicyAction, rule: number, failJobMessage: string): PolicyMatch {
  switch (action) {
    case 'Ignore':
      return { action, rule, countFailed: false };
    case 'FailJob':
      return { action, rule, countFailed: true, message: failJobMessage };
    default:
      return { action, rule, countFailed: true };
  }
}

function matchOnExitCodes(pod: Pod, req: NonNullable<PodFailurePolicyRule['onExitCodes']>): ContainerStatus | undefined {
  return firstMatching(pod.status?.containerStatuses, req) ?? firstMatching(pod.status?.initContainerStatuses, req);
}

function firstMatching(statuses: ContainerStatus[] | undefined, req: NonNullable<PodFailurePolicyRule['onExitCodes']>): ContainerStatus | undefined {
  for (const s of statuses ?? []) {
    const t = s.state?.terminated;
    // a container still running or terminating has no exit code to match
    if (!t) continue;
    if (req.containerName !== undefined && req.containerName !== s.name) continue;
    if (t.exitCode === 0) continue;
    const listed = req.values.includes(t.exitCode);
    if (req.operator === 'In' ? listed : !listed) return s;
  }
  return undefined;
}
