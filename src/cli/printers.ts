/** Table output for `skiff get`, kubectl-style (upper-case headers, 3-space column gaps). */
import { age, humanDuration } from './duration.js';
import { typeName, type ResourceInfo } from './discovery.js';
import type { Condition, Job, KEvent, KObject, Pod } from './types.js';

export interface Table {
  headers: string[];
  rows: string[][];
}

export interface TableOptions {
  wide?: boolean;
  /** Adds a NAMESPACE column first. */
  allNamespaces?: boolean;
  /** Prefixes names with the type (`job.batch/pi`), as when several kinds are listed. */
  withKind?: boolean;
  showLabels?: boolean;
  now: number;
}

const GAP = '   ';

export function columnWidths(t: Table, noHeaders = false): number[] {
  const widths = noHeaders ? t.headers.map(() => 0) : t.headers.map((h) => h.length);
  for (const row of t.rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return widths;
}

export function renderRow(cells: string[], widths: number[]): string {
  return cells
    .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
    .join(GAP)
    .trimEnd();
}

/** Renders rows padded to the widest cell of each column; ends with a newline. */
export function renderTable(t: Table, opts: { noHeaders?: boolean; widths?: number[] } = {}): string {
  const widths = opts.widths ?? columnWidths(t, opts.noHeaders);
  const lines: string[] = [];
  if (!opts.noHeaders) lines.push(renderRow(t.headers, widths));
  for (const row of t.rows) lines.push(renderRow(row, widths));
  return lines.length ? `${lines.join('\n')}\n` : '';
}

// ---------------------------------------------------------------- helpers

export function conditionOf(obj: KObject, type: string): Condition | undefined {
  const conds = (obj.status as { conditions?: Condition[] } | undefined)?.conditions;
  if (!Array.isArray(conds)) return undefined;
  return conds.find((c) => c?.type === type);
}

export function conditionTrue(obj: KObject, type: string): boolean {
  return conditionOf(obj, type)?.status === 'True';
}

function oneLine(s: string | undefined): string {
  return (s ?? '').replace(/\s*\n\s*/g, ' ').trim();
}

function labelsText(labels: Record<string, string> | undefined): string {
  const entries = Object.entries(labels ?? {});
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(',') : '<none>';
}

// ---------------------------------------------------------------- per-kind printers

interface KindPrinter {
  headers: string[];
  wideHeaders?: string[];
  row(obj: KObject, now: number): string[];
  wide?(obj: KObject, now: number): string[];
}

/** kubectl's pod STATUS/READY/RESTARTS logic. */
export function podSummary(pod: Pod, now: number): { ready: string; status: string; restarts: string } {
  const spec = pod.spec ?? {};
  const status = pod.status ?? {};
  const total = spec.containers?.length ?? status.containerStatuses?.length ?? 0;
  let readyCount = 0;
  let restarts = 0;
  let lastRestart = 0;
  let reason = status.reason || status.phase || 'Unknown';
  const noteRestart = (finishedAt: string | undefined): void => {
    const t = finishedAt ? Date.parse(finishedAt) : NaN;
    if (!Number.isNaN(t) && t > lastRestart) lastRestart = t;
  };

  let initializing = false;
  const inits = status.initContainerStatuses ?? [];
  const initTotal = spec.initContainers?.length ?? inits.length;
  for (let i = 0; i < inits.length; i++) {
    const c = inits[i] ?? {};
    restarts += c.restartCount ?? 0;
    noteRestart(c.lastState?.terminated?.finishedAt);
    const term = c.state?.terminated;
    const wait = c.state?.waiting;
    if (term && (term.exitCode ?? 0) === 0) continue;
    if (term) {
      reason = term.reason
        ? `Init:${term.reason}`
        : term.signal
          ? `Init:Signal:${term.signal}`
          : `Init:ExitCode:${term.exitCode ?? 0}`;
    } else if (wait?.reason && wait.reason !== 'PodInitializing') {
      reason = `Init:${wait.reason}`;
    } else {
      reason = `Init:${i}/${initTotal}`;
    }
    initializing = true;
    break;
  }

  if (!initializing) {
    restarts = 0;
    let hasRunning = false;
    const containers = status.containerStatuses ?? [];
    for (let i = containers.length - 1; i >= 0; i--) {
      const c = containers[i] ?? {};
      restarts += c.restartCount ?? 0;
      noteRestart(c.lastState?.terminated?.finishedAt);
      const wait = c.state?.waiting;
      const term = c.state?.terminated;
      if (wait?.reason) reason = wait.reason;
      else if (term?.reason) reason = term.reason;
      else if (term) reason = term.signal ? `Signal:${term.signal}` : `ExitCode:${term.exitCode ?? 0}`;
      else if (c.ready && c.state?.running) {
        hasRunning = true;
        readyCount++;
      }
    }
    if (reason === 'Completed' && hasRunning) reason = conditionTrue(pod, 'Ready') ? 'Running' : 'NotReady';
  }

  if (pod.metadata?.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';

  let restartText = String(restarts);
  if (restarts > 0 && lastRestart > 0) restartText += ` (${humanDuration(now - lastRestart)} ago)`;
  return { ready: `${readyCount}/${total}`, status: reason, restarts: restartText };
}

export function jobStatus(job: Job): string {
  if (conditionTrue(job, 'Failed')) return 'Failed';
  if (conditionTrue(job, 'Complete')) return 'Complete';
  if (conditionTrue(job, 'Suspended') || (job.spec?.suspend === true && !job.status?.active)) return 'Suspended';
  return 'Running';
}

export function jobCompletions(job: Job): string {
  const succeeded = job.status?.succeeded ?? 0;
  const completions = job.spec?.completions;
  if (typeof completions === 'number') return `${succeeded}/${completions}`;
  const parallelism = job.spec?.parallelism ?? 0;
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

export function jobDuration(job: Job, now: number): string {
  const start = job.status?.startTime ? Date.parse(job.status.startTime) : NaN;
  if (Number.isNaN(start)) return '';
  const end = job.status?.completionTime ? Date.parse(job.status.completionTime) : now;
  return humanDuration((Number.isNaN(end) ? now : end) - start);
}

function containersOf(spec: { containers?: { name?: string; image?: string }[] } | undefined): [string, string] {
  const cs = spec?.containers ?? [];
  return [cs.map((c) => c.name ?? '').join(','), cs.map((c) => c.image ?? '').join(',')];
}

function selectorText(sel: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] } | undefined): string {
  const parts = Object.entries(sel?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of (sel?.matchExpressions ?? []) as { key?: string; operator?: string; values?: string[] }[]) {
    const vals = (e.values ?? []).join(',');
    switch (e.operator) {
      case 'In': parts.push(`${e.key} in (${vals})`); break;
      case 'NotIn': parts.push(`${e.key} notin (${vals})`); break;
      case 'Exists': parts.push(`${e.key}`); break;
      case 'DoesNotExist': parts.push(`!${e.key}`); break;
      default: parts.push(`${e.key} ${e.operator} (${vals})`);
    }
  }
  return parts.length ? parts.join(',') : '<none>';
}

/** LAST SEEN of an event: `5s`, or `5s (x3 over 2m)` when repeated. */
export function eventLastSeen(ev: KEvent, now: number): string {
  const last = ev.series?.lastObservedTime || ev.lastTimestamp || ev.eventTime || ev.firstTimestamp || ev.metadata?.creationTimestamp;
  const first = ev.firstTimestamp || ev.eventTime || ev.metadata?.creationTimestamp;
  const count = ev.series?.count ?? ev.count ?? 1;
  const lastAge = age(last, now);
  return count > 1 && first ? `${lastAge} (x${count} over ${age(first, now)})` : lastAge;
}

export function eventTime(ev: KEvent): number {
  const t = ev.series?.lastObservedTime || ev.lastTimestamp || ev.eventTime || ev.firstTimestamp || ev.metadata?.creationTimestamp;
  const n = t ? Date.parse(t) : NaN;
  return Number.isNaN(n) ? 0 : n;
}

function quantity(v: unknown): string {
  return v === undefined || v === null || v === '' ? '<none>' : String(v);
}

function gpuCapacity(cap: Record<string, unknown> | undefined): string {
  if (!cap) return '0';
  if (cap['nvidia.com/gpu'] !== undefined) return String(cap['nvidia.com/gpu']);
  const key = Object.keys(cap).find((k) => /gpu/i.test(k));
  return key ? String(cap[key]) : '0';
}

const PRINTERS: Record<string, KindPrinter> = {
  '/Pod': {
    headers: ['READY', 'STATUS', 'RESTARTS', 'AGE'],
    wideHeaders: ['IP', 'NODE'],
    row(obj, now) {
      const s = podSummary(obj as Pod, now);
      return [s.ready, s.status, s.restarts, age(obj.metadata?.creationTimestamp, now)];
    },
    wide(obj) {
      const p = obj as Pod;
      return [p.status?.podIP || '<none>', p.spec?.nodeName || '<none>'];
    },
  },
  'batch/Job': {
    headers: ['STATUS', 'COMPLETIONS', 'DURATION', 'AGE'],
    wideHeaders: ['CONTAINERS', 'IMAGES', 'SELECTOR'],
    row(obj, now) {
      const j = obj as Job;
      return [jobStatus(j), jobCompletions(j), jobDuration(j, now), age(obj.metadata?.creationTimestamp, now)];
    },
    wide(obj) {
      const j = obj as Job;
      const [names, images] = containersOf(j.spec?.template?.spec);
      return [names, images, selectorText(j.spec?.selector)];
    },
  },
  '/Namespace': {
    headers: ['STATUS', 'AGE'],
    row(obj, now) {
      const phase = (obj.status as { phase?: string } | undefined)?.phase ?? (obj.metadata?.deletionTimestamp ? 'Terminating' : 'Active');
      return [phase, age(obj.metadata?.creationTimestamp, now)];
    },
  },
  '/Node': {
    headers: ['STATUS', 'AGE'],
    wideHeaders: ['CPU', 'MEMORY', 'GPU'],
    row(obj, now) {
      const ready = conditionOf(obj, 'Ready');
      let status = ready?.status === 'True' ? 'Ready' : ready?.status === 'False' ? 'NotReady' : 'Unknown';
      if ((obj.spec as { unschedulable?: boolean } | undefined)?.unschedulable) status += ',SchedulingDisabled';
      return [status, age(obj.metadata?.creationTimestamp, now)];
    },
    wide(obj) {
      const cap = (obj.status as { capacity?: Record<string, unknown> } | undefined)?.capacity;
      return [quantity(cap?.cpu), quantity(cap?.memory), gpuCapacity(cap)];
    },
  },
  '/ConfigMap': {
    headers: ['DATA', 'AGE'],
    row(obj, now) {
      const n = Object.keys((obj.data as object | undefined) ?? {}).length + Object.keys((obj.binaryData as object | undefined) ?? {}).length;
      return [String(n), age(obj.metadata?.creationTimestamp, now)];
    },
  },
  '/Secret': {
    headers: ['TYPE', 'DATA', 'AGE'],
    row(obj, now) {
      const n = Object.keys((obj.data as object | undefined) ?? {}).length;
      return [String(obj.type ?? 'Opaque'), String(n), age(obj.metadata?.creationTimestamp, now)];
    },
  },
  '/PersistentVolumeClaim': {
    headers: ['STATUS', 'AGE'],
    wideHeaders: ['VOLUME', 'CAPACITY', 'ACCESS MODES', 'STORAGECLASS'],
    row(obj, now) {
      const phase = (obj.status as { phase?: string } | undefined)?.phase ?? 'Pending';
      return [obj.metadata?.deletionTimestamp ? 'Terminating' : phase, age(obj.metadata?.creationTimestamp, now)];
    },
    wide(obj) {
      const spec = (obj.spec ?? {}) as { volumeName?: string; accessModes?: string[]; storageClassName?: string };
      const st = (obj.status ?? {}) as { capacity?: { storage?: string } };
      const modes = (spec.accessModes ?? []).map((m) => ({ ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' })[m] ?? m);
      return [spec.volumeName ?? '', st.capacity?.storage ?? '', modes.join(','), spec.storageClassName ?? ''];
    },
  },
};

/** Pipeline runs: KFP's run state, how many tasks finished, and for how long it ran. */
const PIPELINE_RUN: KindPrinter = {
  headers: ['STATE', 'TASKS', 'DURATION', 'AGE'],
  row(obj, now) {
    const st = (obj.status ?? {}) as { state?: string; startedAt?: string; finishedAt?: string; tasks?: Record<string, { state?: string }>; taskCounts?: Record<string, number> };
    // a running run counts its task records in taskCounts; an ended one carries them all
    const states = st.tasks ? Object.values(st.tasks).map((t) => t.state) : Object.entries(st.taskCounts ?? {}).flatMap(([state, n]) => Array<string>(n).fill(state));
    const done = states.filter((s) => s === 'SUCCEEDED' || s === 'SKIPPED').length;
    const end = st.finishedAt ? Date.parse(st.finishedAt) : now;
    const duration = st.startedAt ? humanDuration(Math.max(0, end - Date.parse(st.startedAt))) : '';
    return [st.state ?? 'PENDING', `${done}/${states.length}`, duration, age(obj.metadata?.creationTimestamp, now)];
  },
};

/** Kubeflow training jobs print their latest condition as STATE, like their CRD printer columns. */
const KUBEFLOW_JOB: KindPrinter = {
  headers: ['STATE', 'AGE'],
  row(obj, now) {
    const conds = (obj.status as { conditions?: Condition[] } | undefined)?.conditions ?? [];
    return [conds[conds.length - 1]?.type ?? '', age(obj.metadata?.creationTimestamp, now)];
  },
};

/** KServe's printer columns: URL, READY, PREV and LATEST traffic, the revisions behind them. */
const INFERENCE_SERVICE: KindPrinter = {
  headers: ['URL', 'READY', 'PREV', 'LATEST', 'PREVROLLEDOUTREVISION', 'LATESTREADYREVISION', 'AGE'],
  row(obj, now) {
    const st = (obj.status ?? {}) as { url?: string; conditions?: Condition[]; components?: { predictor?: { traffic?: { tag?: string; latestRevision?: boolean; percent?: number }[]; previousRolledoutRevision?: string; latestReadyRevision?: string } } };
    const p = st.components?.predictor;
    const prev = p?.traffic?.find((t) => t.tag === 'prev')?.percent;
    const latest = p?.traffic?.find((t) => t.latestRevision)?.percent;
    const ready = st.conditions?.find((c) => c.type === 'Ready')?.status ?? '';
    return [st.url ?? '', ready, prev === undefined ? '' : String(prev), latest === undefined ? '' : String(latest), p?.previousRolledoutRevision ?? '', p?.latestReadyRevision ?? '', age(obj.metadata?.creationTimestamp, now)];
  },
};

/** A serving revision: its component, model state and replicas. */
const SERVING_REVISION: KindPrinter = {
  headers: ['COMPONENT', 'MODEL', 'READY', 'REPLICAS', 'AGE'],
  row(obj, now) {
    const spec = (obj.spec ?? {}) as { component?: string };
    const st = (obj.status ?? {}) as { modelState?: string; readyReplicas?: number; replicas?: number; desiredReplicas?: number };
    return [spec.component ?? '', st.modelState ?? 'Pending', `${st.readyReplicas ?? 0}/${st.desiredReplicas ?? 0}`, String(st.replicas ?? 0), age(obj.metadata?.creationTimestamp, now)];
  },
};

const GENERIC: KindPrinter = {
  headers: ['AGE'],
  row: (obj, now) => [age(obj.metadata?.creationTimestamp, now)],
};

function printerFor(r: ResourceInfo): KindPrinter | 'event' {
  if (r.group === '' && r.kind === 'Event') return 'event';
  const p = PRINTERS[`${r.group}/${r.kind}`];
  if (p) return p;
  if (r.group === 'kubeflow.org' && r.kind.endsWith('Job')) return KUBEFLOW_JOB;
  if (r.group === 'pipelines.kubeflow.org' && r.kind === 'Run') return PIPELINE_RUN;
  if (r.group === 'serving.kserve.io' && r.kind === 'InferenceService') return INFERENCE_SERVICE;
  if (r.group === 'serving.skiff.dev' && r.kind === 'Revision') return SERVING_REVISION;
  return GENERIC;
}

function displayName(r: ResourceInfo, obj: KObject, opts: TableOptions): string {
  const name = obj.metadata?.name ?? '';
  return opts.withKind ? `${typeName(r)}/${name}` : name;
}

export function tableHeaders(r: ResourceInfo, opts: TableOptions): string[] {
  const p = printerFor(r);
  let headers: string[];
  if (p === 'event') headers = ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'];
  else headers = ['NAME', ...p.headers, ...(opts.wide ? p.wideHeaders ?? [] : [])];
  if (opts.allNamespaces && r.namespaced) headers.unshift('NAMESPACE');
  if (opts.showLabels) headers.push('LABELS');
  return headers;
}

export function tableRow(r: ResourceInfo, obj: KObject, opts: TableOptions): string[] {
  const p = printerFor(r);
  let row: string[];
  if (p === 'event') {
    const ev = obj as KEvent;
    const io = ev.involvedObject ?? {};
    const objectCol = opts.withKind
      ? `${typeName(r)}/${obj.metadata?.name ?? ''}`
      : `${(io.kind ?? '').toLowerCase()}/${io.name ?? ''}`;
    row = [eventLastSeen(ev, opts.now), ev.type ?? '', ev.reason ?? '', objectCol, oneLine(ev.message)];
  } else {
    row = [displayName(r, obj, opts), ...p.row(obj, opts.now), ...(opts.wide && p.wide ? p.wide(obj, opts.now) : [])];
  }
  if (opts.allNamespaces && r.namespaced) row.unshift(obj.metadata?.namespace ?? '');
  if (opts.showLabels) row.push(labelsText(obj.metadata?.labels));
  return row;
}

/** The table for a list of objects of one type (events are sorted oldest first, like `kubectl events`). */
export function buildTable(r: ResourceInfo, items: KObject[], opts: TableOptions): Table {
  let list = items;
  if (printerFor(r) === 'event') list = [...items].sort((a, b) => eventTime(a as KEvent) - eventTime(b as KEvent));
  return { headers: tableHeaders(r, opts), rows: list.map((o) => tableRow(r, o, opts)) };
}
