// Static validation of a PipelineSpec: everything knowable before running. Each FieldError names
// the path, e.g. `root.dag.tasks.train.componentRef.name`.
import type { FieldError } from '../errors.js';
import { Validator } from '../validation.js';
import { cycles } from './dag.js';
import { isPlainObject } from '../../util/objects.js';
import { PARAMETER_TYPES, type ComponentSpec, type DagSpec, type ParameterSpec, type PipelineSpec, type PipelineTaskSpec } from './ir.js';

const TRIGGER_STRATEGIES = ['TRIGGER_STRATEGY_UNSPECIFIED', 'ALL_UPSTREAM_TASKS_SUCCEEDED', 'ALL_UPSTREAM_TASKS_COMPLETED'] as const;

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Does a JSON value fit a parameterType? Unknown types are reported elsewhere, so they fit. */
export function valueMatchesType(parameterType: string, v: unknown): boolean {
  switch (parameterType) {
    case 'NUMBER_DOUBLE':
      return typeof v === 'number' && Number.isFinite(v);
    case 'NUMBER_INTEGER':
      return typeof v === 'number' && Number.isInteger(v);
    case 'STRING':
      return typeof v === 'string';
    case 'BOOLEAN':
      return typeof v === 'boolean';
    case 'LIST':
      return Array.isArray(v);
    case 'STRUCT':
    case 'TASK_FINAL_STATUS':
    case 'TASK_CONFIG':
      return isPlainObject(v);
    default:
      return true;
  }
}

const expected: Record<string, string> = {
  NUMBER_DOUBLE: 'number',
  NUMBER_INTEGER: 'integer',
  STRING: 'string',
  BOOLEAN: 'boolean',
  LIST: 'list (JSON array)',
  STRUCT: 'struct (JSON object)',
  TASK_FINAL_STATUS: 'object',
  TASK_CONFIG: 'object',
};

function checkValue(v: Validator, field: string, spec: ParameterSpec, value: unknown): void {
  if (!valueMatchesType(spec.parameterType, value)) {
    v.add(field, 'FieldValueTypeInvalid', `Invalid value: ${jsonType(value)}: expected ${expected[spec.parameterType] ?? spec.parameterType} for parameterType ${spec.parameterType}`);
    return;
  }
  if (Array.isArray(spec.literals) && spec.literals.length > 0 && !spec.literals.some((l) => JSON.stringify(l) === JSON.stringify(value))) {
    v.notSupported(field, value, spec.literals.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))));
  }
}

function validateDefinitions(v: Validator, path: string, c: ComponentSpec): void {
  for (const io of ['inputDefinitions', 'outputDefinitions'] as const) {
    const defs = c[io];
    if (defs === undefined) continue;
    if (!v.object(`${path}.${io}`, defs)) continue;
    if (v.object(`${path}.${io}.parameters`, defs.parameters)) {
      for (const [name, p] of Object.entries(defs.parameters)) {
        const f = `${path}.${io}.parameters.${name}`;
        if (!v.object(f, p, true)) continue;
        if (p.parameterType === undefined) {
          v.required(`${f}.parameterType`);
          continue;
        }
        if (!(PARAMETER_TYPES as readonly string[]).includes(p.parameterType)) {
          v.notSupported(`${f}.parameterType`, p.parameterType, PARAMETER_TYPES);
          continue;
        }
        if (p.defaultValue !== undefined && p.defaultValue !== null) checkValue(v, `${f}.defaultValue`, p, p.defaultValue);
        if (p.isOptional !== undefined && typeof p.isOptional !== 'boolean') v.wrongType(`${f}.isOptional`, p.isOptional, 'boolean');
      }
    }
    if (v.object(`${path}.${io}.artifacts`, defs.artifacts)) {
      for (const [name, a] of Object.entries(defs.artifacts)) {
        const f = `${path}.${io}.artifacts.${name}`;
        if (!v.object(f, a, true)) continue;
        v.object(`${f}.artifactType`, a.artifactType, true);
      }
    }
  }
}

interface Ctx {
  spec: PipelineSpec;
  components: Record<string, ComponentSpec>;
  executors: Record<string, unknown>;
}

