// Watch streams: one JSON watch event per line, as kube-apiserver writes them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { KindDef } from '../../api/registry.js';
import { apiVersionOf } from '../../api/registry.js';
import type { Client } from '../../store/client.js';
import { after, type Timer } from '../../util/timers.js';
import { q, qBool, qInt } from './query.js';

export interface WatchTarget {
  def: KindDef;
  namespace?: string;
}

/** what a watch writes for each event: the event itself, or another shape of it (a Table) */
type EventView = (e: { type: string; object: any }) => unknown;

export function serveWatch(client: Client, req: IncomingMessage, res: ServerResponse, url: URL, t: WatchTarget, bookmarkMs = 15_000, view: EventView = (e) => e): void {
  const timeout = qInt(url, 'timeoutSeconds');
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store', 'transfer-encoding': 'chunked' });
  res.flushHeaders();
  let closed = false;
  const timers: Timer[] = [];
  let handle: { stop(): void } | undefined;
  const close = (): void => {
    if (closed) return;
    closed = true;
    handle?.stop();
    for (const tm of timers) tm.clear();
    res.end();
  };
  req.on('close', close);
  res.on('close', close);
  try {
    handle = client.watch(t.def, {
      namespace: t.namespace,
      labelSelector: q(url, 'labelSelector'),
      fieldSelector: q(url, 'fieldSelector'),
      resourceVersion: q(url, 'resourceVersion'),
    }, (e) => {
      if (!closed) res.write(JSON.stringify(view(e)) + '\n');
    });
  } catch (e) {
    // as Kubernetes does, a watch that cannot start answers 200 with one ERROR event (410 for an old version)
    const err = e instanceof ApiError ? e : new ApiError(StatusReason.InternalError, String((e as Error)?.message ?? e));
    res.write(JSON.stringify({ type: 'ERROR', object: err.toStatus() }) + '\n');
    close();
    return;
  }
  if (timeout !== undefined) timers.push(after(timeout * 1000, close));
  if (qBool(url, 'allowWatchBookmarks') && url.searchParams.has('allowWatchBookmarks')) {
    const tick = (): void => {
      if (closed) return;
      res.write(JSON.stringify(view({ type: 'BOOKMARK', object: { apiVersion: apiVersionOf(t.def), kind: t.def.kind, metadata: { resourceVersion: client.store.resourceVersion() } } })) + '\n');
      timers.push(after(bookmarkMs, tick).unref());
    };
    timers.push(after(bookmarkMs, tick).unref());
  }
}
