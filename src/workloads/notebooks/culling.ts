// Notebook culling, as Kubeflow's notebook-controller culls (ENABLE_CULLING, CULL_IDLE_TIME,
// IDLENESS_CHECK_PERIOD): every period each running notebook's server is asked for its kernels and
// terminals, its last activity is kept in the `notebooks.kubeflow.org/last-activity` annotation, and
// a notebook idle for longer than the idle time gets `kubeflow-resource-stopped`, which the
// notebook controller turns into a stop. Where upstream goes wrong, Skiff does not:
//  - a busy kernel is activity now, so a long cell is never culled (jupyterhub#1498);
//  - terminals count, not only kernels;
//  - a server that does not answer (or has no Jupyter API to ask) is never culled for it, and an event
//    says why, since its idleness is unknown; only a notebook without a Pod has nothing to keep;
//  - the server's own start counts as activity, so a slow start does not eat the idle time.
// (Its /api/status `last_activity` is not used: the checks' own requests would count as activity.)
// A server with a token (tenancy on: token.ts) is asked with it, as the proxy asks it.
// The checks run in their own periodic task, each with a timeout, never inside a reconcile.
import { Kinds } from '../../api/index.js';
import type { Pod } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import type { Notebook } from '../../api/notebooks.js';
import { NotebookKind, NotebookNames, notebookPrefix } from '../../api/notebooks.js';
import type { Recorder } from '../../control/events.js';
import type { Client } from '../../store/client.js';
import type { NotebookSettings } from '../workload.js';
import { isStopped, podNameOf, serverPort } from './render.js';
import { serverToken } from './token.js';

type StoredNotebook = StoredObject & Notebook;

/** the part of Jupyter Server's kernel model culling reads (GET /api/kernels) */
export interface KernelModel {
  last_activity?: string;
  execution_state?: string;
}

/** the part of Jupyter Server's terminal model culling reads (GET /api/terminals) */
export interface TerminalModel {
  last_activity?: string;
}

/** what one look at a server says */
export interface Activity {
  /** ms since the epoch of the latest activity, undefined when nothing says */
  last?: number;
  /** a kernel is running code now */
  busy: boolean;
}

// a kernel in any of these states is doing something; only `idle` and `dead` ones wait
const activeStates = new Set(['busy', 'starting', 'restarting', 'autorestarting']);

/** the latest activity of a server's kernels and terminals; a busy kernel is activity at `now` */
export function activityOf(kernels: KernelModel[], terminals: TerminalModel[], now: number): Activity {
  const busy = kernels.some((k) => activeStates.has(k.execution_state ?? ''));
  let last: number | undefined;
  for (const t of [...kernels, ...terminals]) {
    const at = t.last_activity ? Date.parse(t.last_activity) : NaN;
    if (!Number.isNaN(at) && (last === undefined || at > last)) last = at;
  }
  return busy ? { last: now, busy } : { ...(last !== undefined ? { last } : {}), busy };
}

/** RFC 3339 to the second, as upstream writes its times (Go's time.RFC3339) */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.000Z$/, 'Z');
}

/** where a notebook's server answers: the Pod's address and port, and the server's base path */
export interface ServerAddress {
  host: string;
  port: number;
  base: string;
}

/** asks a server for a JSON document; rejects on no answer, a status other than 200 or bad JSON */
export type JsonGetter = (url: string, timeoutMs: number, headers?: Record<string, string>) => Promise<unknown>;

const getJson: JsonGetter = async (url, timeoutMs, headers = {}) => {
  const r = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json', ...headers } });
  if (r.status !== 200) {
    await r.body?.cancel();
    throw new Error(`${url.replace(/^http:\/\/[^/]+/, '')} answered ${r.status}`);
  }
  return r.json();
};

