// pipelines.kubeflow.org/v2beta1 Run: one execution of a compiled KFP v2 PipelineSpec (IR).
// Validation reuses the IR checks so a bad pipeline or parameter is a 422 naming the field.
import type { Condition } from './conditions.js';
import type { FieldError } from './errors.js';
import type { KObject } from './meta.js';
import { deepEqual } from './meta.js';
import type { KindDef, PrinterColumn } from './registry.js';
import { Validator } from './validation.js';
import type { PipelineSpec, PlatformSpec } from './kfp/ir.js';
import { isPlainObject } from '../util/objects.js';
import { validatePipelineSpec, validateRunParameters } from './kfp/ir-validate.js';

export const RunStates = {
  pending: 'PENDING',
  running: 'RUNNING',
  succeeded: 'SUCCEEDED',
  failed: 'FAILED',
  /** a task whose triggerPolicy.condition was false, or one downstream of it */
  skipped: 'SKIPPED',
  /** termination was asked for; the run's Pods are being stopped */
  canceling: 'CANCELING',
  canceled: 'CANCELED',
} as const;
export type RunState = (typeof RunStates)[keyof typeof RunStates];

export interface RunSpec {
  pipelineSpec: PipelineSpec;
  platformSpec?: PlatformSpec | Record<string, unknown>;
  parameters?: Record<string, unknown>;
  /** a local directory (or file:///dir), or `minio://bucket/path` / `s3://bucket/path`; defaults to
   *  the namespace's kfp-launcher ConfigMap's defaultPipelineRoot, else the platform's */
  pipelineRoot?: string;
  /** set (false → true) to terminate the run: unfinished tasks are stopped, the run ends CANCELED */
  terminate?: boolean;
  /**
   * raised by one to retry a FAILED or CANCELED run: its failed, canceled and not-yet-run tasks run
   * again, succeeded ones keep their outputs (KFP's RetryRun). Retrying a terminated run sets
   * terminate back to false in the same update.
   */
  retryGeneration?: number;
  /** false turns caching off for every task of the run, whatever the tasks' cachingOptions say */
  enableCaching?: boolean;
}