function validateTask(v: Validator, ctx: Ctx, enclosing: ComponentSpec, dag: DagSpec, path: string, task: PipelineTaskSpec): void {
  const tasks = dag.tasks ?? {};
  const callee = typeof task.componentRef?.name === 'string' ? ctx.components[task.componentRef.name] : undefined;
  if (!isPlainObject(task.componentRef) || typeof task.componentRef.name !== 'string' || task.componentRef.name === '') {
    v.required(`${path}.componentRef.name`);
  } else if (!callee) {
    v.add(`${path}.componentRef.name`, 'FieldValueNotFound', `Not found: component "${task.componentRef.name}" is not in components`);
  }
  if (task.dependentTasks !== undefined && v.array(`${path}.dependentTasks`, task.dependentTasks)) {
    task.dependentTasks.forEach((d, i) => {
      if (typeof d !== 'string' || !(d in tasks)) v.add(`${path}.dependentTasks[${i}]`, 'FieldValueNotFound', `Not found: task ${JSON.stringify(d)} is not in the same DAG`);
    });
  }
  const producer = (field: string, name: unknown): PipelineTaskSpec | undefined => {
    if (typeof name !== 'string' || name === '') {
      v.required(field);
      return undefined;
    }
    const t = tasks[name];
    if (!t) v.add(field, 'FieldValueNotFound', `Not found: producer task "${name}" is not in the same DAG`);
    return t;
  };
  const componentOf = (t: PipelineTaskSpec): ComponentSpec | undefined => ctx.components[t.componentRef?.name];
  const inDefs = enclosing.inputDefinitions ?? {};
  const params = task.inputs?.parameters ?? {};
  const arts = task.inputs?.artifacts ?? {};
  for (const [name, p] of Object.entries(params)) {
    const f = `${path}.inputs.parameters.${name}`;
    if (!v.object(f, p, true)) continue;
    if (p.componentInputParameter !== undefined) {
      if (!inDefs.parameters?.[p.componentInputParameter]) v.add(`${f}.componentInputParameter`, 'FieldValueNotFound', `Not found: the enclosing component declares no input parameter "${p.componentInputParameter}"`);
    } else if (p.taskOutputParameter !== undefined) {
      const t = producer(`${f}.taskOutputParameter.producerTask`, p.taskOutputParameter.producerTask);
      const pc = t && componentOf(t);
      const key = p.taskOutputParameter.outputParameterKey;
      if (pc && !pc.outputDefinitions?.parameters?.[key]) {
        v.add(`${f}.taskOutputParameter.outputParameterKey`, 'FieldValueNotFound', `Not found: task "${p.taskOutputParameter.producerTask}" has no output parameter "${key}"`);
      }
    } else if (p.taskFinalStatus !== undefined) {
      producer(`${f}.taskFinalStatus.producerTask`, p.taskFinalStatus.producerTask);
    } else if (p.runtimeValue === undefined) {
      v.add(f, 'FieldValueRequired', 'Required value: one of componentInputParameter, taskOutputParameter, runtimeValue, taskFinalStatus');
    }
  }
  for (const [name, a] of Object.entries(arts)) {
    const f = `${path}.inputs.artifacts.${name}`;
    if (!v.object(f, a, true)) continue;
    if (a.componentInputArtifact !== undefined) {
      if (!inDefs.artifacts?.[a.componentInputArtifact]) v.add(`${f}.componentInputArtifact`, 'FieldValueNotFound', `Not found: the enclosing component declares no input artifact "${a.componentInputArtifact}"`);
    } else if (a.taskOutputArtifact !== undefined) {
      const t = producer(`${f}.taskOutputArtifact.producerTask`, a.taskOutputArtifact.producerTask);
      const pc = t && componentOf(t);
      const key = a.taskOutputArtifact.outputArtifactKey;
      if (pc && !pc.outputDefinitions?.artifacts?.[key]) {
        v.add(`${f}.taskOutputArtifact.outputArtifactKey`, 'FieldValueNotFound', `Not found: task "${a.taskOutputArtifact.producerTask}" has no output artifact "${key}"`);
      }
    } else {
      v.add(f, 'FieldValueRequired', 'Required value: one of componentInputArtifact, taskOutputArtifact');
    }
  }
  // iterators: items must name one of the task's inputs; itemInput is supplied per iteration
  const itemInputs = new Set<string>();
  if (task.parameterIterator !== undefined && v.object(`${path}.parameterIterator`, task.parameterIterator)) {
    const it = task.parameterIterator;
    if (typeof it.itemInput === 'string') itemInputs.add(it.itemInput);
    else v.required(`${path}.parameterIterator.itemInput`);
    const items = it.items ?? {};
    if (typeof items.raw === 'string') {
      let ok = false;
      try {
        ok = Array.isArray(JSON.parse(items.raw));
      } catch {
        ok = false;
      }
      if (!ok) v.invalid(`${path}.parameterIterator.items.raw`, items.raw, 'must be a JSON array (as a string)');
    } else if (typeof items.inputParameter === 'string') {
      if (!(items.inputParameter in params)) v.add(`${path}.parameterIterator.items.inputParameter`, 'FieldValueNotFound', `Not found: task has no input parameter "${items.inputParameter}"`);
    } else {
      v.required(`${path}.parameterIterator.items`, 'Required value: raw or inputParameter');
    }
  }
  if (task.artifactIterator !== undefined && v.object(`${path}.artifactIterator`, task.artifactIterator)) {
    const it = task.artifactIterator;
    if (typeof it.itemInput === 'string') itemInputs.add(it.itemInput);
    else v.required(`${path}.artifactIterator.itemInput`);
    const ia = it.items?.inputArtifact;
    if (typeof ia !== 'string') v.required(`${path}.artifactIterator.items.inputArtifact`);
    else if (!(ia in arts)) v.add(`${path}.artifactIterator.items.inputArtifact`, 'FieldValueNotFound', `Not found: task has no input artifact "${ia}"`);
  }
  if (task.triggerPolicy?.strategy !== undefined) v.oneOf(`${path}.triggerPolicy.strategy`, task.triggerPolicy.strategy, TRIGGER_STRATEGIES);
  // required callee inputs
  if (callee) {
    for (const [name, p] of Object.entries(callee.inputDefinitions?.parameters ?? {})) {
      if (!isPlainObject(p) || p.isOptional === true || (p.defaultValue !== undefined && p.defaultValue !== null) || name in params || itemInputs.has(name)) continue;
      v.required(`${path}.inputs.parameters.${name}`, `Required value: component "${task.componentRef.name}" input parameter "${name}" is required`);
    }
    for (const [name, a] of Object.entries(callee.inputDefinitions?.artifacts ?? {})) {
      if (!isPlainObject(a) || a.isOptional === true || name in arts || itemInputs.has(name)) continue;
      v.required(`${path}.inputs.artifacts.${name}`, `Required value: component "${task.componentRef.name}" input artifact "${name}" is required`);
    }
  }
}

