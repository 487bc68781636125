// Every workload the platform runs, in one list: adding a workload is adding it here.
import { coreKinds } from '../api/core.js';
import { kueueKinds } from '../api/kueue.js';
import type { KObject, StoredObject } from '../api/meta.js';
import { networkingKinds } from '../api/networking.js';
import { rbacKinds } from '../api/rbac.js';
import { KindRegistry } from '../api/registry.js';
import { jobsWorkload } from '../workloads/jobs/index.js';
import { notebooksWorkload } from '../workloads/notebooks/index.js';
import { pipelinesWorkload } from '../workloads/pipelines/index.js';
import { profilesWorkload } from '../workloads/profiles/index.js';
import { queuesWorkload } from '../workloads/queues/index.js';
import { registryWorkload } from '../workloads/registry/index.js';
import type { ServingDataPlane } from '../workloads/serving/data-plane.js';
import { servingWorkload } from '../workloads/serving/index.js';
import { trainingWorkload } from '../workloads/training/index.js';
import { tuningWorkload } from '../workloads/tuning/index.js';
import type { PlatformSettings, Workload } from '../workloads/workload.js';

/** What the server hands the workloads that need more than the control plane. */
export interface WorkloadDeps {
  dataPlane: ServingDataPlane;
}

export function workloads(deps: WorkloadDeps): Workload[] {
  return [jobsWorkload, pipelinesWorkload, trainingWorkload, tuningWorkload, servingWorkload(deps.dataPlane), profilesWorkload, notebooksWorkload, queuesWorkload, registryWorkload];
}

/** The kinds the server serves: the core ones, RBAC's, NetworkPolicy, Kueue's and every workload's. */
export function registryOf(list: Workload[]): KindRegistry {
  return new KindRegistry().register(...coreKinds, ...rbacKinds, ...networkingKinds, ...kueueKinds, ...list.flatMap((w) => w.kinds));
}

/** `?dryRun=All&render=true`: what storing `obj` would create, by the workload that owns its kind. */
export function dryRenderer(list: Workload[], settings?: PlatformSettings): (obj: StoredObject) => KObject[] {
  return (obj) => {
    for (const w of list) {
      const items = w.dryRender?.(obj, settings);
      if (items) return items;
    }
    return [];
  };
}