export interface RunArtifact {
  name: string;
  uri: string;
  type?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

export interface RunOutputs {
  parameters: Record<string, unknown>;
  artifacts: Record<string, RunArtifact[]>;
}

export interface TaskStatus {
  state: RunState;
  /** container tasks only: the Pod of the current attempt */
  podName?: string;
  startedAt?: string;
  finishedAt?: string;
  /** what the task consumed (sub-DAGs: what their children read; container tasks: their lineage) */
  inputs?: RunOutputs;
  outputs?: RunOutputs;
  message?: string;
  /** retryPolicy: the attempt now running, from 0 */
  attempt?: number;
  /** retryPolicy: the next attempt starts at this time */
  retryAt?: string;
  /** a cache hit: the outputs were reused from this earlier `<run>/<task>` */
  cachedFrom?: string;
  /** the task's cache fingerprint, when caching applied to it */
  fingerprint?: string;
  /** importer and kfp-kubernetes CreatePVC/DeletePVC tasks: done by the controller, without a Pod */
  kind?: 'importer' | 'createpvc' | 'deletepvc';
  /**
   * a task of a run whose root is in S3, waiting on its artifacts: `inputs` while they download
   * (its Pod is not made yet), `outputs` while they upload after its Pod succeeded
   */
  transfer?: 'inputs' | 'outputs';
}

export interface RunStatus {
  state?: RunState;
  startedAt?: string;
  finishedAt?: string;
  /**
   * keyed by task path: `train`, `inner-pipeline.print-op2`. Written once, when the run ends; while
   * it runs, each task's record is its own RunTask object (so one task's change rewrites one record)
   * and taskCounts sums them up.
   */
  tasks?: Record<string, TaskStatus>;
  /** while the run runs: how many of its task records are in each state */
  taskCounts?: Partial<Record<RunState, number>>;
  outputs?: RunOutputs;
  /** the task that failed the run */
  failedTask?: string;
  /** the spec.retryGeneration this status has acted on */
  retryGeneration?: number;
  /** the pipeline root the run writes under, decided when it started: its own, its namespace's
   *  kfp-launcher ConfigMap's defaultPipelineRoot, or the platform's */
  pipelineRoot?: string;
  message?: string;
  conditions?: Condition[];
}

export interface Run extends KObject {
  spec: RunSpec;
  status?: RunStatus;
}

export const RunLabels = {
  run: 'pipelines.kubeflow.org/run',
  task: 'pipelines.kubeflow.org/task',
} as const;

function defaultRun(obj: KObject): void {
  const spec = obj.spec;
  if (!isPlainObject(spec) || !isPlainObject(spec.pipelineSpec)) return;
  const defs = spec.pipelineSpec.root?.inputDefinitions?.parameters;
  if (!isPlainObject(defs)) return;
  if (spec.parameters !== undefined && !isPlainObject(spec.parameters)) return;
  const params: Record<string, unknown> = { ...(spec.parameters ?? {}) };
  for (const [name, d] of Object.entries(defs)) {
    if ((params[name] === undefined || params[name] === null) && isPlainObject(d) && d.defaultValue !== undefined && d.defaultValue !== null) {
      params[name] = structuredClone(d.defaultValue);
    }
  }
  spec.parameters = params;
}

function prefixed(errs: FieldError[], from: string, to: string): FieldError[] {
  return errs.map((e) => ({ ...e, field: e.field === from || e.field.startsWith(`${from}.`) ? to + e.field.slice(from.length) : `${to}.${e.field}`.replace(/\.$/, '') }));
}

function validateRun(obj: KObject, old?: KObject): FieldError[] {
  const v = new Validator();
  // a run is what was submitted: its controller reads the spec on every pass, so it never changes
  if (old) {
    const fixed = (o: KObject): unknown => { const { terminate: _t, retryGeneration: _r, ...rest } = (o.spec ?? {}) as RunSpec; return rest; };
    if (!deepEqual(fixed(obj), fixed(old))) {
      v.add('spec', 'FieldValueForbidden', 'Forbidden: the spec of a Run is immutable (but for terminate and retryGeneration); submit a new Run');
      return v.errors;
    }
    const was = (old.spec ?? {}) as RunSpec;
    const is = (obj.spec ?? {}) as RunSpec;
    // only a retry (retryGeneration raised in the same update) takes a termination back
    if (was.terminate === true && is.terminate !== true && !((is.retryGeneration ?? 0) > (was.retryGeneration ?? 0))) {
      v.add('spec.terminate', 'FieldValueForbidden', 'Forbidden: a terminated run cannot be un-terminated, only retried (raise retryGeneration)');
    }
    if ((is.retryGeneration ?? 0) < (was.retryGeneration ?? 0)) v.add('spec.retryGeneration', 'FieldValueInvalid', 'Invalid value: retryGeneration may only grow');
  }
  v.dnsSubdomain('metadata.name', obj.metadata.name);
  const spec = obj.spec;
  if (!v.object('spec', spec, true)) return v.errors;
  if (!v.object('spec.pipelineSpec', spec.pipelineSpec, true)) return v.errors;
  if (spec.platformSpec !== undefined) v.object('spec.platformSpec', spec.platformSpec);
  if (spec.pipelineRoot !== undefined) v.string('spec.pipelineRoot', spec.pipelineRoot);
  if (spec.terminate !== undefined && typeof spec.terminate !== 'boolean') v.add('spec.terminate', 'FieldValueInvalid', 'Invalid value: must be a boolean');
  if (spec.enableCaching !== undefined && typeof spec.enableCaching !== 'boolean') v.add('spec.enableCaching', 'FieldValueInvalid', 'Invalid value: must be a boolean');
  if (spec.retryGeneration !== undefined && !(Number.isInteger(spec.retryGeneration) && (spec.retryGeneration as number) >= 0)) v.add('spec.retryGeneration', 'FieldValueInvalid', 'Invalid value: must be a non-negative integer');
  const specErrs = validatePipelineSpec(spec.pipelineSpec as PipelineSpec).map((e) => ({ ...e, field: e.field ? `spec.pipelineSpec.${e.field}` : 'spec.pipelineSpec' }));
  v.errors.push(...specErrs);
  if (spec.parameters !== undefined && !v.object('spec.parameters', spec.parameters)) return v.errors;
  if (specErrs.length === 0) {
    v.errors.push(...prefixed(validateRunParameters(spec.pipelineSpec as PipelineSpec, spec.parameters ?? {}), 'runtime_config.parameters', 'spec.parameters'));
  }
  return v.errors;
}

const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

const run: KindDef = {
  group: 'pipelines.kubeflow.org', version: 'v2beta1', kind: 'Run', plural: 'runs', singular: 'run',
  namespaced: true, hasStatus: true,
  // KFP's run state, when it started and ended; with -o wide the task that failed it
  printerColumns: [
    { name: 'State', type: 'string', jsonPath: '.status.state', description: "the run's state, as KFP names it (PENDING, RUNNING, SUCCEEDED, FAILED, CANCELED)" },
    { name: 'Started', type: 'date', jsonPath: '.status.startedAt' },
    { name: 'Finished', type: 'date', jsonPath: '.status.finishedAt' },
    age,
    { name: 'Failed-Task', type: 'string', jsonPath: '.status.failedTask', priority: 1, description: 'the task whose failure failed the run' },
  ],
  default: defaultRun,
  validate: validateRun,
};

/**
 * One cached task execution: the outputs of a task whose cache fingerprint (KFP's: inputs, output
 * specs, image, command and args, PVC names) was this, named `<pipeline-hash>-<fingerprint>` so a
 * lookup is a get. Written by the run controller when a cacheable task succeeds.
 */
export interface TaskCacheSpec {
  pipelineName: string;
  fingerprint: string;
  outputs: RunOutputs;
  run: string;
  task: string;
}
export interface TaskCache extends KObject {
  spec: TaskCacheSpec;
}

function validateTaskCache(obj: KObject): FieldError[] {
  const v = new Validator();
  v.dnsSubdomain('metadata.name', obj.metadata.name);
  const spec = obj.spec;
  if (!v.object('spec', spec, true)) return v.errors;
  v.string('spec.pipelineName', spec.pipelineName, true);
  v.string('spec.fingerprint', spec.fingerprint, true);
  v.string('spec.run', spec.run, true);
  v.string('spec.task', spec.task, true);
  v.object('spec.outputs', spec.outputs, true);
  return v.errors;
}

const taskCache: KindDef = {
  group: 'pipelines.kubeflow.org', version: 'v2beta1', kind: 'TaskCache', plural: 'taskcaches', singular: 'taskcache',
  namespaced: true, hasStatus: false,
  printerColumns: [
    { name: 'Pipeline', type: 'string', jsonPath: '.spec.pipelineName' },
    { name: 'Run', type: 'string', jsonPath: '.spec.run', description: 'the run whose task made the outputs' },
    { name: 'Task', type: 'string', jsonPath: '.spec.task' },
    age,
  ],
  validate: validateTaskCache,
};

/**
 * One task's record in a running Run, owned by the Run (its controller) and labelled with the
 * run's name: `spec` says which task, `status` is the task's TaskStatus. Kept apart from the Run
 * as Tekton keeps TaskRuns apart from a PipelineRun's minimal status, so that a 1,000-task run
 * writes the one record that changed instead of every record on every step.
 */
export interface RunTask extends KObject {
  spec: { run: string; path: string };
  status: TaskStatus;
}

function validateRunTask(obj: KObject): FieldError[] {
  const v = new Validator();
  v.dnsSubdomain('metadata.name', obj.metadata.name);
  if (!v.object('spec', obj.spec, true)) return v.errors;
  v.string('spec.run', obj.spec.run, true);
  v.string('spec.path', obj.spec.path, true);
  if (v.object('status', obj.status, true)) v.string('status.state', obj.status.state, true);
  return v.errors;
}

const runTask: KindDef = {
  group: 'pipelines.kubeflow.org', version: 'v2beta1', kind: 'RunTask', plural: 'runtasks', singular: 'runtask',
  namespaced: true, hasStatus: false,
  printerColumns: [
    { name: 'Run', type: 'string', jsonPath: '.spec.run' },
    { name: 'Task', type: 'string', jsonPath: '.spec.path', description: "the task's path in the pipeline, e.g. outer.inner.train" },
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'Transfer', type: 'string', jsonPath: '.status.transfer', description: 'an S3 root\'s artifacts the task waits on: inputs (downloading) or outputs (uploading)' },
    age,
    { name: 'Pod', type: 'string', jsonPath: '.status.podName', priority: 1, description: "the Pod of the task's current attempt" },
    { name: 'Attempt', type: 'integer', jsonPath: '.status.attempt', priority: 1 },
    { name: 'Cached-From', type: 'string', jsonPath: '.status.cachedFrom', priority: 1, description: 'the earlier run/task whose outputs a cache hit reused' },
  ],
  validate: validateRunTask,
};

export const pipelineKinds: KindDef[] = [run, taskCache, runTask];
