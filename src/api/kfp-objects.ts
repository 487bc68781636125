// The objects behind the KFP v2beta1 REST API (src/server/kfp/): Pipeline, PipelineVersion,
// Experiment and RecurringRun, all in pipelines.kubeflow.org/v2beta1. Their names are the KFP IDs
// (UUID v4 strings), so `GET /apis/v2beta1/pipelines/{id}` is a store get.
import type { FieldError } from './errors.js';
import type { KObject } from './meta.js';
import type { KindDef, PrinterColumn } from './registry.js';
import { Validator } from './validation.js';
import type { PipelineSpec } from './kfp/ir.js';
import { isPlainObject } from '../util/objects.js';
import { validatePipelineSpec, validateRunParameters } from './kfp/ir-validate.js';
import { parseSchedule } from './cron.js';

const group = 'pipelines.kubeflow.org';
const version = 'v2beta1';

/** Labels and annotations the KFP API keeps on Runs (and the other kinds). Labels are what lists select on. */
export const KfpLabels = {
  experimentId: 'pipelines.kubeflow.org/experiment-id',
  /** AVAILABLE or ARCHIVED */
  storageState: 'pipelines.kubeflow.org/storage-state',
  recurringRunId: 'pipelines.kubeflow.org/recurring-run-id',
  pipelineId: 'pipelines.kubeflow.org/pipeline-id',
  pipelineVersionId: 'pipelines.kubeflow.org/pipeline-version-id',
} as const;

export const KfpAnnotations = {
  displayName: 'pipelines.kubeflow.org/display-name',
  description: 'pipelines.kubeflow.org/description',
  serviceAccount: 'pipelines.kubeflow.org/service-account',
  /** the time a recurring run's trigger fired for this run */
  scheduledAt: 'pipelines.kubeflow.org/scheduled-at',
  /** when a recurring run was last enabled or disabled */
  updatedAt: 'pipelines.kubeflow.org/updated-at',
} as const;

export const StorageStates = ['AVAILABLE', 'ARCHIVED'] as const;
export const RecurringRunModes = ['ENABLE', 'DISABLE'] as const;

export interface PipelineObjSpec {
  /** the KFP `name` (unique in the namespace); displayName defaults to it */
  name?: string;
  displayName?: string;
  description?: string;
  tags?: Record<string, string>;
}

export interface PipelineVersionSpec {
  /** the owning Pipeline's name (its KFP pipeline_id) */
  pipelineName: string;
  /** the KFP `name` (unique within the pipeline) */
  name?: string;
  displayName?: string;
  description?: string;
  pipelineSpec: PipelineSpec;
  platformSpec?: Record<string, unknown>;
  codeSourceUrl?: string;
  packageUrl?: string;
  tags?: Record<string, string>;
}

export interface ExperimentSpec {
  displayName: string;
  description?: string;
}

export interface ScheduleWindow {
  startTime?: string;
  endTime?: string;
}

export interface RecurringRunTrigger {
  cronSchedule?: ScheduleWindow & { cron: string };
  periodicSchedule?: ScheduleWindow & { intervalSecond: number };
}

export interface RecurringRunSpec {
  displayName?: string;
  description?: string;
  pipelineSpec?: PipelineSpec;
  platformSpec?: Record<string, unknown>;
  pipelineVersionReference?: { pipelineId?: string; pipelineVersionId?: string };
  runtimeConfig?: { parameters?: Record<string, unknown>; pipelineRoot?: string };
  trigger: RecurringRunTrigger;
  maxConcurrency?: number;
  noCatchup?: boolean;
  mode?: 'ENABLE' | 'DISABLE';
  experimentId?: string;
  serviceAccount?: string;
}

export interface RecurringRunStatus {
  /** the last fire time a run was started for (RFC3339) */
  lastScheduledTime?: string;
  /** the next fire time, while enabled and not past the end time */
  nextScheduledTime?: string;
  /** runs started so far */
  runCount?: number;
  message?: string;
}

