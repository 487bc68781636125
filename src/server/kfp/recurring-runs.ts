// Recurring runs: a pipeline started on a cron or periodic trigger (the RecurringRun controller
// starts the runs), enabled or disabled, deleted with a propagation policy for the runs it made.
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Kinds } from '../../api/index.js';
import type { RecurringRunObj, RecurringRunSpec } from '../../api/kfp-objects.js';
import { KfpAnnotations, KfpLabels } from '../../api/kfp-objects.js';
import { now } from '../../api/meta.js';
import { badRequest } from './errors.js';
import { experimentFor, experimentNamespace } from './experiments.js';
import type { Shape } from './list.js';
import type { KfpCall, KfpContext } from './request.js';
import { fields, int64, jsonBody, listBody, q, str } from './request.js';
import type { Route } from './router.js';
import { pipelineSource, runtimeConfig } from './runs.js';
import { recurringRunShape } from './shapes.js';

const RECURRING_FIELDS = ['recurring_run_id', 'display_name', 'description', 'pipeline_version_id', 'pipeline_spec', 'pipeline_version_reference', 'runtime_config', 'service_account', 'max_concurrency', 'trigger', 'mode', 'created_at', 'updated_at', 'status', 'error', 'no_catchup', 'namespace', 'experiment_id'];
const LIST_KEYS = ['recurring_run_id', 'display_name', 'description', 'created_at', 'updated_at', 'mode', 'status', 'experiment_id', 'namespace', 'no_catchup'] as const;
const WHERE = 'recurring_run.trigger';

/** a schedule's optional start and end times */
function timeWindow(w: Record<string, any>, where: string): { startTime?: string; endTime?: string } {
  const startTime = str(w.start_time, `${where}.start_time`);
  const endTime = str(w.end_time, `${where}.end_time`);
  return { ...(startTime ? { startTime } : {}), ...(endTime ? { endTime } : {}) };
}

function triggerOf(raw: unknown): RecurringRunSpec['trigger'] {
  const trig = fields(raw, WHERE, ['cron_schedule', 'periodic_schedule']);
  const trigger: RecurringRunSpec['trigger'] = {};
  if (trig.cron_schedule !== undefined) {
    const where = `${WHERE}.cron_schedule`;
    const w = fields(trig.cron_schedule, where, ['start_time', 'end_time', 'cron']);
    trigger.cronSchedule = { cron: str(w.cron, `${where}.cron`) ?? '', ...timeWindow(w, where) };
  }
  if (trig.periodic_schedule !== undefined) {
    const where = `${WHERE}.periodic_schedule`;
    const w = fields(trig.periodic_schedule, where, ['start_time', 'end_time', 'interval_second']);
    trigger.periodicSchedule = { intervalSecond: int64(w.interval_second, `${where}.interval_second`) ?? 0, ...timeWindow(w, where) };
  }
  return trigger;
}

async function createRecurringRun({ ctx: k, req }: KfpCall): Promise<Shape> {
  const body = fields(await jsonBody(req), 'recurring_run', RECURRING_FIELDS);
  const displayName = str(body.display_name, 'recurring_run.display_name');
  if (!displayName) throw badRequest('recurring_run.display_name: required');
  const namespace = str(body.namespace, 'recurring_run.namespace');
  const experimentId = str(body.experiment_id, 'recurring_run.experiment_id');
  // before the Default experiment is made for it: the namespace must be the user's to write in
  if (!experimentId) k.authorize(req, { resource: 'jobs', verb: 'create', namespace });
  const experiment = await experimentFor(k, experimentId, namespace);
  k.authorize(req, { resource: 'jobs', verb: 'create', namespace: experiment.metadata.namespace });
  const src = await pipelineSource(k, body, 'recurring_run');
  const rc = runtimeConfig(body.runtime_config, 'recurring_run');
  const trigger = triggerOf(body.trigger);
  const mode = str(body.mode, 'recurring_run.mode');
  if (mode !== undefined && !['ENABLE', 'DISABLE', 'MODE_UNSPECIFIED'].includes(mode)) throw badRequest(`recurring_run.mode: ${JSON.stringify(mode)} is not one of ENABLE, DISABLE`);
  if (body.no_catchup !== undefined && typeof body.no_catchup !== 'boolean') throw badRequest('recurring_run.no_catchup: expected a boolean');
  const spec: RecurringRunSpec = {
    displayName,
    description: str(body.description, 'recurring_run.description'),
    pipelineSpec: src.spec,
    ...(src.platform ? { platformSpec: src.platform as unknown as Record<string, unknown> } : {}),
    ...(src.versionId ? { pipelineVersionReference: { pipelineId: src.pipelineId, pipelineVersionId: src.versionId } } : {}),
    runtimeConfig: rc,
    trigger,
    maxConcurrency: int64(body.max_concurrency, 'recurring_run.max_concurrency') ?? 1,
    noCatchup: body.no_catchup ?? false,
    mode: mode === 'DISABLE' ? 'DISABLE' : 'ENABLE',
    experimentId: experiment.metadata.name,
    serviceAccount: str(body.service_account, 'recurring_run.service_account'),
  };
  return recurringRunShape(await k.client.create<RecurringRunObj>({
    apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'RecurringRun',
    metadata: { name: randomUUID(), namespace: experiment.metadata.namespace, labels: { [KfpLabels.experimentId]: experiment.metadata.name }, annotations: { [KfpAnnotations.updatedAt]: now() } },
    spec,
  }));
}

