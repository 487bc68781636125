// Skiff objects as the KFP v2beta1 REST API shows them: snake_case keys, enums as names, int64 as
// strings, RFC3339 timestamps, unset finish times as the epoch. Also the artifacts of a run, with
// stable ids and their producer and consumer tasks (lineage).
import { createHash } from 'node:crypto';
import type { ExperimentObj, PipelineObj, PipelineVersionObj, RecurringRunObj } from '../../api/kfp-objects.js';
import { KfpAnnotations, KfpLabels } from '../../api/kfp-objects.js';
import type { StoredObject } from '../../api/meta.js';
import type { Run, RunArtifact, TaskStatus } from '../../api/pipelines.js';

export type Shape = Record<string, unknown>;
export const epoch = '1970-01-01T00:00:00Z';

const finished = new Set(['SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELED']);
export const isFinished = (state: string | undefined): boolean => state !== undefined && finished.has(state);

/** drops undefined values, as protojson leaves unset fields out */
function compact(o: Shape): Shape {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

const ann = (o: StoredObject, key: string): string | undefined => o.metadata.annotations?.[key];
const label = (o: StoredObject, key: string): string | undefined => o.metadata.labels?.[key];

/** the run's pipeline spec as KFP returns it: wrapped with its platform spec when there is one */
export function wrapSpec(pipelineSpec: unknown, platformSpec: unknown): unknown {
  return platformSpec ? { pipeline_spec: pipelineSpec, platform_spec: platformSpec } : pipelineSpec;
}

export function pipelineShape(p: PipelineObj & StoredObject): Shape {
  return compact({
    pipeline_id: p.metadata.name,
    display_name: p.spec.displayName ?? p.spec.name,
    name: p.spec.name ?? p.spec.displayName,
    description: p.spec.description,
    created_at: p.metadata.creationTimestamp,
    namespace: p.metadata.namespace,
    tags: p.spec.tags,
  });
}

export function versionShape(v: PipelineVersionObj & StoredObject): Shape {
  return compact({
    pipeline_id: v.spec.pipelineName,
    pipeline_version_id: v.metadata.name,
    display_name: v.spec.displayName ?? v.spec.name,
    name: v.spec.name ?? v.spec.displayName,
    description: v.spec.description,
    created_at: v.metadata.creationTimestamp,
    package_url: v.spec.packageUrl ? { pipeline_url: v.spec.packageUrl } : undefined,
    code_source_url: v.spec.codeSourceUrl,
    pipeline_spec: wrapSpec(v.spec.pipelineSpec, v.spec.platformSpec),
    tags: v.spec.tags,
  });
}

export function experimentShape(e: ExperimentObj & StoredObject, lastRunCreatedAt?: string): Shape {
  return compact({
    experiment_id: e.metadata.name,
    display_name: e.spec.displayName,
    description: e.spec.description,
    created_at: e.metadata.creationTimestamp,
    namespace: e.metadata.namespace,
    storage_state: label(e, KfpLabels.storageState) ?? 'AVAILABLE',
    last_run_created_at: lastRunCreatedAt ?? epoch,
  });
}

/** A number-like id for an artifact, stable for its URI (KFP's artifact ids are int64, sent as strings). */
export function artifactId(uri: string): string {
  return BigInt('0x' + createHash('sha256').update(uri).digest('hex').slice(0, 12)).toString();
}

function rpcError(message: string | undefined, code = 2): Shape {
  return { code, message: message ?? 'failed', details: [] };
}

function lastSegment(path: string): string {
  const segs = path.split('.');
  const last = segs[segs.length - 1] ?? path;
  // a loop iteration `loop.3` is shown as `loop-3`
  return /^\d+$/.test(last) && segs.length > 1 ? `${segs[segs.length - 2]}-${last}` : last;
}

function artifactIds(arts: Record<string, RunArtifact[]> | undefined): Shape | undefined {
  if (!arts || Object.keys(arts).length === 0) return undefined;
  const out: Shape = {};
  for (const [name, list] of Object.entries(arts)) out[name] = { artifact_ids: (list ?? []).map((a) => artifactId(a.uri)) };
  return out;
}

/** The id a run's root DAG has among its task details. */
export const rootTaskId = 'root';

export function taskDetails(run: Run & StoredObject): Shape[] {
  const tasks = run.status?.tasks ?? {};
  const paths = Object.keys(tasks);
  const parentOf = (p: string): string => {
    const i = p.lastIndexOf('.');
    // `loop.0.inner`: the parent of `inner` is the iteration `loop.0`, whose parent is `loop`
    return i < 0 ? rootTaskId : tasks[p.slice(0, i)] !== undefined ? p.slice(0, i) : parentOf(p.slice(0, i));
  };
  const children = new Map<string, string[]>();
  for (const p of paths) {
    const parent = parentOf(p);
    children.set(parent, [...(children.get(parent) ?? []), p]);
  }
  const created = run.metadata.creationTimestamp;
  const child = (p: string): Shape => compact({ task_id: p, pod_name: tasks[p]?.podName });
  const state = run.status?.state ?? 'PENDING';
  const root: Shape = compact({
    run_id: run.metadata.name,
    task_id: rootTaskId,
    display_name: run.spec.pipelineSpec?.pipelineInfo?.name ?? rootTaskId,
    create_time: created,
    start_time: run.status?.startedAt ?? created,
    end_time: run.status?.finishedAt ?? epoch,
    state,
    error: state === 'FAILED' ? rpcError(run.status?.message) : undefined,
    child_tasks: (children.get(rootTaskId) ?? []).map(child),
  });
  return [root, ...paths.map((p) => {
    const t = tasks[p] as TaskStatus;
    return compact({
      run_id: run.metadata.name,
      task_id: p,
      display_name: lastSegment(p),
      create_time: t.startedAt ?? created,
      start_time: t.startedAt ?? epoch,
      end_time: t.finishedAt ?? epoch,
      executor_detail: t.podName ? { main_job: t.podName } : undefined,
      // a task of an S3 root whose inputs still download has no Pod yet: pending, as KFP shows a task before its Pod starts
      state: t.transfer === 'inputs' ? 'PENDING' : t.state,
      error: t.state === 'FAILED' ? rpcError(t.message) : undefined,
      inputs: artifactIds(t.inputs?.artifacts),
      outputs: artifactIds(t.outputs?.artifacts),
      parent_task_id: parentOf(p),
      pod_name: t.podName,
      child_tasks: children.has(p) ? (children.get(p) ?? []).map(child) : undefined,
    });
  })];
}

function stateHistory(run: Run & StoredObject): Shape[] {
  const out: Shape[] = [{ update_time: run.metadata.creationTimestamp, state: 'PENDING' }];
  if (run.status?.startedAt) out.push({ update_time: run.status.startedAt, state: 'RUNNING' });
  const s = run.status?.state;
  if (s && s !== 'PENDING' && s !== 'RUNNING') out.push(compact({ update_time: run.status?.finishedAt ?? run.metadata.creationTimestamp, state: s, error: s === 'FAILED' ? rpcError(run.status?.message) : undefined }));
  return out;
}

export function runShape(run: Run & StoredObject, opts: { details?: boolean } = {}): Shape {
  const state = run.status?.state ?? 'PENDING';
  const pipelineId = label(run, KfpLabels.pipelineId);
  const versionId = label(run, KfpLabels.pipelineVersionId);
  return compact({
    experiment_id: label(run, KfpLabels.experimentId) ?? '',
    run_id: run.metadata.name,
    display_name: ann(run, KfpAnnotations.displayName) ?? run.metadata.name,
    storage_state: label(run, KfpLabels.storageState) ?? 'AVAILABLE',
    description: ann(run, KfpAnnotations.description),
    pipeline_version_reference: versionId ? compact({ pipeline_id: pipelineId, pipeline_version_id: versionId }) : undefined,
    pipeline_spec: versionId ? undefined : wrapSpec(run.spec.pipelineSpec, run.spec.platformSpec),
    runtime_config: compact({ parameters: run.spec.parameters ?? {}, pipeline_root: run.spec.pipelineRoot }),
    service_account: ann(run, KfpAnnotations.serviceAccount),
    created_at: run.metadata.creationTimestamp,
    scheduled_at: ann(run, KfpAnnotations.scheduledAt) ?? run.metadata.creationTimestamp,
    finished_at: run.status?.finishedAt ?? epoch,
    state,
    error: state === 'FAILED' ? rpcError(run.status?.failedTask ? `task ${run.status.failedTask}: ${run.status.message ?? 'failed'}` : run.status?.message) : undefined,
    run_details: opts.details === false ? undefined : { task_details: taskDetails(run) },
    recurring_run_id: label(run, KfpLabels.recurringRunId),
    state_history: stateHistory(run),
  });
}

export function recurringRunShape(r: RecurringRunObj & StoredObject): Shape {
  const s = r.spec;
  const window = (w: { startTime?: string; endTime?: string }): Shape => compact({ start_time: w.startTime, end_time: w.endTime });
  const trigger: Shape = {};
  if (s.trigger?.cronSchedule) trigger.cron_schedule = compact({ ...window(s.trigger.cronSchedule), cron: s.trigger.cronSchedule.cron });
  if (s.trigger?.periodicSchedule) trigger.periodic_schedule = compact({ ...window(s.trigger.periodicSchedule), interval_second: String(s.trigger.periodicSchedule.intervalSecond) });
  const ref = s.pipelineVersionReference;
  const mode = s.mode ?? 'ENABLE';
  return compact({
    recurring_run_id: r.metadata.name,
    display_name: s.displayName ?? r.metadata.name,
    description: s.description,
    pipeline_version_reference: ref?.pipelineVersionId ? compact({ pipeline_id: ref.pipelineId, pipeline_version_id: ref.pipelineVersionId }) : undefined,
    pipeline_spec: ref?.pipelineVersionId ? undefined : wrapSpec(s.pipelineSpec, s.platformSpec),
    runtime_config: compact({ parameters: s.runtimeConfig?.parameters ?? {}, pipeline_root: s.runtimeConfig?.pipelineRoot }),
    service_account: s.serviceAccount,
    max_concurrency: String(s.maxConcurrency ?? 1),
    trigger,
    mode,
    created_at: r.metadata.creationTimestamp,
    updated_at: ann(r, KfpAnnotations.updatedAt) ?? r.metadata.creationTimestamp,
    status: mode === 'ENABLE' ? 'ENABLED' : 'DISABLED',
    error: r.status?.message ? rpcError(r.status.message, 3) : undefined,
    no_catchup: s.noCatchup ?? false,
    namespace: r.metadata.namespace,
    experiment_id: s.experimentId,
  });
}

export interface ArtifactRecord {
  artifact_id: string;
  name: string;
  uri: string;
  type: Record<string, unknown>;
  metadata: Record<string, unknown>;
  /** the task path that wrote it (a container task where one did) */
  producer_task?: string;
  /** its output key on the producer */
  output_name?: string;
  /** task paths whose recorded inputs carry its URI, with the input name */
  consumers: { task_id: string; input_name: string }[];
}

/** Every artifact of a run, each once (by URI), with who made it and who read it. */
export function runArtifacts(run: Run & StoredObject): ArtifactRecord[] {
  const byUri = new Map<string, ArtifactRecord>();
  const tasks: [string, TaskStatus][] = Object.entries(run.status?.tasks ?? {});
  const record = (a: RunArtifact): ArtifactRecord => {
    let r = byUri.get(a.uri);
    if (!r) {
      r = { artifact_id: artifactId(a.uri), name: a.name, uri: a.uri, type: { ...(a.type ?? {}) }, metadata: { ...(a.metadata ?? {}) }, consumers: [] };
      byUri.set(a.uri, r);
    }
    if (Object.keys(r.type).length === 0 && a.type) r.type = { ...a.type };
    if (Object.keys(r.metadata).length === 0 && a.metadata) r.metadata = { ...a.metadata };
    return r;
  };
  // container tasks first, so a sub-DAG re-exposing its child's output is not taken for its producer
  const ordered = [...tasks].sort(([, a], [, b]) => Number(Boolean(b.podName)) - Number(Boolean(a.podName)));
  for (const [path, t] of ordered) {
    for (const [name, list] of Object.entries(t.outputs?.artifacts ?? {})) {
      for (const a of list ?? []) {
        const r = record(a);
        if (r.producer_task === undefined) {
          r.producer_task = path;
          r.output_name = name;
        }
      }
    }
  }
  for (const [path, t] of tasks) {
    for (const [name, list] of Object.entries(t.inputs?.artifacts ?? {})) {
      for (const a of list ?? []) {
        const r = record(a);
        if (r.producer_task !== path && !r.consumers.some((c) => c.task_id === path && c.input_name === name)) r.consumers.push({ task_id: path, input_name: name });
      }
    }
  }
  const outs: RunArtifact[][] = Object.values(run.status?.outputs?.artifacts ?? {});
  for (const list of outs) for (const a of list ?? []) record(a);
  return [...byUri.values()].sort((a, b) => a.uri.localeCompare(b.uri));
}
