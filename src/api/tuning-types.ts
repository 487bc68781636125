// Katib's kinds (kubeflow.org/v1beta1 Experiment, Suggestion, Trial) as TypeScript types, field for
// field as katib's pkg/apis/controller/{common,experiments,suggestions,trials}/v1beta1 declare them.
// Katib's numbers in a spec are strings (feasibleSpace.min, setting values, metric values); they stay
// strings here, as they are on the wire.
import type { Condition } from './conditions.js';
import type { KObject, ObjectMeta } from './meta.js';

export const TuningGroup = 'kubeflow.org';
export const TuningVersion = 'v1beta1';
export const TuningApiVersion = `${TuningGroup}/${TuningVersion}`;

export type ParameterType = 'int' | 'double' | 'categorical' | 'discrete' | 'unknown';
export type Distribution = 'uniform' | 'logUniform' | 'normal' | 'logNormal';

export interface FeasibleSpace {
  min?: string;
  max?: string;
  step?: string;
  list?: string[];
  distribution?: Distribution;
}

export interface ParameterSpec {
  name: string;
  parameterType: ParameterType;
  feasibleSpace: FeasibleSpace;
}

export type ObjectiveType = 'minimize' | 'maximize';
export type MetricStrategyType = 'min' | 'max' | 'latest';

export interface ObjectiveSpec {
  type?: ObjectiveType;
  goal?: number;
  objectiveMetricName?: string;
  additionalMetricNames?: string[];
  metricStrategies?: { name: string; value: MetricStrategyType }[];
  /**
   * Skiff's multi-objective extension (Katib has no such field; Katib ignores it, Skiff reads it):
   * more metrics optimised with the objective, each with its own direction. The objective and these
   * make the Pareto front in `status.paretoFront`. Each name must also be in additionalMetricNames.
   */
  additionalObjectives?: { name: string; type: ObjectiveType }[];
}

export interface Setting {
  name: string;
  value: string;
}

export interface AlgorithmSpec {
  algorithmName?: string;
  algorithmSettings?: Setting[];
}

export type ComparisonType = 'equal' | 'less' | 'greater';

export interface EarlyStoppingRule {
  name: string;
  value: string;
  comparison: ComparisonType;
  startStep?: number;
}

export interface ParameterAssignment {
  name: string;
  value: string;
}

export interface Metric {
  name: string;
  min?: string;
  max?: string;
  latest?: string;
}

export interface Observation {
  metrics?: Metric[];
}

export type CollectorKind = 'StdOut' | 'File' | 'TensorFlowEvent' | 'PrometheusMetric' | 'Custom' | 'Push' | 'None';

export interface MetricsCollectorSpec {
  source?: {
    httpGet?: { path?: string; port?: number | string; host?: string; scheme?: string };
    fileSystemPath?: { path?: string; kind?: 'File' | 'Directory'; format?: 'TEXT' | 'JSON' | '' };
    filter?: { metricsFormat?: string[] };
  };
  collector?: { kind?: CollectorKind; customCollector?: Record<string, unknown> };
}

export interface TrialParameterSpec {
  name: string;
  description?: string;
  reference: string;
}

export interface TrialTemplate {
  retain?: boolean;
  trialSpec?: KObject;
  configMap?: { configMapName?: string; configMapNamespace?: string; templatePath?: string };
  trialParameters?: TrialParameterSpec[];
  primaryPodLabels?: Record<string, string>;
  primaryContainerName?: string;
  successCondition?: string;
  failureCondition?: string;
}

export type ResumePolicy = 'Never' | 'LongRunning' | 'FromVolume';

export interface ExperimentSpec {
  parameters?: ParameterSpec[];
  objective?: ObjectiveSpec;
  algorithm?: AlgorithmSpec;
  earlyStopping?: AlgorithmSpec;
  trialTemplate?: TrialTemplate;
  parallelTrialCount?: number;
  maxTrialCount?: number;
  maxFailedTrialCount?: number;
  metricsCollectorSpec?: MetricsCollectorSpec;
  nasConfig?: Record<string, unknown>;
  resumePolicy?: ResumePolicy;
}

/** Experiment condition types, in Katib's words */
export type ExperimentConditionType = 'Created' | 'Running' | 'Restarting' | 'Succeeded' | 'Failed';

export interface OptimalTrial {
  bestTrialName?: string;
  parameterAssignments?: ParameterAssignment[];
  observation?: Observation;
}

