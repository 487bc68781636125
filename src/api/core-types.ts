// core/v1 types: the subset of PodSpec and friends that Skiff runs.
import type { Condition } from './conditions.js';
import type { KObject } from './meta.js';

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string; apiVersion?: string };
    resourceFieldRef?: { resource: string; containerName?: string; divisor?: string };
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
  };
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name: string; optional?: boolean };
  secretRef?: { name: string; optional?: boolean };
}

export interface ResourceRequirements {
  requests?: Record<string, string | number>;
  limits?: Record<string, string | number>;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
  hostPort?: number;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  subPath?: string;
  readOnly?: boolean;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  workingDir?: string;
  resources?: ResourceRequirements;
  ports?: ContainerPort[];
  volumeMounts?: VolumeMount[];
  restartPolicy?: string;
  imagePullPolicy?: string;
  /** `File` (Kubernetes' default) or `FallbackToLogsOnError`: a failed container's log tail is its termination message */
  terminationMessagePolicy?: string;
}

export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

export interface Volume {
  name: string;
  emptyDir?: { medium?: string; sizeLimit?: string };
  hostPath?: { path: string; type?: string };
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  configMap?: { name: string; items?: KeyToPath[]; optional?: boolean; defaultMode?: number };
  secret?: { secretName: string; items?: KeyToPath[]; optional?: boolean; defaultMode?: number };
  downwardAPI?: { items?: DownwardAPIVolumeFile[]; defaultMode?: number };
  projected?: { sources?: VolumeProjection[]; defaultMode?: number };
}

export interface DownwardAPIVolumeFile {
  path: string;
  fieldRef?: { fieldPath: string; apiVersion?: string };
  resourceFieldRef?: { resource: string; containerName?: string; divisor?: string };
  mode?: number;
}

/** one source of a projected volume (what the ServiceAccount admission plugin adds as kube-api-access-*) */
export interface VolumeProjection {
  secret?: { name: string; items?: KeyToPath[]; optional?: boolean };
  configMap?: { name: string; items?: KeyToPath[]; optional?: boolean };
  downwardAPI?: { items?: DownwardAPIVolumeFile[] };
  serviceAccountToken?: { path: string; audience?: string; expirationSeconds?: number };
  clusterTrustBundle?: unknown;
  podCertificate?: unknown;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  terminationGracePeriodSeconds?: number;
  activeDeadlineSeconds?: number;
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: unknown[];
  hostname?: string;
  subdomain?: string;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  schedulerName?: string;
  priorityClassName?: string;
  priority?: number;
  securityContext?: PodSecurityContext;
}

/** the part of core/v1 PodSecurityContext the local substrate honours (with tenancy's isolation) */
export interface PodSecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  fsGroup?: number;
  supplementalGroups?: number[];
}

export interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt: string };
  terminated?: { exitCode: number; signal?: number; reason?: string; message?: string; startedAt?: string; finishedAt?: string; containerID?: string };
}

export interface ContainerStatus {
  name: string;
  image?: string;
  imageID?: string;
  containerID?: string;
  ready: boolean;
  started?: boolean;
  restartCount: number;
  state: ContainerState;
  lastState: ContainerState;
}

export interface PodStatus {
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
  conditions?: Condition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
}

export interface Pod extends KObject {
  spec: PodSpec;
  status?: PodStatus;
}

export interface PodTemplateSpec {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; name?: string };
  spec: PodSpec;
}