function validateDag(v: Validator, ctx: Ctx, c: ComponentSpec, path: string): void {
  const dag = c.dag;
  if (!v.object(`${path}.dag`, dag)) return;
  if (dag.tasks !== undefined && !v.object(`${path}.dag.tasks`, dag.tasks)) return;
  const tasks = dag.tasks ?? {};
  for (const [name, t] of Object.entries(tasks)) {
    const tp = `${path}.dag.tasks.${name}`;
    if (!v.object(tp, t, true)) continue;
    validateTask(v, ctx, c, dag, tp, t);
  }
  for (const cyc of cycles(dag)) {
    v.add(`${path}.dag.tasks.${cyc[0] ?? ''}`, 'FieldValueInvalid', `Invalid value: dependency cycle among tasks: ${cyc.join(', ')}`);
  }
  const outDefs = c.outputDefinitions ?? {};
  const outs = dag.outputs;
  if (outs !== undefined && v.object(`${path}.dag.outputs`, outs)) {
    const sub = (field: string, name: string, key: string, kind: 'parameters' | 'artifacts'): void => {
      const t = tasks[name];
      if (!t) {
        v.add(`${field}.producerSubtask`, 'FieldValueNotFound', `Not found: subtask "${name}" is not in this DAG`);
        return;
      }
      const pc = ctx.components[t.componentRef?.name];
      if (pc && !pc.outputDefinitions?.[kind]?.[key]) {
        v.add(`${field}.${kind === 'parameters' ? 'outputParameterKey' : 'outputArtifactKey'}`, 'FieldValueNotFound', `Not found: subtask "${name}" has no output ${kind === 'parameters' ? 'parameter' : 'artifact'} "${key}"`);
      }
    };
    for (const [name, o] of Object.entries(outs.parameters ?? {})) {
      const f = `${path}.dag.outputs.parameters.${name}`;
      if (!outDefs.parameters?.[name]) v.add(f, 'FieldValueNotFound', `Not found: outputDefinitions declares no parameter "${name}"`);
      if (o.valueFromParameter) sub(`${f}.valueFromParameter`, o.valueFromParameter.producerSubtask, o.valueFromParameter.outputParameterKey, 'parameters');
      (o.valueFromOneof?.parameterSelectors ?? []).forEach((s, i) => sub(`${f}.valueFromOneof.parameterSelectors[${i}]`, s.producerSubtask, s.outputParameterKey, 'parameters'));
    }
    for (const [name, o] of Object.entries(outs.artifacts ?? {})) {
      const f = `${path}.dag.outputs.artifacts.${name}`;
      if (!outDefs.artifacts?.[name]) v.add(f, 'FieldValueNotFound', `Not found: outputDefinitions declares no artifact "${name}"`);
      (o.artifactSelectors ?? []).forEach((s, i) => sub(`${f}.artifactSelectors[${i}]`, s.producerSubtask, s.outputArtifactKey, 'artifacts'));
    }
  }
}

