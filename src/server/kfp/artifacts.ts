// Skiff's lineage and artifact read-back: a run's artifacts, one artifact by id, and an artifact's
// content. Metrics answer with their metadata; files are served only from under the run's pipeline
// root (after resolving links), never from elsewhere on the host.
import { pipeline } from 'node:stream/promises';
import { Kinds } from '../../api/index.js';
import type { Run } from '../../api/pipelines.js';
import { badRequest, KfpError, notFound, precondition, sendJson } from './errors.js';
import type { Shape } from './list.js';
import type { KfpCall, KfpContext } from './request.js';
import { q } from './request.js';
import type { Route } from './router.js';
import { runArtifacts } from './shapes.js';

const METRICS_TYPES = new Set(['system.Metrics', 'system.ClassificationMetrics', 'system.SlicedClassificationMetrics']);
const CONTENT_TYPES: Record<string, string> = { 'system.HTML': 'text/html; charset=utf-8', 'system.Markdown': 'text/markdown; charset=utf-8' };

async function listArtifacts({ ctx: k, params }: KfpCall): Promise<Shape> {
  const r = await k.get<Run>(Kinds.Run, params.run_id as string, 'run');
  const artifacts = runArtifacts(r).map((a) => ({ run_id: r.metadata.name, ...a }));
  return { artifacts, total_size: artifacts.length };
}

async function getArtifact({ ctx: k, url, params }: KfpCall): Promise<Shape> {
  const artifactId = params.artifact_id as string;
  const runId = q(url, 'run_id');
  const runs = runId ? [await k.get<Run>(Kinds.Run, runId, 'run')] : await Promise.all((await k.all<Run>(Kinds.Run)).map((r) => k.withTasks(r)));
  for (const r of runs) {
    const a = runArtifacts(r).find((x) => x.artifact_id === artifactId);
    if (a) return { run_id: r.metadata.name, ...a };
  }
  throw notFound('artifact', artifactId);
}

async function readArtifact({ ctx: k, res, url, params }: KfpCall): Promise<undefined> {
  const runId = params.run_id as string;
  const nodeId = params.node_id as string;
  const name = params.artifact_name as string;
  const r = await k.get<Run>(Kinds.Run, runId, 'run');
  const task = nodeId === 'root' ? { outputs: r.status?.outputs, inputs: undefined } : r.status?.tasks?.[nodeId];
  if (!task) throw notFound(`task of run ${runId}`, nodeId);
  const list = task.outputs?.artifacts?.[name] ?? task.inputs?.artifacts?.[name];
  if (!list || list.length === 0) throw notFound(`artifact of task ${nodeId}`, name);
  const index = Number(q(url, 'index') ?? 0);
  const a = list[index];
  if (!Number.isInteger(index) || !a) throw badRequest(`index: ${q(url, 'index')} is out of range (the artifact list has ${list.length})`);
  const schema = String(a.type?.schemaTitle ?? '');
  if (METRICS_TYPES.has(schema)) {
    sendJson(res, a.metadata ?? {});
    return undefined;
  }
  const rootUri = r.spec.pipelineRoot ?? k.deps.pipelineRoot;
  if (!rootUri) throw precondition('no pipeline root is known; artifacts cannot be read back');
  const store = k.deps.artifacts;
  if (!store) throw precondition('no artifact store is configured; artifacts cannot be read back');
  if (!store.handles(a.uri) || !store.handles(rootUri)) throw new KfpError(403, `artifact ${name}: ${a.uri} is not in the artifact store; Skiff reads back only artifacts under the pipeline root`);
  const st = await store.stat(a.uri);
  if (!st) throw notFound('artifact content', a.uri);
  if (a.uri === rootUri || !(await store.contains(rootUri, a.uri))) throw new KfpError(403, `artifact ${name}: ${a.uri} is outside the pipeline root ${rootUri}`);
  if (st.directory) throw badRequest(`artifact ${name}: ${a.uri} is a directory; read-back serves files`);
  // ?limit=N: the first N bytes, for previews (the dashboard shows a capped preview of big files)
  const limitText = q(url, 'limit');
  const limit = limitText === undefined ? undefined : Number(limitText);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) throw badRequest(`limit: ${limitText} must be a whole number of bytes`);
  const size = limit === undefined ? st.size : Math.min(limit, st.size);
  const body = await store.openRead(a.uri);
  res.writeHead(200, { 'content-type': CONTENT_TYPES[schema] ?? 'application/octet-stream', 'content-length': size, 'x-artifact-size': String(st.size) });
  if (size === st.size) {
    await pipeline(body, res);
    return undefined;
  }
  let sent = 0;
  for await (const chunk of body) {
    const c = chunk as Buffer;
    const take = Math.min(c.length, size - sent);
    if (take > 0) res.write(c.subarray(0, take));
    sent += take;
    if (sent >= size) break;
  }
  body.destroy();
  res.end();
  return undefined;
}

export const artifactRoutes: Route<KfpContext>[] = [
  { method: 'GET', pattern: '/runs/{run_id}/artifacts', handle: listArtifacts },
  { method: 'GET', pattern: '/runs/{run_id}/nodes/{node_id}/artifacts/{artifact_name}:read', handle: readArtifact },
  { method: 'GET', pattern: '/artifacts/{artifact_id}', handle: getArtifact },
];
