// Experiments: groups of runs, one `Default` per namespace made on first use (as KFP does), with
// the time of their last run. Archiving one archives its runs and disables its recurring runs.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Kinds } from '../../api/index.js';
import type { ExperimentObj, RecurringRunObj } from '../../api/kfp-objects.js';
import { KfpLabels } from '../../api/kfp-objects.js';
import { isConflict } from '../../api/errors.js';
import type { StoredObject } from '../../api/meta.js';
import type { Run } from '../../api/pipelines.js';
import { badRequest, conflict, KfpError } from './errors.js';
import type { Shape } from './list.js';
import type { KfpCall, KfpContext } from './request.js';
import { DEFAULT_NS, fields, jsonBody, listBody, q, stableId, str } from './request.js';
import type { Route } from './router.js';
import { experimentShape } from './shapes.js';

const DEFAULT_EXPERIMENT = 'Default';
const EXPERIMENT_FIELDS = ['experiment_id', 'display_name', 'description', 'created_at', 'namespace', 'storage_state', 'last_run_created_at'];
const LIST_KEYS = ['experiment_id', 'display_name', 'description', 'created_at', 'namespace', 'storage_state', 'last_run_created_at'] as const;

/** the namespace's Default experiment, made on first use */
async function defaultExperiment(k: KfpContext, namespace: string): Promise<ExperimentObj & StoredObject> {
  const name = stableId(`skiff-default-experiment/${namespace}`);
  const found = await k.client.find<ExperimentObj>(Kinds.Experiment, { namespace, name });
  if (found) return found;
  try {
    return await k.client.create<ExperimentObj>({
      apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Experiment',
      metadata: { name, namespace, labels: { [KfpLabels.storageState]: 'AVAILABLE' } },
      spec: { displayName: DEFAULT_EXPERIMENT, description: 'All runs created without specifying an experiment are grouped here.' },
    });
  } catch (e) {
    if (isConflict(e)) return k.client.get<ExperimentObj>(Kinds.Experiment, { namespace, name });
    throw e;
  }
}

/** the experiment a run or recurring run names (a 400 when it does not exist), else the Default one */
export async function experimentFor(k: KfpContext, id: string | undefined, namespace?: string): Promise<ExperimentObj & StoredObject> {
  if (!id) return defaultExperiment(k, namespace ?? DEFAULT_NS);
  try {
    return await k.get<ExperimentObj>(Kinds.Experiment, id, 'experiment');
  } catch (e) {
    if (e instanceof KfpError && e.http === 404) throw badRequest(`experiment_id: experiment ${JSON.stringify(id)} not found`);
    throw e;
  }
}

/** the namespace of the experiment a list names, which must be the one the request names, if any */
export async function experimentNamespace(k: KfpContext, id: string, given: string | undefined): Promise<string | undefined> {
  const x = await k.get<ExperimentObj>(Kinds.Experiment, id, 'experiment');
  if (given && given !== x.metadata.namespace) throw badRequest(`experiment ${id} is in namespace ${JSON.stringify(x.metadata.namespace)}, not ${JSON.stringify(given)}`);
  return x.metadata.namespace;
}

async function createExperiment({ ctx: k, req }: KfpCall): Promise<Shape> {
  const body = fields(await jsonBody(req), 'experiment', EXPERIMENT_FIELDS);
  const displayName = str(body.display_name, 'experiment.display_name');
  if (!displayName) throw badRequest('experiment.display_name: required');
  k.authorize(req, { resource: 'experiments', verb: 'create', namespace: str(body.namespace, 'experiment.namespace') });
  const namespace = str(body.namespace, 'experiment.namespace') ?? DEFAULT_NS;
  if (displayName === DEFAULT_EXPERIMENT) return experimentShape(await defaultExperiment(k, namespace));
  const existing = await k.all<ExperimentObj>(Kinds.Experiment, namespace);
  if (existing.some((x) => x.spec.displayName === displayName)) throw conflict(`an experiment named ${JSON.stringify(displayName)} already exists in namespace ${JSON.stringify(namespace)}`);
  const x = await k.client.create<ExperimentObj>({
    apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Experiment',
    metadata: { name: randomUUID(), namespace, labels: { [KfpLabels.storageState]: 'AVAILABLE' } },
    spec: { displayName, description: str(body.description, 'experiment.description') },
  });
  return experimentShape(x);
}