export interface PipelineObj extends KObject { spec: PipelineObjSpec }
export interface PipelineVersionObj extends KObject { spec: PipelineVersionSpec }
export interface ExperimentObj extends KObject { spec: ExperimentSpec }
export interface RecurringRunObj extends KObject { spec: RecurringRunSpec; status?: RecurringRunStatus }

function common(v: Validator, obj: KObject): Record<string, any> | undefined {
  v.dnsSubdomain('metadata.name', obj.metadata.name);
  const spec = obj.spec;
  if (!v.object('spec', spec, true)) return undefined;
  v.string('spec.name', spec.name);
  v.string('spec.displayName', spec.displayName);
  v.string('spec.description', spec.description);
  if (spec.tags !== undefined) v.stringMap('spec.tags', spec.tags);
  return spec;
}

function storageLabel(v: Validator, obj: KObject): void {
  const s = obj.metadata.labels?.[KfpLabels.storageState];
  if (s !== undefined) v.oneOf(`metadata.labels.${KfpLabels.storageState}`, s, StorageStates);
}

function pipelineSpecErrors(v: Validator, field: string, spec: unknown): void {
  if (!v.object(field, spec, true)) return;
  const errs = validatePipelineSpec(spec as PipelineSpec);
  v.errors.push(...errs.map((e) => ({ ...e, field: e.field ? `${field}.${e.field}` : field })));
}

function validatePipeline(obj: KObject): FieldError[] {
  const v = new Validator();
  const spec = common(v, obj);
  if (spec) v.string('spec.displayName', spec.displayName, true);
  return v.errors;
}

function validatePipelineVersion(obj: KObject): FieldError[] {
  const v = new Validator();
  const spec = common(v, obj);
  if (!spec) return v.errors;
  v.dnsSubdomain('spec.pipelineName', spec.pipelineName);
  v.string('spec.codeSourceUrl', spec.codeSourceUrl);
  v.string('spec.packageUrl', spec.packageUrl);
  if (spec.platformSpec !== undefined) v.object('spec.platformSpec', spec.platformSpec);
  pipelineSpecErrors(v, 'spec.pipelineSpec', spec.pipelineSpec);
  return v.errors;
}

function validateExperiment(obj: KObject): FieldError[] {
  const v = new Validator();
  const spec = common(v, obj);
  if (spec) v.string('spec.displayName', spec.displayName, true);
  storageLabel(v, obj);
  return v.errors;
}

function validateTime(v: Validator, field: string, t: unknown): void {
  if (!v.string(field, t)) return;
  if (Number.isNaN(Date.parse(t))) v.invalid(field, t, 'must be an RFC3339 time, e.g. 2024-01-02T03:04:05Z');
}

