/** Loose shapes of the Kubernetes objects the CLI prints. Everything is optional: data comes off the wire. */

export interface OwnerReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  continue?: string;
  [key: string]: unknown;
}

export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [key: string]: unknown;
}

export interface KList {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items?: KObject[];
}

export interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastProbeTime?: string;
  lastHeartbeatTime?: string;
}

export interface ContainerStateDetail {
  reason?: string;
  message?: string;
  exitCode?: number;
  signal?: number;
  startedAt?: string;
  finishedAt?: string;
}

export interface ContainerState {
  waiting?: ContainerStateDetail;
  running?: ContainerStateDetail;
  terminated?: ContainerStateDetail;
}

export interface ContainerStatus {
  name?: string;
  ready?: boolean;
  started?: boolean;
  restartCount?: number;
  image?: string;
  imageID?: string;
  containerID?: string;
  state?: ContainerState;
  lastState?: ContainerState;
}

export interface Container {
  name?: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: { name?: string; value?: string; valueFrom?: unknown }[];
  ports?: { containerPort?: number; protocol?: string; name?: string }[];
  resources?: { limits?: Record<string, string | number>; requests?: Record<string, string | number> };
  volumeMounts?: { name?: string; mountPath?: string; readOnly?: boolean }[];
}

export interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  nodeName?: string;
  restartPolicy?: string;
  volumes?: { name?: string; [key: string]: unknown }[];
  [key: string]: unknown;
}

export interface Pod extends KObject {
  spec?: PodSpec;
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    podIP?: string;
    hostIP?: string;
    startTime?: string;
    conditions?: Condition[];
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
  };
}

export interface Job extends KObject {
  spec?: {
    parallelism?: number;
    completions?: number | null;
    completionMode?: string;
    backoffLimit?: number;
    activeDeadlineSeconds?: number;
    ttlSecondsAfterFinished?: number;
    suspend?: boolean;
    selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
    template?: { metadata?: ObjectMeta; spec?: PodSpec };
  };
  status?: {
    active?: number;
    ready?: number;
    succeeded?: number;
    failed?: number;
    terminating?: number;
    startTime?: string;
    completionTime?: string;
    conditions?: Condition[];
  };
}

export interface KEvent extends KObject {
  involvedObject?: { kind?: string; name?: string; namespace?: string; uid?: string; apiVersion?: string; fieldPath?: string };
  reason?: string;
  message?: string;
  type?: string;
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string;
  source?: { component?: string; host?: string };
  reportingComponent?: string;
  reportingController?: string;
  series?: { count?: number; lastObservedTime?: string };
}

export interface WatchEvent {
  type: string;
  object: KObject;
}
