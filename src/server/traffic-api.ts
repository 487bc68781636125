// `GET /skiff/v1/namespaces/<ns>/inferenceservices/<name>/traffic`: an InferenceService's recent
// requests from the gateway (src/server/inference/history.ts) as JSON; with `?watch=true`, NDJSON:
// the history first (`{"type":"HISTORY","history":…}`), then each bucket as it fills
// (`{"type":"BUCKET","bucket":…}`), so the dashboard draws live charts from one request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../api/errors.js';
import { send } from './body.js';
import type { TrafficHistory } from './inference/history.js';

const pathRe = /^\/skiff\/v1\/namespaces\/([^/]+)\/inferenceservices\/([^/]+)\/traffic$/;
const dnsName = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export function isTrafficPath(path: string): boolean {
  return path.startsWith('/skiff/v1/');
}

export function handleTraffic(req: IncomingMessage, res: ServerResponse, url: URL, path: string, history: TrafficHistory | undefined): void {
  const m = pathRe.exec(path);
  if (!m || !history) throw new ApiError(StatusReason.NotFound, `the server could not find the requested resource (${req.method ?? 'GET'} ${path})`);
  if (req.method !== 'GET') throw new ApiError(StatusReason.MethodNotAllowed, `${req.method} is not supported on ${path}; use GET`);
  const namespace = decodeURIComponent(m[1] as string);
  const name = decodeURIComponent(m[2] as string);
  if (!dnsName.test(namespace)) throw new ApiError(StatusReason.BadRequest, `namespace ${JSON.stringify(namespace)} is not a valid name`);
  if (!dnsName.test(name)) throw new ApiError(StatusReason.BadRequest, `InferenceService name ${JSON.stringify(name)} is not a valid name`);
  const watch = url.searchParams.get('watch');
  if (watch !== 'true' && watch !== '1') return send(res, 200, history.snapshot(namespace, name));
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  res.write(`${JSON.stringify({ type: 'HISTORY', history: history.snapshot(namespace, name) })}\n`);
  const stop = history.subscribe(namespace, name, (bucket) => res.write(`${JSON.stringify({ type: 'BUCKET', bucket })}\n`));
  const close = (): void => stop();
  req.on('close', close);
  res.on('close', close);
}
