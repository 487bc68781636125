// What a workload adds to the platform, declared in one place: the kinds it serves, the controllers
// it runs, and what `?dryRun=All&render=true` shows for its objects. src/server/workloads.ts lists
// every workload; wiring a new one touches that list, not the server's start-up or its routes.
import type { KObject, StoredObject } from '../api/meta.js';
import type { KindDef } from '../api/registry.js';
import type { S3Stores } from '../artifacts/s3.js';
import type { ArtifactStore } from '../artifacts/store.js';
import type { Manager } from '../control/controller.js';
import type { EventRecorder } from '../control/events.js';
import type { Client } from '../store/client.js';
import type { PodFileSource, PodLogSource } from '../substrate/substrate.js';

/** Notebook culling, with upstream notebook-controller's names (the config's `notebooks`). */
export interface NotebookSettings {
  enableCulling: boolean;
  cullIdleTimeMinutes: number;
  idlenessCheckPeriodMinutes: number;
}

/** Kueue's Configuration fields the queue controllers read (the config's `queues:` section). */
export interface QueueSettings {
  /** Jobs without the queue label go to their namespace's LocalQueue "default" */
  manageJobsWithoutQueueName?: boolean;
  /** admission ordered and preemption decided by weighted share */
  fairSharing?: { enable?: boolean; preemptionStrategies?: ('LessThanOrEqualToFinalShare' | 'LessThanInitialShare')[] };
  /** Kueue's waitForPodsReady: present turns it on (durations as Go writes them, "5m") */
  waitForPodsReady?: {
    timeout?: string;
    recoveryTimeout?: string;
    requeuingStrategy?: { timestamp?: 'Eviction' | 'Creation'; backoffLimitCount?: number; backoffBaseSeconds?: number; backoffMaxSeconds?: number };
  };
}

/** The platform's settings a workload may read (the server's config satisfies it). */
export interface PlatformSettings {
  dataDir: string;
  nodeName: string;
  /** the local directory of pipeline artifacts and task outputs */
  pipelineRoot: string;
  /** the config's `artifacts`: `pipelineRoot` is the root of runs that name none (a directory or an S3 URI);
   *  `s3` the S3 server's endpoint and region; `launcherImage` puts KFP's launcher inside task Pods on a cluster */
  artifacts?: { pipelineRoot?: string; s3?: { endpoint?: string; region?: string }; launcherImage?: string };
  /** whether Pods are isolated (tenancy): each namespace's runs then write under `<pipelineRoot>/<namespace>` */
  podIsolation?: boolean;
  jobPodBackoffMs: number;
  jobPodBackoffMaxMs: number;
  /** a crash loop's back-off (10 s doubling to 5 min unless configured): also how often a model that cannot be read is looked for again */
  crashLoopBackoffMs?: number;
  crashLoopBackoffMaxMs?: number;
  /** absent: culling off */
  notebooks?: NotebookSettings;
  queues?: QueueSettings;
  /** requests need credentials (a token file or OIDC): users share the platform and must be kept apart */
  tenancy?: boolean;
  /**
   * the store is a Kubernetes cluster's API server, whose own controller-manager runs Kubernetes'
   * kinds (batch/v1 Jobs): Skiff's controllers for them stand aside, or two would make each Job's Pods
   */
  cluster?: boolean;
}

/** Addresses known once the server listens: read them when needed, not at setup. */
export interface Endpoints {
  /** the API server's own URL */
  server(): string;
  /** `host:port` at which Pods reach the API server (and the inference gateway on it) */
  pods(): string;
}

export interface WorkloadContext {
  client: Client;
  manager: Manager;
  /** an event recorder reporting as `component` (Kubernetes' `source.component`) */
  recorder(component: string): EventRecorder;
  settings: PlatformSettings;
  /** pipeline artifacts, task outputs and models: the only way to their bytes */
  artifacts: ArtifactStore;
  /** the S3 server of s3:// and minio:// URIs (the config's artifacts.s3); absent when none is configured */
  s3?: S3Stores;
  endpoints: Endpoints;
  /** Pods' logs, from the substrate that runs them */
  podLogs: PodLogSource;
  /** files Pods wrote (on their volumes), from the substrate that runs them */
  podFiles: PodFileSource;
  log(msg: string): void;
}

/** What a workload leaves running once set up. */
export interface StartedWorkload {
  /** after the controllers have stopped: releases what setup() made beyond them */
  stop?(): Promise<void> | void;
}

export interface Workload {
  name: string;
  /** the kinds it serves; their schemas, defaults and validation live in src/api/ */
  kinds: KindDef[];
  /** adds its controllers to the manager and makes what they need; runs before the manager starts */
  setup(ctx: WorkloadContext): Promise<StartedWorkload | void>;
  /**
   * For a server-side dry run with `render=true`: what storing `obj` would create, without creating
   * it; undefined when `obj` is not one of this workload's kinds or creates nothing it can show.
   */
  dryRender?(obj: StoredObject, settings?: PlatformSettings): KObject[] | undefined;
}
