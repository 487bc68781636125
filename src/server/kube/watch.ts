// Watch streams: one JSON watch event per line, as kube-apiserver writes them, with the watch-list
// protocol client-go speaks (the initial state, then a bookmark marking its end), periodic bookmarks
// and timeoutSeconds.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { KindDef } from '../../api/registry.js';
import { apiVersionOf } from '../../api/registry.js';
import type { Client } from '../../store/client.js';
import { after, type Timer } from '../../util/timers.js';
import type { KubeListOptions } from './options.js';

export interface WatchTarget {
  def: KindDef;
  namespace?: string;
}

/** what a watch writes for each event: the event itself, or another shape of it (a Table) */
type EventView = (e: { type: string; object: any }) => unknown;

/** the annotation on the bookmark that ends a watch-list's initial events */
export const initialEventsEnd = 'k8s.io/initial-events-end';

function bookmark(def: KindDef, resourceVersion: string, initialEnd = false): unknown {
  const metadata: Record<string, unknown> = { resourceVersion };
  if (initialEnd) metadata.annotations = { [initialEventsEnd]: 'true' };
  return { type: 'BOOKMARK', object: { apiVersion: apiVersionOf(def), kind: def.kind, metadata } };
}

/**
 * Serves a watch. Once parsed, every failure is an ERROR event on a 200 stream, as kube-apiserver
 * answers a watch that cannot start (410 Expired for a version older than the kept history).
 */
export function serveWatch(client: Client, req: IncomingMessage, res: ServerResponse, opts: KubeListOptions, t: WatchTarget, bookmarkMs = 15_000, view: EventView = (e) => e): void {
  const rv = opts.resourceVersion;
  if (rv && !/^\d+$/.test(rv)) {
    throw ApiError.invalid(t.def.plural, t.def.group, '', [{ field: 'resourceVersion', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: invalid syntax` }]);
  }
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
  const write = (e: unknown): void => {
    if (!closed) res.write(JSON.stringify(view(e as { type: string; object: any })) + '\n');
  };
  req.on('close', close);
  res.on('close', close);
  const current = (): string => client.store.resourceVersion();
  try {
    // where the stream starts: the state now (sendInitialEvents, which a watch from "" or "0" defaults
    // to), the changes after a version, or, with sendInitialEvents=false and no version, from now on
    let from: string | undefined = opts.resourceVersion || undefined;
    if (opts.sendInitialEvents === true) {
      const wanted = opts.resourceVersion && opts.resourceVersion !== '0' ? Number(opts.resourceVersion) : 0;
      if (Number.isSafeInteger(wanted) && wanted > Number(current())) {
        throw new ApiError(StatusReason.Timeout, `Timeout: Too large resource version: ${wanted}, current: ${current()}`, {
          causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version', field: '' }],
          retryAfterSeconds: 1,
        });
      }
      from = undefined;
    } else if (opts.sendInitialEvents === false && (!from || from === '0')) {
      from = current();
    }
    handle = client.watch(t.def, {
      namespace: t.namespace,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      resourceVersion: from,
    }, write);
  } catch (e) {
    const err = e instanceof ApiError ? e : new ApiError(StatusReason.InternalError, String((e as Error)?.message ?? e));
    write({ type: 'ERROR', object: err.toStatus() });
    close();
    return;
  }
  // the store delivered the initial state synchronously, so the version now is the one it was read at
  if (opts.sendInitialEvents === true && opts.allowWatchBookmarks) write(bookmark(t.def, current(), true));
  // as kube-apiserver: 0 is the server's own limit (Skiff has none), a negative one ends the watch at once
  if (opts.timeoutSeconds !== undefined && opts.timeoutSeconds !== 0) timers.push(after(Math.max(0, opts.timeoutSeconds) * 1000, close));
  if (opts.allowWatchBookmarks) {
    const tick = (): void => {
      if (closed) return;
      write(bookmark(t.def, current()));
      timers.push(after(bookmarkMs, tick).unref());
    };
    timers.push(after(bookmarkMs, tick).unref());
  }
}
