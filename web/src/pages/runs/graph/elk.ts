// ELK off the main thread: a layered layout of a 200-task DAG takes most of a second, and on the
// main thread that second freezes the page (scrolling, the live log, the watches' renders). In the
// browser ELK runs in a Web Worker from its own bundled script; where there is no Worker (vitest on
// Node) the same algorithm runs in-process.
import type { ELK as ElkApi } from 'elkjs/lib/elk-api.js';
import ELK from 'elkjs/lib/elk-api.js';
import workerUrl from 'elkjs/lib/elk-worker.min.js?url';

let instance: Promise<ElkApi> | undefined;

export function elk(): Promise<ElkApi> {
  instance ??=
    typeof Worker !== 'undefined'
      ? Promise.resolve(new ELK({ workerUrl }))
      : import('elkjs/lib/elk.bundled.js').then((m) => new m.default());
  return instance;
}
