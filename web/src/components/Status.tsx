// One badge for every state a kind reports, coloured by what it means to the user.
import type { KObject } from '../api/types';

export type Tone = 'ok' | 'bad' | 'run' | 'wait' | 'off' | 'info';

const TONES: Record<string, Tone> = {
  succeeded: 'ok', complete: 'ok', completed: 'ok', ready: 'ok', running: 'run', active: 'ok', true: 'ok', bound: 'ok', available: 'ok',
  failed: 'bad', error: 'bad', false: 'bad', crashloopbackoff: 'bad', imagepullbackoff: 'bad', oomkilled: 'bad', failedtoload: 'bad', evicted: 'bad',
  pending: 'wait', created: 'wait', restarting: 'wait', suspended: 'wait', canceling: 'wait', terminating: 'wait', unknown: 'wait', queued: 'wait', waiting: 'wait',
  skipped: 'off', canceled: 'off', cached: 'info', stopped: 'off',
  // Katib's trial states
  earlystopped: 'wait', metricsunavailable: 'bad', killed: 'off',
};

export function toneOf(state: string | undefined): Tone {
  if (!state) return 'off';
  return TONES[state.toLowerCase()] ?? 'info';
}

export function StatusBadge({ state, title }: { state: string | undefined; title?: string }) {
  if (!state) return <span className="badge tone-off">—</span>;
  return (
    <span className={`badge tone-${toneOf(state)}`} title={title ?? state}>
      {state}
    </span>
  );
}

interface Cond {
  type?: string;
  status?: string;
  reason?: string;
}

/**
 * What an object is doing, in one word, from whatever its kind reports: a state field, a Pod's phase,
 * or its newest true condition.
 */
export function summaryState(o: KObject | undefined): string | undefined {
  if (!o) return undefined;
  const st = (o.status ?? {}) as Record<string, unknown>;
  if (o.metadata?.deletionTimestamp) return 'Terminating';
  if (typeof st.state === 'string') return st.state;
  if (o.kind === 'Pod') return podState(o);
  if (typeof st.phase === 'string') return st.phase;
  const conds = (Array.isArray(st.conditions) ? st.conditions : []) as Cond[];
  if (o.kind === 'InferenceService') {
    const ready = conds.find((c) => c.type === 'Ready');
    if (ready) return ready.status === 'True' ? 'Ready' : ready.reason || 'NotReady';
  }
  const order = ['Failed', 'Succeeded', 'Complete', 'Suspended', 'Restarting', 'Running', 'Ready', 'Created'];
  for (const t of order) if (conds.some((c) => c.type === t && c.status === 'True')) return t === 'Complete' ? 'Complete' : t;
  return conds.length ? undefined : undefined;
}

/** a Pod's STATUS as kubectl prints it: a waiting or terminated reason wins over the phase */
export function podState(o: KObject): string {
  const st = (o.status ?? {}) as { phase?: string; reason?: string; containerStatuses?: { state?: Record<string, { reason?: string }> }[] };
  if (st.reason) return st.reason;
  for (const cs of st.containerStatuses ?? []) {
    const w = cs.state?.waiting?.reason;
    if (w && w !== 'ContainerCreating') return w;
    const t = cs.state?.terminated?.reason;
    if (t && st.phase !== 'Succeeded' && t !== 'Completed') return t;
  }
  return st.phase ?? 'Pending';
}
