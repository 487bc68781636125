// The Run controller: plays the KFP v2 driver and launcher for one Run. Each reconcile recomputes
// everything from the Run's status and its owned Pods: (1) finished Pods have their outputs read
// back and recorded, and that is written before anything else; (2) the DAG is walked, sub-DAGs are
// resolved, ready container tasks become Pods; (3) the run's state follows. Pod names are derived
// from the run uid and the task path, so a Pod created just before a crash is found, not duplicated;
// a task whose outputs are recorded is never run again.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { setCondition } from '../../api/conditions.js';
import type { Pod } from '../../api/core-types.js';
import { ApiError, StatusReason } from '../../api/errors.js';
import { Kinds } from '../../api/index.js';
import type { ObjectKey, StoredObject } from '../../api/meta.js';
import { clone, deepEqual, now, ownerRefTo } from '../../api/meta.js';
import type { Run, RunArtifact, RunOutputs, RunStatus, TaskStatus } from '../../api/pipelines.js';
import { RunLabels, RunStates } from '../../api/pipelines.js';
import type { Controller, Manager, Result } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import type { Client } from '../../store/client.js';
import { evaluateCondition, selectParameter } from './cel.js';
import { topologicalOrder, upstreamOf } from './dag.js';
import type { ArtifactList, ExecutorInput, InputArtifactArg, InputParameterArg, JsonValue, ParameterType } from './executor-input.js';
import { buildExecutorInput, normalizePipelineRoot, taskRootUri } from './executor-input.js';
import type { ComponentSpec, PipelineSpec, PipelineTaskSpec } from './ir.js';
import { resolvePlaceholders } from './placeholders.js';
import { readBackOutputs } from './read-back.js';
import type { PythonEnvironments } from './python-envs.js';
import { parsePipBootstrap } from './python-envs.js';

export interface RunControllerOptions {
  client: Client;
  recorder: Recorder;
  /** local directory under which artifacts and output files are written */
  pipelineRoot: string;
  /** interpreter for Python images: its directory goes first on the Pod's PATH */
  python?: string;
  /** cached environments for lightweight components' `pip install`s; without it the step runs as written */
  environments?: PythonEnvironments;
}

export const RunAnnotations = {
  taskPath: 'pipelines.kubeflow.org/task-path',
  component: 'pipelines.kubeflow.org/component',
  executorInput: 'pipelines.kubeflow.org/executor-input',
} as const;

type RunObject = Run & StoredObject;
type PodObject = Pod & StoredObject;

class TaskFailure extends Error {}

export function addRunController(mgr: Manager, opts: RunControllerOptions): Controller {
  const r = new RunReconciler(opts);
  return mgr.add({ name: 'run', for: Kinds.Run, owns: [Kinds.Pod], reconcile: (key) => r.reconcile(key) });
}

const emptyOutputs = (): RunOutputs => ({ parameters: {}, artifacts: {} });

const SKIPPED = RunStates.skipped;

/** Finished without failing: the task's dependents may go on. */
function isSettled(state: string | undefined): boolean {
  return state === RunStates.succeeded || state === SKIPPED;
}

function isTerminal(state: string | undefined): boolean {
  return state === RunStates.succeeded || state === RunStates.failed;
}

/** `<run>-<task>-<hash>`: stable for a run uid and task path. */
export function podNameFor(run: RunObject, taskPath: string): string {
  const hash = createHash('sha256').update(`${run.metadata.uid}|${taskPath}`).digest('hex').slice(0, 8);
  const leaf = (taskPath.split('.').pop() ?? 'task').toLowerCase().replace(/[^a-z0-9-]/g, '-');
  const head = `${run.metadata.name}-${leaf}`.slice(0, 63 - 9).replace(/-+$/, '');
  return `${head}-${hash}`;
}

