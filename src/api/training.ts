// Kubeflow training jobs: kubeflow.org/v1 PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob and
// MPIJob (Training Operator 1.9), and the mpi-operator's kubeflow.org/v2beta1 MPIJob. Defaults are
// the operators' defaulting functions, validation their admission webhooks (MPIJob v1 has none
// upstream: it gets the structural checks only); the renderer of what a job creates is
// src/workloads/training/render.ts.
//
// Two MPIJob versions, one resource. Upstream can install only one MPIJob CRD per cluster (both
// are `mpijobs.kubeflow.org`); Skiff serves both versions of the one resource, as Kubernetes
// serves several versions of a CRD from one storage: the store keys objects by `group/plural`,
// so v1 and v2beta1 MPIJobs share one name space per namespace (a v1 `pi` and a v2beta1 `pi`
// cannot both exist) and one list. The two versions are not convertible, so nothing is converted:
// every object keeps the apiVersion it was created with, defaults, validation, rendering and
// control are chosen by that apiVersion (`trainingKindInfo(obj.apiVersion, obj.kind)`), reading
// through either version's path returns the object as stored, and an update may not change an
// object's apiVersion.
import type { FieldError } from './errors.js';
import type { KObject, StoredObject } from './meta.js';
import type { KindDef, PrinterColumn } from './registry.js';
import { validatePodSpec } from './core.js';
import { Validator } from './validation.js';
import type { ReplicaRestartPolicy } from './training-types.js';
import { isPlainObject as isObject } from '../util/objects.js';

export const TrainingGroup = 'kubeflow.org';

/** What differs between the training kinds; the renderer and the controller read it too. */
export interface TrainingKindInfo {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  /** the spec field holding the replica specs, e.g. `pytorchReplicaSpecs` */
  replicaSpecsField: string;
  /** the allowed replica types, canonically spelled, in the order their Pods are rendered */
  replicaTypes: readonly string[];
  /** the container the operator injects into and reads ports from; undefined: containers[0] */
  defaultContainer?: string;
  /** the default port's name and number, appended by defaulting */
  portName?: string;
  defaultPort?: number;
  /** the operator-name label */
  controllerName: string;
  defaultRestartPolicy(type: string): ReplicaRestartPolicy;
  defaultReplicas(type: string): number;
  /** the allowed runPolicy.managedBy values */
  managedBy: readonly string[];
  /** has an admission webhook upstream (MPIJob v1 has none) */
  webhook: boolean;
}

const trainingOperator = 'kubeflow.org/training-operator';
const multiKueue = 'kueue.x-k8s.io/multikueue';
const mpiOperator = 'kubeflow.org/mpi-operator';

function v1Kind(kind: string, field: string, types: string[], container: string, portName: string, port: number, restart: ReplicaRestartPolicy): TrainingKindInfo {
  const lower = kind.toLowerCase();
  return {
    group: TrainingGroup, version: 'v1', kind, plural: `${lower}s`, singular: lower,
    replicaSpecsField: field, replicaTypes: types, defaultContainer: container, portName, defaultPort: port,
    controllerName: `${lower}-controller`,
    defaultRestartPolicy: () => restart,
    defaultReplicas: () => 1,
    managedBy: [trainingOperator, multiKueue],
    webhook: true,
  };
}

