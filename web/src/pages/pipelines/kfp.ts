// The KFP REST API calls the pipeline pages make, as kfp.Client makes them, so what the dashboard
// creates is what kfp.Client lists.
import type { ApiClient } from '../../api/client';
import type { KindInfo } from '../../api/kinds';
import { KfpAnnotations, KfpLabels } from '../../api/types';
import type { PipelineSpec } from '../../api/types';

export interface UploadResult {
  pipeline_id?: string;
  pipeline_version_id?: string;
}

export function uploadPipeline(api: ApiClient, file: File, name: string, namespace: string | undefined): Promise<UploadResult> {
  const form = new FormData();
  form.append('uploadfile', file, file.name);
  const q = new URLSearchParams({ name });
  if (namespace) q.set('namespace', namespace);
  return api.json(`/apis/v2beta1/pipelines/upload?${q}`, { method: 'POST', body: form });
}

export function uploadVersion(api: ApiClient, file: File, pipelineId: string, name: string): Promise<UploadResult> {
  const form = new FormData();
  form.append('uploadfile', file, file.name);
  const q = new URLSearchParams({ pipelineid: pipelineId, name });
  return api.json(`/apis/v2beta1/pipelines/upload_version?${q}`, { method: 'POST', body: form });
}

export interface RunRequest {
  displayName: string;
  pipelineId: string;
  versionId: string;
  parameters: Record<string, unknown>;
  experimentId?: string;
  enableCaching?: boolean;
}

export function createRun(api: ApiClient, r: RunRequest): Promise<{ run_id: string }> {
  return api.json('/apis/v2beta1/runs', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      display_name: r.displayName,
      pipeline_version_reference: { pipeline_id: r.pipelineId, pipeline_version_id: r.versionId },
      runtime_config: { parameters: r.parameters },
      ...(r.experimentId ? { experiment_id: r.experimentId } : {}),
    }),
  });
}

/** the namespace's Default experiment: the KFP API makes it on first listing, as KFP does */
export async function defaultExperimentId(api: ApiClient, namespace: string): Promise<string> {
  const list = await api.json<{ experiments?: { experiment_id: string; display_name: string }[] }>(`/apis/v2beta1/experiments?namespace=${encodeURIComponent(namespace)}&page_size=1000`);
  const x = list.experiments?.find((e) => e.display_name === 'Default');
  if (!x) throw new Error(`namespace ${namespace} has no Default experiment`);
  return x.experiment_id;
}

/**
 * The Run that the KFP API would make (a UUID for a name, the same labels and annotations, so
 * kfp.Client lists it with its experiment and version), plus what the KFP API has no field for:
 * spec.enableCaching=false, caching off for every task of the run.
 */
export function runObject(r: RunRequest & { id: string; namespace: string; experimentId: string; spec: PipelineSpec; platformSpec?: Record<string, unknown> }): Record<string, unknown> {
  return {
    apiVersion: 'pipelines.kubeflow.org/v2beta1',
    kind: 'Run',
    metadata: {
      name: r.id,
      namespace: r.namespace,
      labels: { [KfpLabels.experimentId]: r.experimentId, [KfpLabels.storageState]: 'AVAILABLE', [KfpLabels.pipelineId]: r.pipelineId, [KfpLabels.pipelineVersionId]: r.versionId },
      annotations: { [KfpAnnotations.displayName]: r.displayName },
    },
    spec: { pipelineSpec: r.spec, ...(r.platformSpec ? { platformSpec: r.platformSpec } : {}), parameters: r.parameters, ...(r.enableCaching === false ? { enableCaching: false } : {}) },
  };
}

/** a run with caching off: a Run object through the Kubernetes API (see runObject) */
export async function createUncachedRun(api: ApiClient, runs: KindInfo, namespace: string, r: RunRequest & { spec: PipelineSpec; platformSpec?: Record<string, unknown> }): Promise<{ run_id: string }> {
  const experimentId = r.experimentId ?? (await defaultExperimentId(api, namespace));
  const id = crypto.randomUUID();
  await api.create(runs, namespace, runObject({ ...r, id, namespace, experimentId, enableCaching: false }));
  return { run_id: id };
}

export interface Trigger {
  cron?: string;
  intervalSecond?: number;
}

export function createRecurringRun(api: ApiClient, r: RunRequest & { trigger: Trigger; maxConcurrency: number; enabled?: boolean; namespace?: string }): Promise<{ recurring_run_id: string }> {
  return api.json('/apis/v2beta1/recurringruns', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      display_name: r.displayName,
      pipeline_version_reference: { pipeline_id: r.pipelineId, pipeline_version_id: r.versionId },
      runtime_config: { parameters: r.parameters },
      trigger: r.trigger.cron ? { cron_schedule: { cron: r.trigger.cron } } : { periodic_schedule: { interval_second: String(r.trigger.intervalSecond ?? 3600) } },
      max_concurrency: String(r.maxConcurrency),
      mode: r.enabled === false ? 'DISABLE' : 'ENABLE',
      // without an experiment the server picks the Default one of this namespace, not of `default`
      ...(r.namespace ? { namespace: r.namespace } : {}),
      ...(r.experimentId ? { experiment_id: r.experimentId } : {}),
    }),
  });
}
