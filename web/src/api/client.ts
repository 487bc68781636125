// How the dashboard talks to Skiff: the Kubernetes REST API (objects, watches, logs), the KFP API
// (pipeline uploads, artifacts) and plain reads. One interface, one HTTP implementation, given to the
// pages through context (api/context.tsx) so tests can hand in another.
import type { KObject } from './types';
import { ApiError, errorFromBody } from './errors';
import type { KindInfo } from './kinds';
import { collectionPath, objectPath } from './kinds';
import { StreamMux } from './mux';

/** who the client's requests are from: a token to send, and what to do when the server refuses it */
export interface ClientAuth {
  token?: string;
  /** the server answered 401: the token is gone or was never there */
  onUnauthorized?: () => void;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

export interface ObjectList<T> {
  items: T[];
  metadata: { resourceVersion?: string; continue?: string };
}

export interface WatchEvent<T = KObject> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export type PatchType = 'merge' | 'json' | 'strategic';

export interface ApiClient {
  json<T>(path: string, init?: RequestInit): Promise<T>;
  text(path: string, init?: RequestInit): Promise<string>;
  list<T extends KObject>(kind: KindInfo, namespace: string | undefined, opts?: ListOptions): Promise<ObjectList<T>>;
  get<T extends KObject>(kind: KindInfo, namespace: string | undefined, name: string): Promise<T>;
  create<T extends KObject>(kind: KindInfo, namespace: string | undefined, obj: unknown, dryRun?: boolean): Promise<T>;
  replace<T extends KObject>(kind: KindInfo, namespace: string | undefined, name: string, obj: unknown, dryRun?: boolean): Promise<T>;
  patch<T extends KObject>(kind: KindInfo, namespace: string | undefined, name: string, patch: unknown, type?: PatchType): Promise<T>;
  remove(kind: KindInfo, namespace: string | undefined, name: string): Promise<void>;
  /** streams `?watch=true` events until the signal aborts or the server ends the stream */
  watch(path: string, params: Record<string, string>, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void>;
  /** streams a body in text chunks (logs with follow=true) */
  stream(path: string, onText: (chunk: string) => void, signal: AbortSignal): Promise<void>;
}

const PATCH_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

export class HttpClient implements ApiClient {
  /** `mux`: live streams share one WebSocket instead of holding a connection each */
  constructor(private readonly base = '', private readonly mux?: StreamMux, private readonly auth: ClientAuth = {}) {}

  /** the client the dashboard uses: this page's origin, streams multiplexed, as the signed-in user */
  static forPage(auth: ClientAuth = {}): HttpClient {
    const proto = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
    return new HttpClient('', new StreamMux(`${proto}//${window.location.host}/skiff/v1/streams`, auth.token), auth);
  }

  /** ends the client's live streams (on sign-out: they were the old user's) */
  close(): void {
    this.mux?.close();
  }

  private async fetch(path: string, init?: RequestInit): Promise<Response> {
    const headers = new Headers(init?.headers);
    if (this.auth.token && !headers.has('authorization')) headers.set('authorization', `Bearer ${this.auth.token}`);
    const res = await fetch(this.base + path, { ...init, headers });
    if (res.status === 401) this.auth.onUnauthorized?.();
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* not JSON: the text is the message */
      }
      throw errorFromBody(res.status, body, text.trim() || `${res.status} ${res.statusText}`);
    }
    return res;
  }

  async json<T>(path: string, init?: RequestInit): Promise<T> {
    const headers = new Headers(init?.headers);
    if (!headers.has('accept')) headers.set('accept', 'application/json');
    const res = await this.fetch(path, { ...init, headers });
    return (await res.json()) as T;
  }

  async text(path: string, init?: RequestInit): Promise<string> {
    return (await this.fetch(path, init)).text();
  }

  list<T extends KObject>(kind: KindInfo, namespace: string | undefined, opts: ListOptions = {}): Promise<ObjectList<T>> {
    return this.json(collectionPath(kind, namespace) + query({ ...opts }));
  }

  get<T extends KObject>(kind: KindInfo, namespace: string | undefined, name: string): Promise<T> {
    return this.json(objectPath(kind, namespace, name));
  }

  create<T extends KObject>(kind: KindInfo, namespace: string | undefined, obj: unknown, dryRun = false): Promise<T> {
    return this.json(collectionPath(kind, namespace) + query({ dryRun: dryRun ? 'All' : undefined, fieldValidation: 'Strict', fieldManager: 'skiff-dashboard' }), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(obj),
    });
  }

  replace<T extends KObject>(kind: KindInfo, namespace: string | undefined, name: string, obj: unknown, dryRun = false): Promise<T> {
    return this.json(objectPath(kind, namespace, name) + query({ dryRun: dryRun ? 'All' : undefined, fieldValidation: 'Strict', fieldManager: 'skiff-dashboard' }), {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(obj),
    });
  }

  patch<T extends KObject>(kind: KindInfo, namespace: string | undefined, name: string, patch: unknown, type: PatchType = 'merge'): Promise<T> {
    return this.json(objectPath(kind, namespace, name) + query({ fieldManager: 'skiff-dashboard' }), {
      method: 'PATCH',
      headers: { 'content-type': PATCH_TYPES[type] },
      body: JSON.stringify(patch),
    });
  }

  async remove(kind: KindInfo, namespace: string | undefined, name: string): Promise<void> {
    await this.fetch(objectPath(kind, namespace, name), { method: 'DELETE' });
  }

  async watch(path: string, params: Record<string, string>, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    if (this.mux) {
      let buf = '';
      await this.mux.get(path + query({ ...params, watch: 'true' }), (chunk) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (line.trim()) onEvent(JSON.parse(line) as WatchEvent);
        }
      }, signal);
      return;
    }
    const res = await this.fetch(path + query({ ...params, watch: 'true' }), { signal, headers: { accept: 'application/json' } });
    await readLines(res, signal, (line) => {
      if (line.trim()) onEvent(JSON.parse(line) as WatchEvent);
    });
  }

  async stream(path: string, onText: (chunk: string) => void, signal: AbortSignal): Promise<void> {
    if (this.mux) return this.mux.get(path, onText, signal);
    const res = await this.fetch(path, { signal });
    if (!res.body) return onText(await res.text());
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      onText(decoder.decode(value, { stream: true }));
    }
  }
}

async function readLines(res: Response, signal: AbortSignal, onLine: (line: string) => void): Promise<void> {
  if (!res.body) throw new ApiError(0, 'the watch has no body');
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  while (!signal.aborted) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  }
  if (buf.trim()) onLine(buf);
}