export const PyTorchJobInfo = v1Kind('PyTorchJob', 'pytorchReplicaSpecs', ['Master', 'Worker'], 'pytorch', 'pytorchjob-port', 23456, 'OnFailure');
export const TFJobInfo = v1Kind('TFJob', 'tfReplicaSpecs', ['Chief', 'Master', 'PS', 'Worker', 'Evaluator'], 'tensorflow', 'tfjob-port', 2222, 'Never');
export const XGBoostJobInfo = v1Kind('XGBoostJob', 'xgbReplicaSpecs', ['Master', 'Worker'], 'xgboost', 'xgboostjob-port', 9999, 'Never');
export const PaddleJobInfo = v1Kind('PaddleJob', 'paddleReplicaSpecs', ['Master', 'Worker'], 'paddle', 'master', 36543, 'OnFailure');
export const JAXJobInfo = v1Kind('JAXJob', 'jaxReplicaSpecs', ['Worker'], 'jax', 'jaxjob-port', 6666, 'Never');
/** Training Operator's MPIJob: no webhook, no default port (its `mpi-port` is never used), Worker replicas default to 0 */
export const MPIJobV1Info: TrainingKindInfo = {
  ...v1Kind('MPIJob', 'mpiReplicaSpecs', ['Launcher', 'Worker'], 'mpi', 'mpi-port', 9999, 'Never'),
  portName: undefined,
  defaultPort: undefined,
  defaultReplicas: (type) => (type === 'Worker' ? 0 : 1),
  webhook: false,
};
/** mpi-operator's MPIJob: containers[0], the launcher restarts OnFailure */
export const MPIJobV2Info: TrainingKindInfo = {
  group: TrainingGroup, version: 'v2beta1', kind: 'MPIJob', plural: 'mpijobs', singular: 'mpijob',
  replicaSpecsField: 'mpiReplicaSpecs', replicaTypes: ['Launcher', 'Worker'],
  controllerName: 'mpi-operator',
  defaultRestartPolicy: (type) => (type === 'Launcher' ? 'OnFailure' : 'Never'),
  defaultReplicas: (type) => (type === 'Worker' ? 0 : 1),
  managedBy: [mpiOperator, multiKueue],
  webhook: true,
};

export const trainingKindInfos: readonly TrainingKindInfo[] = [PyTorchJobInfo, TFJobInfo, XGBoostJobInfo, PaddleJobInfo, JAXJobInfo, MPIJobV1Info, MPIJobV2Info];

/** The training kind an object is, by its own apiVersion and kind. */
export function trainingKindInfo(apiVersion: string, kind: string): TrainingKindInfo | undefined {
  return trainingKindInfos.find((i) => `${i.group}/${i.version}` === apiVersion && i.kind === kind);
}

export const MPIv2Defaults = {
  slotsPerWorker: 1,
  runLauncherAsWorker: false,
  sshAuthMountPath: '/root/.ssh',
  launcherCreationPolicy: 'AtStartup',
  mpiImplementation: 'OpenMPI',
} as const;

const restartPolicies: readonly ReplicaRestartPolicy[] = ['Always', 'OnFailure', 'Never', 'ExitCode'];
const dns1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** The job's replica specs (after defaulting: canonical keys). */
export function replicaSpecsOf(job: KObject, info: TrainingKindInfo): Record<string, any> {
  const specs = job.spec?.[info.replicaSpecsField];
  return isObject(specs) ? specs : {};
}

/** Replica-type keys are accepted in any case and stored canonically (`master` → `Master`). */
function normaliseKeys(specs: Record<string, unknown>, types: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, val] of Object.entries(specs)) {
    const canonical = types.find((t) => t.toLowerCase() === key.toLowerCase()) ?? key;
    if (canonical !== key && Object.prototype.hasOwnProperty.call(specs, canonical)) out[key] = val;
    else out[canonical] = val;
  }
  return out;
}