export interface CullerOptions {
  client: Client;
  settings: NotebookSettings;
  recorder?: Recorder;
  /** how long one server may take to answer (upstream: 10 s) */
  timeoutMs?: number;
  get?: JsonGetter;
  now?: () => number;
  log?: (msg: string) => void;
}

export class NotebookCuller {
  private readonly periodMs: number;
  private readonly idleMs: number;
  private readonly timeoutMs: number;
  private readonly get: JsonGetter;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private stopped = false;
  /** notebooks whose server did not answer at the last look: told once per outage, not every period */
  private readonly unreachable = new Set<string>();

  constructor(private readonly opts: CullerOptions) {
    this.periodMs = opts.settings.idlenessCheckPeriodMinutes * 60_000;
    this.idleMs = opts.settings.cullIdleTimeMinutes * 60_000;
    this.timeoutMs = Math.min(opts.timeoutMs ?? 10_000, Math.max(1000, this.periodMs));
    this.get = opts.get ?? getJson;
    this.now = opts.now ?? Date.now;
  }

  /** checks every period until stopped; a round still running when the next is due is not overlapped */
  start(): void {
    const next = (): void => {
      if (this.stopped) return;
      this.timer = setTimeout(() => {
        this.round = this.checkAll().catch((e: unknown) => this.opts.log?.(`notebook culling: ${(e as Error).message}`)).finally(next);
      }, this.periodMs);
      this.timer.unref();
    };
    next();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.round;
  }

  /** one look at every notebook, side by side: a slow server delays no other's check */
  async checkAll(): Promise<void> {
    const notebooks = await this.opts.client.listAll<Notebook>(NotebookKind);
    const results = await Promise.allSettled(notebooks.map((nb) => this.check(nb)));
    for (const r of results) if (r.status === 'rejected') this.opts.log?.(`notebook culling: ${(r.reason as Error).message}`);
  }

  /** one notebook's check: the annotations kept, and the stop when it has been idle too long */
  async check(nb: StoredNotebook): Promise<'stopped' | 'culled' | 'active' | 'idle' | 'unknown' | 'no-pod'> {
    if (nb.metadata.deletionTimestamp) return 'stopped';
    const namespace = nb.metadata.namespace ?? 'default';
    const key = { namespace, name: nb.metadata.name };
    const id = `${namespace}/${nb.metadata.name}`;
    const annotations = nb.metadata.annotations ?? {};
    const tracked = annotations[NotebookNames.lastActivity] !== undefined || annotations[NotebookNames.lastActivityCheck] !== undefined;
    const untrack = async (): Promise<void> => {
      this.unreachable.delete(id);
      if (tracked) await this.annotate(key, { [NotebookNames.lastActivity]: null, [NotebookNames.lastActivityCheck]: null });
    };
    // a stopped notebook, or one whose Pod is gone, has no activity to track (upstream drops both)
    if (isStopped(nb)) return untrack().then(() => 'stopped');
    const pod = await this.opts.client.find<Pod & StoredObject>(Kinds.Pod, { namespace, name: podNameOf(nb.metadata.name) });
    if (!pod || !pod.metadata.ownerReferences?.some((o) => o.uid === nb.metadata.uid)) return untrack().then(() => 'no-pod');

    const now = this.now();
    const recorded = Date.parse(annotations[NotebookNames.lastActivity] ?? '');
    // the server's start is activity; at first sight without it, activity starts now, as upstream initializes it
    const started = serverStartedAt(nb, pod);
    let last = Math.max(Number.isNaN(recorded) ? -Infinity : recorded, started ?? -Infinity);
    if (last === -Infinity) last = now;

    const address = serverAddress(nb, pod);
    let activity: Activity | undefined;
    let why = 'its Pod is not running';
    if (address) {
      try {
        activity = await this.look(address, now, await serverToken(this.opts.client, pod));
      } catch (e) {
        why = (e as Error).message;
      }
    }
    if (activity?.last !== undefined && activity.last > last) last = activity.last;
    const patch: Record<string, string | null> = { [NotebookNames.lastActivity]: rfc3339(last), [NotebookNames.lastActivityCheck]: rfc3339(now) };
    if (!activity) {
      // idleness unknown: never a reason to stop someone's server
      if (address && !this.unreachable.has(id)) {
        this.unreachable.add(id);
        this.opts.recorder?.event(nb, 'Warning', 'CullingCheckFailed', `Cannot tell whether the notebook is idle, so it is not culled: ${why}`);
      }
      await this.annotate(key, patch);
      return 'unknown';
    }
    this.unreachable.delete(id);
    if (activity.busy || now - last <= this.idleMs) {
      await this.annotate(key, patch);
      return activity.busy ? 'active' : 'idle';
    }
    patch[NotebookNames.stopped] = rfc3339(now);
    await this.annotate(key, patch);
    this.opts.recorder?.event(nb, 'Normal', 'Culled', `Stopped the notebook: idle since ${rfc3339(last)}, longer than ${this.opts.settings.cullIdleTimeMinutes} minutes (CULL_IDLE_TIME)`);
    return 'culled';
  }

