/** `skiff describe` text: readable multi-line views of objects, ending with their events. */
import { formatTimestamp } from './duration.js';
import { LAST_APPLIED_ANNOTATION } from './merge.js';
import { eventLastSeen, eventTime, jobDuration } from './printers.js';
import type { ResourceInfo } from './discovery.js';
import type { Condition, Container, ContainerState, ContainerStatus, Job, KEvent, KObject, Pod } from './types.js';
import { HamiAnnotation, decodeNodeDevices } from '../api/gpu-sharing.js';
import type { Experiment, Trial } from '../api/tuning.js';
import { bucketOf, metricValue } from '../workloads/tuning/status.js';

type Value = string | string[];
type Pair = [label: string, value: Value];

/** Lines of `Label:  value`, values aligned; list values continue on the following lines. */
export function fields(pairs: Pair[], indent = 0): string[] {
  const pad = ' '.repeat(indent);
  const width = Math.max(0, ...pairs.map(([l]) => l.length + 1)) + 2;
  const lines: string[] = [];
  for (const [label, value] of pairs) {
    const values = Array.isArray(value) ? (value.length ? value : ['<none>']) : [value];
    lines.push(`${pad}${`${label}:`.padEnd(width)}${values[0] ?? ''}`.trimEnd());
    for (const v of values.slice(1)) lines.push(`${pad}${' '.repeat(width)}${v}`.trimEnd());
  }
  return lines;
}

/** A table with `----` under each header and 2-space gaps, as in describe output. */
export function describeTable(headers: string[], rows: string[][], indent = 2): string[] {
  const all = [headers, headers.map((h) => '-'.repeat(h.length)), ...rows];
  const widths = headers.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const pad = ' '.repeat(indent);
  return all.map((r) => `${pad}${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')}`.trimEnd());
}

function mapLines(m: Record<string, string> | undefined, skip: string[] = []): string[] {
  const entries = Object.entries(m ?? {}).filter(([k]) => !skip.includes(k));
  if (!entries.length) return ['<none>'];
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => {
    const val = String(v);
    return `${k}: ${val.length > 200 || val.includes('\n') ? `${val.replace(/\n/g, ' ').slice(0, 200)}...` : val}`;
  });
}