function defaultTraining(info: TrainingKindInfo, obj: KObject): void {
  const spec = obj.spec;
  if (!isObject(spec)) return;
  spec.runPolicy ??= {};
  if (isObject(spec.runPolicy)) spec.runPolicy.cleanPodPolicy ??= 'None';
  if (isObject(spec[info.replicaSpecsField])) {
    if (info.version === 'v1') spec[info.replicaSpecsField] = normaliseKeys(spec[info.replicaSpecsField], info.replicaTypes);
    for (const [type, rs] of Object.entries(spec[info.replicaSpecsField] as Record<string, unknown>)) {
      if (!isObject(rs)) continue;
      if (rs.replicas === undefined || rs.replicas === null) rs.replicas = info.defaultReplicas(type);
      if (rs.restartPolicy === undefined || rs.restartPolicy === null || rs.restartPolicy === '') rs.restartPolicy = info.defaultRestartPolicy(type);
      const tmpl = rs.template;
      if (!isObject(tmpl)) continue;
      // fields a PodTemplateSpec does not have (`apiVersion`, `kind` in old examples) are pruned, as the API server prunes them
      for (const k of Object.keys(tmpl)) if (k !== 'metadata' && k !== 'spec') delete tmpl[k];
      const containers = tmpl.spec?.containers;
      if (info.portName && info.defaultPort !== undefined && Array.isArray(containers) && containers.length > 0) {
        const named = containers.findIndex((c: any) => c?.name === info.defaultContainer);
        const c = containers[named >= 0 ? named : 0];
        if (isObject(c)) {
          const ports = Array.isArray(c.ports) ? c.ports : [];
          if (!ports.some((p: any) => p?.name === info.portName)) c.ports = [...ports, { name: info.portName, containerPort: info.defaultPort }];
        }
      }
    }
  }
  if (info === PyTorchJobInfo) {
    const elastic = spec.elasticPolicy;
    if (spec.nprocPerNode === undefined || spec.nprocPerNode === null) {
      if (!(isObject(elastic) && elastic.nProcPerNode !== undefined && elastic.nProcPerNode !== null)) spec.nprocPerNode = 'auto';
    }
    if (isObject(elastic)) {
      const hasMin = elastic.minReplicas !== undefined && elastic.minReplicas !== null;
      const hasMax = elastic.maxReplicas !== undefined && elastic.maxReplicas !== null;
      if (hasMin && !hasMax) elastic.maxReplicas = elastic.minReplicas;
      else if (hasMax && !hasMin) elastic.minReplicas = elastic.maxReplicas;
      else if (!hasMin && !hasMax) {
        const workers = replicaSpecsOf(obj, info).Worker?.replicas;
        if (typeof workers === 'number') {
          elastic.minReplicas = workers;
          elastic.maxReplicas = workers;
        }
      }
    }
  }
  if (info === TFJobInfo) spec.successPolicy ??= '';
  if (info === MPIJobV2Info) {
    spec.slotsPerWorker ??= MPIv2Defaults.slotsPerWorker;
    spec.runLauncherAsWorker ??= MPIv2Defaults.runLauncherAsWorker;
    spec.sshAuthMountPath ??= MPIv2Defaults.sshAuthMountPath;
    spec.launcherCreationPolicy ??= MPIv2Defaults.launcherCreationPolicy;
    spec.mpiImplementation ??= MPIv2Defaults.mpiImplementation;
  }
}

function validateRunPolicy(v: Validator, info: TrainingKindInfo, rp: unknown, old: KObject | undefined): void {
  if (!v.object('spec.runPolicy', rp)) return;
  v.oneOf('spec.runPolicy.cleanPodPolicy', rp.cleanPodPolicy, ['None', 'Running', 'All']);
  v.int('spec.runPolicy.ttlSecondsAfterFinished', rp.ttlSecondsAfterFinished, 0);
  v.int('spec.runPolicy.activeDeadlineSeconds', rp.activeDeadlineSeconds, 0);
  v.int('spec.runPolicy.backoffLimit', rp.backoffLimit, 0);
  v.bool('spec.runPolicy.suspend', rp.suspend);
  if (v.object('spec.runPolicy.schedulingPolicy', rp.schedulingPolicy)) {
    const sp = rp.schedulingPolicy;
    v.int('spec.runPolicy.schedulingPolicy.minAvailable', sp.minAvailable, 0);
    v.string('spec.runPolicy.schedulingPolicy.queue', sp.queue);
    v.string('spec.runPolicy.schedulingPolicy.priorityClass', sp.priorityClass);
    v.int('spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds', sp.scheduleTimeoutSeconds, 0);
    if (old && (old.spec?.runPolicy?.schedulingPolicy?.queue ?? '') !== (sp.queue ?? '')) v.invalid('spec.runPolicy.schedulingPolicy.queue', sp.queue, 'field is immutable');
  }
  // the JAX webhook does not check the run policy's managedBy
  if (info !== JAXJobInfo && rp.managedBy !== undefined && rp.managedBy !== null) v.oneOf('spec.runPolicy.managedBy', rp.managedBy, info.managedBy);
  if (old && (old.spec?.runPolicy?.managedBy ?? null) !== (rp.managedBy ?? null)) v.invalid('spec.runPolicy.managedBy', rp.managedBy ?? null, 'field is immutable');
}

