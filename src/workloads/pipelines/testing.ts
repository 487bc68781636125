// Test builders for pipelines: Runs, RecurringRuns, and the PipelineSpecs they carry (a compiled
// pipeline of the conformance corpus, or a small one of shell-script container tasks, as the kfp SDK
// compiles container components). Defaults are the smallest valid objects; setters are named after
// the upstream fields. Only tests import this file.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecurringRunObj, RecurringRunTrigger, ScheduleWindow } from '../../api/kfp-objects.js';
import type { StoredObject } from '../../api/meta.js';
import { clone } from '../../api/meta.js';
import type { Run } from '../../api/pipelines.js';
import type { PipelineSpec, PlatformSpec, RetryPolicy } from '../../api/kfp/ir.js';
import { parsePipelineFile } from '../../api/kfp/ir.js';
import { conformanceDir } from '../../conformance-path.js';

/** the compiled pipelines of the conformance corpus that the unit tests run */
export const corpusPipelines = (): string => join(conformanceDir(), 'kfp/pipelines/valid');

/** A compiled pipeline of the corpus (`critical/flip_coin.yaml`), with its PlatformSpec if it has one. */
export function corpusPipeline(file: string): { spec: PipelineSpec; platform?: PlatformSpec } {
  return parsePipelineFile(readFileSync(join(corpusPipelines(), file), 'utf8'), file);
}

export interface ShellTask {
  script: string;
  deps?: string[];
  retry?: RetryPolicy;
  cache?: boolean;
  /** the task has a STRING output parameter `out`; the script gets its file as $1 */
  output?: boolean;
}

/** A pipeline of container tasks running shell scripts, as the SDK would compile container components. */
export function shellPipeline(name: string, tasks: Record<string, ShellTask>): PipelineSpec {
  const dagTasks: Record<string, unknown> = {};
  const components: Record<string, unknown> = {};
  const executors: Record<string, unknown> = {};
  for (const [t, d] of Object.entries(tasks)) {
    dagTasks[t] = {
      taskInfo: { name: t }, componentRef: { name: `comp-${t}` }, ...(d.deps ? { dependentTasks: d.deps } : {}),
      ...(d.retry ? { retryPolicy: d.retry } : {}), cachingOptions: d.cache ? { enableCache: true } : {},
    };
    components[`comp-${t}`] = { executorLabel: `exec-${t}`, ...(d.output ? { outputDefinitions: { parameters: { out: { parameterType: 'STRING' } } } } : {}) };
    const args = d.output ? ['{{$.outputs.parameters[\'out\'].output_file}}'] : [];
    executors[`exec-${t}`] = { container: { image: 'alpine:3', command: ['sh', '-c', d.script, 'sh', ...args] } };
  }
  return {
    pipelineInfo: { name }, schemaVersion: '2.1.0', sdkVersion: 'kfp-2.17.0',
    root: { dag: { tasks: dagTasks } }, components, deploymentSpec: { executors },
  } as unknown as PipelineSpec;
}

export class RunBuilder {
  constructor(private run: Run) {}

  private set(f: (r: Run) => void): this {
    f(this.run);
    return this;
  }

  pipelineSpec(spec: PipelineSpec): this { return this.set((r) => { r.spec.pipelineSpec = spec; }); }
  platformSpec(platform: PlatformSpec | undefined): this { return this.set((r) => { if (platform) r.spec.platformSpec = platform; else delete r.spec.platformSpec; }); }
  /** a compiled pipeline with its platform config, as corpusPipeline returns it */
  pipeline(p: { spec: PipelineSpec; platform?: PlatformSpec }): this { return this.pipelineSpec(p.spec).platformSpec(p.platform); }
  /** the pipeline `file` of the conformance corpus */
  corpus(file: string): this { return this.pipeline(corpusPipeline(file)); }
  parameters(p: Record<string, unknown> | undefined): this { return this.set((r) => { if (p) r.spec.parameters = p; else delete r.spec.parameters; }); }
  pipelineRoot(root: string): this { return this.set((r) => { r.spec.pipelineRoot = root; }); }
  enableCaching(on: boolean): this { return this.set((r) => { r.spec.enableCaching = on; }); }
  terminate(on = true): this { return this.set((r) => { r.spec.terminate = on; }); }
  label(k: string, v: string): this { return this.set((r) => { (r.metadata.labels ??= {})[k] = v; }); }
  annotation(k: string, v: string): this { return this.set((r) => { (r.metadata.annotations ??= {})[k] = v; }); }

  /** a fresh deep copy */
  obj(): Run {
    return clone(this.run);
  }
}

/** A valid Run: one shell task `main` that exits 0. */
export function makeRun(name: string, namespace = 'default'): RunBuilder {
  return new RunBuilder({
    apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run',
    metadata: { name, namespace },
    spec: { pipelineSpec: shellPipeline(name, { main: { script: 'true' } }) },
  });
}

export class RecurringRunBuilder {
  constructor(private rr: RecurringRunObj & StoredObject) {}

  private set(f: (r: RecurringRunObj & StoredObject) => void): this {
    f(this.rr);
    return this;
  }

  /** fires every `intervalSecond` after creation (or after the start time) */
  periodic(intervalSecond: number, window: ScheduleWindow = {}): this { return this.trigger({ periodicSchedule: { intervalSecond, ...window } }); }
  /** fires on a cron expression (six fields with seconds, or five) */
  cron(cron: string, window: ScheduleWindow = {}): this { return this.trigger({ cronSchedule: { cron, ...window } }); }
  trigger(t: RecurringRunTrigger): this { return this.set((r) => { r.spec.trigger = t; }); }
  pipelineSpec(spec: PipelineSpec): this { return this.set((r) => { r.spec.pipelineSpec = spec; }); }
  maxConcurrency(n: number): this { return this.set((r) => { r.spec.maxConcurrency = n; }); }
  noCatchup(on = true): this { return this.set((r) => { r.spec.noCatchup = on; }); }
  disabled(): this { return this.set((r) => { r.spec.mode = 'DISABLE'; }); }
  createdAt(time: string): this { return this.set((r) => { r.metadata.creationTimestamp = time; }); }
  /** the last fire time it started a run for */
  lastScheduled(time: string): this { return this.set((r) => { r.status = { ...r.status, lastScheduledTime: time }; }); }

  /** a fresh deep copy, as the store would hand it out */
  obj(): RecurringRunObj & StoredObject {
    return clone(this.rr);
  }
}

/** A RecurringRun as stored (uid, resourceVersion, created 2024-01-01T00:00:00Z): a one-task pipeline, hourly. */
export function makeRecurringRun(name: string, namespace = 'default'): RecurringRunBuilder {
  return new RecurringRunBuilder({
    apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'RecurringRun',
    metadata: { name, namespace, uid: `uid-${name}`, resourceVersion: '1', creationTimestamp: '2024-01-01T00:00:00Z' },
    spec: { pipelineSpec: shellPipeline(name, { main: { script: 'true' } }), trigger: { periodicSchedule: { intervalSecond: 3600 } } },
  });
}
