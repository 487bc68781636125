// What the serving controllers need from the inference data plane (the gateway in src/server/
// inference/, which proxies requests to replicas as KServe's ingress, activator and queue-proxy do).
// The controllers push routes, replicas and in-process models down; they read back readiness and the
// load the autoscaler scales on. The controllers never see a request.
import type { RevisionSpec } from '../../api/serving-revision.js';

export type ComponentName = 'predictor' | 'transformer' | 'explainer';

export interface TrafficTarget {
  /** `<namespace>/<revision name>` */
  revision: string;
  percent: number;
}

/** An InferenceService's routing: which revisions of each component take its requests. */
export interface Route {
  namespace: string;
  name: string;
  components: Partial<Record<ComponentName, TrafficTarget[]>>;
  /** the newest revision of each component, where requests wait while nothing is ready yet */
  latest: Partial<Record<ComponentName, string>>;
  /** why the service cannot answer, when it cannot */
  failure?: string;
}

/** A revision's load as the data plane measured it (Knative's queue-proxy metrics). */
export interface LoadReading {
  /** requests in flight now: queued at the gateway or being served */
  readonly current: number;
  /** requests queued at the gateway, waiting for a replica or a batch */
  readonly queued: number;
  /** when the last request arrived (ms since the epoch; 0: never) */
  readonly lastArrival: number;
  /** average concurrency and requests per second over the last `ms` */
  window(ms: number): { concurrency: number; rps: number };
}

/** Why the data plane asks for a revision to be reconciled. */
export type DataPlaneEvent =
  /** a request waits for a revision that has no ready replica */
  | 'demand'
  /** a replica became ready or went away */
  | 'readiness';

export interface ServingDataPlane {
  /** the domain of `status.url` hosts */
  readonly domain: string;
  /** called when a revision (`<namespace>/<name>`) needs the controller's attention */
  onChange(fn: (revKey: string, why: DataPlaneEvent) => void): void;

  setRoute(route: Route): void;
  removeRoute(namespace: string, name: string): void;

  /** creates or updates the revision's entry; requests to it wait until a replica is ready */
  setRevision(revKey: string, spec: RevisionSpec): void;
  removeRevision(revKey: string): void;
  /** the model-server Pods of a revision: those with an address are probed and take requests once ready */
  setReplicas(revKey: string, pods: { name: string; ip?: string }[]): void;
  /** why the revision's model cannot load; waiting requests fail with it while nothing is ready */
  setFailure(revKey: string, message: string | undefined): void;
  /** loads (`want`) or unloads an in-process model; a load error is thrown for the revision's status */
  ensureInProcess(revKey: string, spec: RevisionSpec, want: boolean, modelPath: string | undefined): Promise<void>;

  readyReplicas(revKey: string): number;
  replicaReady(revKey: string, pod: string): boolean;
  /** undefined when the data plane does not know the revision */
  load(revKey: string): LoadReading | undefined;
}
