// Pod status from what the node agent knows: container states, phase and conditions, as the kubelet
// reports them.
import type { Condition } from '../../api/conditions.js';
import { setCondition } from '../../api/conditions.js';
import type { Container, ContainerState, ContainerStatus, Pod, PodStatus } from '../../api/core-types.js';
import { clone } from '../../api/meta.js';
import type { ExitInfo } from './process.js';
import type { ContainerRuntime, PodRuntime } from './runtime.js';

function terminated(exit: ExitInfo, startedAt: string, id: string): ContainerState {
  return {
    terminated: {
      exitCode: exit.exitCode,
      ...(exit.signal ? { signal: exit.signal } : {}),
      reason: exit.reason === 'Error' && exit.exitCode === 0 ? 'Completed' : exit.reason,
      ...(exit.message ? { message: exit.message } : {}),
      startedAt: startedAt || exit.finishedAt,
      finishedAt: exit.finishedAt,
      containerID: id,
    },
  };
}

function containerId(pod: PodRuntime, c: ContainerRuntime, n: number): string {
  return `skiff://${pod.uid}/${c.name}/${n}`;
}

function statusOf(pod: PodRuntime, spec: Container, c: ContainerRuntime | undefined, defaultWaiting: string): ContainerStatus {
  const out: ContainerStatus = { name: spec.name, image: spec.image ?? '', imageID: '', ready: false, started: false, restartCount: c?.current?.n ?? 0, state: {}, lastState: {} };
  if (c?.last?.exit) out.lastState = terminated(c.last.exit, c.last.startedAt, containerId(pod, c, c.last.n));
  const cur = c?.current;
  if (c && cur) out.containerID = containerId(pod, c, cur.n);
  if (c?.waiting) {
    out.state = { waiting: { reason: c.waiting.reason, ...(c.waiting.message ? { message: c.waiting.message } : {}) } };
    // a container waiting to restart shows its last run as lastState
    if (cur?.exit) out.lastState = terminated(cur.exit, cur.startedAt, containerId(pod, c, cur.n));
  } else if (c && cur && !cur.exit) {
    out.state = { running: { startedAt: cur.startedAt } };
    out.ready = !c.init;
    out.started = true;
  } else if (c && cur?.exit) {
    out.state = terminated(cur.exit, cur.startedAt, containerId(pod, c, cur.n));
  } else {
    out.state = { waiting: { reason: defaultWaiting } };
  }
  return out;
}

export interface PhaseDecision {
  phase: NonNullable<PodStatus['phase']>;
  reason?: string;
  message?: string;
}

/** Builds the next status from the old one; conditions keep their transition times when unchanged. */
export function podStatus(pod: Pod, rt: PodRuntime, decision: PhaseDecision, nodeIp: string): PodStatus {
  const status: PodStatus = clone(pod.status ?? {});
  const initSpecs = pod.spec.initContainers ?? [];
  const initDone = initSpecs.every((s) => rt.containers.get(s.name)?.current?.exit?.exitCode === 0);
  status.phase = decision.phase;
  if (decision.reason) status.reason = decision.reason;
  else delete status.reason;
  if (decision.message) status.message = decision.message;
  else delete status.message;
  status.hostIP = nodeIp;
  status.podIP = rt.ip;
  status.podIPs = [{ ip: rt.ip }];
  status.startTime = rt.startTime;
  if (initSpecs.length) status.initContainerStatuses = initSpecs.map((s) => statusOf(rt, s, rt.containers.get(s.name), 'PodInitializing'));
  status.containerStatuses = pod.spec.containers.map((s) => statusOf(rt, s, rt.containers.get(s.name), initDone ? 'ContainerCreating' : 'PodInitializing'));
  const ready = status.containerStatuses.every((c) => c.ready);
  const terminal = decision.phase === 'Succeeded' || decision.phase === 'Failed';
  const cond = (type: string, ok: boolean, reason?: string): Condition => ({ type, status: ok ? 'True' : 'False', ...(ok || !reason ? {} : { reason }) });
  setCondition(status, cond('PodReadyToStartContainers', !terminal));
  setCondition(status, cond('Initialized', initDone, 'ContainersNotInitialized'));
  setCondition(status, cond('ContainersReady', ready && !terminal, terminal ? 'PodCompleted' : 'ContainersNotReady'));
  setCondition(status, cond('Ready', ready && !terminal, terminal ? 'PodCompleted' : 'ContainersNotReady'));
  setCondition(status, cond('PodScheduled', true));
  return status;
}

/** The phase, from container states and the restart policy. */
export function decidePhase(pod: Pod, rt: PodRuntime): PhaseDecision {
  const policy = pod.spec.restartPolicy ?? 'Always';
  for (const s of pod.spec.initContainers ?? []) {
    const c = rt.containers.get(s.name);
    const exit = c?.current?.exit;
    if (exit && exit.exitCode !== 0 && policy === 'Never') return { phase: 'Failed' };
    if (!exit || exit.exitCode !== 0) return { phase: 'Pending' };
  }
  const mains = pod.spec.containers.map((s) => rt.containers.get(s.name));
  if (mains.some((c) => !c?.current)) return { phase: 'Pending' };
  const running = mains.some((c) => c?.current && !c.current.exit);
  if (running || policy === 'Always') return { phase: 'Running' };
  const failed = mains.some((c) => (c?.current?.exit?.exitCode ?? 0) !== 0);
  if (policy === 'OnFailure' && failed) return { phase: 'Running' }; // it will restart
  return { phase: failed ? 'Failed' : 'Succeeded' };
}
