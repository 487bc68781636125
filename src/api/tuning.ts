// Katib (kubeflow.org/v1beta1): Experiment, Suggestion and Trial, with Katib's defaulting
// (experiment_defaults.go) and its experiment admission webhook's checks (validator.go), plus what
// Katib only finds out when it makes the first trial and Skiff refuses at creation: an assignment no
// trialParameter consumes, a trial kind Skiff cannot run. The algorithms' own checks (settings, a grid
// that maxTrialCount cannot fill) are added by src/workloads/tuning, which knows the algorithms.
// Also Skiff's ObservationLog (tuning.skiff.dev/v1): the metric values each trial reported, what
// Katib keeps in its database.
//
// Katib's CRDs carry no schema (`x-kubernetes-preserve-unknown-fields`), so the webhook's checks
// are the whole validation, as upstream.
import type { FieldError } from './errors.js';
import type { KObject, StoredObject } from './meta.js';
import { clone, deepEqual } from './meta.js';
import type { KindDef, PrinterColumn } from './registry.js';
import type { Experiment, ExperimentSpec, ParameterAssignment, TrialTemplate } from './tuning-types.js';
import { ObservationLogGroup, TuningGroup, TuningVersion } from './tuning-types.js';
import { Validator } from './validation.js';
import { isPlainObject } from '../util/objects.js';

export * from './tuning-types.js';

/** every algorithmName Katib's default katib-config knows */
export const KatibAlgorithmNames = ['random', 'grid', 'sobol', 'tpe', 'multivariate-tpe', 'bayesianoptimization', 'cmaes', 'hyperband', 'pbt', 'enas', 'darts'] as const;
export const EarlyStoppingAlgorithmNames = ['medianstop', 'asha'] as const;

const jobSuccess = 'status.conditions.#(type=="Complete")#|#(status=="True")#';
const jobFailure = 'status.conditions.#(type=="Failed")#|#(status=="True")#';
const kubeflowSuccess = 'status.conditions.#(type=="Succeeded")#|#(status=="True")#';
const kubeflowFailure = 'status.conditions.#(type=="Failed")#|#(status=="True")#';
const runFailure = 'status.conditions.#(type=="Succeeded")#|#(status=="False")#';
const masterRole = { 'training.kubeflow.org/job-role': 'master' };

/**
 * The trial kinds Skiff runs, with the defaults Katib gives them. Katib defaults batch Job, TFJob,
 * PyTorchJob, XGBoostJob, MPIJob (and TrainJob, which Skiff does not serve); Skiff defaults PaddleJob,
 * JAXJob (their Master / worker-0 being the primary) and a KFP Run too, where Katib makes the user
 * spell them out.
 */
interface TrialKind {
  apiVersions: string[];
  kind: string;
  successCondition: string;
  failureCondition: string;
  primaryPodLabels?: Record<string, string>;
}
export const TrialKinds: readonly TrialKind[] = [
  { apiVersions: ['batch/v1'], kind: 'Job', successCondition: jobSuccess, failureCondition: jobFailure },
  // JAXJob's worker 0 carries the master role label, as the training operator sets it
  ...['TFJob', 'PyTorchJob', 'XGBoostJob', 'PaddleJob', 'JAXJob'].map((kind) => ({ apiVersions: ['kubeflow.org/v1'], kind, successCondition: kubeflowSuccess, failureCondition: kubeflowFailure, primaryPodLabels: masterRole })),
  { apiVersions: ['kubeflow.org/v1', 'kubeflow.org/v2beta1'], kind: 'MPIJob', successCondition: kubeflowSuccess, failureCondition: kubeflowFailure, primaryPodLabels: masterRole },
  { apiVersions: ['pipelines.kubeflow.org/v2beta1'], kind: 'Run', successCondition: kubeflowSuccess, failureCondition: runFailure },
];

export function trialKindOf(apiVersion: unknown, kind: unknown): TrialKind | undefined {
  return TrialKinds.find((k) => k.kind === kind && k.apiVersions.includes(String(apiVersion)));
}

export const DefaultMetricsFile = '/var/log/katib/metrics.log';
export const DefaultTfEventDir = '/var/log/katib/tfevent/';

