// The CLI's HTTP client: node:http rather than fetch. The first fetch in a process loads undici,
// which costs every command about 80 ms of start-up here (0.14 s against 0.06 s for one request
// from a fresh node), a fifth of a short `skiff run --watch`.
import { request as httpRequest, type IncomingMessage } from 'node:http';

export interface HttpResponse {
  ok: boolean;
  status: number;
  statusText: string;
  /** the body as it arrives; errors (a dropped connection, an abort) surface while reading it */
  body: AsyncIterable<Uint8Array> | null;
  text(): Promise<string>;
}

export interface HttpInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export type HttpFetch = (url: string, init?: HttpInit) => Promise<HttpResponse>;

function abortError(): Error {
  const e = new Error('the request was aborted');
  e.name = 'AbortError';
  return e;
}

function wrap(res: IncomingMessage): HttpResponse {
  const status = res.statusCode ?? 0;
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: res.statusMessage ?? '',
    body: res,
    async text() {
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

export const httpFetch: HttpFetch = async (url, init = {}) => {
  const u = new URL(url);
  const request = u.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  const { signal } = init;
  if (signal?.aborted) throw abortError();
  return new Promise<HttpResponse>((resolve, reject) => {
    const headers: Record<string, string | number> = { ...init.headers };
    if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body);
    let answer: IncomingMessage | undefined;
    const req = request(u, { method: init.method ?? 'GET', headers }, (res) => {
      answer = res;
      resolve(wrap(res));
    });
    // an abort while the body is being read ends the reader with an AbortError, as fetch's does
    const onAbort = (): void => void (answer ?? req).destroy(abortError());
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('close', () => signal?.removeEventListener('abort', onAbort));
    // before the answer this rejects the request; after it, the body's reader sees the error
    req.on('error', reject);
    req.end(init.body);
  });
};
