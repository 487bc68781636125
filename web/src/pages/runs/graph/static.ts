// A run's graph, first from the compiled spec alone: one DAG level at a time (the root, a sub-DAG, or
// one iteration of a loop). Node ids are task paths as the run controller names them
// (`outer.inner.train`, loop iterations `loop.<i>`), so runtime state joins by id.
import type { ComponentSpec, PipelineSpec, PipelineTaskSpec } from '../../../api/types';

/** `inputs` / `outputs`: the DAG's own inputs and outputs, where values enter and leave the layer */
export type NodeKind = 'container' | 'importer' | 'dag' | 'condition' | 'loop' | 'inputs' | 'outputs';

export interface GraphNode {
  /** the task's path in the run: `condition-1.for-loop-2` */
  id: string;
  /** the task's name in its DAG */
  task: string;
  label: string;
  kind: NodeKind;
  component: string;
  /** a loop: what it iterates over, for the panel */
  iterator?: { input: string; items: string; literal?: boolean };
  condition?: string;
  image?: string;
  /** `inputs` / `outputs` nodes: the names they stand for */
  names?: string[];
}

/** the last segment of the ids of a layer's inputs and outputs nodes (no task can be named so: KFP task names are DNS labels) */
export const INPUTS = '__inputs';
export const OUTPUTS = '__outputs';

/** KFP's compiler passes values into a sub-DAG as `pipelinechannel--<name>`: users know them as `<name>` */
export function plainName(n: string): string {
  return n.replace(/^pipelinechannel--/, '');
}

export function isPseudo(n: GraphNode): boolean {
  return n.kind === 'inputs' || n.kind === 'outputs';
}

export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  /** what flows along it: an artifact or parameter name; empty for an ordering-only edge */
  label: string;
  kind: 'artifact' | 'parameter' | 'order';
}

