// What every training kind's renderer shares: replica names, labels, the Pod built from a replica's
// template, the per-replica headless Service, port lookups and the success-rule helpers.
import type { Container, EnvVar, Pod, PodSpec } from '../../api/core-types.js';
import type { KObject, OwnerReference } from '../../api/meta.js';
import { clone } from '../../api/meta.js';
import type { TrainingKindInfo } from '../../api/training.js';
import { replicaSpecsOf } from '../../api/training.js';
import type { Rendered, RenderedReplica, ReplicaRestartPolicy, ReplicaSpec, ReplicaView, TrainingJob, TrainingKind, UnretriedFailureVerdict } from './types.js';
import { TrainingLabels } from './types.js';

export function jobName(job: TrainingJob): string {
  return job.metadata.name ?? '';
}

export function jobNamespace(job: TrainingJob): string {
  return job.metadata.namespace ?? 'default';
}

/** The job's replica specs of the kind's types, in the kind's order (Master before Worker ...). */
export function replicaSpecs(job: TrainingJob, info: TrainingKindInfo): [string, ReplicaSpec][] {
  const specs = replicaSpecsOf(job, info);
  return info.replicaTypes.filter((t) => specs[t] !== undefined && specs[t] !== null).map((t) => [t, specs[t] as ReplicaSpec]);
}

export function replicaSpec(job: TrainingJob, info: TrainingKindInfo, type: string): ReplicaSpec | undefined {
  return replicaSpecs(job, info).find(([t]) => t === type)?.[1];
}

export function replicaCount(info: TrainingKindInfo, type: string, rs: ReplicaSpec | undefined): number {
  if (!rs) return 0;
  return typeof rs.replicas === 'number' ? rs.replicas : info.defaultReplicas(type);
}

export function totalReplicas(job: TrainingJob, info: TrainingKindInfo): number {
  return replicaSpecs(job, info).reduce((n, [t, rs]) => n + replicaCount(info, t, rs), 0);
}

/** `<job>-<lowercase type>-<index>`: a replica's Pod and Service name. */
export function replicaName(job: TrainingJob, type: string, index: number): string {
  return `${jobName(job)}-${type.toLowerCase()}-${index}`.replace(/\//g, '-');
}

export function ownerRef(job: TrainingJob): OwnerReference {
  return { apiVersion: job.apiVersion, kind: job.kind, name: jobName(job), uid: job.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/** The container the operator looks at: the one with the kind's name (undefined when none). */
export function namedContainer(containers: Container[] | undefined, name: string | undefined): Container | undefined {
  if (name === undefined) return containers?.[0];
  return containers?.find((c) => c.name === name);
}

/** The port named `portName` on the replica's default-named container. */
export function findPort(rs: ReplicaSpec | undefined, containerName: string | undefined, portName: string): number | undefined {
  const c = namedContainer(rs?.template?.spec?.containers, containerName);
  return c?.ports?.find((p) => p.name === portName)?.containerPort;
}

/** findPort, or an Error naming the field, as the operator fails a job whose port is missing. */
export function requirePort(job: TrainingJob, info: TrainingKindInfo, type: string): number {
  const port = findPort(replicaSpec(job, info, type), info.defaultContainer, info.portName ?? '');
  if (port === undefined) {
    throw new Error(`spec.${info.replicaSpecsField}.${type}.template.spec.containers: port "${info.portName}" not found in a container named "${info.defaultContainer}"`);
  }
  return port;
}

export function podRestartPolicy(rp: ReplicaRestartPolicy): PodSpec['restartPolicy'] {
  return rp === 'ExitCode' ? 'Never' : rp;
}

export function replicaRestartPolicy(info: TrainingKindInfo, type: string, rs: ReplicaSpec): ReplicaRestartPolicy {
  return rs.restartPolicy ?? info.defaultRestartPolicy(type);
}

/** The labels that identify a replica's Pod (and select it from its Service). */
export function replicaLabels(info: TrainingKindInfo, job: TrainingJob, type: string, index: number): Record<string, string> {
  return {
    [TrainingLabels.operatorName]: info.controllerName,
    [TrainingLabels.jobName]: jobName(job),
    [TrainingLabels.replicaType]: type.toLowerCase(),
    [TrainingLabels.replicaIndex]: String(index),
  };
}

/** A replica's Pod from its template: name, namespace, labels over the template's, owner, restart policy. */
export function replicaPod(job: TrainingJob, rs: ReplicaSpec, name: string, labels: Record<string, string>, rp: ReplicaRestartPolicy): Pod {
  const tmpl = clone(rs.template) ?? { spec: { containers: [] } };
  const spec = (tmpl.spec ?? { containers: [] }) as PodSpec;
  spec.containers ??= [];
  spec.restartPolicy = podRestartPolicy(rp);
  // a replica that fails keeps the end of its log as its termination message, so the job's Failed
  // condition can say what the program said (a container that chose a policy keeps it)
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) c.terminationMessagePolicy ??= 'FallbackToLogsOnError';
  const metadata: Pod['metadata'] = {
    name,
    namespace: jobNamespace(job),
    labels: { ...(tmpl.metadata?.labels ?? {}), ...labels },
    ownerReferences: [ownerRef(job)],
  };
  if (tmpl.metadata?.annotations) metadata.annotations = { ...tmpl.metadata.annotations };
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}

/** A headless Service named like the replica's Pod; its ports are those of the default-named container. */
export function replicaService(job: TrainingJob, info: TrainingKindInfo, rs: ReplicaSpec, name: string, selector: Record<string, string>): KObject {
  const c = namedContainer(rs.template?.spec?.containers, info.defaultContainer);
  const ports = (c?.ports ?? []).map((p) => (p.name ? { name: p.name, port: p.containerPort } : { port: p.containerPort }));
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: jobNamespace(job), labels: { ...selector }, ownerReferences: [ownerRef(job)] },
    spec: { clusterIP: 'None', selector: { ...selector }, ports },
  };
}