function validateReplicaSpecs(v: Validator, info: TrainingKindInfo, spec: Record<string, any>): void {
  const base = `spec.${info.replicaSpecsField}`;
  const specs = spec[info.replicaSpecsField];
  if (!v.object(base, specs, true)) return;
  if (Object.keys(specs).length === 0) v.required(base, 'Required value: at least one replica spec is required');
  const policies = info === MPIJobV2Info ? (['OnFailure', 'Never'] as const) : restartPolicies;
  for (const [type, rs] of Object.entries(specs)) {
    const p = `${base}.${type}`;
    if (!info.replicaTypes.includes(type)) {
      v.notSupported(base, type, info.replicaTypes);
      continue;
    }
    if (!v.object(p, rs, true)) continue;
    if (v.int(`${p}.replicas`, rs.replicas, 0) && rs.replicas > 2147483647) v.invalid(`${p}.replicas`, rs.replicas, 'must be at most 2147483647');
    v.oneOf(`${p}.restartPolicy`, rs.restartPolicy, policies);
    const tmpl = rs.template;
    if (!v.object(`${p}.template`, tmpl, true)) continue;
    if (v.object(`${p}.template.metadata`, tmpl.metadata)) {
      v.labels(`${p}.template.metadata.labels`, tmpl.metadata.labels);
      v.stringMap(`${p}.template.metadata.annotations`, tmpl.metadata.annotations);
    }
    const podPath = `${p}.template.spec`;
    validatePodSpec(v, tmpl.spec, podPath, { template: true });
    const containers = tmpl.spec?.containers;
    if (!Array.isArray(containers) || containers.length === 0) continue;
    containers.forEach((c: any, i: number) => {
      if (isObject(c) && (c.image === undefined || c.image === null || c.image === '')) v.required(`${podPath}.containers[${i}].image`, 'Required value: image must be set');
    });
    if (info.webhook && info.defaultContainer && !containers.some((c: any) => c?.name === info.defaultContainer)) {
      v.required(`${podPath}.containers`, `Required value: There is no container named ${info.defaultContainer} in ${type}`);
    }
  }
}

