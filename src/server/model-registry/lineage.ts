// Where a model artifact came from, when its URI is a pipeline artifact's: the run (and task) that
// wrote it, in upstream's modelSource* fields, so a registered version points back at its run.
// Upstream leaves the values to an agreement between producers and consumers; Skiff writes what
// Kubeflow's dashboards read for a pipeline run: kind `kfp`, class `pipelinerun`, group the
// namespace, id the run's id, name the run's display name.
import { Kinds } from '../../api/index.js';
import { KfpAnnotations } from '../../api/kfp-objects.js';
import type { StoredObject } from '../../api/meta.js';
import { RunLabels, type Run, type RunTask, type TaskStatus } from '../../api/pipelines.js';
import type { Client } from '../../store/client.js';

export const SOURCE_FIELDS = ['modelSourceKind', 'modelSourceClass', 'modelSourceGroup', 'modelSourceId', 'modelSourceName'] as const;

export interface PipelineSource {
  modelSourceKind: 'kfp';
  modelSourceClass: 'pipelinerun';
  modelSourceGroup: string;
  modelSourceId: string;
  modelSourceName: string;
}

type RunObj = Run & StoredObject;

function sourceOf(run: RunObj): PipelineSource {
  return {
    modelSourceKind: 'kfp',
    modelSourceClass: 'pipelinerun',
    modelSourceGroup: run.metadata.namespace ?? 'default',
    modelSourceId: run.metadata.name,
    modelSourceName: run.metadata.annotations?.[KfpAnnotations.displayName] ?? run.metadata.name,
  };
}

/** `uri` is `artifact` or a file or folder inside it (a component may register the model file it wrote) */
const within = (uri: string, artifact: string): boolean => uri === artifact || uri.startsWith(artifact.replace(/\/+$/, '') + '/');

/** a run's task records: in its status once it ended, as RunTask objects while it runs */
async function tasksOf(client: Client, run: RunObj): Promise<Record<string, TaskStatus>> {
  if (run.status?.tasks) return run.status.tasks;
  const records = await client.listAll<RunTask>(Kinds.RunTask, { namespace: run.metadata.namespace, labelSelector: `${RunLabels.run}=${run.metadata.name}` });
  const tasks: Record<string, TaskStatus> = {};
  for (const o of records) if (o.metadata.ownerReferences?.some((r) => r.uid === run.metadata.uid)) tasks[o.spec.path] = o.status;
  return tasks;
}

/** whether a container task of the run recorded `uri` (or a folder holding it) as its output */
function produced(tasks: Record<string, TaskStatus>, uri: string): boolean {
  // an importer's output is someone else's artifact, a sub-DAG only passes its child's on, and a
  // cache hit's are the earlier run's
  return Object.values(tasks).some((t) => t.podName && !t.cachedFrom && Object.values(t.outputs?.artifacts ?? {}).some((list) => (list ?? []).some((a) => within(uri, a.uri))));
}

/**
 * The pipeline run in `namespace` that produced the artifact at `uri`, or undefined. A task's outputs
 * are written under `<root>/<pipeline>/<run uid>/<task>/<execution>/`, so a URI naming a run's uid is
 * that run's even while the task that writes it still runs (a component registering its own output);
 * a cached task's outputs name the run that first made them, which is where they came from. Other
 * URIs are looked up in the runs' recorded outputs.
 */
export async function pipelineSource(client: Client, namespace: string, uri: string): Promise<PipelineSource | undefined> {
  if (uri === '') return undefined;
  const runs = await client.listAll<Run>(Kinds.Run, { namespace });
  const segments = new Set(uri.split('/'));
  const byUid = runs.find((r) => r.metadata.uid !== undefined && segments.has(r.metadata.uid));
  if (byUid) return sourceOf(byUid);
  for (const run of runs) if (produced(await tasksOf(client, run), uri)) return sourceOf(run);
  return undefined;
}