export function defaultExperiment(obj: KObject): void {
  const spec = obj.spec as ExperimentSpec | undefined;
  if (!isPlainObject(spec)) return;
  spec.parallelTrialCount ??= 3;
  if (!spec.resumePolicy) spec.resumePolicy = 'Never';
  const o = spec.objective;
  if (isPlainObject(o)) {
    const strategies = Array.isArray(o.metricStrategies) ? o.metricStrategies : (o.metricStrategies = []);
    const byType = o.type === 'minimize' ? 'min' : o.type === 'maximize' ? 'max' : 'latest';
    const named = new Set(strategies.map((s) => s?.name));
    // Katib gives additional metrics the objective's min/max too (its comment says latest; its code does this)
    for (const name of [o.objectiveMetricName, ...(Array.isArray(o.additionalMetricNames) ? o.additionalMetricNames : [])]) {
      if (typeof name === 'string' && !named.has(name)) {
        strategies.push({ name, value: byType });
        named.add(name);
      }
    }
  }
  const t = spec.trialTemplate;
  if (isPlainObject(t) && isPlainObject(t.trialSpec)) {
    const k = trialKindOf(t.trialSpec.apiVersion, t.trialSpec.kind);
    if (k) {
      if (!t.successCondition) t.successCondition = k.successCondition;
      if (!t.failureCondition) t.failureCondition = k.failureCondition;
      if (k.primaryPodLabels && (!isPlainObject(t.primaryPodLabels) || Object.keys(t.primaryPodLabels).length === 0)) t.primaryPodLabels = { ...k.primaryPodLabels };
    }
  }
  const mc = (spec.metricsCollectorSpec ??= {});
  if (isPlainObject(mc)) {
    mc.collector ??= { kind: 'StdOut' };
    const kind = mc.collector?.kind;
    if (kind === 'File' || kind === 'TensorFlowEvent') {
      const src = (mc.source ??= {});
      const fsp = (src.fileSystemPath ??= {});
      if (kind === 'File') {
        fsp.kind ||= 'File';
        fsp.path ||= DefaultMetricsFile;
        fsp.format ||= 'TEXT';
      } else {
        fsp.kind ||= 'Directory';
        fsp.path ||= DefaultTfEventDir;
      }
    }
    if (kind === 'PrometheusMetric') {
      const get = ((mc.source ??= {}).httpGet ??= {});
      get.path ||= '/metrics';
      if (!get.port || String(get.port) === '0') get.port = 8080;
    }
  }
  if (Array.isArray(spec.parameters)) {
    for (const p of spec.parameters) if (isPlainObject(p?.feasibleSpace) && !p.feasibleSpace.distribution) p.feasibleSpace.distribution = 'uniform';
  }
}

const paramRef = /\$\{trialParameters\.(.+?)\}/g;
const metaRef = /^\$\{trialSpec\.(.+?)\}$/;
const metaKeys = ['Name', 'Namespace', 'Kind', 'APIVersion'];
const metaIndexed = /^(Labels|Annotations)\[(.+)\]$/;

/** `${trialSpec.Name}`, `${trialSpec.Labels[app]}`…: a reference to the trial's own metadata, not to a parameter */
export function isMetaReference(ref: string): boolean {
  const m = metaRef.exec(ref);
  if (!m) return false;
  const key = m[1] as string;
  return metaKeys.includes(key) || metaIndexed.test(key);
}

/** The template as Katib substitutes into it: its JSON text (a configMap's text is passed in). */
export function templateText(t: TrialTemplate, configMapText?: string): string | undefined {
  if (t.trialSpec) return JSON.stringify(t.trialSpec);
  return configMapText;
}

export class TemplateError extends Error {}

/**
 * The trial job for one assignment, as Katib's manifest generator makes it: a textual replacement of
 * each `${trialParameters.<name>}` in the template's text by the assignment its reference names (or the
 * trial's metadata), then name and namespace set. `parse` turns the replaced text into an object (YAML
 * for a configMap's text; JSON for an inline trialSpec).
 */
