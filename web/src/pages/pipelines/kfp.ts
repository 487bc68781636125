// The KFP REST API calls the pipeline pages make, as kfp.Client makes them, so what the dashboard
// creates is what kfp.Client lists.
import type { ApiClient } from '../../api/client';

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

export interface Trigger {
  cron?: string;
  intervalSecond?: number;
}

export function createRecurringRun(api: ApiClient, r: RunRequest & { trigger: Trigger; maxConcurrency: number }): Promise<{ recurring_run_id: string }> {
  return api.json('/apis/v2beta1/recurringruns', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      display_name: r.displayName,
      pipeline_version_reference: { pipeline_id: r.pipelineId, pipeline_version_id: r.versionId },
      runtime_config: { parameters: r.parameters },
      trigger: r.trigger.cron ? { cron_schedule: { cron: r.trigger.cron } } : { periodic_schedule: { interval_second: String(r.trigger.intervalSecond ?? 3600) } },
      max_concurrency: String(r.maxConcurrency),
      mode: 'ENABLE',
      ...(r.experimentId ? { experiment_id: r.experimentId } : {}),
    }),
  });
}