function validateTraining(info: TrainingKindInfo, obj: KObject, old?: StoredObject): FieldError[] {
  const v = new Validator();
  const name = obj.metadata.name;
  if (info.webhook) {
    if (v.string('metadata.name', name, true) && (name.length > 63 || !dns1035.test(name))) {
      v.invalid('metadata.name', name, "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name', or 'abc-123'), at most 63 characters");
    }
  } else {
    v.dnsSubdomain('metadata.name', name);
  }
  if (old && old.apiVersion !== obj.apiVersion) {
    v.invalid('apiVersion', obj.apiVersion, `field is immutable: this ${obj.kind} was created as ${old.apiVersion}, and its versions are not convertible`);
  }
  const spec = obj.spec;
  if (!v.object('spec', spec, true)) return v.errors;
  validateRunPolicy(v, info, spec.runPolicy, old);
  validateReplicaSpecs(v, info, spec);
  const specs = replicaSpecsOf(obj, info);
  const field = `spec.${info.replicaSpecsField}`;
  const replicas = (type: string): unknown => specs[type]?.replicas;
  if (info === PyTorchJobInfo) {
    if (specs.Master !== undefined && typeof replicas('Master') === 'number' && replicas('Master') !== 1) v.invalid(`${field}.Master.replicas`, replicas('Master'), 'must be 1');
    if (specs.Worker !== undefined && typeof replicas('Worker') === 'number' && (replicas('Worker') as number) < 1) v.invalid(`${field}.Worker.replicas`, replicas('Worker'), 'must be at least 1');
    v.string('spec.nprocPerNode', spec.nprocPerNode);
    const ep = spec.elasticPolicy;
    if (v.object('spec.elasticPolicy', ep)) {
      if (specs.Worker === undefined) v.required(`${field}.Worker`, 'Required value: elasticPolicy needs a Worker replica spec');
      if (ep.nProcPerNode !== undefined && ep.nProcPerNode !== null) {
        v.int('spec.elasticPolicy.nProcPerNode', ep.nProcPerNode, 1);
        if (spec.nprocPerNode !== undefined && spec.nprocPerNode !== null) v.add('spec.elasticPolicy.nProcPerNode', 'FieldValueForbidden', 'Forbidden: must not be set together with spec.nprocPerNode (elasticPolicy.nProcPerNode is deprecated)');
      }
      v.oneOf('spec.elasticPolicy.rdzvBackend', ep.rdzvBackend, ['c10d', 'etcd', 'etcd-v2']);
      v.string('spec.elasticPolicy.rdzvHost', ep.rdzvHost);
      if (v.int('spec.elasticPolicy.rdzvPort', ep.rdzvPort, 1) && ep.rdzvPort > 65535) v.invalid('spec.elasticPolicy.rdzvPort', ep.rdzvPort, 'must be between 1 and 65535, inclusive');
      v.string('spec.elasticPolicy.rdzvId', ep.rdzvId);
      v.bool('spec.elasticPolicy.standalone', ep.standalone);
      v.int('spec.elasticPolicy.maxRestarts', ep.maxRestarts, 0);
      const minOk = v.int('spec.elasticPolicy.minReplicas', ep.minReplicas, 1);
      const maxOk = v.int('spec.elasticPolicy.maxReplicas', ep.maxReplicas, 1);
      if (minOk && maxOk && ep.minReplicas > ep.maxReplicas) v.invalid('spec.elasticPolicy.minReplicas', ep.minReplicas, 'must be less than or equal to maxReplicas');
      if (v.array('spec.elasticPolicy.rdzvConf', ep.rdzvConf)) {
        ep.rdzvConf.forEach((kv: any, i: number) => {
          if (v.object(`spec.elasticPolicy.rdzvConf[${i}]`, kv, true)) {
            v.string(`spec.elasticPolicy.rdzvConf[${i}].key`, kv.key, true);
            v.string(`spec.elasticPolicy.rdzvConf[${i}].value`, kv.value);
          }
        });
      }
    }
  }
  if (info === XGBoostJobInfo) {
    if (specs.Master === undefined) v.required(`${field}.Master`, 'Required value: an XGBoostJob needs a Master replica spec');
    else if (typeof replicas('Master') === 'number' && replicas('Master') !== 1) v.invalid(`${field}.Master.replicas`, replicas('Master'), 'must be 1');
  }
  if (info === TFJobInfo) {
    const chiefs = ['Chief', 'Master'].filter((t) => specs[t] !== undefined);
    if (chiefs.length > 1) v.invalid(field, chiefs, 'more than 1 chief/master found: Chief and Master are the same role');
    for (const t of chiefs) if (typeof replicas(t) === 'number' && (replicas(t) as number) > 1) v.invalid(`${field}.${t}.replicas`, replicas(t), 'must not be greater than 1');
    v.oneOf('spec.successPolicy', spec.successPolicy, ['', 'AllWorkers']);
    v.bool('spec.enableDynamicWorker', spec.enableDynamicWorker);
  }
  if (info === MPIJobV1Info) {
    v.int('spec.slotsPerWorker', spec.slotsPerWorker, 0);
    if (specs.Launcher === undefined) v.required(`${field}.Launcher`, 'Required value: an MPIJob needs a Launcher replica spec');
  }
  if (info === MPIJobV2Info) {
    v.int('spec.slotsPerWorker', spec.slotsPerWorker, 0, true);
    v.bool('spec.runLauncherAsWorker', spec.runLauncherAsWorker);
    if (v.string('spec.sshAuthMountPath', spec.sshAuthMountPath, true) && !spec.sshAuthMountPath.startsWith('/')) v.invalid('spec.sshAuthMountPath', spec.sshAuthMountPath, 'must be an absolute path');
    v.oneOf('spec.launcherCreationPolicy', spec.launcherCreationPolicy, ['AtStartup', 'WaitForWorkersReady']);
    v.oneOf('spec.mpiImplementation', spec.mpiImplementation, ['OpenMPI', 'Intel', 'MPICH']);
    if (specs.Launcher === undefined) v.required(`${field}.Launcher`, 'Required value: an MPIJob needs a Launcher replica spec');
    else if (typeof replicas('Launcher') === 'number' && replicas('Launcher') !== 1) v.invalid(`${field}.Launcher.replicas`, replicas('Launcher'), 'must be 1');
  }
  return v.errors;
}