export function renderTrialJob(t: TrialTemplate, text: string, parse: (s: string) => unknown, trialName: string, namespace: string, assignments: ParameterAssignment[]): KObject {
  const values = new Map(assignments.map((a) => [a.name, a.value]));
  const template = (t.trialSpec ?? parse(text)) as KObject | undefined;
  const replace = new Map<string, string>();
  let consumed = 0;
  for (const p of t.trialParameters ?? []) {
    const m = metaRef.exec(p.reference);
    if (!m) {
      const v = values.get(p.reference);
      if (v === undefined) throw new TemplateError(`trial parameter ${p.name} references ${p.reference}, which the assignment does not have`);
      replace.set(p.name, v);
      consumed++;
      continue;
    }
    const key = m[1] as string;
    const idx = metaIndexed.exec(key);
    const meta = template?.metadata ?? {};
    let v: string | undefined;
    if (key === 'Name') v = trialName;
    else if (key === 'Namespace') v = namespace;
    else if (key === 'Kind') v = template?.kind;
    else if (key === 'APIVersion') v = template?.apiVersion;
    else if (idx) v = (idx[1] === 'Labels' ? meta.labels : meta.annotations)?.[idx[2] as string];
    if (v === undefined) throw new TemplateError(`trial parameter ${p.name}: the template has no ${key} to reference`);
    replace.set(p.name, v);
  }
  if (consumed !== assignments.length) throw new TemplateError(`the assignment has ${assignments.length} values but the trial parameters consume ${consumed}`);
  // inside JSON text a value must stay a valid string body: escape it as JSON would
  const inJson = t.trialSpec !== undefined;
  const out = text.replace(paramRef, (whole, name: string) => {
    const v = replace.get(name);
    if (v === undefined) return whole;
    return inJson ? JSON.stringify(v).slice(1, -1) : v;
  });
  const job = parse(out);
  if (!isPlainObject(job)) throw new TemplateError('the trial template is not an object');
  const obj = job as KObject;
  obj.metadata = { ...(isPlainObject(obj.metadata) ? obj.metadata : {}), name: trialName, namespace };
  return obj;
}

const nameRule = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const twoGroups = /.*\(.*\).*\(.*\).*/;

export function validateExperiment(obj: KObject, old?: StoredObject): FieldError[] {
  const v = new Validator();
  const name = obj.metadata?.name ?? '';
  if (!nameRule.test(name) || name.length > 40) {
    v.invalid('metadata.name', name, "name must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name', or 'abc-123') and may not be longer than 40 characters");
  }
  const spec = obj.spec as ExperimentSpec;
  if (!v.object('spec', spec, true)) return v.errors;
  const ints = ['maxFailedTrialCount', 'maxTrialCount', 'parallelTrialCount'] as const;
  for (const f of ints) v.int(`spec.${f}`, spec[f]);
  const { maxFailedTrialCount: maxFailed, maxTrialCount: maxTrials, parallelTrialCount: parallel } = spec;
  if (typeof maxFailed === 'number' && maxFailed < 0) v.invalid('spec.maxFailedTrialCount', maxFailed, 'should not be less than 0');
  if (typeof maxTrials === 'number' && maxTrials <= 0) v.invalid('spec.maxTrialCount', maxTrials, 'must be greater than 0');
  if (typeof parallel === 'number' && parallel <= 0) v.invalid('spec.parallelTrialCount', parallel, 'must be greater than 0');
  // Katib also refuses maxFailedTrialCount > maxTrialCount; its own PBT example (hp-tuning/simple-pbt.yaml)
  // does just that, and the pair means nothing worse than "failures never end it": Skiff accepts it
  if (typeof parallel === 'number' && typeof maxTrials === 'number' && parallel > maxTrials) v.invalid('spec.parallelTrialCount', parallel, 'should be less than or equal to spec.maxTrialCount');
  if (old) validateUpdate(v, obj as Experiment, old as unknown as Experiment);
  if (!validateObjective(v, spec)) return v.errors;
  validateAlgorithm(v, spec);
  if (!['Never', 'LongRunning', 'FromVolume', '', undefined].includes(spec.resumePolicy)) v.notSupported('spec.resumePolicy', spec.resumePolicy, ['Never', 'LongRunning', 'FromVolume']);
  validateParameters(v, spec);
  validateTrialTemplate(v, spec);
  validateMetricsCollector(v, spec);
  return v.errors;
}