async function listRecurringRuns({ ctx: k, req, url }: KfpCall): Promise<Shape> {
  const x = q(url, 'experiment_id');
  const namespace = x ? await experimentNamespace(k, x, q(url, 'namespace')) : q(url, 'namespace');
  k.authorize(req, { resource: 'jobs', verb: 'list', namespace });
  const items = (await k.all<RecurringRunObj>(Kinds.RecurringRun, namespace, x ? `${KfpLabels.experimentId}=${x}` : undefined)).map(recurringRunShape);
  // the proto field is `recurringRuns`, and kfp.Client reads it so
  return listBody('recurringRuns', k.page(items, url, LIST_KEYS, 'recurring_run_id'));
}

async function deleteRecurringRun({ ctx: k, req, url, params }: KfpCall): Promise<Shape> {
  const id = params.recurring_run_id as string;
  const policy = q(url, 'propagation_policy');
  const rr = k.authorized(req, 'jobs', 'delete', await k.get<RecurringRunObj>(Kinds.RecurringRun, id, 'recurring run'));
  const p = (policy ?? '').toUpperCase();
  if (p && !['DELETE_PROPAGATION_POLICY_UNSPECIFIED', 'FOREGROUND', 'BACKGROUND', 'ORPHAN'].includes(p)) throw badRequest(`propagation_policy: ${JSON.stringify(policy)} is not one of FOREGROUND, BACKGROUND, ORPHAN`);
  const propagationPolicy = p === 'ORPHAN' ? 'Orphan' : p === 'FOREGROUND' ? 'Foreground' : 'Background';
  await k.client.delete(Kinds.RecurringRun, { namespace: rr.metadata.namespace, name: id }, { propagationPolicy });
  return {};
}

async function setMode(k: KfpContext, req: IncomingMessage, id: string, mode: 'ENABLE' | 'DISABLE'): Promise<Shape> {
  await k.setRecurringRunMode(k.authorized(req, 'jobs', mode === 'ENABLE' ? 'enable' : 'disable', await k.get<RecurringRunObj>(Kinds.RecurringRun, id, 'recurring run')), mode);
  return {};
}

export const recurringRunRoutes: Route<KfpContext>[] = [
  { method: 'GET', pattern: '/recurringruns', handle: listRecurringRuns },
  { method: 'POST', pattern: '/recurringruns', handle: createRecurringRun },
  { method: 'GET', pattern: '/recurringruns/{recurring_run_id}', handle: async ({ ctx: k, req, params }) => recurringRunShape(k.authorized(req, 'jobs', 'get', await k.get<RecurringRunObj>(Kinds.RecurringRun, params.recurring_run_id as string, 'recurring run'))) },
  { method: 'DELETE', pattern: '/recurringruns/{recurring_run_id}', handle: deleteRecurringRun },
  { method: 'POST', pattern: '/recurringruns/{recurring_run_id}:enable', handle: ({ ctx, req, params }) => setMode(ctx, req, params.recurring_run_id as string, 'ENABLE') },
  { method: 'POST', pattern: '/recurringruns/{recurring_run_id}:disable', handle: ({ ctx, req, params }) => setMode(ctx, req, params.recurring_run_id as string, 'DISABLE') },
];