export function appendEnv(c: Container, vars: EnvVar[]): void {
  c.env = [...(c.env ?? []), ...vars.map((e) => clone(e))];
}

export function env(name: string, value: string | number): EnvVar {
  return { name, value: String(value) };
}

/** A Kubeflow v1 kind that renders one Pod (and one Service) per replica and injects its variables. */
export interface FrameworkDef {
  info: TrainingKindInfo;
  /** the Pod that gets `training.kubeflow.org/job-role=master` */
  isMasterRole(job: TrainingJob, type: string, index: number): boolean;
  /** adds the kind's variables (and init containers) to the replica's Pod; throws naming the field */
  inject(job: TrainingJob, type: string, index: number, pod: Pod): void;
  succeeded(job: TrainingJob, views: ReplicaView[]): boolean;
  /** see TrainingKind.unretriedFailure; absent: the generic rule (the job fails) */
  unretriedFailure?(job: TrainingJob, type: string, restarting: boolean): UnretriedFailureVerdict;
}

export function frameworkKind(def: FrameworkDef): TrainingKind {
  const { info } = def;
  return {
    kind: info.kind,
    apiVersion: `${info.group}/${info.version}`,
    replicaSpecsField: info.replicaSpecsField,
    defaultContainer: info.defaultContainer ?? '',
    controllerName: info.controllerName,
    render(job: TrainingJob): Rendered {
      const out: Rendered = { replicas: [], objects: [] };
      for (const [type, rs] of replicaSpecs(job, info)) {
        const rp = replicaRestartPolicy(info, type, rs);
        for (let index = 0; index < replicaCount(info, type, rs); index++) {
          const name = replicaName(job, type, index);
          const selector = replicaLabels(info, job, type, index);
          const labels = def.isMasterRole(job, type, index) ? { ...selector, [TrainingLabels.jobRole]: 'master' } : selector;
          const pod = replicaPod(job, rs, name, labels, rp);
          def.inject(job, type, index, pod);
          const replica: RenderedReplica = { type, index, pod, restartPolicy: rp };
          out.replicas.push(replica);
          out.objects.push(replicaService(job, info, rs, name, selector));
        }
      }
      return out;
    },
    succeeded: def.succeeded,
    ...(def.unretriedFailure ? { unretriedFailure: def.unretriedFailure } : {}),
  };
}

export function viewOf(views: ReplicaView[], type: string): ReplicaView | undefined {
  return views.find((v) => v.type === type);
}

/** every replica of the type succeeded (a type with no replicas never counts as done) */
export function allSucceeded(v: ReplicaView | undefined): boolean {
  return v !== undefined && v.replicas > 0 && v.succeeded >= v.replicas;
}
