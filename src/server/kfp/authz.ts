// What a KFP API request asks, in the authorizer's terms, as KFP's API server in multi-user mode asks
// its SubjectAccessReviews (backend/src/apiserver/server/*_server.go canAccess*, resource_manager.go
// IsAuthorized): group pipelines.kubeflow.org, the resource (runs, experiments, pipelines, jobs for
// recurring runs; a pipeline version is checked as its pipeline), KFP's verb (get, list, create,
// delete, archive, unarchive, terminate, retry, enable, disable, update, readArtifact, reportMetrics)
// and the namespace: the object's own, a run's experiment's, or the request's `namespace`.
import type { ResourceAttributes } from '../auth/types.js';

export const kfpGroup = 'pipelines.kubeflow.org';

/**
 * Where Skiff keeps KFP's shared pipelines (KFP: a pipeline with no namespace). Reading them needs
 * no permission; writing them is authorized in this namespace, as KFP authorizes it in its own
 * (`kubeflow`): Skiff's shared pipelines are objects in `default`, so whoever may write there may.
 */
export const sharedPipelineNamespace = 'default';

export type KfpResource = 'runs' | 'experiments' | 'pipelines' | 'jobs';

export interface KfpAccess {
  resource: KfpResource;
  verb: string;
  /** the namespace the object lives in, or the one the request names; absent when it names none */
  namespace?: string | undefined;
  name?: string | undefined;
}

export type KfpCheck =
  /** ask the authorizer */
  | { attributes: ResourceAttributes }
  /** no permission needed (reading shared pipelines) */
  | { open: true }
  /** a request KFP refuses in multi-user mode whoever sends it (400): it names no namespace */
  | { invalid: string };

const singular: Record<KfpResource, string> = { runs: 'run', experiments: 'experiment', pipelines: 'pipeline', jobs: 'recurring run' };

/** the check a KFP request needs when tenancy is on */
export function kfpCheck(a: KfpAccess): KfpCheck {
  const read = a.verb === 'get' || a.verb === 'list';
  let namespace = a.namespace ?? '';
  if (a.resource === 'pipelines' && (namespace === '' || namespace === sharedPipelineNamespace)) {
    if (read) return { open: true };
    namespace = sharedPipelineNamespace;
  }
  if (namespace === '') return { invalid: `A ${singular[a.resource]} cannot have an empty namespace in multi-user mode: name one (the namespace query parameter, or an experiment in it)` };
  return { attributes: { verb: a.verb, apiGroup: kfpGroup, resource: a.resource, namespace, ...(a.name ? { name: a.name } : {}) } };
}