/** Katib: only the three counts change, and a finished experiment restarts only by raising maxTrialCount under LongRunning/FromVolume. */
function validateUpdate(v: Validator, obj: Experiment, old: Experiment): void {
  const counts = (s: ExperimentSpec) => ({ ...s, maxFailedTrialCount: undefined, maxTrialCount: undefined, parallelTrialCount: undefined });
  if (!deepEqual(JSON.parse(JSON.stringify(counts(obj.spec))), JSON.parse(JSON.stringify(counts(old.spec))))) {
    v.add('spec', 'FieldValueForbidden', 'Forbidden: only spec.parallelTrialCount, spec.maxTrialCount and spec.maxFailedTrialCount are editable');
  }
  if (deepEqual(obj.spec, old.spec)) return;
  const conds = old.status?.conditions ?? [];
  const done = conds.find((c) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True');
  if (done) {
    const restartable = done.type === 'Succeeded' && done.reason === 'ExperimentMaxTrialsReached' && (old.spec.resumePolicy === 'LongRunning' || old.spec.resumePolicy === 'FromVolume');
    if (!restartable) v.invalid('spec.resumePolicy', obj.spec.resumePolicy, 'a completed Experiment can be restarted only if it succeeded by reaching spec.maxTrialCount and spec.resumePolicy is LongRunning or FromVolume');
    if (typeof obj.spec.maxTrialCount === 'number' && obj.spec.maxTrialCount <= (old.status?.trials ?? 0)) v.invalid('spec.maxTrialCount', obj.spec.maxTrialCount, `must be greater than status.trials (${old.status?.trials ?? 0})`);
  }
}

function validateObjective(v: Validator, spec: ExperimentSpec): boolean {
  const o = spec.objective;
  if (!v.object('spec.objective', o, true)) return false;
  const before = v.errors.length;
  if (o.type !== 'minimize' && o.type !== 'maximize') v.notSupported('spec.objective.type', o.type, ['minimize', 'maximize']);
  if (!o.objectiveMetricName) v.required('spec.objective.objectiveMetricName', 'Required value: must be specified');
  else v.string('spec.objective.objectiveMetricName', o.objectiveMetricName);
  if (o.goal !== undefined && typeof o.goal !== 'number') v.wrongType('spec.objective.goal', o.goal, 'number');
  if (v.stringArray('spec.objective.additionalMetricNames', o.additionalMetricNames) && o.additionalMetricNames?.includes(o.objectiveMetricName ?? '')) {
    v.invalid('spec.objective.additionalMetricNames', o.additionalMetricNames, 'should not contain spec.objective.objectiveMetricName');
  }
  if (v.array('spec.objective.metricStrategies', o.metricStrategies)) {
    o.metricStrategies?.forEach((s, i) => {
      if (v.object(`spec.objective.metricStrategies[${i}]`, s, true)) {
        v.string(`spec.objective.metricStrategies[${i}].name`, s.name, true);
        if (!['min', 'max', 'latest'].includes(s.value)) v.notSupported(`spec.objective.metricStrategies[${i}].value`, s.value, ['min', 'max', 'latest']);
      }
    });
  }
  if (v.array('spec.objective.additionalObjectives', o.additionalObjectives)) {
    o.additionalObjectives?.forEach((a, i) => {
      const f = `spec.objective.additionalObjectives[${i}]`;
      if (!v.object(f, a, true)) return;
      if (!o.additionalMetricNames?.includes(a.name)) v.invalid(`${f}.name`, a.name, 'an additional objective must also be listed in spec.objective.additionalMetricNames');
      if (a.type !== 'minimize' && a.type !== 'maximize') v.notSupported(`${f}.type`, a.type, ['minimize', 'maximize']);
    });
  }
  return v.errors.length === before;
}

function validateSettings(v: Validator, field: string, list: unknown): void {
  if (!v.array(field, list)) return;
  const seen = new Set<string>();
  (list as unknown[]).forEach((s, i) => {
    if (!v.object(`${field}[${i}]`, s, true)) return;
    if (v.string(`${field}[${i}].name`, s.name, true) && seen.has(s.name)) v.add(`${field}[${i}].name`, 'FieldValueDuplicate', `Duplicate value: ${JSON.stringify(s.name)}`);
    seen.add(s.name);
    v.string(`${field}[${i}].value`, s.value);
  });
}

function validateAlgorithm(v: Validator, spec: ExperimentSpec): void {
  const a = spec.algorithm;
  if (!v.object('spec.algorithm', a, true)) return;
  if (!a.algorithmName) v.required('spec.algorithm.algorithmName', 'Required value: must be specified');
  else if (!(KatibAlgorithmNames as readonly string[]).includes(a.algorithmName)) v.notSupported('spec.algorithm.algorithmName', a.algorithmName, KatibAlgorithmNames);
  validateSettings(v, 'spec.algorithm.algorithmSettings', a.algorithmSettings);
  const es = spec.earlyStopping;
  if (v.object('spec.earlyStopping', es)) {
    if (!es.algorithmName) v.required('spec.earlyStopping.algorithmName', 'Required value: must be specified');
    else if (!(EarlyStoppingAlgorithmNames as readonly string[]).includes(es.algorithmName)) v.notSupported('spec.earlyStopping.algorithmName', es.algorithmName, EarlyStoppingAlgorithmNames);
    validateSettings(v, 'spec.earlyStopping.algorithmSettings', es.algorithmSettings);
    // medianstop's settings are Katib's; asha (Skiff's) takes min_resource, reduction_factor, min_trials_required
    const allowed: Record<string, Record<string, number>> = {
      medianstop: { min_trials_required: 1, start_step: 1 },
      asha: { min_resource: 1, reduction_factor: 2, min_trials_required: 1 },
    };
    const known = allowed[es.algorithmName ?? ''] ?? {};
    es.algorithmSettings?.forEach((s, i) => {
      const f = `spec.earlyStopping.algorithmSettings[${i}]`;
      const min = s?.name !== undefined ? known[s.name] : undefined;
      if (min !== undefined) {
        const n = Number(s.value);
        if (!Number.isInteger(n) || n < min) v.invalid(`${f}.value`, s.value, `${s.name} must be an integer of at least ${min}`);
      } else if (s?.name !== undefined && es.algorithmName && allowed[es.algorithmName]) {
        v.notSupported(`${f}.name`, s.name, Object.keys(known));
      }
    });
  }
}

function validateParameters(v: Validator, spec: ExperimentSpec): void {
  const params = spec.parameters;
  if (params === undefined || (Array.isArray(params) && params.length === 0)) {
    if (spec.nasConfig === undefined) v.required('spec.parameters', 'Required value: spec.parameters or spec.nasConfig must be specified');
    return;
  }
  if (spec.nasConfig !== undefined) v.invalid('spec', 'parameters and nasConfig', 'only one of spec.parameters and spec.nasConfig can be specified');
  if (!v.array('spec.parameters', params)) return;
  const names = new Set<string>();
  params.forEach((p, i) => {
    const f = `spec.parameters[${i}]`;
    if (!v.object(f, p, true)) return;
    if (v.string(`${f}.name`, p.name, true)) {
      if (names.has(p.name)) v.add(`${f}.name`, 'FieldValueDuplicate', `Duplicate value: ${JSON.stringify(p.name)}`);
      names.add(p.name);
    }
    if (!['int', 'double', 'categorical', 'discrete'].includes(p.parameterType)) v.notSupported(`${f}.parameterType`, p.parameterType, ['int', 'double', 'categorical', 'discrete']);
    const fs = p.feasibleSpace;
    if (!isPlainObject(fs) || Object.keys(fs).filter((k) => k !== 'distribution').length === 0) {
      v.required(`${f}.feasibleSpace`, 'Required value: feasibleSpace must be specified');
      return;
    }
    if (fs.distribution !== undefined && !['uniform', 'logUniform', 'normal', 'logNormal'].includes(fs.distribution)) v.notSupported(`${f}.feasibleSpace.distribution`, fs.distribution, ['uniform', 'logUniform', 'normal', 'logNormal']);
    if (p.parameterType === 'int' || p.parameterType === 'double') {
      if (Array.isArray(fs.list) && fs.list.length > 0) v.invalid(`${f}.feasibleSpace.list`, fs.list, `feasibleSpace.list is not supported for parameterType: ${p.parameterType}`);
      if (fs.min === undefined || fs.min === '' || fs.max === undefined || fs.max === '') {
        v.required(`${f}.feasibleSpace.${fs.min === undefined || fs.min === '' ? 'min' : 'max'}`, `Required value: feasibleSpace.max and feasibleSpace.min must be specified for parameterType: ${p.parameterType}`);
        return;
      }
      const num = (key: 'min' | 'max' | 'step'): number | undefined => {
        const raw = fs[key];
        if (raw === undefined || raw === '') return undefined;
        const n = Number(raw);
        const ok = typeof raw === 'string' && raw.trim() !== '' && Number.isFinite(n) && (p.parameterType === 'double' || Number.isInteger(n));
        if (!ok) {
          v.invalid(`${f}.feasibleSpace.${key}`, raw, p.parameterType === 'int' ? 'must be an integer, written as a string' : 'must be a number, written as a string');
          return undefined;
        }
        return n;
      };
      const min = num('min');
      const max = num('max');
      const step = num('step');
      if (min !== undefined && max !== undefined && min > max) v.invalid(`${f}.feasibleSpace.min`, fs.min, 'must not be greater than feasibleSpace.max');
      if (step !== undefined && step <= 0) v.invalid(`${f}.feasibleSpace.step`, fs.step, 'must be greater than 0');
      if ((fs.distribution === 'logUniform' || fs.distribution === 'logNormal') && min !== undefined && min <= 0) v.invalid(`${f}.feasibleSpace.min`, fs.min, `must be greater than 0 for distribution ${fs.distribution}`);
    } else if (p.parameterType === 'categorical' || p.parameterType === 'discrete') {
      if (fs.max !== undefined || fs.min !== undefined || fs.step !== undefined) v.invalid(`${f}.feasibleSpace`, fs, `feasibleSpace .max, .min and .step is not supported for parameterType: ${p.parameterType}`);
      if (!Array.isArray(fs.list) || fs.list.length === 0) v.required(`${f}.feasibleSpace.list`, `Required value: feasibleSpace.list must be specified for parameterType: ${p.parameterType}`);
      else {
        fs.list.forEach((item, j) => v.string(`${f}.feasibleSpace.list[${j}]`, item, true));
        if (p.parameterType === 'discrete') fs.list.forEach((item, j) => { if (typeof item === 'string' && !Number.isFinite(Number(item))) v.invalid(`${f}.feasibleSpace.list[${j}]`, item, 'a discrete value must be a number'); });
        if (new Set(fs.list).size !== fs.list.length) v.invalid(`${f}.feasibleSpace.list`, fs.list, 'must not repeat a value');
      }
    }
  });
}

function validateTrialTemplate(v: Validator, spec: ExperimentSpec): void {
  const t = spec.trialTemplate;
  const f = 'spec.trialTemplate';
  if (!v.object(f, t, true)) return;
  v.bool(`${f}.retain`, t.retain);
  if (!t.primaryContainerName) v.required(`${f}.primaryContainerName`, 'Required value: must be specified');
  if (!t.successCondition || !t.failureCondition) v.required(t.successCondition ? `${f}.failureCondition` : `${f}.successCondition`, 'Required value: successCondition and failureCondition must be specified (Skiff fills them for batch Jobs, training jobs and pipeline Runs)');
  v.stringMap(`${f}.primaryPodLabels`, t.primaryPodLabels);
  if (!v.array(`${f}.trialParameters`, t.trialParameters, true)) return;
  if (t.trialSpec === undefined && t.configMap === undefined) {
    v.required(`${f}.trialSpec`, 'Required value: spec.trialTemplate.trialSpec or spec.trialTemplate.configMap must be specified');
    return;
  }
  if (t.trialSpec !== undefined && t.configMap !== undefined) {
    v.invalid(f, 'trialSpec and configMap', 'only one of spec.trialTemplate.trialSpec or spec.trialTemplate.configMap can be specified');
    return;
  }
  if (t.configMap !== undefined) {
    if (!v.object(`${f}.configMap`, t.configMap, true)) return;
    for (const k of ['configMapName', 'configMapNamespace', 'templatePath'] as const) if (!t.configMap[k]) v.required(`${f}.configMap.${k}`, 'Required value: configMapName, configMapNamespace and templatePath must be specified');
  }
  const paramNames = new Set((spec.parameters ?? []).map((p) => p?.name));
  const names = new Set<string>();
  const refs = new Set<string>();
  t.trialParameters.forEach((p, i) => {
    const pf = `${f}.trialParameters[${i}]`;
    if (!v.object(pf, p, true)) return;
    if (!p.name || !p.reference || p.name.includes('{') || p.name.includes('}')) {
      v.invalid(pf, p, "name and reference must be specified and name must not contain '{' or '}'");
      return;
    }
    if (names.has(p.name)) v.add(`${pf}.name`, 'FieldValueDuplicate', `Duplicate value: ${JSON.stringify(p.name)}: a trial parameter name appears once`);
    if (refs.has(p.reference)) v.add(`${pf}.reference`, 'FieldValueDuplicate', `Duplicate value: ${JSON.stringify(p.reference)}: a reference appears once`);
    names.add(p.name);
    refs.add(p.reference);
    if (paramNames.size > 0 && !isMetaReference(p.reference) && !paramNames.has(p.reference)) {
      v.invalid(`${pf}.reference`, p.reference, `parameter reference ${p.reference} does not exist in spec.parameters (${[...paramNames].join(', ')})`);
    }
  });
  // every assignment must land somewhere: Katib fails each trial's creation over it, Skiff refuses it now
  (spec.parameters ?? []).forEach((p, i) => {
    if (p?.name && !refs.has(p.name)) v.invalid(`spec.parameters[${i}].name`, p.name, 'no spec.trialTemplate.trialParameters entry references this parameter, so its value would reach no trial');
  });
  if (t.trialSpec === undefined) return; // a configMap's text is read when trials are made
  if (!v.object(`${f}.trialSpec`, t.trialSpec)) return;
  const text = JSON.stringify(t.trialSpec);
  t.trialParameters.forEach((p, i) => {
    if (p?.name && !text.includes(`\${trialParameters.${p.name}}`)) v.invalid(`${f}.trialParameters[${i}].name`, p.name, `parameter name ${p.name} is not used in spec.trialTemplate.trialSpec as \${trialParameters.${p.name}}`);
  });
  const unknown = [...new Set([...text.matchAll(paramRef)].map((m) => m[1] as string).filter((n) => !names.has(n)))];
  if (unknown.length) v.invalid(`${f}.trialSpec`, unknown.map((n) => `\${trialParameters.${n}}`).join(', '), 'not declared in spec.trialTemplate.trialParameters');
  const ts = t.trialSpec as KObject;
  if (ts.metadata?.name || ts.metadata?.namespace) v.invalid(`${f}.trialSpec.metadata`, { name: ts.metadata?.name, namespace: ts.metadata?.namespace }, 'metadata.name and metadata.namespace in spec.trialTemplate must be omitted');
  if (!ts.apiVersion || !ts.kind) {
    v.required(`${f}.trialSpec.${ts.apiVersion ? 'kind' : 'apiVersion'}`, 'Required value: apiVersion and kind in spec.trialTemplate.trialSpec must be specified');
    return;
  }
  if (!trialKindOf(ts.apiVersion, ts.kind)) {
    v.notSupported(`${f}.trialSpec.kind`, `${ts.kind}.${ts.apiVersion}`, TrialKinds.flatMap((k) => k.apiVersions.map((a) => `${k.kind}.${a}`)));
  }
}

function validateMetricsCollector(v: Validator, spec: ExperimentSpec): void {
  const mc = spec.metricsCollectorSpec;
  const f = 'spec.metricsCollectorSpec';
  if (!v.object(f, mc)) return;
  const kind = mc.collector?.kind;
  const src = mc.source;
  const fsp = src?.fileSystemPath;
  const kinds = ['StdOut', 'File', 'TensorFlowEvent', 'PrometheusMetric', 'Custom', 'Push', 'None'];
  switch (kind) {
    case 'StdOut':
    case 'Push':
    case 'None':
      break;
    case 'File':
      if (!fsp || fsp.kind !== 'File' || !fsp.path?.startsWith('/')) v.required(`${f}.source.fileSystemPath.path`, 'Required value: an absolute path of kind File where the metrics file is written');
      if (fsp?.format !== 'TEXT' && fsp?.format !== 'JSON') v.notSupported(`${f}.source.fileSystemPath.format`, fsp?.format, ['TEXT', 'JSON']);
      if (fsp?.format === 'JSON' && src?.filter) v.invalid(`${f}.source.filter`, src.filter, 'filter must be nil when format of metrics file is json');
      break;
    case 'TensorFlowEvent':
      if (!fsp || fsp.kind !== 'Directory' || !fsp.path?.startsWith('/')) v.required(`${f}.source.fileSystemPath.path`, 'Required value: an absolute Directory where the TensorFlow event files are written');
      if (fsp?.format) v.invalid(`${f}.source.fileSystemPath.format`, fsp.format, 'must be empty');
      break;
    case 'PrometheusMetric': {
      const port = Number(src?.httpGet?.port);
      if (!Number.isInteger(port) || port <= 0) v.invalid(`${f}.source.httpGet.port`, src?.httpGet?.port, 'must be a positive integer value for metrics collector kind: PrometheusMetric');
      if (!src?.httpGet?.path?.startsWith('/')) v.invalid(`${f}.source.httpGet.path`, src?.httpGet?.path, 'path is invalid for metrics collector kind: PrometheusMetric');
      break;
    }
    case 'Custom':
      if (!mc.collector?.customCollector) v.required(`${f}.collector.customCollector`, 'Required value: metrics collector kind: Custom is required');
      break;
    default:
      v.notSupported(`${f}.collector.kind`, kind, kinds);
  }
  const formats = src?.filter?.metricsFormat;
  if (v.stringArray(`${f}.source.filter.metricsFormat`, formats)) {
    formats?.forEach((fmt, i) => {
      try {
        new RegExp(fmt);
        if (!twoGroups.test(fmt)) v.invalid(`${f}.source.filter.metricsFormat[${i}]`, fmt, 'two top subexpressions are required');
      } catch (e) {
        v.invalid(`${f}.source.filter.metricsFormat[${i}]`, fmt, `invalid filter: ${(e as Error).message}`);
      }
    });
  }
}

/** Katib's CRDs' columns: the last condition's type and status */
const conditionColumns: PrinterColumn[] = [
  { name: 'Type', type: 'string', jsonPath: '.status.conditions[-1:].type' },
  { name: 'Status', type: 'string', jsonPath: '.status.conditions[-1:].status' },
];
const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export const ExperimentKind: KindDef = {
  group: TuningGroup, version: TuningVersion, kind: 'Experiment', plural: 'experiments', singular: 'experiment',
  namespaced: true, hasStatus: true, printerColumns: [...conditionColumns, age],
  default: defaultExperiment,
  validate: validateExperiment,
};

export const SuggestionKind: KindDef = {
  group: TuningGroup, version: TuningVersion, kind: 'Suggestion', plural: 'suggestions', singular: 'suggestion',
  namespaced: true, hasStatus: true,
  printerColumns: [...conditionColumns, { name: 'Requested', type: 'string', jsonPath: '.spec.requests' }, { name: 'Assigned', type: 'string', jsonPath: '.status.suggestionCount' }, age],
  validate: (obj) => {
    const v = new Validator();
    if (v.object('spec', obj.spec, true)) v.int('spec.requests', obj.spec.requests, 0);
    return v.errors;
  },
};

export const TrialKind: KindDef = {
  group: TuningGroup, version: TuningVersion, kind: 'Trial', plural: 'trials', singular: 'trial',
  namespaced: true, hasStatus: true, printerColumns: [...conditionColumns, age],
  validate: (obj) => {
    const v = new Validator();
    if (!v.object('spec', obj.spec, true)) return v.errors;
    if (v.object('spec.runSpec', obj.spec.runSpec) && !trialKindOf(obj.spec.runSpec.apiVersion, obj.spec.runSpec.kind)) {
      v.notSupported('spec.runSpec.kind', `${obj.spec.runSpec.kind}.${obj.spec.runSpec.apiVersion}`, TrialKinds.flatMap((k) => k.apiVersions.map((a) => `${k.kind}.${a}`)));
    }
    if (v.array('spec.parameterAssignments', obj.spec.parameterAssignments)) {
      (obj.spec.parameterAssignments as unknown[]).forEach((a, i) => {
        if (v.object(`spec.parameterAssignments[${i}]`, a, true)) {
          v.string(`spec.parameterAssignments[${i}].name`, (a as ParameterAssignment).name, true);
          v.string(`spec.parameterAssignments[${i}].value`, (a as ParameterAssignment).value, true);
        }
      });
    }
    return v.errors;
  },
};

export const ObservationLogKind: KindDef = {
  group: ObservationLogGroup, version: 'v1', kind: 'ObservationLog', plural: 'observationlogs', singular: 'observationlog',
  namespaced: true, hasStatus: false,
  printerColumns: [{ name: 'Trial', type: 'string', jsonPath: '.spec.trialName' }, age],
  validate: (obj) => {
    const v = new Validator();
    if (!v.object('spec', obj.spec, true)) return v.errors;
    v.string('spec.trialName', obj.spec.trialName, true);
    if (v.array('spec.metricLogs', obj.spec.metricLogs, true)) {
      (obj.spec.metricLogs as unknown[]).forEach((l, i) => {
        if (!v.object(`spec.metricLogs[${i}]`, l, true)) return;
        const log = l as Record<string, unknown>;
        v.string(`spec.metricLogs[${i}].name`, log.name, true);
        v.string(`spec.metricLogs[${i}].value`, log.value, true);
        v.string(`spec.metricLogs[${i}].timeStamp`, log.timeStamp, true);
      });
    }
    return v.errors;
  },
};

export const tuningKinds: KindDef[] = [ExperimentKind, SuggestionKind, TrialKind, ObservationLogKind];

/** A defaulted copy, for callers that must not touch what they were given. */
export function defaultedExperiment(e: Experiment): Experiment {
  const copy = clone(e);
  defaultExperiment(copy);
  return copy;
}
