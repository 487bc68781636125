// Requests to a cluster's API server over node:https: JSON in and out, a Kubernetes Status turned
// back into the ApiError Skiff throws everywhere (so a 409 from the cluster is the same 409 the local
// store gives), and watch streams read line by line.
import http from 'node:http';
import https from 'node:https';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { StatusDetails } from '../../api/errors.js';
import { isPlainObject } from '../../util/objects.js';
import type { ClusterConnection } from './kubeconfig.js';

export type Query = Record<string, string | number | boolean | undefined>;

/** Transport failures (nothing answered): the message names the server and the cause. */
export class UnreachableError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = 'UnreachableError';
  }
}

const reasons = new Set<string>(Object.values(StatusReason));
const reasonOfCode: Record<number, StatusReason> = {
  400: StatusReason.BadRequest, 401: StatusReason.Unauthorized, 403: StatusReason.Forbidden, 404: StatusReason.NotFound,
  405: StatusReason.MethodNotAllowed, 406: StatusReason.NotAcceptable, 409: StatusReason.Conflict, 410: StatusReason.Gone,
  413: StatusReason.RequestEntityTooLarge, 415: StatusReason.UnsupportedMediaType, 422: StatusReason.Invalid,
  429: StatusReason.ServiceUnavailable, 503: StatusReason.ServiceUnavailable, 504: StatusReason.Timeout,
};

/** A Status (or any error body) as the ApiError it stands for. */
export function errorFromStatus(code: number, body: unknown, fallback: string): ApiError {
  const s = isPlainObject(body) ? body : {};
  const message = typeof s.message === 'string' && s.message ? s.message : fallback;
  // kube-apiserver's "Gone" (410 without Expired) is the same answer to a client
  const reason = typeof s.reason === 'string' && reasons.has(s.reason) ? (s.reason as StatusReason) : reasonOfCode[code] ?? StatusReason.InternalError;
  const err = new ApiError(reason, message, isPlainObject(s.details) ? (s.details as StatusDetails) : {});
  const cont = isPlainObject(s.metadata) ? s.metadata.continue : undefined;
  if (typeof cont === 'string') err.continueToken = cont;
  return err;
}

export interface WatchStream {
  stop(): void;
}

export class KubeHttp {
  private readonly agent: http.Agent;
  private readonly url: URL;

  constructor(readonly conn: ClusterConnection) {
    this.url = new URL(conn.server);
    const tls = this.url.protocol === 'https:';
    // no cap on sockets: every watch holds one for as long as it runs, and requests must not queue behind them
    const opts = { keepAlive: true };
    this.agent = tls
      ? new https.Agent({ ...opts, ...(conn.ca ? { ca: conn.ca } : {}), ...(conn.cert ? { cert: conn.cert } : {}), ...(conn.key ? { key: conn.key } : {}), rejectUnauthorized: !conn.insecureSkipTlsVerify })
      : new http.Agent(opts);
  }

  private options(method: string, path: string, query: Query | undefined, headers: Record<string, string>): http.RequestOptions {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') qs.set(k, String(v));
    const q = qs.toString();
    const base = this.url.pathname.replace(/\/+$/, '');
    return {
      method, agent: this.agent, hostname: this.url.hostname.replace(/^\[|\]$/g, ''), port: this.url.port || (this.url.protocol === 'https:' ? 443 : 80),
      path: `${base}${path}${q ? `?${q}` : ''}`,
      headers: { accept: 'application/json', ...(this.conn.token ? { authorization: `Bearer ${this.conn.token}` } : {}), ...headers },
    };
  }

  private lib(): typeof https | typeof http {
    return this.url.protocol === 'https:' ? https : http;
  }

  private unreachable(e: NodeJS.ErrnoException): UnreachableError {
    return new UnreachableError(`cannot reach the Kubernetes API server at ${this.conn.server} (${this.conn.source}): ${e.code ? `${e.code}: ` : ''}${e.message}`, e.code);
  }

  /** One request; a JSON answer, or the ApiError its Status stands for. */
  request<T = unknown>(method: string, path: string, opts: { query?: Query; body?: unknown; contentType?: string; timeoutMs?: number } = {}): Promise<T> {
    const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const headers: Record<string, string> = payload ? { 'content-type': opts.contentType ?? 'application/json', 'content-length': String(payload.length) } : {};
    return new Promise<T>((resolve, reject) => {
      const req = this.lib().request(this.options(method, path, opts.query, headers), (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => reject(this.unreachable(e)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON (a proxy's page): the text is the message
          }
          const code = res.statusCode ?? 0;
          if (code >= 200 && code < 300) resolve(body as T);
          else reject(errorFromStatus(code, body, `${method} ${path}: HTTP ${code}${typeof body === 'string' && body ? `: ${body.slice(0, 200)}` : ''}`));
        });
      });
      req.on('error', (e) => reject(this.unreachable(e)));
      if (opts.timeoutMs) req.setTimeout(opts.timeoutMs, () => req.destroy(Object.assign(new Error(`no answer in ${opts.timeoutMs} ms`), { code: 'ETIMEDOUT' })));
      req.end(payload);
    });
  }

  /**
   * A watch: each event line goes to onEvent; onEnd runs once, when the server ends the stream (no
   * error), when the request fails (the error), or never after stop().
   */
  watch(path: string, query: Query, onEvent: (e: { type: string; object: unknown }) => void, onEnd: (err?: Error) => void): WatchStream {
    let stopped = false;
    let ended = false;
    const end = (err?: Error): void => {
      if (ended || stopped) return;
      ended = true;
      onEnd(err);
    };
    const req = this.lib().request(this.options('GET', path, { ...query, watch: 'true' }, {}), (res) => {
      const code = res.statusCode ?? 0;
      if (code < 200 || code >= 300) {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let body: unknown;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            body = undefined;
          }
          end(errorFromStatus(code, body, `watch ${path}: HTTP ${code}`));
        });
        return;
      }
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let nl: number;
        while (!stopped && (nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          try {
            onEvent(JSON.parse(line) as { type: string; object: unknown });
          } catch (e) {
            req.destroy();
            end(e as Error);
            return;
          }
        }
      });
      res.on('end', () => end());
      res.on('error', (e) => end(this.unreachable(e)));
      res.on('close', () => end());
    });
    req.on('error', (e) => end(this.unreachable(e)));
    req.end();
    return {
      stop: () => {
        stopped = true;
        req.destroy();
      },
    };
  }

  close(): void {
    this.agent.destroy();
  }
}