export interface Level {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export interface Crumb {
  label: string;
  /** the layer's path prefix ('' for the root) */
  path: string;
}

export interface Layer {
  /** the component whose DAG this layer shows */
  component: ComponentSpec | undefined;
  crumbs: Crumb[];
  /** a loop's iteration being shown, when the layer is one */
  iterationOf?: string;
  error?: string;
}

function componentOf(spec: PipelineSpec, name: string): ComponentSpec | undefined {
  return spec.components?.[name] as ComponentSpec | undefined;
}

function kindOf(spec: PipelineSpec, t: PipelineTaskSpec): NodeKind {
  if (t.parameterIterator || t.artifactIterator) return 'loop';
  const comp = componentOf(spec, t.componentRef?.name);
  if (comp?.dag) return t.triggerPolicy?.condition ? 'condition' : t.componentRef.name.startsWith('comp-condition') ? 'condition' : 'dag';
  const label = comp?.executorLabel;
  const exec = label ? (spec.deploymentSpec as { executors?: Record<string, { importer?: unknown; container?: { image?: string } }> } | undefined)?.executors?.[label] : undefined;
  return exec?.importer ? 'importer' : 'container';
}

function imageOf(spec: PipelineSpec, t: PipelineTaskSpec): string | undefined {
  const label = componentOf(spec, t.componentRef?.name)?.executorLabel;
  const exec = label ? (spec.deploymentSpec as { executors?: Record<string, { container?: { image?: string } }> } | undefined)?.executors?.[label] : undefined;
  return exec?.container?.image;
}

/** one DAG level's tasks and the data that flows between them */
export function levelGraph(spec: PipelineSpec, component: ComponentSpec | undefined, prefix: string): Level {
  const tasks = component?.dag?.tasks ?? {};
  const id = (task: string): string => (prefix ? `${prefix}.${task}` : task);
  const nodes: GraphNode[] = [];
  const edges: GraphEdge[] = [];
  const seen = new Set<string>();
  const inputNames = new Set<string>();
  const fromInputs = (task: string, input: string, kind: GraphEdge['kind']): void => {
    inputNames.add(plainName(input));
    edges.push({ id: `${INPUTS}->${task}:${input}`, source: id(INPUTS), target: id(task), label: plainName(input), kind });
  };
  for (const [name, t] of Object.entries(tasks)) {
    const kind = kindOf(spec, t);
    const node: GraphNode = { id: id(name), task: name, label: String(t.taskInfo?.name ?? name), kind, component: t.componentRef?.name ?? '' };
    const it = t.parameterIterator ?? t.artifactIterator;
    if (it) {
      const items = it.items as { raw?: string; inputParameter?: string; inputArtifact?: string };
      node.iterator = { input: it.itemInput, items: items.raw ?? items.inputParameter ?? items.inputArtifact ?? '', ...(items.raw !== undefined ? { literal: true } : {}) };
    }
    if (t.triggerPolicy?.condition) node.condition = t.triggerPolicy.condition;
    const image = kind === 'container' ? imageOf(spec, t) : undefined;
    if (image) node.image = image;
    nodes.push(node);
    const add = (source: string, label: string, kind: GraphEdge['kind']): void => {
      if (!tasks[source]) return;
      const key = `${source}->${name}:${label}`;
      if (seen.has(key)) return;
      seen.add(key);
      edges.push({ id: key, source: id(source), target: id(name), label, kind });
    };
    for (const [input, p] of Object.entries(t.inputs?.parameters ?? {})) {
      if (p.taskOutputParameter?.producerTask) add(p.taskOutputParameter.producerTask, p.taskOutputParameter.outputParameterKey ?? input, 'parameter');
      if (p.taskFinalStatus?.producerTask) add(p.taskFinalStatus.producerTask, 'final status', 'parameter');
    }
    for (const [input, a] of Object.entries(t.inputs?.artifacts ?? {})) {
      if (a.taskOutputArtifact?.producerTask) add(a.taskOutputArtifact.producerTask, a.taskOutputArtifact.outputArtifactKey ?? input, 'artifact');
    }
    for (const p of Object.values(t.inputs?.parameters ?? {})) if (p.componentInputParameter) fromInputs(name, p.componentInputParameter, 'parameter');
    for (const a of Object.values(t.inputs?.artifacts ?? {})) if (a.componentInputArtifact) fromInputs(name, a.componentInputArtifact, 'artifact');
    for (const dep of t.dependentTasks ?? []) {
      if (!edges.some((e) => e.source === id(dep) && e.target === id(name))) add(dep, '', 'order');
    }
  }
  const outs = component?.dag?.outputs;
  const outputNames: string[] = [];
  const toOutputs = (producer: string, output: string, kind: GraphEdge['kind']): void => {
    if (!tasks[producer]) return;
    if (!outputNames.includes(output)) outputNames.push(output);
    edges.push({ id: `${producer}->${OUTPUTS}:${output}`, source: id(producer), target: id(OUTPUTS), label: output, kind });
  };
  for (const [out, sel] of Object.entries(outs?.parameters ?? {})) {
    const from = sel.valueFromParameter ? [sel.valueFromParameter] : (sel.valueFromOneof?.parameterSelectors ?? []);
    for (const f of from) toOutputs(f.producerSubtask, plainName(out), 'parameter');
  }
  for (const [out, sel] of Object.entries(outs?.artifacts ?? {})) for (const f of sel.artifactSelectors ?? []) toOutputs(f.producerSubtask, plainName(out), 'artifact');
  if (inputNames.size) nodes.unshift({ id: id(INPUTS), task: INPUTS, label: 'Inputs', kind: 'inputs', component: '', names: [...inputNames].sort() });
  if (outputNames.length) nodes.push({ id: id(OUTPUTS), task: OUTPUTS, label: 'Outputs', kind: 'outputs', component: '', names: outputNames.sort() });
  // several values along one edge read as one label
  const merged = new Map<string, GraphEdge>();
  for (const e of edges) {
    const k = `${e.source}->${e.target}`;
    const m = merged.get(k);
    if (!m) merged.set(k, { ...e, id: k });
    else if (e.label) {
      m.label = m.label ? `${m.label}, ${e.label}` : e.label;
      if (e.kind === 'artifact') m.kind = 'artifact';
    }
  }
  return { nodes, edges: [...merged.values()] };
}

/**
 * The DAG a layer path opens: '' is the root; `a.b` follows task a then b; inside a loop the next
 * segment is the iteration's index (`for-loop-2.3.print`).
 */
export function resolveLayer(spec: PipelineSpec, path: string): Layer {
  const crumbs: Crumb[] = [{ label: String(spec.pipelineInfo?.name ?? 'pipeline'), path: '' }];
  let component: ComponentSpec | undefined = spec.root as ComponentSpec;
  if (!path) return { component, crumbs };
  const segs = path.split('.');
  let prefix = '';
  let iterationOf: string | undefined;
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    const task: PipelineTaskSpec | undefined = component?.dag?.tasks?.[seg];
    if (!task) return { component: undefined, crumbs, error: `the pipeline has no task ${seg} under ${prefix || 'its root'}` };
    prefix = prefix ? `${prefix}.${seg}` : seg;
    component = componentOf(spec, task.componentRef.name);
    iterationOf = undefined;
    if (!component?.dag) return { component: undefined, crumbs, error: `${prefix} is a single task, not a DAG` };
    if (task.parameterIterator || task.artifactIterator) {
      const next = segs[i + 1];
      if (next === undefined || !/^\d+$/.test(next)) return { component: undefined, crumbs, error: `open an iteration of loop ${prefix}` };
      i++;
      iterationOf = prefix;
      prefix = `${prefix}.${next}`;
      crumbs.push({ label: `${String(task.taskInfo?.name ?? seg)} [${next}]`, path: prefix });
    } else {
      crumbs.push({ label: String(task.taskInfo?.name ?? seg), path: prefix });
    }
  }
  return { component, crumbs, iterationOf };
}

/** the task spec at a path (for the side panel) */
export function taskAt(spec: PipelineSpec, path: string): PipelineTaskSpec | undefined {
  const segs = path.split('.');
  let component: ComponentSpec | undefined = spec.root as ComponentSpec;
  let task: PipelineTaskSpec | undefined;
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    task = component?.dag?.tasks?.[seg];
    if (!task) return undefined;
    component = componentOf(spec, task.componentRef.name);
    if ((task.parameterIterator || task.artifactIterator) && i + 1 < segs.length && /^\d+$/.test(segs[i + 1]!)) i++;
  }
  return task;
}
