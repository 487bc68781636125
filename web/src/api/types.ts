// The API's shapes, from the server's own definitions (src/api): the dashboard declares none of its own.
export type { KObject, ObjectMeta, OwnerReference } from '../../../src/api/meta';
export type { Condition } from '../../../src/api/conditions';
export type { Run, RunSpec, RunStatus, TaskStatus, RunState, RunArtifact, RunOutputs, RunTask } from '../../../src/api/pipelines';
export type { PipelineSpec, ComponentSpec, DagSpec, PipelineTaskSpec, IODefinitions, ParameterSpec, ArtifactSpec, ExecutorSpec } from '../../../src/api/kfp/ir';
export type { InferenceService, InferenceServiceSpec, InferenceServiceStatus, ComponentStatus, TrafficTarget, PredictorSpec, ServingRuntime, ClusterServingRuntime, ServingRuntimeSpec, ModelSpec } from '../../../src/api/serving';
export type { TrafficBucket, TrafficCell, TrafficHistoryJson, TrafficEvent } from '../../../src/api/serving-traffic';
export type { Revision, RevisionSpec, RevisionStatus } from '../../../src/api/serving-revision';
export type { PipelineObj, PipelineVersionObj, ExperimentObj, RecurringRunObj, RecurringRunSpec, RecurringRunTrigger } from '../../../src/api/kfp-objects';
// the labels and annotations the KFP API links runs to experiments, versions and recurring runs with
export { KfpLabels, KfpAnnotations } from '../../../src/api/kfp-objects';
export type { Experiment as TuningExperiment, Trial, Suggestion, ObservationLog, MetricLog, Metric, MetricStrategyType, ObjectiveType, ParameterSpec as TuningParameterSpec, ExperimentStatus as TuningExperimentStatus } from '../../../src/api/tuning-types';
export type { ClusterQueue, LocalQueue, Workload } from '../../../src/api/kueue-types';