function validateComponent(v: Validator, ctx: Ctx, c: ComponentSpec, path: string, isRoot: boolean): void {
  if (!v.object(path, c, true)) return;
  validateDefinitions(v, path, c);
  const hasDag = c.dag !== undefined;
  const hasExec = c.executorLabel !== undefined;
  if (hasDag && hasExec) v.add(path, 'FieldValueInvalid', 'Invalid value: a component has either dag or executorLabel, not both');
  if (isRoot && !hasDag) v.required(`${path}.dag`, 'Required value: the root component must be a dag');
  if (!hasDag && !hasExec && !isRoot) v.required(`${path}.executorLabel`, 'Required value: dag or executorLabel');
  if (hasExec) {
    if (typeof c.executorLabel !== 'string') v.wrongType(`${path}.executorLabel`, c.executorLabel, 'string');
    else if (!(c.executorLabel in ctx.executors)) v.add(`${path}.executorLabel`, 'FieldValueNotFound', `Not found: executor "${c.executorLabel}" is not in deploymentSpec.executors`);
  }
  if (hasDag) validateDag(v, ctx, c, path);
}

/** Every statically detectable defect of a PipelineSpec; [] when it is runnable. */
export function validatePipelineSpec(spec: PipelineSpec): FieldError[] {
  const v = new Validator();
  if (!isPlainObject(spec)) {
    v.wrongType('', spec, 'PipelineSpec object');
    return v.errors;
  }
  if (!isPlainObject(spec.pipelineInfo) || typeof spec.pipelineInfo.name !== 'string' || spec.pipelineInfo.name === '') v.required('pipelineInfo.name');
  if (spec.schemaVersion !== undefined && !/^2\.\d+\.\d+$/.test(String(spec.schemaVersion))) v.notSupported('schemaVersion', spec.schemaVersion, ['2.0.0', '2.1.0']);
  const components = isPlainObject(spec.components) ? spec.components : {};
  if (spec.components !== undefined) v.object('components', spec.components);
  const executors = isPlainObject(spec.deploymentSpec) && isPlainObject(spec.deploymentSpec.executors) ? spec.deploymentSpec.executors : {};
  for (const [label, e] of Object.entries(executors)) {
    const f = `deploymentSpec.executors.${label}`;
    if (!v.object(f, e, true)) continue;
    if (e.container !== undefined && v.object(`${f}.container`, e.container)) {
      v.string(`${f}.container.image`, e.container.image, true);
      if (e.container.command !== undefined) v.stringArray(`${f}.container.command`, e.container.command);
      if (e.container.args !== undefined) v.stringArray(`${f}.container.args`, e.container.args);
    } else if (e.importer === undefined && e.resolver === undefined && e.customJob === undefined) {
      v.required(f, 'Required value: one of container, importer, resolver, customJob');
    }
  }
  const ctx: Ctx = { spec, components, executors };
  for (const [name, c] of Object.entries(components)) validateComponent(v, ctx, c, `components.${name}`, false);
  if (spec.root === undefined) v.required('root');
  else validateComponent(v, ctx, spec.root, 'root', true);
  return v.errors;
}

/** A run's runtime parameters (`runtime_config.parameters`) against `root.inputDefinitions`. */
export function validateRunParameters(spec: PipelineSpec, params: Record<string, unknown>): FieldError[] {
  const v = new Validator();
  const defs = spec.root?.inputDefinitions?.parameters ?? {};
  for (const [name, value] of Object.entries(params ?? {})) {
    const f = `runtime_config.parameters.${name}`;
    const d = defs[name];
    if (!d) {
      v.notSupported(f, name, Object.keys(defs).sort());
      continue;
    }
    if (value === null || value === undefined) continue;
    checkValue(v, f, d, value);
  }
  for (const [name, d] of Object.entries(defs)) {
    const given = params?.[name];
    if (given !== undefined && given !== null) continue;
    if (d.isOptional === true || (d.defaultValue !== undefined && d.defaultValue !== null)) continue;
    v.required(`runtime_config.parameters.${name}`, `Required value: pipeline input parameter "${name}" (${d.parameterType}) has no default`);
  }
  return v.errors;
}
