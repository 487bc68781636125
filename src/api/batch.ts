// batch/v1 Job: types, defaults and validation as the Kubernetes API server applies them.
import type { Condition } from './conditions.js';
import type { PodTemplateSpec } from './core-types.js';
import type { KindDef } from './registry.js';
import type { KObject } from './meta.js';
import { deepEqual } from './meta.js';
import { defaultPodSpec, validatePodSpec } from './core.js';
import { Validator } from './validation.js';

export interface PodFailurePolicyRule {
  action: 'FailJob' | 'FailIndex' | 'Ignore' | 'Count';
  onExitCodes?: { containerName?: string; operator: 'In' | 'NotIn'; values: number[] };
  onPodConditions?: { type: string; status?: string }[];
}

export interface JobSpec {
  parallelism?: number;
  completions?: number;
  completionMode?: 'NonIndexed' | 'Indexed';
  backoffLimit?: number;
  backoffLimitPerIndex?: number;
  maxFailedIndexes?: number;
  activeDeadlineSeconds?: number;
  ttlSecondsAfterFinished?: number;
  suspend?: boolean;
  podFailurePolicy?: { rules: PodFailurePolicyRule[] };
  selector?: { matchLabels?: Record<string, string> };
  manualSelector?: boolean;
  podReplacementPolicy?: 'TerminatingOrFailed' | 'Failed';
  template: PodTemplateSpec;
}

export interface JobStatus {
  conditions?: Condition[];
  startTime?: string;
  completionTime?: string;
  active?: number;
  ready?: number;
  terminating?: number;
  succeeded?: number;
  failed?: number;
  completedIndexes?: string;
  failedIndexes?: string;
  uncountedTerminatedPods?: { succeeded?: string[]; failed?: string[] };
}

export interface Job extends KObject {
  spec: JobSpec;
  status?: JobStatus;
}

export const JobLabels = {
  controllerUid: 'batch.kubernetes.io/controller-uid',
  jobName: 'batch.kubernetes.io/job-name',
  legacyControllerUid: 'controller-uid',
  legacyJobName: 'job-name',
  completionIndex: 'batch.kubernetes.io/job-completion-index',
  trackingFinalizer: 'batch.kubernetes.io/job-tracking',
} as const;

const maxInt32 = 2147483647;

function defaultJob(obj: KObject): void {
  const spec = obj.spec;
  if (!spec || typeof spec !== 'object') return;
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  spec.parallelism ??= 1;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  spec.manualSelector ??= false;
  spec.podReplacementPolicy ??= spec.podFailurePolicy ? 'Failed' : 'TerminatingOrFailed';
  if (spec.backoffLimit === undefined) spec.backoffLimit = spec.backoffLimitPerIndex !== undefined ? maxInt32 : 6;
  const uid = obj.metadata.uid;
  if (uid && !spec.manualSelector && spec.template && typeof spec.template === 'object') {
    const labels = {
      [JobLabels.controllerUid]: uid,
      [JobLabels.jobName]: obj.metadata.name ?? '',
      [JobLabels.legacyControllerUid]: uid,
      [JobLabels.legacyJobName]: obj.metadata.name ?? '',
    };
    spec.selector ??= { matchLabels: { [JobLabels.controllerUid]: uid } };
    spec.template.metadata ??= {};
    spec.template.metadata.labels = { ...spec.template.metadata.labels, ...labels };
  }
  if (spec.template && typeof spec.template === 'object') defaultPodSpec(spec.template.spec);
}