/** The first feature of a task this controller cannot honour yet, in KFP's words. */
export function unsupportedFeature(spec: PipelineSpec, task: PipelineTaskSpec): string | undefined {
  if (task.triggerPolicy?.strategy === 'ALL_UPSTREAM_TASKS_COMPLETED') return 'an exit handler or ignore_upstream_failure (triggerPolicy.strategy ALL_UPSTREAM_TASKS_COMPLETED)';
  if (task.artifactIterator) return 'a loop over artifacts (dsl.ParallelFor: artifactIterator)';
  if (task.retryPolicy) return 'retries (retryPolicy)';
  for (const [name, p] of Object.entries(task.inputs?.parameters ?? {})) {
    if (p.taskFinalStatus) return `a task final status input (${name}: taskFinalStatus)`;
  }
  const comp = spec.components?.[task.componentRef.name];
  if (task.parameterIterator && !comp?.dag) return 'a loop (dsl.ParallelFor: parameterIterator) whose body is not a DAG';
  if (comp?.dag) {
    for (const [name, o] of Object.entries(comp.dag.outputs?.artifacts ?? {})) if (o.artifactSelectors.length === 0) return `a DAG output with no artifactSelectors (${name})`;
    return undefined;
  }
  const exec = comp?.executorLabel ? spec.deploymentSpec?.executors?.[comp.executorLabel] : undefined;
  if (exec?.importer) return 'an importer (dsl.importer)';
  if (!exec?.container) return `an executor that is not a container (${Object.keys(exec ?? {}).join(', ') || 'none'})`;
  for (const [name, a] of Object.entries(comp?.inputDefinitions?.artifacts ?? {})) if (a.isArtifactList) return `artifact list inputs (${name}: isArtifactList)`;
  return undefined;
}

/** Walks every DAG reachable from root; the first unsupported task, as `<path>: <feature>`. */
function firstUnsupported(spec: PipelineSpec, comp: ComponentSpec, scope: string[]): { path: string; feature: string } | undefined {
  for (const [name, task] of Object.entries(comp.dag?.tasks ?? {})) {
    const path = [...scope, name].join('.');
    const feature = unsupportedFeature(spec, task);
    if (feature) return { path, feature };
    const child = spec.components?.[task.componentRef.name];
    if (child?.dag) {
      const inner = firstUnsupported(spec, child, [...scope, name]);
      if (inner) return inner;
    }
  }
  return undefined;
}

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

function toRunArtifact(a: { name: string; uri: string; type?: object; metadata?: object }): RunArtifact {
  return { name: a.name, uri: a.uri, type: { ...(a.type ?? {}) }, metadata: { ...(a.metadata ?? {}) } };
}

function exitMessage(pod: PodObject): string {
  const t = pod.status?.containerStatuses?.find((s: { state?: { terminated?: { exitCode: number } } }) => s.state?.terminated && s.state.terminated.exitCode !== 0)?.state?.terminated;
  return t ? `container exited with code ${t.exitCode}${t.reason ? ` (${t.reason})` : ''}` : `pod ${pod.status?.phase ?? 'failed'}`;
}

/** What one pass works on: read once, mutated in memory, written at the end of a rung. */
interface Pass {
  run: RunObject;
  spec: PipelineSpec;
  status: RunStatus;
  tasks: Record<string, TaskStatus>;
  pods: Map<string, PodObject>;
  root: string;
  at: string;
  toCreate: PodObject[];
  failure?: { task: string; message: string };
}

export class RunReconciler {
  constructor(private readonly opts: RunControllerOptions) {}

