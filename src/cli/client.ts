/** HTTP to the Skiff API server: JSON requests, Status errors, lists, watches and discovery. */
import { ApiError, CliError, ConnectionError, isAbortError, type Status } from './errors.js';
import {
  buildDiscovery,
  type APIGroupList,
  type APIResourceList,
  type APIVersions,
  type Discovery,
} from './discovery.js';
import { httpFetch, type HttpFetch, type HttpResponse } from './http.js';
import type { KList, KObject, WatchEvent } from './types.js';
import { isServerTable, type ServerTable } from './server-table.js';

export const DEFAULT_SERVER = 'http://127.0.0.1:8080';

export type Query = Record<string, string | number | boolean | undefined | null>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  signal?: AbortSignal;
  /** the Accept header; JSON objects by default */
  accept?: string;
}

/** Normalises `--server`/`SKIFF_SERVER`: adds `http://` when missing, drops a trailing slash. */
export function normalizeServer(raw: string): string {
  let s = raw.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) s = `http://${s}`;
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    throw new CliError(`invalid server address "${raw}" (expected a URL such as ${DEFAULT_SERVER})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`invalid server address "${raw}": only http:// and https:// are supported`);
  }
  return url.href.replace(/\/+$/, '');
}

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  EPROTO: 'protocol error',
};

function networkDetail(err: unknown): string {
  let cause: unknown = err instanceof Error ? (err as Error & { cause?: unknown }).cause ?? err : err;
  if (cause instanceof AggregateError && cause.errors.length > 0 && !(cause as NodeJS.ErrnoException).code) {
    cause = cause.errors[0];
  }
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (code && NETWORK_REASONS[code]) return NETWORK_REASONS[code] as string;
  const message = cause instanceof Error ? cause.message : String(cause);
  return code ? `${code}: ${message}` : message;
}

export function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '' || v === false) continue;
    params.set(k, String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** the parts of an HTTP answer an error is made from (a fetch Response has them too) */
export type AnswerLike = Pick<HttpResponse, 'status' | 'statusText' | 'text'>;

export async function errorFromResponse(res: AnswerLike): Promise<ApiError> {
  let text = '';
  try {
    text = await res.text();
  } catch {
    // body unreadable: keep the status line
  }
  let status: Status | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && (parsed as Status).kind === 'Status') status = parsed as Status;
    else if (parsed && typeof parsed === 'object' && typeof (parsed as Status).message === 'string') {
      status = { message: (parsed as Status).message };
    }
  } catch {
    // not JSON
  }
  if (!status) {
    const firstLine = text.trim().split('\n')[0]?.slice(0, 300) ?? '';
    status = {
      message:
        res.status === 404 && !firstLine
          ? 'the server could not find the requested resource'
          : firstLine || `the server responded with HTTP ${res.status} ${res.statusText}`.trim(),
    };
  }
  return new ApiError(status, res.status);
}

export class Client {
  private discoveryCache: Promise<Discovery> | undefined;

  constructor(
    readonly server: string,
    private readonly fetchImpl: HttpFetch = httpFetch,
    /** sent as `Authorization: Bearer` when the server asks who is calling */
    readonly token?: string,
  ) {}

  /** the headers that say who is calling */
  authHeaders(): Record<string, string> {
    return this.token ? { Authorization: `Bearer ${this.token}` } : {};
  }

  url(path: string, query?: Query): string {
    return `${this.server}${path}${queryString(query)}`;
  }