export interface ExperimentStatus {
  startTime?: string;
  completionTime?: string;
  lastReconcileTime?: string;
  conditions?: Condition[];
  currentOptimalTrial?: OptimalTrial;
  runningTrialList?: string[];
  pendingTrialList?: string[];
  failedTrialList?: string[];
  succeededTrialList?: string[];
  killedTrialList?: string[];
  earlyStoppedTrialList?: string[];
  metricsUnavailableTrialList?: string[];
  trials?: number;
  trialsSucceeded?: number;
  trialsFailed?: number;
  trialsKilled?: number;
  trialsPending?: number;
  trialsRunning?: number;
  trialsEarlyStopped?: number;
  trialMetricsUnavailable?: number;
  /** Skiff's multi-objective extension: the trials no other trial beats on every objective */
  paretoFront?: OptimalTrial[];
}

export interface Experiment extends KObject {
  apiVersion: string;
  kind: 'Experiment';
  metadata: ObjectMeta;
  spec: ExperimentSpec;
  status?: ExperimentStatus;
}

export interface TrialAssignment {
  name?: string;
  parameterAssignments: ParameterAssignment[];
  earlyStoppingRules?: EarlyStoppingRule[];
  labels?: Record<string, string>;
}

export type SuggestionConditionType = 'Created' | 'DeploymentReady' | 'Running' | 'Restarting' | 'Succeeded' | 'Failed';

export interface SuggestionSpec {
  algorithm?: AlgorithmSpec;
  earlyStopping?: AlgorithmSpec;
  /** how many assignments the Experiment asked for, in all */
  requests?: number;
  resumePolicy?: ResumePolicy;
}

export interface SuggestionStatus {
  /** the algorithm's state between calls (Hyperband's bracket, PBT's population), as Katib keeps it */
  algorithmSettings?: Setting[];
  suggestionCount?: number;
  suggestions?: TrialAssignment[];
  startTime?: string;
  completionTime?: string;
  lastReconcileTime?: string;
  conditions?: Condition[];
}

export interface Suggestion extends KObject {
  apiVersion: string;
  kind: 'Suggestion';
  metadata: ObjectMeta;
  spec: SuggestionSpec;
  status?: SuggestionStatus;
}

export type TrialConditionType = 'Created' | 'Running' | 'Succeeded' | 'Killed' | 'Failed' | 'MetricsUnavailable' | 'EarlyStopped';

export interface TrialSpec {
  objective?: ObjectiveSpec;
  parameterAssignments?: ParameterAssignment[];
  earlyStoppingRules?: EarlyStoppingRule[];
  /** the rendered trial job (a batch Job, a training job, a pipeline Run…) */
  runSpec?: KObject;
  retainRun?: boolean;
  metricsCollector?: MetricsCollectorSpec;
  primaryPodLabels?: Record<string, string>;
  primaryContainerName?: string;
  successCondition?: string;
  failureCondition?: string;
  labels?: Record<string, string>;
}

export interface TrialStatus {
  startTime?: string;
  completionTime?: string;
  lastReconcileTime?: string;
  conditions?: Condition[];
  observation?: Observation;
}

export interface Trial extends KObject {
  apiVersion: string;
  kind: 'Trial';
  metadata: ObjectMeta;
  spec: TrialSpec;
  status?: TrialStatus;
}

/** The labels Katib puts on what an Experiment makes */
export const TuningLabels = {
  experiment: 'katib.kubeflow.org/experiment',
  trial: 'katib.kubeflow.org/trial',
  suggestion: 'katib.kubeflow.org/suggestion',
} as const;

/** Katib's value for a metric that never appeared */
export const UnavailableMetricValue = 'unavailable';

/** one reported value of one metric, as Katib's DB manager keeps it (`time_stamp` RFC 3339; value a string) */
export interface MetricLog {
  timeStamp: string;
  name: string;
  value: string;
}

/**
 * Skiff's store for what Katib keeps in its database (katib-db-manager): every metric value a trial
 * reported, in report order. One per Trial, named as the Trial and owned by it, kind ObservationLog in
 * group tuning.skiff.dev/v1. Pull collectors (StdOut, File, TensorFlowEvent) write it from what the
 * trial's primary container printed or wrote; Push writes it as the trial reports
 * (report_metrics → the DBManager gRPC API). The Trial's status.observation is its summary.
 */
export interface ObservationLog extends KObject {
  apiVersion: 'tuning.skiff.dev/v1';
  kind: 'ObservationLog';
  metadata: ObjectMeta;
  spec: { trialName: string; metricLogs: MetricLog[] };
}

export const ObservationLogGroup = 'tuning.skiff.dev';