export function validateRecurringRun(obj: KObject): FieldError[] {
  const v = new Validator();
  const spec = common(v, obj);
  if (!spec) return v.errors;
  const hasSpec = spec.pipelineSpec !== undefined;
  const ref = spec.pipelineVersionReference;
  if (!hasSpec && ref === undefined) v.required('spec.pipelineSpec', 'Required value: one of pipelineSpec or pipelineVersionReference');
  if (ref !== undefined && v.object('spec.pipelineVersionReference', ref)) {
    v.string('spec.pipelineVersionReference.pipelineId', ref.pipelineId);
    v.string('spec.pipelineVersionReference.pipelineVersionId', ref.pipelineVersionId, !hasSpec);
  }
  const rc = spec.runtimeConfig;
  if (rc !== undefined && v.object('spec.runtimeConfig', rc)) {
    v.string('spec.runtimeConfig.pipelineRoot', rc.pipelineRoot);
    if (rc.parameters !== undefined) v.object('spec.runtimeConfig.parameters', rc.parameters);
  }
  if (hasSpec) {
    if (!v.object('spec.pipelineSpec', spec.pipelineSpec, true)) return v.errors;
    const errs = validatePipelineSpec(spec.pipelineSpec as PipelineSpec);
    v.errors.push(...errs.map((e) => ({ ...e, field: e.field ? `spec.pipelineSpec.${e.field}` : 'spec.pipelineSpec' })));
    if (errs.length === 0 && isPlainObject(rc) && (rc.parameters === undefined || isPlainObject(rc.parameters))) {
      v.errors.push(...validateRunParameters(spec.pipelineSpec as PipelineSpec, (rc.parameters ?? {}) as Record<string, unknown>)
        .map((e) => ({ ...e, field: e.field.replace(/^runtime_config\.parameters/, 'spec.runtimeConfig.parameters') })));
    }
  }
  if (spec.platformSpec !== undefined) v.object('spec.platformSpec', spec.platformSpec);
  if (v.object('spec.trigger', spec.trigger, true)) {
    const { cronSchedule: cron, periodicSchedule: per } = spec.trigger;
    if (cron !== undefined && per !== undefined) v.add('spec.trigger', 'FieldValueInvalid', 'Invalid value: set one of cronSchedule or periodicSchedule, not both');
    else if (cron === undefined && per === undefined) v.required('spec.trigger', 'Required value: one of cronSchedule or periodicSchedule');
    if (cron !== undefined && v.object('spec.trigger.cronSchedule', cron)) {
      if (v.string('spec.trigger.cronSchedule.cron', cron.cron, true)) {
        try {
          parseSchedule(cron.cron);
        } catch (e) {
          v.invalid('spec.trigger.cronSchedule.cron', cron.cron, (e as Error).message);
        }
      }
      validateTime(v, 'spec.trigger.cronSchedule.startTime', cron.startTime);
      validateTime(v, 'spec.trigger.cronSchedule.endTime', cron.endTime);
    }
    if (per !== undefined && v.object('spec.trigger.periodicSchedule', per)) {
      v.int('spec.trigger.periodicSchedule.intervalSecond', per.intervalSecond, 1, true);
      validateTime(v, 'spec.trigger.periodicSchedule.startTime', per.startTime);
      validateTime(v, 'spec.trigger.periodicSchedule.endTime', per.endTime);
    }
  }
  if (spec.maxConcurrency !== undefined) v.int('spec.maxConcurrency', spec.maxConcurrency, 1);
  v.bool('spec.noCatchup', spec.noCatchup);
  v.oneOf('spec.mode', spec.mode, RecurringRunModes);
  v.string('spec.experimentId', spec.experimentId);
  v.string('spec.serviceAccount', spec.serviceAccount);
  return v.errors;
}

const base = { group, version, namespaced: true } as const;

const displayName: PrinterColumn = { name: 'Display-Name', type: 'string', jsonPath: '.spec.displayName' };
const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export const kfpKinds: KindDef[] = [
  { ...base, kind: 'Pipeline', plural: 'pipelines', singular: 'pipeline', hasStatus: false, validate: validatePipeline, printerColumns: [displayName, age] },
  {
    ...base, kind: 'PipelineVersion', plural: 'pipelineversions', singular: 'pipelineversion', hasStatus: false, validate: validatePipelineVersion,
    printerColumns: [{ name: 'Pipeline', type: 'string', jsonPath: '.spec.pipelineName' }, displayName, age],
  },
  { ...base, kind: 'Experiment', plural: 'experiments', singular: 'experiment', hasStatus: false, validate: validateExperiment, printerColumns: [displayName, age] },
  {
    ...base, kind: 'RecurringRun', plural: 'recurringruns', singular: 'recurringrun', hasStatus: true,
    // its trigger (a cron or an interval), whether it fires, how many runs it started and when the last
    printerColumns: [
      { name: 'Mode', type: 'string', jsonPath: '.spec.mode' },
      { name: 'Cron', type: 'string', jsonPath: '.spec.trigger.cronSchedule.cron' },
      { name: 'Interval', type: 'integer', jsonPath: '.spec.trigger.periodicSchedule.intervalSecond', description: 'seconds between runs of a periodic schedule' },
      { name: 'Runs', type: 'integer', jsonPath: '.status.runCount', description: 'runs started so far' },
      { name: 'Last-Run', type: 'date', jsonPath: '.status.lastScheduledTime' },
      age,
    ],
    default: (obj) => {
      if (isPlainObject(obj.spec)) obj.spec.mode ??= 'ENABLE';
    },
    validate: validateRecurringRun,
  },
];