  /** the server's kernels and terminals; a server without terminals (disabled) answers with kernels only */
  private async look(a: ServerAddress, now: number, token: string | undefined): Promise<Activity> {
    const url = (what: string): string => `http://${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}${a.base}/api/${what}`;
    const headers = token !== undefined ? { authorization: `token ${token}` } : undefined;
    const [kernels, terminals, status] = await Promise.allSettled(['kernels', 'terminals', 'status'].map((what) => this.get(url(what), this.timeoutMs, headers)));
    if (kernels?.status !== 'fulfilled') throw kernels?.reason;
    if (!Array.isArray(kernels.value)) throw new Error('/api/kernels did not answer a list of kernels');
    const terms = terminals?.status === 'fulfilled' && Array.isArray(terminals.value) ? terminals.value as TerminalModel[] : [];
    const activity = activityOf(kernels.value as KernelModel[], terms, now);
    // the server's own start (its /api/status `started`): one slow to come up is not idle meanwhile
    const started = status?.status === 'fulfilled' ? Date.parse((status.value as { started?: string } | null)?.started ?? '') : NaN;
    if (!Number.isNaN(started) && started <= now && (activity.last === undefined || started > activity.last)) activity.last = started;
    return activity;
  }

  /** a merge patch of the annotations: retried by the client when the notebook changed meanwhile */
  private async annotate(key: { namespace: string; name: string }, annotations: Record<string, string | null>): Promise<void> {
    await this.opts.client.patch(NotebookKind, key, { metadata: { annotations } }, 'merge');
  }
}

/** when the server's container last started, from the Pod's status */
function serverStartedAt(nb: Notebook, pod: Pod): number | undefined {
  const first = nb.spec.template.spec.containers[0]?.name;
  const statuses = pod.status?.containerStatuses ?? [];
  const s = statuses.find((c) => c.name === nb.metadata.name) ?? statuses.find((c) => c.name === first);
  const at = Date.parse(s?.state?.running?.startedAt ?? '');
  return Number.isNaN(at) ? undefined : at;
}

/**
 * Where the server answers, as the controller reaches the Service: the running Pod's address and
 * the port the Service targets. The path is NB_PREFIX, or the proxy's rewrite when the notebook has one.
 */
export function serverAddress(nb: Notebook, pod: Pod): ServerAddress | undefined {
  if (pod.status?.phase !== 'Running' || pod.metadata.deletionTimestamp || !pod.status.podIP) return undefined;
  const rewrite = nb.metadata.annotations?.[NotebookNames.rewriteUri];
  const base = rewrite !== undefined ? rewrite.replace(/\/+$/, '') : notebookPrefix(nb.metadata.namespace ?? 'default', nb.metadata.name ?? '');
  return { host: pod.status.podIP, port: serverPort(nb), base };
}
