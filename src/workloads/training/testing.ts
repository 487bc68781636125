// Test builders for the training kinds: the smallest valid job of each kind, with options named after
// the upstream fields. Only tests import this file.
import type { RunPolicy } from '../../api/training-types.js';
import type { TrainingKindInfo } from '../../api/training.js';
import { JAXJobInfo, MPIJobV1Info, MPIJobV2Info, PaddleJobInfo, PyTorchJobInfo, TFJobInfo, XGBoostJobInfo } from '../../api/training.js';
import type { ReplicaRestartPolicy, ReplicaSpec, TrainingJob } from './types.js';

export interface ReplicaOptions {
  replicas?: number;
  restartPolicy?: ReplicaRestartPolicy;
  command?: string[];
  /** the container's cpu request */
  cpu?: string;
  image?: string;
}

export interface TrainingJobOptions {
  namespace?: string;
  /** replica type → its spec; the default is the kind's usual topology (see each builder) */
  replicas?: Record<string, ReplicaOptions>;
  runPolicy?: RunPolicy;
  /** more spec fields: elasticPolicy, slotsPerWorker, launcherCreationPolicy ... */
  spec?: Record<string, unknown>;
}

function replicaSpec(info: TrainingKindInfo, type: string, o: ReplicaOptions): ReplicaSpec {
  const container = {
    name: info.defaultContainer ?? 'main',
    image: o.image ?? 'python:3.11',
    command: o.command ?? ['python3', '-c', 'pass'],
    ...(info.portName && info.defaultPort ? { ports: [{ name: info.portName, containerPort: info.defaultPort }] } : {}),
    ...(o.cpu ? { resources: { requests: { cpu: o.cpu } } } : {}),
  };
  return { replicas: o.replicas ?? info.defaultReplicas(type), restartPolicy: o.restartPolicy ?? info.defaultRestartPolicy(type), template: { spec: { containers: [container] } } as ReplicaSpec['template'] };
}

function build(info: TrainingKindInfo, name: string, topology: Record<string, ReplicaOptions>, o: TrainingJobOptions): TrainingJob {
  const specs: Record<string, ReplicaSpec> = {};
  for (const [type, r] of Object.entries(o.replicas ?? topology)) specs[type] = replicaSpec(info, type, r);
  return {
    apiVersion: `${info.group}/${info.version}`, kind: info.kind,
    metadata: { name, namespace: o.namespace ?? 'default' },
    spec: { [info.replicaSpecsField]: specs, ...(o.runPolicy ? { runPolicy: o.runPolicy } : {}), ...o.spec },
  };
}

/** a Master and one Worker */
export const makePyTorchJob = (name: string, o: TrainingJobOptions = {}): TrainingJob => build(PyTorchJobInfo, name, { Master: {}, Worker: { replicas: 1 } }, o);
/** a Chief and one Worker */
export const makeTFJob = (name: string, o: TrainingJobOptions = {}): TrainingJob => build(TFJobInfo, name, { Chief: {}, Worker: { replicas: 1 } }, o);
/** a Master and one Worker */
export const makeXGBoostJob = (name: string, o: TrainingJobOptions = {}): TrainingJob => build(XGBoostJobInfo, name, { Master: {}, Worker: { replicas: 1 } }, o);
/** a Master and one Worker */
export const makePaddleJob = (name: string, o: TrainingJobOptions = {}): TrainingJob => build(PaddleJobInfo, name, { Master: {}, Worker: { replicas: 1 } }, o);
/** two Workers */
export const makeJAXJob = (name: string, o: TrainingJobOptions = {}): TrainingJob => build(JAXJobInfo, name, { Worker: { replicas: 2 } }, o);
/** kubeflow.org/v1 MPIJob: a Launcher and one Worker */
export const makeMPIJob = (name: string, o: TrainingJobOptions = {}): TrainingJob => build(MPIJobV1Info, name, { Launcher: {}, Worker: { replicas: 1 } }, o);
/** the mpi-operator's kubeflow.org/v2beta1 MPIJob: a Launcher and one Worker */
export const makeMPIJobV2 = (name: string, o: TrainingJobOptions = {}): TrainingJob => build(MPIJobV2Info, name, { Launcher: {}, Worker: { replicas: 1 } }, o);
