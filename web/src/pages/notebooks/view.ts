// What the Notebooks page shows of a Notebook, from what the notebook-controller reports: the state
// from the stop annotation, readyReplicas and the container's state (as Kubeflow's web app words it),
// the server's image and resources, and its last activity (culling's annotation).
import type { Notebook } from '../../api/workload-types';

export const STOPPED = 'kubeflow-resource-stopped';
export const LAST_ACTIVITY = 'notebooks.kubeflow.org/last-activity';

export interface NotebookState {
  state: 'Running' | 'Stopped' | 'Stopping' | 'Starting' | 'Waiting' | 'Terminating' | 'Error';
  /** why, when it is not simply running or stopped */
  why?: string;
}

export function notebookState(nb: Notebook): NotebookState {
  const st = nb.status ?? {};
  const ready = st.readyReplicas ?? 0;
  if (nb.metadata?.deletionTimestamp) return { state: 'Terminating' };
  if (nb.metadata?.annotations?.[STOPPED] !== undefined) return ready > 0 || st.containerState?.running ? { state: 'Stopping' } : { state: 'Stopped' };
  const cs = st.containerState;
  if (cs?.running && ready > 0) return { state: 'Running' };
  if (cs?.terminated) return { state: 'Error', why: [cs.terminated.reason, cs.terminated.message].filter(Boolean).join(': ') || `exit code ${cs.terminated.exitCode}` };
  if (cs?.waiting) {
    const r = cs.waiting.reason ?? '';
    // a reason the user must act on is an error, a start in progress is not
    if (/BackOff|Err|Invalid/.test(r)) return { state: 'Error', why: [r, cs.waiting.message].filter(Boolean).join(': ') };
    return { state: 'Waiting', why: [r, cs.waiting.message].filter(Boolean).join(': ') || undefined };
  }
  const cond = [...(st.conditions ?? [])].reverse().find((c) => c.status !== 'True' && (c.reason || c.message));
  return { state: 'Starting', ...(cond ? { why: [cond.reason, cond.message].filter(Boolean).join(': ') } : {}) };
}

export function isStopped(nb: Notebook): boolean {
  return nb.metadata?.annotations?.[STOPPED] !== undefined;
}

/** the merge patch that stops a notebook (the annotation set to now, RFC 3339 as upstream writes it) or starts it */
export function stopPatch(stop: boolean, now: Date = new Date()): { metadata: { annotations: Record<string, string | null> } } {
  return { metadata: { annotations: { [STOPPED]: stop ? now.toISOString().replace(/\.\d{3}Z$/, 'Z') : null } } };
}

export function lastActivity(nb: Notebook): string | undefined {
  return nb.metadata?.annotations?.[LAST_ACTIVITY] || undefined;
}

function server(nb: Notebook) {
  return nb.spec?.template?.spec?.containers?.[0];
}

/** the image without the registry's path, as the list shows it: `jupyter-scipy:latest` */
export function shortImage(nb: Notebook): string {
  const image = server(nb)?.image ?? '';
  return image.slice(image.lastIndexOf('/') + 1);
}

export function imageOf(nb: Notebook): string {
  return server(nb)?.image ?? '';
}

export interface NotebookResources {
  cpu: string;
  memory: string;
  /** `1 nvidia.com/gpu`; empty: none */
  gpus: string;
}

export function resourcesOf(nb: Notebook): NotebookResources {
  const r = server(nb)?.resources ?? {};
  const req = (r.requests ?? {}) as Record<string, string | number>;
  const lim = (r.limits ?? {}) as Record<string, string | number>;
  const gpuKeys = [...new Set([...Object.keys(lim), ...Object.keys(req)])].filter((k) => k !== 'cpu' && k !== 'memory' && k !== 'ephemeral-storage' && !k.startsWith('hugepages-'));
  return {
    cpu: String(req.cpu ?? lim.cpu ?? '—'),
    memory: String(req.memory ?? lim.memory ?? '—'),
    gpus: gpuKeys.map((k) => `${lim[k] ?? req[k]} ${k}`).join(', '),
  };
}

/** where Connect goes: the server's JupyterLab (the web app's link for Jupyter), or the root for others */
export function connectPath(nb: Notebook): string {
  const ns = nb.metadata?.namespace ?? '';
  const name = nb.metadata?.name ?? '';
  const type = nb.metadata?.annotations?.['notebooks.kubeflow.org/server-type'];
  return `/notebook/${encodeURIComponent(ns)}/${encodeURIComponent(name)}/${type && type !== 'jupyter' ? '' : 'lab'}`;
}
