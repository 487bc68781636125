// What a Pod's pages show, from the Pod alone: readiness, restarts, why it waits, and one row per
// container with its state put in words.
import type { Condition } from '../../api/types';
import type { Container, ContainerState, ContainerStatus, Pod } from '../../api/workload-types';
import { podState } from '../../components/Status';

export function readyCount(pod: Pod): { ready: number; total: number } {
  const statuses = pod.status?.containerStatuses ?? [];
  return { ready: statuses.filter((c) => c.ready).length, total: pod.spec?.containers?.length ?? statuses.length };
}

export function restartCount(pod: Pod): number {
  return (pod.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
}

/**
 * Why a Pod is not running yet, in one line, or undefined when it is: the scheduler's reason
 * (PodScheduled=False: "Unschedulable: 0/1 nodes are available: Insufficient cpu …"), else the first
 * waiting container's reason and message.
 */
export function pendingReason(pod: Pod): string | undefined {
  if (pod.status?.phase !== 'Pending' && pod.status?.phase !== undefined) return undefined;
  const sched = (pod.status?.conditions ?? []).find((c: Condition) => c.type === 'PodScheduled');
  if (sched && sched.status === 'False') return [sched.reason, sched.message].filter(Boolean).join(': ') || 'not scheduled yet';
  for (const cs of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const w = cs.state?.waiting;
    if (w?.reason || w?.message) return [w.reason, w.message].filter(Boolean).join(': ');
  }
  return sched ? undefined : 'waiting for the scheduler';
}

export interface StateText {
  /** Running, Waiting, Terminated or — */
  phase: string;
  /** the reason (CrashLoopBackOff, OOMKilled, Completed, Error) or Running */
  label: string;
  detail?: string;
  exitCode?: number;
  since?: string;
}

export function describeState(s: ContainerState | undefined): StateText {
  if (s?.running) return { phase: 'Running', label: 'Running', since: s.running.startedAt };
  if (s?.terminated) {
    const t = s.terminated;
    return { phase: 'Terminated', label: t.reason ?? (t.exitCode === 0 ? 'Completed' : 'Error'), exitCode: t.exitCode, detail: t.message, since: t.finishedAt };
  }
  if (s?.waiting) return { phase: 'Waiting', label: s.waiting.reason ?? 'Waiting', detail: s.waiting.message };
  return { phase: '—', label: 'Not started' };
}

export interface ContainerRow {
  name: string;
  init: boolean;
  image?: string;
  command: string;
  state: StateText;
  ready: boolean;
  restarts: number;
  /** the previous run's end, when the container restarted */
  last?: StateText;
  requests: string;
  limits: string;
}

function quantities(r: Record<string, string | number> | undefined): string {
  const e = Object.entries(r ?? {});
  return e.length ? e.map(([k, v]) => `${k} ${v}`).join(', ') : '—';
}

function row(c: Container, cs: ContainerStatus | undefined, init: boolean): ContainerRow {
  const last = cs?.lastState && Object.keys(cs.lastState).length ? describeState(cs.lastState) : undefined;
  return {
    name: c.name,
    init,
    image: c.image,
    command: [...(c.command ?? []), ...(c.args ?? [])].join(' '),
    state: describeState(cs?.state),
    ready: cs?.ready ?? false,
    restarts: cs?.restartCount ?? 0,
    ...(last ? { last } : {}),
    requests: quantities(c.resources?.requests),
    limits: quantities(c.resources?.limits),
  };
}

/** init containers first, in the order the Pod runs them, then the containers */
export function containerRows(pod: Pod): ContainerRow[] {
  const find = (list: ContainerStatus[] | undefined, name: string): ContainerStatus | undefined => list?.find((s) => s.name === name);
  return [
    ...(pod.spec?.initContainers ?? []).map((c) => row(c, find(pod.status?.initContainerStatuses, c.name), true)),
    ...(pod.spec?.containers ?? []).map((c) => row(c, find(pod.status?.containerStatuses, c.name), false)),
  ];
}

/** the exit codes of a Pod's containers that have ended (the current run, else the last), "0", "3, 0" or "" */
export function exitCodes(pod: Pod): string {
  const codes: number[] = [];
  for (const cs of pod.status?.containerStatuses ?? []) {
    const code = cs.state?.terminated?.exitCode ?? cs.lastState?.terminated?.exitCode;
    if (code !== undefined) codes.push(code);
  }
  return codes.join(', ');
}

/** the reason the latest run of a Pod's containers ended (OOMKilled, Error, Completed), current or last */
export function lastTermination(pod: Pod): string | undefined {
  for (const cs of pod.status?.containerStatuses ?? []) {
    const t = cs.state?.terminated ?? cs.lastState?.terminated;
    if (t) return t.message ? `${t.reason ?? 'Terminated'}: ${t.message}` : t.reason;
  }
  return undefined;
}

export interface PodSummary {
  name: string;
  namespace?: string;
  state: string;
  ready: string;
  restarts: number;
  exitCodes: string;
  reason?: string;
  node?: string;
  created?: string;
}

export function podSummary(pod: Pod): PodSummary {
  const r = readyCount(pod);
  return {
    name: pod.metadata?.name ?? '',
    namespace: pod.metadata?.namespace,
    state: podState(pod),
    ready: `${r.ready}/${r.total}`,
    restarts: restartCount(pod),
    exitCodes: exitCodes(pod),
    reason: pendingReason(pod) ?? lastTermination(pod),
    node: pod.spec?.nodeName,
    created: pod.metadata?.creationTimestamp,
  };
}

/** a volume's source in a few words: "emptyDir", "configMap app-config", "pvc data" */
export function volumeSource(v: NonNullable<Pod['spec']['volumes']>[number]): string {
  if (v.emptyDir) return `emptyDir${v.emptyDir.medium ? ` (${v.emptyDir.medium})` : ''}${v.emptyDir.sizeLimit ? `, ${v.emptyDir.sizeLimit}` : ''}`;
  if (v.persistentVolumeClaim) return `PersistentVolumeClaim ${v.persistentVolumeClaim.claimName}${v.persistentVolumeClaim.readOnly ? ' (read-only)' : ''}`;
  if (v.configMap) return `ConfigMap ${v.configMap.name}`;
  if (v.secret) return `Secret ${v.secret.secretName}`;
  if (v.hostPath) return `hostPath ${v.hostPath.path}`;
  const other = Object.keys(v).filter((k) => k !== 'name');
  return other.join(', ') || '—';
}