  async reconcile(key: ObjectKey): Promise<Result> {
    const { client } = this.opts;
    const run = await client.find<Run>(Kinds.Run, key);
    if (!run || run.metadata.deletionTimestamp || isTerminal(run.status?.state)) return {};
    const owned = (await client.listAll<Pod>(Kinds.Pod, { namespace: key.namespace, labelSelector: `${RunLabels.run}=${run.metadata.name}` }))
      .filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === run.metadata.uid));
    const status = clone(run.status ?? {});
    const pass: Pass = {
      run, spec: run.spec.pipelineSpec, status, tasks: (status.tasks ??= {}),
      pods: new Map(owned.map((p) => [p.metadata.name, p as PodObject])),
      root: '', at: now(), toCreate: [],
    };
    // 0. start: refuse what this slice cannot run, before any Pod exists
    if (!status.state) {
      const root = run.spec.pipelineRoot ?? this.opts.pipelineRoot;
      const reason = root.startsWith('/') || root.startsWith('file:///') ? undefined : `pipeline root ${JSON.stringify(root)} is not supported yet: only a local directory is`;
      const bad = firstUnsupported(pass.spec, pass.spec.root, []);
      const message = reason ?? (bad ? `task ${bad.path} uses ${bad.feature}, which is not supported yet` : undefined);
      if (message) return this.finish(pass, RunStates.failed, 'Unsupported', message, bad?.path);
      status.state = RunStates.running;
      status.startedAt = pass.at;
      setCondition(status, { type: 'Succeeded', status: 'Unknown', reason: 'Running', message: 'the run has started' }, pass.at);
      await this.write(pass);
      this.opts.recorder.event(run, 'Normal', 'Started', `run of pipeline ${pass.spec.pipelineInfo.name} started`);
      return {};
    }
    pass.root = normalizePipelineRoot(run.spec.pipelineRoot ?? this.opts.pipelineRoot);
    // 1. harvest: record what finished Pods produced, and write it before anything else happens
    if (this.harvest(pass)) {
      await this.write(pass);
      return {};
    }
    // 2. walk the DAG: resolve sub-DAGs, plan Pods for ready tasks
    const rootResult = this.walk(pass, pass.spec.root, [], { parameters: { ...(run.spec.parameters ?? {}) }, artifacts: {} });
    for (const pod of pass.toCreate) {
      const taskPath = pod.metadata.annotations?.[RunAnnotations.taskPath] ?? '';
      try {
        await this.prepareEnvironment(pod);
      } catch (e) {
        pass.failure ??= { task: taskPath, message: `task ${taskPath}: its Python environment could not be made: ${(e as Error).message}` };
        continue;
      }
      try {
        await client.create(pod);
        this.opts.recorder.event(run, 'Normal', 'TaskStarted', `task ${pod.metadata.annotations?.[RunAnnotations.taskPath]} started as pod ${pod.metadata.name}`);
      } catch (e) {
        if (!(e instanceof ApiError && e.reason === StatusReason.AlreadyExists)) throw e;
      }
    }
    // 3. the run's own state
    if (pass.failure) return this.finish(pass, RunStates.failed, 'TaskFailed', pass.failure.message, pass.failure.task);
    if (rootResult === 'done') {
      try {
        status.outputs = this.dagOutputs(pass, pass.spec.root, []);
      } catch (e) {
        return this.finish(pass, RunStates.failed, 'OutputsFailed', (e as Error).message);
      }
      return this.finish(pass, RunStates.succeeded, 'Succeeded', 'all tasks succeeded');
    }
    if (!deepEqual(status, run.status)) await this.write(pass);
    return {};
  }

  private async write(pass: Pass): Promise<void> {
    pass.run = await this.opts.client.updateStatus<Run>({ ...pass.run, status: pass.status });
  }

  private async finish(pass: Pass, state: 'SUCCEEDED' | 'FAILED', reason: string, message: string, task?: string): Promise<Result> {
    const { status } = pass;
    status.state = state;
    status.startedAt ??= pass.at;
    status.finishedAt = pass.at;
    status.message = message;
    if (task) status.failedTask = task;
    setCondition(status, { type: 'Succeeded', status: state === RunStates.succeeded ? 'True' : 'False', reason, message }, pass.at);
    await this.write(pass);
    this.opts.recorder.event(pass.run, state === RunStates.succeeded ? 'Normal' : 'Warning', reason, message);
    return {};
  }

  /** Records every finished Pod's result in its task; true when something was recorded. */
  private harvest(pass: Pass): boolean {
    let changed = false;
    for (const pod of pass.pods.values()) {
      const path = pod.metadata.annotations?.[RunAnnotations.taskPath];
      const phase = pod.status?.phase;
      if (!path || (phase !== 'Succeeded' && phase !== 'Failed')) continue;
      const rec = pass.tasks[path];
      if (rec && isTerminal(rec.state)) continue;
      const base: TaskStatus = { state: RunStates.running, podName: pod.metadata.name, startedAt: rec?.startedAt ?? pod.status?.startTime ?? pass.at, finishedAt: pass.at };
      if (phase === 'Failed') {
        pass.tasks[path] = { ...base, state: RunStates.failed, message: `task ${path} failed: ${exitMessage(pod)}` };
      } else {
        try {
          pass.tasks[path] = { ...base, state: RunStates.succeeded, outputs: this.readBack(pass, pod) };
        } catch (e) {
          pass.tasks[path] = { ...base, state: RunStates.failed, message: `task ${path}: reading its outputs failed: ${(e as Error).message}` };
        }
      }
      changed = true;
    }
    return changed;
  }

  private readBack(pass: Pass, pod: PodObject): RunOutputs {
    const ei = JSON.parse(pod.metadata.annotations?.[RunAnnotations.executorInput] ?? '{}') as ExecutorInput;
    const comp = pass.spec.components?.[pod.metadata.annotations?.[RunAnnotations.component] ?? ''];
    const types: Record<string, ParameterType> = {};
    for (const [n, d] of Object.entries(comp?.outputDefinitions?.parameters ?? {})) types[n] = d.parameterType as ParameterType;
    const files: Record<string, string | undefined> = {};
    for (const [n, p] of Object.entries(ei.outputs.parameters)) files[n] = readIfExists(p.outputFile);
    const r = readBackOutputs({ executorOutputText: readIfExists(ei.outputs.outputFile), outputParameterFiles: files, outputParameters: types, outputArtifacts: ei.outputs.artifacts });
    const artifacts: Record<string, RunArtifact[]> = {};
    for (const [n, list] of Object.entries(r.artifacts)) artifacts[n] = list.map(toRunArtifact);
    return { parameters: r.parameters, artifacts };
  }

  /** Advances one DAG; 'done' when every task in it succeeded or was skipped. */
  private walk(pass: Pass, comp: ComponentSpec, scope: string[], inputs: RunOutputs): 'done' | 'pending' {
    const tasks = comp.dag?.tasks ?? {};
    let done = true;
    for (const name of topologicalOrder(comp.dag ?? {})) {
      const task = tasks[name];
      if (!task) continue;
      const path = [...scope, name].join('.');
      const rec = pass.tasks[path];
      if (isSettled(rec?.state)) continue;
      if (rec?.state === RunStates.failed) {
        done = false;
        pass.failure ??= { task: path, message: rec.message ?? `task ${path} failed` };
        continue;
      }
      const ups = upstreamOf(task);
      if (!ups.every((u) => isSettled(pass.tasks[[...scope, u].join('.')]?.state))) {
        done = false;
        continue;
      }
      const skippedUp = ups.find((u) => pass.tasks[[...scope, u].join('.')]?.state === SKIPPED);
      if (skippedUp !== undefined && !rec) {
        // dsl.OneOf consumers depend on the branches' parent DAG, which is never skipped itself
        pass.tasks[path] = { state: SKIPPED, startedAt: pass.at, finishedAt: pass.at, message: `upstream task ${skippedUp} was skipped` };
        continue;
      }
      const child = pass.spec.components?.[task.componentRef.name];
      if (!child) {
        done = false;
        pass.failure ??= { task: path, message: `task ${path}: component ${task.componentRef.name} not found` };
        continue;
      }
      try {
        if (task.parameterIterator) this.walkLoop(pass, path, task, child, scope, inputs);
        else if (child.dag) this.walkSubDag(pass, path, task, child, scope, inputs);
        else if (!rec) this.planPod(pass, path, task, child, scope, inputs);
        else if (rec.podName && !pass.pods.has(rec.podName)) throw new TaskFailure(`task ${path} failed: its pod ${rec.podName} was deleted before it finished`);
      } catch (e) {
        const message = e instanceof TaskFailure ? e.message : `task ${path}: ${(e as Error).message}`;
        pass.tasks[path] = { ...pass.tasks[path], state: RunStates.failed, startedAt: pass.tasks[path]?.startedAt ?? pass.at, finishedAt: pass.at, message };
        pass.failure ??= { task: path, message };
      }
      if (!isSettled(pass.tasks[path]?.state)) done = false;
    }
    return done ? 'done' : 'pending';
  }

  /**
   * A new task's record: its resolved inputs, SKIPPED when its triggerPolicy.condition is false
   * (evaluated once, by the pass that first reaches the task; the record keeps the answer).
   */
  private startTask(pass: Pass, path: string, task: PipelineTaskSpec, comp: ComponentSpec, scope: string[], outer: RunOutputs, provided: string[] = []): TaskStatus {
    const inputs = this.resolveInputs(pass, path, task, comp, scope, outer, provided);
    const condition = task.triggerPolicy?.condition;
    let run = true;
    if (condition) {
      try {
        run = evaluateCondition(condition, inputs);
      } catch (e) {
        throw new TaskFailure(`task ${path}: its condition failed: ${(e as Error).message}`);
      }
    }
    const rec: TaskStatus = run
      ? { state: RunStates.running, startedAt: pass.at, inputs }
      : { state: SKIPPED, startedAt: pass.at, finishedAt: pass.at, inputs, message: `condition ${condition ?? ''} is false` };
    pass.tasks[path] = rec;
    return rec;
  }

  private walkSubDag(pass: Pass, path: string, task: PipelineTaskSpec, comp: ComponentSpec, scope: string[], outer: RunOutputs): void {
    const rec = pass.tasks[path] ?? this.startTask(pass, path, task, comp, scope, outer);
    if (rec.state !== RunStates.running) return;
    if (this.walk(pass, comp, path.split('.'), rec.inputs ?? emptyOutputs()) !== 'done') return;
    rec.outputs = this.dagOutputs(pass, comp, path.split('.'));
    rec.state = RunStates.succeeded;
    rec.finishedAt = pass.at;
  }

  /**
   * dsl.ParallelFor: the body DAG once per item, as `<loop>.<index>` with the item bound to
   * `itemInput`; at most `parallelismLimit` iterations unfinished at once (an iteration starts
   * only when fewer are running). The loop's outputs collect each iteration's DAG outputs in
   * iteration order (dsl.Collected).
   */
  private walkLoop(pass: Pass, path: string, task: PipelineTaskSpec, comp: ComponentSpec, scope: string[], outer: RunOutputs): void {
    const it = task.parameterIterator;
    if (!it || !comp.dag) throw new TaskFailure(`task ${path}: a loop needs a parameterIterator and a DAG body`);
    const rec = pass.tasks[path] ?? this.startTask(pass, path, task, comp, scope, outer, [it.itemInput]);
    if (rec.state !== RunStates.running) return;
    const inputs = rec.inputs ?? emptyOutputs();
    const items = loopItems(path, it, inputs);
    const limitRaw = Number(task.iteratorPolicy?.parallelismLimit ?? 0);
    const limit = limitRaw > 0 ? limitRaw : Infinity;
    let running = 0;
    let pending = 0;
    for (const [i, item] of items.entries()) {
      const ipath = `${path}.${i}`;
      let irec = pass.tasks[ipath];
      if (isSettled(irec?.state)) continue;
      pending++;
      if (irec?.state === RunStates.failed) {
        pass.failure ??= { task: ipath, message: irec.message ?? `task ${ipath} failed` };
        continue;
      }
      if (!irec) {
        if (running >= limit) continue;
        irec = pass.tasks[ipath] = { state: RunStates.running, startedAt: pass.at, inputs: { parameters: { ...inputs.parameters, [it.itemInput]: item }, artifacts: { ...inputs.artifacts } } };
      }
      if (this.walk(pass, comp, ipath.split('.'), irec.inputs ?? emptyOutputs()) === 'done') {
        irec.outputs = this.dagOutputs(pass, comp, ipath.split('.'));
        irec.state = RunStates.succeeded;
        irec.finishedAt = pass.at;
        pending--;
      } else running++;
    }
    if (pending > 0) return;
    const out = emptyOutputs();
    const iterations = items.map((_, i) => pass.tasks[`${path}.${i}`]).filter((r): r is TaskStatus => r?.state === RunStates.succeeded);
    for (const name of Object.keys(comp.dag.outputs?.parameters ?? {})) {
      out.parameters[name] = iterations.map((r) => r.outputs?.parameters[name]).filter((v) => v !== undefined);
    }
    for (const name of Object.keys(comp.dag.outputs?.artifacts ?? {})) {
      out.artifacts[name] = iterations.flatMap((r) => r.outputs?.artifacts[name] ?? []);
    }
    rec.outputs = out;
    rec.state = RunStates.succeeded;
    rec.finishedAt = pass.at;
  }

  /** `dag.outputs` selectors → values recorded by the producing subtasks. */
  private dagOutputs(pass: Pass, comp: ComponentSpec, scope: string[]): RunOutputs {
    const out = emptyOutputs();
    const producer = (t: string): TaskStatus | undefined => pass.tasks[[...scope, t].join('.')];
    for (const [name, sel] of Object.entries(comp.dag?.outputs?.parameters ?? {})) {
      const from = sel.valueFromParameter;
      if (from) {
        const p = producer(from.producerSubtask);
        if (p?.state === SKIPPED) continue; // a skipped branch produces nothing
        const v = p?.outputs?.parameters[from.outputParameterKey];
        if (v === undefined) throw new TaskFailure(`dag output ${name}: task ${from.producerSubtask} produced no parameter ${from.outputParameterKey}`);
        out.parameters[name] = v;
      } else if (sel.valueFromOneof) {
        // dsl.OneOf: the value of the first branch that ran
        const sels = sel.valueFromOneof.parameterSelectors;
        const hit = sels.map((s) => producer(s.producerSubtask)?.state === RunStates.succeeded ? producer(s.producerSubtask)?.outputs?.parameters[s.outputParameterKey] : undefined).find((v) => v !== undefined);
        if (hit === undefined) throw new TaskFailure(`dag output ${name}: none of the dsl.OneOf branches ${sels.map((s) => s.producerSubtask).join(', ')} produced a value`);
        out.parameters[name] = hit;
      }
    }
    for (const [name, sel] of Object.entries(comp.dag?.outputs?.artifacts ?? {})) {
      const sels = sel.artifactSelectors;
      if (sels.length === 0) continue;
      if (sels.length === 1 && producer(sels[0]?.producerSubtask ?? '')?.state === SKIPPED) continue;
      const list = sels.map((s) => producer(s.producerSubtask)?.state === RunStates.succeeded ? producer(s.producerSubtask)?.outputs?.artifacts[s.outputArtifactKey] : undefined).find((l) => l !== undefined);
      if (!list) {
        const s = sels[0];
        throw new TaskFailure(sels.length === 1 && s ? `dag output ${name}: task ${s.producerSubtask} produced no artifact ${s.outputArtifactKey}` : `dag output ${name}: none of the dsl.OneOf branches ${sels.map((x) => x.producerSubtask).join(', ')} produced an artifact`);
      }
      out.artifacts[name] = list;
    }
    return out;
  }

  /** The driver's `resolveInputs`: parameter values and artifacts from the parent scope and upstream tasks. */
  private resolveInputs(pass: Pass, path: string, task: PipelineTaskSpec, comp: ComponentSpec, scope: string[], outer: RunOutputs, provided: string[] = []): RunOutputs {
    const resolved = emptyOutputs();
    const upstream = (t: string): TaskStatus | undefined => pass.tasks[[...scope, t].join('.')];
    for (const [name, p] of Object.entries(task.inputs?.parameters ?? {})) {
      let v: unknown;
      if (p.componentInputParameter !== undefined) v = outer.parameters[p.componentInputParameter];
      else if (p.taskOutputParameter) {
        v = upstream(p.taskOutputParameter.producerTask)?.outputs?.parameters[p.taskOutputParameter.outputParameterKey];
        if (v === undefined) throw new TaskFailure(`task ${path}: input ${name}: task ${p.taskOutputParameter.producerTask} produced no parameter ${p.taskOutputParameter.outputParameterKey}`);
      } else if (p.runtimeValue) v = p.runtimeValue.constant;
      if (p.parameterExpressionSelector && v !== undefined && v !== null) {
        try {
          v = selectParameter(p.parameterExpressionSelector, v);
        } catch (e) {
          throw new TaskFailure(`task ${path}: input ${name}: ${(e as Error).message}`);
        }
      }
      if (v !== undefined && v !== null) resolved.parameters[name] = v;
    }
    for (const [name, a] of Object.entries(task.inputs?.artifacts ?? {})) {
      let list: RunArtifact[] | undefined;
      if (a.componentInputArtifact !== undefined) list = outer.artifacts[a.componentInputArtifact];
      else if (a.taskOutputArtifact) {
        list = upstream(a.taskOutputArtifact.producerTask)?.outputs?.artifacts[a.taskOutputArtifact.outputArtifactKey];
        if (!list) throw new TaskFailure(`task ${path}: input ${name}: task ${a.taskOutputArtifact.producerTask} produced no artifact ${a.taskOutputArtifact.outputArtifactKey}`);
      }
      if (list) resolved.artifacts[name] = list;
    }
    for (const [name, d] of Object.entries(comp.inputDefinitions?.parameters ?? {})) {
      if (resolved.parameters[name] === undefined && d.defaultValue === undefined && !d.isOptional && !provided.includes(name)) {
        throw new TaskFailure(`task ${path}: input parameter ${name} has no value and no default`);
      }
    }
    return resolved;
  }

  /**
   * A lightweight component starts with `pip install <packages> && "$0" "$@"`. Skiff installs each
   * package set once into a cached environment and runs the component there, without the pip step.
   * The component's own kfp pin is served by the base environment's kfp: the executor contract is the
   * same across kfp 2.x, and it keeps runs from installing one kfp per SDK version.
   */
  private async prepareEnvironment(pod: PodObject): Promise<void> {
    const envs = this.opts.environments;
    const c = pod.spec.containers[0];
    if (!envs || !c) return;
    const boot = parsePipBootstrap(c.command ?? [], c.args ?? []);
    if (!boot) return;
    const packages = boot.packages.filter((p) => !/^kfp\s*([<>=!~;[]|$)/i.test(p.trim()));
    c.command = boot.rest.command;
    c.args = boot.rest.args;
    if (packages.length === 0) return;
    const { binDir } = await envs.ensure(packages, boot.pipOptions);
    const env = (c.env ??= []);
    const path = env.find((e: { name: string; value?: string }) => e.name === 'PATH');
    const rest = path?.value ?? process.env['PATH'] ?? '/usr/bin:/bin';
    if (path) path.value = `${binDir}:${rest}`;
    else env.push({ name: 'PATH', value: `${binDir}:${rest}` });
    env.push({ name: 'VIRTUAL_ENV', value: dirname(binDir) });
  }

  private planPod(pass: Pass, path: string, task: PipelineTaskSpec, comp: ComponentSpec, scope: string[], outer: RunOutputs): void {
    const { run, spec } = pass;
    const podName = podNameFor(run, path);
    if (pass.pods.has(podName)) {
      // created by a pass whose status write was lost: adopt it
      pass.tasks[path] = { state: RunStates.running, podName, startedAt: pass.at };
      return;
    }
    const container = spec.deploymentSpec?.executors?.[comp.executorLabel ?? '']?.container;
    if (!container) throw new TaskFailure(`task ${path}: executor ${comp.executorLabel ?? ''} has no container`);
    const rec = this.startTask(pass, path, task, comp, scope, outer);
    if (rec.state !== RunStates.running) return;
    const inputs = rec.inputs ?? emptyOutputs();
    delete rec.inputs; // container tasks keep only their executor input, on the Pod
    const executionId = podName.slice(-8);
    const taskRoot = taskRootUri({ pipelineRoot: pass.root, pipelineName: spec.pipelineInfo.name, runId: run.metadata.uid, taskName: path.split('.').join('/'), executionId });
    const parameters: Record<string, InputParameterArg> = {};
    for (const [name, d] of Object.entries(comp.inputDefinitions?.parameters ?? {})) {
      parameters[name] = { value: inputs.parameters[name] as JsonValue | undefined, parameterType: d.parameterType as ParameterType };
    }
    const inputArtifacts: Record<string, InputArtifactArg[]> = {};
    for (const [name, list] of Object.entries(inputs.artifacts)) {
      inputArtifacts[name] = list.map((a) => ({ name: a.name, uri: a.uri, metadata: (a.metadata ?? {}) as Record<string, JsonValue>, schemaTitle: a.type?.['schemaTitle'] as string | undefined, schemaVersion: a.type?.['schemaVersion'] as string | undefined }));
    }
    const outputArtifacts: Record<string, { schemaTitle: string; schemaVersion?: string; metadata?: Record<string, JsonValue> }> = {};
    for (const [name, d] of Object.entries(comp.outputDefinitions?.artifacts ?? {})) {
      outputArtifacts[name] = { schemaTitle: d.artifactType.schemaTitle ?? 'system.Artifact', ...(d.artifactType.schemaVersion ? { schemaVersion: d.artifactType.schemaVersion } : {}), ...(d.metadata ? { metadata: d.metadata as Record<string, JsonValue> } : {}) };
    }
    const outputParameterFiles: Record<string, string> = {};
    for (const name of Object.keys(comp.outputDefinitions?.parameters ?? {})) outputParameterFiles[name] = `${taskRoot}/output_parameters/${name}`;
    const executorInput = buildExecutorInput({ parameters, inputArtifacts, outputArtifacts, outputArtifactUri: taskRoot, outputParameterFiles, executorOutputFile: `${taskRoot}/output_metadata.json` });
    const ctx = {
      executorInput, inputDefinitions: comp.inputDefinitions as never, pipelineJobName: run.metadata.name, pipelineJobResourceName: run.metadata.name,
      pipelineJobUuid: run.metadata.uid, pipelineTaskName: path.split('.').pop() ?? path, pipelineTaskUuid: executionId, pipelineRoot: pass.root,
    };
    const command = resolvePlaceholders(container.command ?? [], ctx);
    const args = resolvePlaceholders(container.args ?? [], ctx);
    // the launcher's prepareOutputFolders
    mkdirSync(`${taskRoot}/output_parameters`, { recursive: true });
    for (const list of Object.values(executorInput.outputs.artifacts) as ArtifactList[]) for (const a of list.artifacts) mkdirSync(dirname(a.uri), { recursive: true });
    const env = [...(container.env ?? []).map((e) => ({ name: e.name, value: e.value ?? '' })), { name: 'KFP_POD_NAME', value: podName }, { name: 'KFP_RUN_ID', value: run.metadata.uid }];
    if (this.opts.python) env.push({ name: 'PATH', value: `${dirname(this.opts.python)}:${process.env['PATH'] ?? '/usr/bin:/bin'}` });
    pass.toCreate.push({
      apiVersion: 'v1', kind: 'Pod',
      metadata: {
        name: podName, namespace: run.metadata.namespace,
        labels: { [RunLabels.run]: run.metadata.name, [RunLabels.task]: (path.split('.').pop() ?? path).slice(0, 63) },
        annotations: { [RunAnnotations.taskPath]: path, [RunAnnotations.component]: task.componentRef.name, [RunAnnotations.executorInput]: JSON.stringify(executorInput) },
        ownerReferences: [ownerRefTo(run)],
      },
      spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: container.image, command, args, env }] },
    } as unknown as PodObject);
    pass.tasks[path] = { state: RunStates.running, podName, startedAt: pass.at };
  }
}

/** A loop's items: `raw` (a JSON list as a string) or the list in one of the loop task's inputs. */
function loopItems(path: string, it: NonNullable<PipelineTaskSpec['parameterIterator']>, inputs: RunOutputs): unknown[] {
  let items: unknown;
  if (it.items.raw !== undefined) {
    try {
      items = JSON.parse(it.items.raw);
    } catch (e) {
      throw new TaskFailure(`task ${path}: loop items ${JSON.stringify(it.items.raw)} are not JSON: ${(e as Error).message}`);
    }
  } else if (it.items.inputParameter !== undefined) {
    items = inputs.parameters[it.items.inputParameter];
    if (typeof items === 'string') {
      try {
        items = JSON.parse(items);
      } catch {
        // not a JSON list: reported below
      }
    }
  } else throw new TaskFailure(`task ${path}: parameterIterator has neither items.raw nor items.inputParameter`);
  if (!Array.isArray(items)) throw new TaskFailure(`task ${path}: loop items must be a list, got ${JSON.stringify(items)}`);
  return items;
}