/**
 * `kubectl get` columns, as the Training Operator's v1 CRDs declare them (kubeflow/training-operator
 * v1.9, manifests/base/crds): the type of the latest condition as STATE. MPIJob v1 lists AGE first;
 * mpi-operator's v2beta1 CRD declares none, so it gets AGE alone.
 */
const stateColumn: PrinterColumn = { name: 'State', type: 'string', jsonPath: '.status.conditions[-1:].type' };
const ageColumn: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

function printerColumns(info: TrainingKindInfo): PrinterColumn[] | undefined {
  if (info.version !== 'v1') return undefined;
  return info.kind === 'MPIJob' ? [ageColumn, stateColumn] : [stateColumn, ageColumn];
}

function kindDef(info: TrainingKindInfo): KindDef {
  return {
    group: info.group, version: info.version, kind: info.kind, plural: info.plural, singular: info.singular,
    namespaced: true, hasStatus: true, printerColumns: printerColumns(info),
    default: (obj) => defaultTraining(info, obj),
    validate: (obj, old) => validateTraining(info, obj, old),
    // the training operator's CRDs give PyTorchJob alone a scale subresource (for elastic training)
    ...(info === PyTorchJobInfo ? { scale: { specReplicasPath: '.spec.pytorchReplicaSpecs.Worker.replicas', statusReplicasPath: '.status.replicaStatuses.Active', labelSelectorPath: '.status.labelSelector' } } : {}),
  };
}

export const trainingKinds: KindDef[] = trainingKindInfos.map(kindDef);

/**
 * Kinds the Training Operator once served and dropped, by kind and by plural: what a request for
 * one is told, beyond "no such resource". MXJob went in the operator's v1.9, whose kinds Skiff
 * serves, after Apache MXNet was retired to the Apache Attic.
 */
const retiredTrainingKinds: Record<string, string> = {
  MXJob: 'MXJob was removed from the Kubeflow Training Operator in v1.9, when Apache MXNet was retired; Skiff serves v1.9\'s kinds: PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob and MPIJob',
};

/** why a kind (or plural) of kubeflow.org is not served, when it is one the operator retired */
export function retiredTrainingKind(group: string, kindOrPlural: string): string | undefined {
  if (group !== TrainingGroup) return undefined;
  const kind = Object.keys(retiredTrainingKinds).find((k) => k === kindOrPlural || `${k.toLowerCase()}s` === kindOrPlural);
  return kind ? retiredTrainingKinds[kind] : undefined;
}