function validateJob(obj: KObject, old?: KObject): ReturnType<Validator['errors']['slice']> {
  const v = new Validator();
  v.dnsSubdomain('metadata.name', obj.metadata.name);
  // pod names are <job>-<index>-<5 chars>; the job name must leave room for that, as in Kubernetes
  if (typeof obj.metadata.name === 'string' && obj.metadata.name.length > 63) v.invalid('metadata.name', obj.metadata.name, 'must be no more than 63 characters');
  const spec = obj.spec;
  if (!v.object('spec', spec, true)) return v.errors;
  v.int('spec.parallelism', spec.parallelism, 0);
  v.int('spec.completions', spec.completions, 0);
  v.int('spec.backoffLimit', spec.backoffLimit, 0);
  v.int('spec.ttlSecondsAfterFinished', spec.ttlSecondsAfterFinished, 0);
  if (spec.activeDeadlineSeconds !== undefined) v.int('spec.activeDeadlineSeconds', spec.activeDeadlineSeconds, 1);
  v.bool('spec.suspend', spec.suspend);
  v.oneOf('spec.completionMode', spec.completionMode, ['NonIndexed', 'Indexed']);
  v.oneOf('spec.podReplacementPolicy', spec.podReplacementPolicy, ['TerminatingOrFailed', 'Failed']);
  const indexed = spec.completionMode === 'Indexed';
  if (indexed) {
    if (spec.completions === undefined || spec.completions === null) v.required('spec.completions', 'Required value: when completion mode is Indexed');
    else if (typeof spec.completions === 'number' && spec.completions > 100000) v.invalid('spec.completions', spec.completions, 'must be less than or equal to 100000 when completion mode is Indexed');
  }
  if (spec.backoffLimitPerIndex !== undefined) {
    v.int('spec.backoffLimitPerIndex', spec.backoffLimitPerIndex, 0);
    if (!indexed) v.required('spec.completionMode', 'Required value: when backoffLimitPerIndex is specified, completionMode must be Indexed');
  }
  if (spec.maxFailedIndexes !== undefined) {
    v.int('spec.maxFailedIndexes', spec.maxFailedIndexes, 0);
    if (spec.backoffLimitPerIndex === undefined) v.required('spec.backoffLimitPerIndex', 'Required value: when maxFailedIndexes is specified');
    if (typeof spec.completions === 'number' && spec.maxFailedIndexes > spec.completions) v.invalid('spec.maxFailedIndexes', spec.maxFailedIndexes, 'must be less than or equal to completions');
  }
  const tmplPath = 'spec.template';
  if (v.object(tmplPath, spec.template, true)) {
    if (v.object(`${tmplPath}.metadata`, spec.template.metadata)) {
      v.labels(`${tmplPath}.metadata.labels`, spec.template.metadata.labels);
    }
    const policies = spec.podFailurePolicy ? ['Never'] : ['OnFailure', 'Never'];
    validatePodSpec(v, spec.template.spec, `${tmplPath}.spec`, { restartPolicies: policies, template: true });
    const sel = spec.selector?.matchLabels;
    const labels = spec.template.metadata?.labels ?? {};
    if (sel && typeof sel === 'object' && !Object.entries(sel).every(([k, val]) => labels[k] === val)) {
      v.invalid(`${tmplPath}.metadata.labels`, labels, '`selector` does not match template `labels`');
    }
  }
  if (spec.podFailurePolicy !== undefined && v.object('spec.podFailurePolicy', spec.podFailurePolicy)) {
    const rules = spec.podFailurePolicy.rules;
    if (v.array('spec.podFailurePolicy.rules', rules, true)) {
      if (rules.length > 20) v.add('spec.podFailurePolicy.rules', 'FieldValueTooMany', 'Too many: must have at most 20 items');
      rules.forEach((r: any, i: number) => {
        const p = `spec.podFailurePolicy.rules[${i}]`;
        if (!v.object(p, r, true)) return;
        if (r.action === undefined) v.required(`${p}.action`);
        else v.oneOf(`${p}.action`, r.action, ['FailJob', 'FailIndex', 'Ignore', 'Count']);
        if (r.action === 'FailIndex' && spec.backoffLimitPerIndex === undefined) v.invalid(`${p}.action`, r.action, 'requires the backoffLimitPerIndex to be set');
        const hasCodes = r.onExitCodes !== undefined && r.onExitCodes !== null;
        const hasConds = r.onPodConditions !== undefined && r.onPodConditions !== null && (r.onPodConditions as unknown[]).length > 0;
        if (hasCodes === hasConds) v.invalid(p, '', 'specifying one of OnExitCodes and OnPodConditions is required');
        if (hasCodes && v.object(`${p}.onExitCodes`, r.onExitCodes)) {
          const c = r.onExitCodes;
          if (c.operator === undefined) v.required(`${p}.onExitCodes.operator`);
          else v.oneOf(`${p}.onExitCodes.operator`, c.operator, ['In', 'NotIn']);
          if (c.containerName !== undefined) v.string(`${p}.onExitCodes.containerName`, c.containerName);
          if (v.array(`${p}.onExitCodes.values`, c.values, true)) {
            if (c.values.length === 0) v.required(`${p}.onExitCodes.values`, 'Required value: at least one value is required');
            if (c.values.length > 255) v.add(`${p}.onExitCodes.values`, 'FieldValueTooMany', 'Too many: must have at most 255 items');
            const seen = new Set<number>();
            let prev = -Infinity;
            c.values.forEach((x: unknown, j: number) => {
              const vp = `${p}.onExitCodes.values[${j}]`;
              if (!v.int(vp, x)) return;
              const n = x as number;
              if (seen.has(n)) v.add(vp, 'FieldValueDuplicate', `Duplicate value: ${n}`);
              if (c.operator === 'In' && n === 0) v.invalid(vp, n, 'must not be 0 for the In operator');
              if (n < prev) v.invalid(vp, n, 'must be ordered');
              seen.add(n);
              prev = n;
            });
          }
        }
        if (hasConds && v.array(`${p}.onPodConditions`, r.onPodConditions)) {
          r.onPodConditions.forEach((pc: any, j: number) => {
            const cp = `${p}.onPodConditions[${j}]`;
            if (!v.object(cp, pc, true)) return;
            v.string(`${cp}.type`, pc.type, true);
            if (pc.status !== undefined) v.oneOf(`${cp}.status`, pc.status, ['True', 'False', 'Unknown']);
          });
        }
      });
    }
  }
  if (old && v.errors.length === 0) {
    const o = old.spec ?? {};
    if (spec.completionMode !== o.completionMode) v.invalid('spec.completionMode', spec.completionMode, 'field is immutable');
    if (spec.completions !== o.completions && !(indexed && spec.completions === spec.parallelism)) v.invalid('spec.completions', spec.completions, 'field is immutable');
    if (!deepEqual(spec.selector, o.selector)) v.invalid('spec.selector', spec.selector, 'field is immutable');
    if (!deepEqual(spec.podFailurePolicy, o.podFailurePolicy)) v.invalid('spec.podFailurePolicy', '', 'field is immutable');
    if (!deepEqual(spec.template, o.template) && !(o.suspend && spec.suspend !== undefined)) v.invalid('spec.template', '', 'field is immutable');
  }
  return v.errors;
}

const job: KindDef = {
  group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', singular: 'job',
  namespaced: true, hasStatus: true,
  default: defaultJob,
  validate: validateJob,
};

export const batchKinds: KindDef[] = [job];
