// A closed-loop HTTP load generator: `concurrency` keep-alive connections, each sending the next
// request as soon as the last one is answered, for a fixed time. Reports throughput and latency
// percentiles; every response status other than 200 counts as an error.
import { Agent, request } from 'node:http';

export interface LoadOptions {
  url: string;
  method?: string;
  body?: Buffer | (() => Buffer);
  headers?: Record<string, string>;
  concurrency: number;
  durationMs: number;
  /** requests sent before measuring, per connection */
  warmup?: number;
}

export interface LoadResult {
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  /** the first error seen, for the report */
  firstError?: string;
}

function one(agent: Agent, u: URL, o: LoadOptions): Promise<{ status: number; body: string }> {
  const body = typeof o.body === 'function' ? o.body() : o.body;
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: o.method ?? (body ? 'POST' : 'GET'), agent, headers: { ...(o.headers ?? {}), ...(body ? { 'content-length': String(body.length) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: res.statusCode === 200 ? '' : Buffer.concat(chunks).toString().slice(0, 300) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const u = new URL(o.url);
  const agent = new Agent({ keepAlive: true, maxSockets: o.concurrency });
  const lat: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const warm = o.warmup ?? 5;
  await Promise.all(Array.from({ length: o.concurrency }, async () => {
    for (let i = 0; i < warm; i++) await one(agent, u, o).catch(() => undefined);
  }));
  const start = performance.now();
  const end = start + o.durationMs;
  await Promise.all(Array.from({ length: o.concurrency }, async () => {
    while (performance.now() < end) {
      const t = performance.now();
      try {
        const r = await one(agent, u, o);
        if (r.status !== 200) {
          errors++;
          firstError ??= `HTTP ${r.status}: ${r.body}`;
        }
      } catch (e) {
        errors++;
        firstError ??= (e as Error).message;
      }
      lat.push(performance.now() - t);
    }
  }));
  const elapsed = performance.now() - start;
  agent.destroy();
  lat.sort((a, b) => a - b);
  return { requests: lat.length, errors, rps: (lat.length * 1000) / elapsed, p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99), ...(firstError ? { firstError } : {}) };
}