  /** Raw request; throws ConnectionError when the server cannot be reached, ApiError on non-2xx. */
  async raw(method: string, path: string, opts: RequestOptions = {}): Promise<HttpResponse> {
    const headers: Record<string, string> = { Accept: opts.accept ?? 'application/json', ...this.authHeaders() };
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(opts.body);
    }
    let res: HttpResponse;
    try {
      res = await this.fetchImpl(this.url(path, opts.query), { method, headers, body, signal: opts.signal });
    } catch (err) {
      if (isAbortError(err)) throw err;
      throw new ConnectionError(this.server, networkDetail(err));
    }
    if (!res.ok) throw await errorFromResponse(res);
    return res;
  }

  async request<T = KObject>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.raw(method, path, opts);
    const text = await res.text();
    if (!text.trim()) return {} as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new CliError(`the server sent a response that is not JSON for ${method} ${path}`);
    }
  }

  get<T = KObject>(path: string, query?: Query, signal?: AbortSignal, accept?: string): Promise<T> {
    return this.request<T>('GET', path, { query, signal, accept });
  }

  /**
   * Lists everything, following `metadata.continue`. With an Accept for Tables, a server that
   * prints answers one Table with every page's rows; one that does not, the objects.
   */
  async list(path: string, query: Query = {}, signal?: AbortSignal, accept?: string): Promise<KList & { items: KObject[]; table?: ServerTable }> {
    const items: KObject[] = [];
    let table: ServerTable | undefined;
    let cont: string | undefined;
    let last: KList = {};
    for (let page = 0; page < 10_000; page++) {
      last = await this.get<KList>(path, { ...query, limit: query.limit ?? 500, continue: cont }, signal, accept);
      if (isServerTable(last)) {
        if (table) table.rows.push(...last.rows);
        else table = last;
      } else {
        items.push(...(last.items ?? []));
      }
      cont = last.metadata?.continue;
      if (!cont) break;
    }
    return table ? { metadata: last.metadata, items, table } : { ...last, items };
  }

  /**
   * Streams watch events (newline-delimited JSON) until the server closes the stream or
   * `signal` aborts (then it just ends).
   */
  async *watch(path: string, query: Query, signal?: AbortSignal, accept?: string): AsyncGenerator<WatchEvent> {
    let res: HttpResponse;
    try {
      res = await this.raw('GET', path, { query: { ...query, watch: true }, signal, accept });
    } catch (err) {
      if (isAbortError(err)) return;
      throw err;
    }
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buffered = '';
    const parse = (line: string): WatchEvent | undefined => {
      const t = line.trim();
      if (!t) return undefined;
      let ev: unknown;
      try {
        ev = JSON.parse(t);
      } catch {
        throw new CliError(`the server sent a watch event that is not JSON: ${t.slice(0, 200)}`);
      }
      if (!ev || typeof ev !== 'object' || typeof (ev as WatchEvent).type !== 'string') {
        throw new CliError(`the server sent a malformed watch event: ${t.slice(0, 200)}`);
      }
      const e = ev as WatchEvent;
      return { type: e.type, object: (e.object ?? {}) as KObject };
    };
    try {
      for await (const chunk of res.body) {
        buffered += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          const ev = parse(line);
          if (ev) yield ev;
        }
      }
      buffered += decoder.decode();
      const ev = parse(buffered);
      if (ev) yield ev;
    } catch (err) {
      if (isAbortError(err) || signal?.aborted) return;
      // The connection dropped mid-stream: let the caller re-establish it.
      if (err instanceof TypeError || (err as NodeJS.ErrnoException).code === 'ECONNRESET') return;
      throw err;
    }
  }

  /** Discovery, fetched once per process (per Client); `refresh` fetches it again. */
  discovery(refresh = false): Promise<Discovery> {
    if (!this.discoveryCache || refresh) {
      const p = this.fetchDiscovery();
      this.discoveryCache = p;
      p.catch(() => {
        if (this.discoveryCache === p) this.discoveryCache = undefined;
      });
    }
    return this.discoveryCache;
  }

  private async fetchDiscovery(): Promise<Discovery> {
    const [core, groups] = await Promise.all([
      this.get<APIVersions>('/api').catch((err: unknown) => {
        if (err instanceof ApiError && err.isNotFound) return { versions: [] } as APIVersions;
        throw err;
      }),
      this.get<APIGroupList>('/apis').catch((err: unknown) => {
        if (err instanceof ApiError && err.isNotFound) return { groups: [] } as APIGroupList;
        throw err;
      }),
    ]);
    const paths: string[] = [];
    for (const v of core.versions ?? []) paths.push(`/api/${v}`);
    for (const g of groups.groups ?? []) for (const v of g.versions ?? []) paths.push(`/apis/${v.groupVersion}`);
    const settled = await Promise.allSettled(paths.map((p) => this.get<APIResourceList>(p)));
    const lists: APIResourceList[] = [];
    let firstError: unknown;
    settled.forEach((s, i) => {
      if (s.status === 'fulfilled') {
        const list = s.value;
        if (!list.groupVersion) list.groupVersion = (paths[i] as string).replace(/^\/apis?\//, '');
        lists.push(list);
      } else firstError ??= s.reason;
    });
    // A broken group should not break everything, but a dead server should be reported.
    if (lists.length === 0 && firstError) throw firstError;
    return buildDiscovery(core, groups, lists);
  }
}
