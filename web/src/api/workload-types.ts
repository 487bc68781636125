// The workload kinds' shapes (Pods, Jobs, training jobs, usage history), from the server's own definitions.
export type { Pod, PodSpec, PodStatus, Container, ContainerStatus, ContainerState, Volume, ResourceRequirements } from '../../../src/api/core-types';
export type { Job, JobSpec, JobStatus, PodFailurePolicyRule } from '../../../src/api/batch';
export type { TrainingJob, TrainingJobStatus, ReplicaStatus, ReplicaSpec, RunPolicy, SchedulingPolicy } from '../../../src/api/training-types';
export type { UsageSample, ContainerSample, PodUsageHistory, PodUsageHistoryList, UsageWatchLine, NodeGpuUsage, GpuCardUsage } from '../../../src/api/usage';
export type { Notebook, NotebookStatus } from '../../../src/api/notebooks';