/** experiment id → the creation time of its newest run */
async function lastRuns(k: KfpContext, namespace?: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const r of await k.all<Run>(Kinds.Run, namespace)) {
    const x = r.metadata.labels?.[KfpLabels.experimentId];
    if (x && (out.get(x) ?? '') < r.metadata.creationTimestamp) out.set(x, r.metadata.creationTimestamp);
  }
  return out;
}

async function getExperiment({ ctx: k, req, params }: KfpCall): Promise<Shape> {
  const x = k.authorized(req, 'experiments', 'get', await k.get<ExperimentObj>(Kinds.Experiment, params.experiment_id as string, 'experiment'));
  return experimentShape(x, (await lastRuns(k, x.metadata.namespace)).get(x.metadata.name));
}

async function listExperiments({ ctx: k, req, url }: KfpCall): Promise<Shape> {
  const namespace = q(url, 'namespace');
  k.authorize(req, { resource: 'experiments', verb: 'list', namespace });
  await defaultExperiment(k, namespace ?? DEFAULT_NS);
  const last = await lastRuns(k, namespace);
  const items = (await k.all<ExperimentObj>(Kinds.Experiment, namespace)).map((x) => experimentShape(x, last.get(x.metadata.name)));
  return listBody('experiments', k.page(items, url, LIST_KEYS, 'experiment_id'));
}

async function deleteExperiment({ ctx: k, req, params }: KfpCall): Promise<Shape> {
  const x = k.authorized(req, 'experiments', 'delete', await k.get<ExperimentObj>(Kinds.Experiment, params.experiment_id as string, 'experiment'));
  await k.client.delete(Kinds.Experiment, { namespace: x.metadata.namespace, name: x.metadata.name });
  return {};
}

/** archiving an experiment archives its runs and disables its recurring runs, as KFP does */
async function archiveExperiment(k: KfpContext, req: IncomingMessage, id: string, archive: boolean): Promise<Shape> {
  const x = k.authorized(req, 'experiments', archive ? 'archive' : 'unarchive', await k.get<ExperimentObj>(Kinds.Experiment, id, 'experiment'));
  await k.setLabel(Kinds.Experiment, x, KfpLabels.storageState, archive ? 'ARCHIVED' : 'AVAILABLE');
  if (archive) {
    for (const r of await k.all<Run>(Kinds.Run, x.metadata.namespace, `${KfpLabels.experimentId}=${id}`)) await k.setLabel(Kinds.Run, r, KfpLabels.storageState, 'ARCHIVED');
    for (const rr of await k.all<RecurringRunObj>(Kinds.RecurringRun, x.metadata.namespace)) {
      if (rr.spec.experimentId === id) await k.setRecurringRunMode(rr, 'DISABLE');
    }
  }
  return {};
}

export const experimentRoutes: Route<KfpContext>[] = [
  { method: 'GET', pattern: '/experiments', handle: listExperiments },
  { method: 'POST', pattern: '/experiments', handle: createExperiment },
  { method: 'GET', pattern: '/experiments/{experiment_id}', handle: getExperiment },
  { method: 'DELETE', pattern: '/experiments/{experiment_id}', handle: deleteExperiment },
  { method: 'POST', pattern: '/experiments/{experiment_id}:archive', handle: ({ ctx, req, params }) => archiveExperiment(ctx, req, params.experiment_id as string, true) },
  { method: 'POST', pattern: '/experiments/{experiment_id}:unarchive', handle: ({ ctx, req, params }) => archiveExperiment(ctx, req, params.experiment_id as string, false) },
];
