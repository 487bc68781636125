// Skiff's lineage and artifact read-back: a run's artifacts, one artifact by id, and an artifact's
// content. Metrics answer with their metadata; files are served only from under the run's pipeline
// root (after resolving links), never from elsewhere on the host. A file can be read in part (a
// `Range: bytes=` header or `limit=N`), so the dashboard previews a large artifact without fetching it.
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Kinds } from '../../api/index.js';
import type { Run } from '../../api/pipelines.js';
import { badRequest, KfpError, notFound, precondition, sendJson } from './errors.js';
import type { Shape } from './list.js';
import type { KfpCall, KfpContext } from './request.js';
import { q } from './request.js';
import type { Route } from './router.js';
import { runArtifacts } from './shapes.js';
import { isS3Root, namespaceS3Store } from '../../workloads/pipelines/artifact-roots.js';

const METRICS_TYPES = new Set(['system.Metrics', 'system.ClassificationMetrics', 'system.SlicedClassificationMetrics']);
const CONTENT_TYPES: Record<string, string> = { 'system.HTML': 'text/html; charset=utf-8', 'system.Markdown': 'text/markdown; charset=utf-8' };

async function listArtifacts({ ctx: k, req, params }: KfpCall): Promise<Shape> {
  const r = k.authorized(req, 'runs', 'get', await k.get<Run>(Kinds.Run, params.run_id as string, 'run'));
  const artifacts = runArtifacts(r).map((a) => ({ run_id: r.metadata.name, ...a }));
  return { artifacts, total_size: artifacts.length };
}

async function getArtifact({ ctx: k, req, url, params }: KfpCall): Promise<Shape> {
  const artifactId = params.artifact_id as string;
  const runId = q(url, 'run_id');
  // without a run, every run the user may read is searched (and only those)
  const runs = runId
    ? [k.authorized(req, 'runs', 'get', await k.get<Run>(Kinds.Run, runId, 'run'))]
    : await Promise.all((await k.all<Run>(Kinds.Run)).filter((r) => k.may(req, { resource: 'runs', verb: 'get', namespace: r.metadata.namespace, name: r.metadata.name })).map((r) => k.withTasks(r)));
  for (const r of runs) {
    const a = runArtifacts(r).find((x) => x.artifact_id === artifactId);
    if (a) return { run_id: r.metadata.name, ...a };
  }
  throw notFound('artifact', artifactId);
}

/** the bytes [start, end] (inclusive) of a file of `size` bytes that a request asks for; undefined: all of it */
export function requestedRange(rangeHeader: string | undefined, limit: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (limit !== undefined) {
    if (!/^\d+$/.test(limit)) throw badRequest(`limit: ${JSON.stringify(limit)} is not a number of bytes`);
    const n = Number(limit);
    if (n >= size) return undefined;
    return n === 0 ? 'unsatisfiable' : { start: 0, end: n - 1 };
  }
  if (!rangeHeader) return undefined;
  // one range only; a header Skiff cannot parse (several ranges, other units) is ignored, as HTTP allows
  const m = /^bytes=(\d*)-(\d*)$/.exec(rangeHeader.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== '' && Number(m[2]) < start) return undefined;
  }
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

/** writes bytes [start, end] of a stream and stops reading it there */
async function sendSlice(body: Readable, res: ServerResponse, start: number, end: number): Promise<void> {
  let pos = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const from = Math.max(0, start - pos);
      const to = Math.min(chunk.length, end + 1 - pos);
      pos += chunk.length;
      if (to > from && !res.write(chunk.subarray(from, to))) await new Promise((ok) => res.once('drain', ok));
      if (pos > end) break;
    }
  } finally {
    body.destroy();
  }
  res.end();
}

async function readArtifact({ ctx: k, req, res, url, params }: KfpCall): Promise<undefined> {
  const runId = params.run_id as string;
  const nodeId = params.node_id as string;
  const name = params.artifact_name as string;
  const r = k.authorized(req, 'runs', 'readArtifact', await k.get<Run>(Kinds.Run, runId, 'run'));
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
  const rootUri = r.status?.pipelineRoot ?? r.spec.pipelineRoot ?? k.deps.pipelineRoot;
  if (!rootUri) throw precondition('no pipeline root is known; artifacts cannot be read back');
  let store = k.deps.artifacts;
  if (isS3Root(rootUri)) {
    // read with the credentials the run's tasks use: its namespace's Secret, else the config's
    if (!k.deps.s3) throw precondition(`the run's pipeline root ${rootUri} is in S3, and Skiff has no S3 server configured`);
    store = await namespaceS3Store(k.deps.client, k.deps.s3, r.metadata.namespace ?? 'default', rootUri);
  }
  if (!store) throw precondition('no artifact store is configured; artifacts cannot be read back');
  if (!store.handles(a.uri) || !store.handles(rootUri)) throw new KfpError(403, `artifact ${name}: ${a.uri} is not in the artifact store; Skiff reads back only artifacts under the pipeline root`);
  const st = await store.stat(a.uri);
  if (!st) throw notFound('artifact content', a.uri);
  if (a.uri === rootUri || !(await store.contains(rootUri, a.uri))) throw new KfpError(403, `artifact ${name}: ${a.uri} is outside the pipeline root ${rootUri}`);
  if (st.directory) throw badRequest(`artifact ${name}: ${a.uri} is a directory; read-back serves files`);
  const contentType = CONTENT_TYPES[schema] ?? 'application/octet-stream';
  const range = requestedRange(req.headers.range, q(url, 'limit'), st.size);
  if (range === 'unsatisfiable') {
    res.writeHead(416, { 'content-range': `bytes */${st.size}`, 'accept-ranges': 'bytes' });
    res.end();
    return undefined;
  }
  const body = await store.openRead(a.uri);
  if (range) {
    res.writeHead(206, {
      'content-type': contentType, 'content-length': range.end - range.start + 1, 'content-range': `bytes ${range.start}-${range.end}/${st.size}`,
      // the whole size again, for clients that read a capped preview without parsing Content-Range
      'accept-ranges': 'bytes', 'x-artifact-size': String(st.size),
    });
    await sendSlice(body, res, range.start, range.end);
    return undefined;
  }
  res.writeHead(200, { 'content-type': contentType, 'content-length': st.size, 'accept-ranges': 'bytes', 'x-artifact-size': String(st.size) });
  await pipeline(body, res);
  return undefined;
}

export const artifactRoutes: Route<KfpContext>[] = [
  { method: 'GET', pattern: '/runs/{run_id}/artifacts', handle: listArtifacts },
  { method: 'GET', pattern: '/runs/{run_id}/nodes/{node_id}/artifacts/{artifact_name}:read', handle: readArtifact },
  { method: 'GET', pattern: '/artifacts/{artifact_id}', handle: getArtifact },
];