function labelLines(m: Record<string, string> | undefined): string[] {
  const entries = Object.entries(m ?? {});
  if (!entries.length) return ['<none>'];
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${v}`);
}

function metaPairs(obj: KObject): Pair[] {
  const m = obj.metadata ?? {};
  const pairs: Pair[] = [['Name', m.name ?? '']];
  if (m.namespace !== undefined) pairs.push(['Namespace', m.namespace]);
  pairs.push(['Labels', labelLines(m.labels)]);
  pairs.push(['Annotations', mapLines(m.annotations, [LAST_APPLIED_ANNOTATION])]);
  return pairs;
}

function controlledBy(obj: KObject): Pair[] {
  const owner = (obj.metadata?.ownerReferences ?? []).find((o) => o.controller) ?? obj.metadata?.ownerReferences?.[0];
  return owner ? [['Controlled By', `${owner.kind ?? ''}/${owner.name ?? ''}`]] : [];
}

function conditionsSection(conds: Condition[] | undefined, withDetails: boolean): string[] {
  if (!conds || conds.length === 0) return [];
  const rows = conds.map((c) =>
    withDetails
      ? [c.type ?? '', c.status ?? '', c.reason ?? '', (c.message ?? '').replace(/\s*\n\s*/g, ' ')]
      : [c.type ?? '', c.status ?? ''],
  );
  const headers = withDetails ? ['Type', 'Status', 'Reason', 'Message'] : ['Type', 'Status'];
  return ['Conditions:', ...describeTable(headers, rows)];
}

/** A describe block: `Label:  value` entries aligned per indentation level, and raw lines. */
type Entry = { indent: number; label: string; value?: string } | { indent: number; text: string };

function renderBlock(entries: Entry[]): string[] {
  const widths = new Map<number, number>();
  for (const e of entries) {
    if ('label' in e && e.value !== undefined) widths.set(e.indent, Math.max(widths.get(e.indent) ?? 0, e.label.length + 3));
  }
  return entries.map((e) => {
    const pad = ' '.repeat(e.indent);
    if ('text' in e) return `${pad}${e.text}`.trimEnd();
    if (e.value === undefined) return `${pad}${e.label}:`;
    return `${pad}${`${e.label}:`.padEnd(widths.get(e.indent) ?? 0)}${e.value}`.trimEnd();
  });
}

function stateEntries(label: string, state: ContainerState | undefined, indent: number): Entry[] {
  const out: Entry[] = [];
  const sub = (l: string, v: string): void => void out.push({ indent: indent + 2, label: l, value: v });
  if (state?.running) {
    out.push({ indent, label, value: 'Running' });
    sub('Started', formatTimestamp(state.running.startedAt));
  } else if (state?.terminated) {
    const t = state.terminated;
    out.push({ indent, label, value: 'Terminated' });
    if (t.reason) sub('Reason', t.reason);
    if (t.message) sub('Message', t.message.replace(/\s*\n\s*/g, ' '));
    sub('Exit Code', String(t.exitCode ?? 0));
    if (t.signal) sub('Signal', String(t.signal));
    sub('Started', formatTimestamp(t.startedAt));
    sub('Finished', formatTimestamp(t.finishedAt));
  } else if (state?.waiting) {
    out.push({ indent, label, value: 'Waiting' });
    if (state.waiting.reason) sub('Reason', state.waiting.reason);
    if (state.waiting.message) sub('Message', state.waiting.message.replace(/\s*\n\s*/g, ' '));
  } else {
    out.push({ indent, label, value: label === 'State' ? 'Waiting' : '<none>' });
  }
  return out;
}

function containerLines(c: Container, status: ContainerStatus | undefined, indent: number): string[] {
  const inner = indent + 2;
  const e: Entry[] = [{ indent, label: c.name ?? '' }];
  const kv = (label: string, value: string): void => void e.push({ indent: inner, label, value });
  const list = (label: string, items: string[]): void => {
    e.push({ indent: inner, label });
    for (const text of items) e.push({ indent: inner + 2, text });
  };
  kv('Image', c.image ?? '');
  if (c.command?.length) list('Command', c.command);
  if (c.args?.length) list('Args', c.args);
  if (c.workingDir) kv('Working Dir', c.workingDir);
  if (c.ports?.length) kv('Ports', c.ports.map((p) => `${p.containerPort}/${p.protocol ?? 'TCP'}`).join(', '));
  if (status) {
    e.push(...stateEntries('State', status.state, inner));
    if (status.lastState && Object.keys(status.lastState).length) e.push(...stateEntries('Last State', status.lastState, inner));
    kv('Ready', status.ready ? 'True' : 'False');
    kv('Restart Count', String(status.restartCount ?? 0));
  }
  const limits = Object.entries(c.resources?.limits ?? {}).map(([k, v]) => `${k}: ${v}`);
  const requests = Object.entries(c.resources?.requests ?? {}).map(([k, v]) => `${k}: ${v}`);
  if (limits.length) list('Limits', limits);
  if (requests.length) list('Requests', requests);
  const env = (c.env ?? []).map((v) => `${v.name ?? ''}:  ${v.value ?? (v.valueFrom ? '<set from a reference>' : '')}`);
  if (env.length) list('Environment', env);
  else kv('Environment', '<none>');
  if (c.volumeMounts?.length) list('Mounts', c.volumeMounts.map((m) => `${m.mountPath ?? ''} from ${m.name ?? ''} (${m.readOnly ? 'ro' : 'rw'})`));
  return renderBlock(e);
}

function describePod(pod: Pod): string[] {
  const st = pod.status ?? {};
  const m = pod.metadata ?? {};
  const pairs: Pair[] = [metaPairs(pod)[0] as Pair, ['Namespace', m.namespace ?? '']];
  pairs.push(['Node', pod.spec?.nodeName || '<none>']);
  if (st.startTime) pairs.push(['Start Time', formatTimestamp(st.startTime)]);
  pairs.push(...metaPairs(pod).slice(m.namespace !== undefined ? 2 : 1));
  pairs.push(['Status', m.deletionTimestamp ? 'Terminating' : st.phase ?? 'Unknown']);
  if (st.reason) pairs.push(['Reason', st.reason]);
  if (st.message) pairs.push(['Message', st.message]);
  pairs.push(['IP', st.podIP ?? '']);
  pairs.push(...controlledBy(pod));
  const lines = fields(pairs);
  const statusByName = new Map<string, ContainerStatus>();
  for (const s of [...(st.containerStatuses ?? []), ...(st.initContainerStatuses ?? [])]) if (s.name) statusByName.set(s.name, s);
  const section = (title: string, cs: Container[] | undefined): void => {
    if (!cs?.length) return;
    lines.push(`${title}:`);
    for (const c of cs) lines.push(...containerLines(c, statusByName.get(c.name ?? ''), 2));
  };
  section('Init Containers', pod.spec?.initContainers);
  section('Containers', pod.spec?.containers);
  lines.push(...conditionsSection(st.conditions, false));
  return lines;
}

function describeJob(job: Job, now: number): string[] {
  const spec = job.spec ?? {};
  const st = job.status ?? {};
  const meta = metaPairs(job);
  const sel = spec.selector?.matchLabels ? Object.entries(spec.selector.matchLabels).map(([k, v]) => `${k}=${v}`).join(',') : '<none>';
  const pairs: Pair[] = [...meta.slice(0, job.metadata?.namespace !== undefined ? 2 : 1), ['Selector', sel], ...meta.slice(job.metadata?.namespace !== undefined ? 2 : 1)];
  pairs.push(...controlledBy(job));
  pairs.push(['Parallelism', String(spec.parallelism ?? 1)]);
  pairs.push(['Completions', spec.completions === null || spec.completions === undefined ? '<unset>' : String(spec.completions)]);
  pairs.push(['Completion Mode', spec.completionMode ?? 'NonIndexed']);
  pairs.push(['Suspend', String(spec.suspend ?? false)]);
  pairs.push(['Backoff Limit', String(spec.backoffLimit ?? 6)]);
  if (spec.activeDeadlineSeconds !== undefined) pairs.push(['Active Deadline Seconds', `${spec.activeDeadlineSeconds}s`]);
  if (spec.ttlSecondsAfterFinished !== undefined) pairs.push(['TTL Seconds After Finished', String(spec.ttlSecondsAfterFinished)]);
  if (st.startTime) pairs.push(['Start Time', formatTimestamp(st.startTime)]);
  if (st.completionTime) pairs.push(['Completed At', formatTimestamp(st.completionTime)]);
  if (st.startTime) pairs.push(['Duration', jobDuration(job, now)]);
  pairs.push(['Pods Statuses', `${st.active ?? 0} Active (${st.ready ?? 0} Ready) / ${st.succeeded ?? 0} Succeeded / ${st.failed ?? 0} Failed`]);
  const lines = fields(pairs);
  const tmpl = spec.template;
  if (tmpl) {
    lines.push('Pod Template:');
    lines.push(...fields([['Labels', labelLines(tmpl.metadata?.labels)]], 2));
    if (tmpl.spec?.initContainers?.length) {
      lines.push('  Init Containers:');
      for (const c of tmpl.spec.initContainers) lines.push(...containerLines(c, undefined, 3));
    }
    lines.push('  Containers:');
    for (const c of tmpl.spec?.containers ?? []) lines.push(...containerLines(c, undefined, 3));
  }
  lines.push(...conditionsSection(st.conditions, true));
  return lines;
}

/** `runPolicy` → `Run Policy`, as kubectl labels unstructured fields. */
export function smartLabel(key: string): string {
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function scalar(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v.replace(/\s*\n\s*/g, ' ');
  return String(v);
}

/** Nested fields as indented `Label:  value` lines (kubectl's generic describer). */
export function genericLines(value: unknown, indent: number, skip: (path: string) => boolean = () => false, path = ''): string[] {
  const pad = ' '.repeat(indent);
  const lines: string[] = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      if (item !== null && typeof item === 'object') {
        const sub = genericLines(item, indent + 2, skip, path);
        if (sub[0] !== undefined) sub[0] = `${pad}- ${sub[0].trimStart()}`;
        lines.push(...sub);
      } else lines.push(`${pad}${scalar(item)}`);
    }
    return lines;
  }
  if (value === null || typeof value !== 'object') return [`${pad}${scalar(value)}`];
  const entries = Object.entries(value as Record<string, unknown>).filter(([k]) => !skip(path ? `${path}.${k}` : k));
  const scalars: Pair[] = [];
  const flush = (): void => {
    if (scalars.length) lines.push(...fields(scalars.splice(0), indent));
  };
  for (const [k, v] of entries) {
    const label = path === '' || !/[./]/.test(k) ? smartLabel(k) : k;
    if (v !== null && typeof v === 'object' && (Array.isArray(v) ? v.length > 0 : Object.keys(v).length > 0)) {
      flush();
      lines.push(`${pad}${label}:`);
      lines.push(...genericLines(v, indent + 2, skip, path ? `${path}.${k}` : k));
    } else scalars.push([label, Array.isArray(v) ? '[]' : v !== null && typeof v === 'object' ? '{}' : scalar(v)]);
  }
  flush();
  return lines;
}

function describeGeneric(obj: KObject): string[] {
  const lines = fields([...metaPairs(obj), ['API Version', obj.apiVersion ?? ''], ['Kind', obj.kind ?? ''], ...controlledBy(obj)]);
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'metadata') continue;
    if (v !== null && typeof v === 'object') {
      const skipConds = (p: string): boolean => k === 'status' && p === 'conditions';
      const sub = genericLines(v, 2, skipConds);
      if (sub.length) lines.push(`${smartLabel(k)}:`, ...sub);
    } else lines.push(...fields([[smartLabel(k), scalar(v)]]));
  }
  lines.push(...conditionsSection((obj.status as { conditions?: Condition[] } | undefined)?.conditions, true));
  return lines;
}

/**
 * A Node: as any object, then its GPU cards with what their shares hold (from HAMi's register
 * annotation and the scheduler's `skiff.dev/gpu-shares` summary).
 */
function describeNode(node: KObject): string[] {
  const lines = describeGeneric(node);
  const ann = node.metadata?.annotations ?? {};
  const registered = ann[HamiAnnotation.register];
  let cards: ReturnType<typeof decodeNodeDevices> = [];
  try {
    cards = registered ? decodeNodeDevices(registered) : [];
  } catch {
    cards = [];
  }
  if (!cards.length) return lines;
  const used = new Map<number, string[]>();
  for (const m of (ann['skiff.dev/gpu-shares'] ?? '').matchAll(/(\d+): (\d+\/\d+) shares, (\d+\/\d+) MiB, (\d+\/\d+) cores/g)) used.set(Number(m[1]), [m[2] ?? '', m[3] ?? '', m[4] ?? '']);
  const rows = cards.map((c) => {
    const [shares, mem, cores] = used.get(c.index) ?? [`0/${c.split}`, `0/${c.memoryMiB}`, `0/${c.cores}`];
    return [String(c.index), c.uuid, c.type, mem ?? '', cores ?? '', shares ?? ''];
  });
  lines.push('GPU Cards:', ...describeTable(['Index', 'UUID', 'Type', 'Memory (MiB)', 'Cores (%)', 'Shares'], rows));
  return lines;
}

/** The Events section: a table, or `Events: <none>` (`undefined` events: could not be listed). */
export function eventsSection(events: KEvent[] | undefined, now: number): string[] {
  if (!events || events.length === 0) return ['Events:  <none>'];
  const sorted = [...events].sort((a, b) => eventTime(a) - eventTime(b));
  const rows = sorted.map((e) => [
    e.type ?? '',
    e.reason ?? '',
    eventLastSeen(e, now),
    e.reportingController || e.source?.component || e.reportingComponent || '',
    (e.message ?? '').replace(/\s*\n\s*/g, ' ').trim(),
  ]);
  return ['Events:', ...describeTable(['Type', 'Reason', 'Age', 'From', 'Message'], rows)];
}

/**
 * A Katib Experiment: where it stands and its best trial first, then every trial best-first (the
 * objective by its metric strategy; trials without one last), then the spec and conditions.
 */
function describeExperiment(exp: Experiment, trials: Trial[]): string[] {
  const spec = exp.spec ?? {};
  const st = exp.status ?? {};
  const last = st.conditions?.at(-1);
  const o = spec.objective ?? {};
  const metric = o.objectiveMetricName ?? '';
  const settings = (list: { name: string; value: string }[] | undefined) => (list?.length ? ` (${list.map((s) => `${s.name}=${s.value}`).join(', ')})` : '');
  const counts = ([['succeeded', st.trialsSucceeded], ['running', st.trialsRunning], ['pending', st.trialsPending], ['failed', st.trialsFailed], ['early stopped', st.trialsEarlyStopped], ['metrics unavailable', st.trialMetricsUnavailable], ['killed', st.trialsKilled]] as const)
    .filter(([, n]) => n).map(([w, n]) => `${n} ${w}`);
  const best = st.currentOptimalTrial;
  const pairs: Pair[] = [
    ...metaPairs(exp as unknown as KObject), ['API Version', exp.apiVersion], ['Kind', exp.kind],
    ['Status', last ? `${last.type}${last.reason ? ` (${last.reason})` : ''}${last.message ? `: ${last.message}` : ''}` : 'Created'],
    ['Objective', `${o.type ?? ''} ${metric}${o.goal !== undefined ? `, goal ${o.goal}` : ''}`.trim()],
    ['Algorithm', `${spec.algorithm?.algorithmName ?? ''}${settings(spec.algorithm?.algorithmSettings)}`],
    ['Early Stopping', spec.earlyStopping ? `${spec.earlyStopping.algorithmName}${settings(spec.earlyStopping.algorithmSettings)}` : '<none>'],
    ['Trials', `${st.trials ?? 0}${counts.length ? ` (${counts.join(', ')})` : ''}; ${spec.parallelTrialCount ?? 3} at a time, at most ${spec.maxTrialCount ?? 'unlimited'}${spec.maxFailedTrialCount !== undefined ? `, ${spec.maxFailedTrialCount} may fail` : ''}`],
  ];
  const lines = fields(pairs);
  if (best?.bestTrialName) {
    lines.push('Best Trial:', ...fields([
      ['Name', best.bestTrialName],
      ['Parameters', (best.parameterAssignments ?? []).map((a) => `${a.name}=${a.value}`)],
      ['Metrics', (best.observation?.metrics ?? []).map((m) => `${m.name}=${m.latest} (min ${m.min}, max ${m.max})`)],
    ], 2));
  } else {
    lines.push('Best Trial:  <none yet>');
  }
  const params = (spec.parameters ?? []).map((p) => p.name);
  const value = (t: Trial) => metricValue(spec, t.status?.observation?.metrics, metric);
  const sign = o.type === 'maximize' ? -1 : 1;
  const sorted = [...trials].sort((a, b) => {
    const va = value(a);
    const vb = value(b);
    if (va === undefined || vb === undefined) return va === undefined ? (vb === undefined ? 0 : 1) : -1;
    return sign * (va - vb);
  });
  if (sorted.length) {
    const state: Record<string, string> = { pending: 'Pending', running: 'Running', succeeded: 'Succeeded', failed: 'Failed', killed: 'Killed', earlyStopped: 'EarlyStopped', metricsUnavailable: 'MetricsUnavailable' };
    const rows = sorted.map((t) => {
      const a = new Map((t.spec.parameterAssignments ?? []).map((x) => [x.name, x.value]));
      const v = value(t);
      return [t.metadata.name ?? '', state[bucketOf(t)] ?? '', ...params.map((p) => a.get(p) ?? ''), v === undefined ? '' : String(v)];
    });
    lines.push('Trials (best first):', ...describeTable(['Name', 'State', ...params, metric || 'Objective'], rows));
  }
  const rest = genericLines({ spec: exp.spec }, 0);
  lines.push(...rest);
  lines.push(...conditionsSection(st.conditions, true));
  return lines;
}

/**
 * The full describe text of an object; `events` null leaves the Events section out. `related`: what
 * some kinds show beside themselves (an Experiment's Trials).
 */
export function describeObject(r: ResourceInfo, obj: KObject, events: KEvent[] | undefined | null, now: number, related: { trials?: KObject[] } = {}): string {
  let lines: string[];
  if (r.group === '' && r.kind === 'Pod') lines = describePod(obj as Pod);
  else if (r.group === 'batch' && r.kind === 'Job') lines = describeJob(obj as Job, now);
  else if (r.group === '' && r.kind === 'Node') lines = describeNode(obj);
  else if (r.group === 'kubeflow.org' && r.kind === 'Experiment') lines = describeExperiment(obj as unknown as Experiment, (related.trials ?? []) as unknown as Trial[]);
  else lines = describeGeneric(obj);
  if (events !== null) lines.push(...eventsSection(events, now));
  return `${lines.join('\n')}\n`;
}
