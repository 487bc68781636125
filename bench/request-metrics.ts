// What the API server's own metrics cost per request: two servers on this machine, one built from a
// Skiff without request metrics (`--base`, its bin/skiff.js) and this one, each answering the same GET
// of one ConfigMap over a keep-alive connection. Their batches alternate so a change in the machine's
// load falls on both alike (and each goes first in every other round). Reports the client's latency (median, p99) and the server process's CPU
// time per request, read from /proc.
// With --objects N the GETs go round N ConfigMaps (more than the 4096 request lines the metrics keep
// at hand: each GET's path is read afresh).
// Usage: node dist/bench/request-metrics.js --base /path/to/base/bin/skiff.js [--gets 20000] [--batch 500] [--objects 1]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../test/harness.js';
import { median, percentile } from './stats.js';

function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? process.argv[i + 1] : fallback;
  if (v === undefined) throw new Error(`--${name} is required`);
  return v;
}

interface Server {
  label: string;
  url: URL;
  proc: ChildProcess;
  dir: string;
  agent: Agent;
  latencies: number[];
  cpuMs: number;
}

async function start(label: string, bin: string): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-reqbench-'));
  const proc = spawn(process.execPath, [bin, 'up', '--port', '0', '--data-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not start:\n${out}`)), 30_000);
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /ready at (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', onData);
  });
  return { label, url: new URL(url), proc, dir, agent: new Agent({ keepAlive: true, maxSockets: 1 }), latencies: [], cpuMs: 0 };
}

function send(s: Server, method: string, path: string, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: s.url.hostname, port: s.url.port, method, path, agent: s.agent, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** the process's user + system CPU time in ms */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

let next = 0;

async function batch(s: Server, paths: string[], n: number): Promise<void> {
  const pid = s.proc.pid as number;
  const c0 = cpuMs(pid);
  for (let i = 0; i < n; i++) {
    const path = paths[next++ % paths.length] as string;
    const t = process.hrtime.bigint();
    const code = await send(s, 'GET', path);
    s.latencies.push(Number(process.hrtime.bigint() - t) / 1e3);
    if (code !== 200) throw new Error(`${s.label}: GET ${path}: ${code}`);
  }
  s.cpuMs += cpuMs(pid) - c0;
}

async function main(): Promise<void> {
  const gets = Number(arg('gets', '20000'));
  const size = Number(arg('batch', '500'));
  const servers = [await start('base', arg('base')), await start('this', join(repoRoot, 'bin', 'skiff.js'))];
  const objects = Number(arg('objects', '1'));
  const paths = Array.from({ length: objects }, (_, i) => `/api/v1/namespaces/default/configmaps/bench-${i}`);
  try {
    for (const s of servers) {
      for (let i = 0; i < objects; i++) {
        const code = await send(s, 'POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `bench-${i}` }, data: { a: 'b' } }));
        if (code !== 201) throw new Error(`${s.label}: create: ${code}`);
      }
      // warm up: the JIT, the informers, the first series
      await batch(s, paths, 2000);
      s.latencies = [];
      s.cpuMs = 0;
    }
    // each round in the other order, so neither server always answers right after the other
    let round = 0;
    for (let done = 0; done < gets; done += size) {
      for (const s of round++ % 2 ? [...servers].reverse() : servers) await batch(s, paths, Math.min(size, gets - done));
    }
    for (const s of servers) {
      console.log(`${s.label}: ${s.latencies.length} GETs: median ${median(s.latencies).toFixed(1)} µs, p99 ${percentile(s.latencies, 99).toFixed(1)} µs, server CPU ${((s.cpuMs * 1000) / s.latencies.length).toFixed(1)} µs per request`);
    }
  } finally {
    for (const s of servers) {
      s.agent.destroy();
      s.proc.kill('SIGTERM');
      await new Promise((r) => s.proc.once('exit', r));
      rmSync(s.dir, { recursive: true, force: true });
    }
  }
}

await main();
