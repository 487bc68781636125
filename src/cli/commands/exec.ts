import { Readable } from 'node:stream';
import { errorFromResponse } from '../client.js';
import { parseDuration } from '../duration.js';
import { ApiError, CliError, ConnectionError, UsageError, isAbortError } from '../errors.js';
import type { Pod } from '../types.js';
import { NAMESPACE_FLAG, sleep, type Command, type Context } from './common.js';

/** Channels of the server's exec framing (see src/server/app.ts podExec). */
const STDOUT = 1;
const STDERR = 2;
const EXIT = 3;
const ERROR = 4;

/** Waits until the container runs; returns its name. Throws when the pod ended or time ran out. */
async function waitRunning(ctx: Context, name: string, container: string | undefined, waitMs: number): Promise<string> {
  const path = `/api/v1/namespaces/${encodeURIComponent(ctx.namespace)}/pods/${encodeURIComponent(name)}`;
  const deadline = Date.now() + waitMs;
  for (;;) {
    let pod: Pod | undefined;
    try {
      pod = (await ctx.client.get(path, undefined, ctx.signal)) as Pod;
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404) || Date.now() >= deadline) throw e;
    }
    const names = (pod?.spec?.containers ?? []).map((c) => c.name ?? '');
    const preferred = pod?.metadata?.annotations?.['kubectl.kubernetes.io/default-container'];
    const cname = container ?? (preferred && names.includes(preferred) ? preferred : names[0]);
    if (pod && cname && ![...names, ...(pod.spec?.initContainers ?? []).map((c) => c.name ?? '')].includes(cname)) {
      throw new CliError(`container ${cname} is not valid for pod ${name}`);
    }
    const phase = pod?.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') throw new CliError(`cannot exec into a container in a completed pod; current phase is ${phase}`);
    const statuses = [...(pod?.status?.initContainerStatuses ?? []), ...(pod?.status?.containerStatuses ?? [])] as { name?: string; state?: { running?: unknown } }[];
    if (cname && statuses.some((s) => s.name === cname && s.state?.running)) return cname;
    if (Date.now() >= deadline) throw new CliError(`timed out waiting for container "${cname ?? ''}" of pod/${name} to run`);
    if (!(await sleep(Math.min(200, Math.max(1, deadline - Date.now())), ctx.signal))) throw new CliError('interrupted');
  }
}

/** Reads the framed response, writing stdout and stderr as they come; returns the exit code. */
async function relay(ctx: Context, body: AsyncIterable<Uint8Array>, pod: string): Promise<number> {
  const out = new TextDecoder();
  const err = new TextDecoder();
  let buf = Buffer.alloc(0);
  for await (const chunk of body) {
    buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk);
    while (buf.length >= 5) {
      const len = buf.readUInt32BE(1);
      if (buf.length < 5 + len) break;
      const channel = buf[0];
      const payload = buf.subarray(5, 5 + len);
      buf = buf.subarray(5 + len);
      if (channel === STDOUT) {
        const t = out.decode(payload, { stream: true });
        if (t) await ctx.out(t);
      } else if (channel === STDERR) {
        const t = err.decode(payload, { stream: true });
        if (t) await ctx.err(t);
      } else if (channel === EXIT) {
        const tail = out.decode();
        if (tail) await ctx.out(tail);
        const etail = err.decode();
        if (etail) await ctx.err(etail);
        const status = JSON.parse(payload.toString('utf8')) as { exitCode?: number };
        return typeof status.exitCode === 'number' ? status.exitCode : 1;
      } else if (channel === ERROR) {
        throw new CliError(JSON.parse(payload.toString('utf8'))?.message ?? 'exec failed');
      }
    }
  }
  throw new CliError(`the exec stream of pod/${pod} ended without the command's exit status`);
}

export const command: Command = {
  name: 'exec',
  summary: 'Run a command in a container of a running pod',
  usage: 'skiff exec POD [-c CONTAINER] [-i] [-n NS] -- COMMAND [ARGS...]',
  description: `
The command runs inside the container: with its environment and working directory, in its mount,
PID and hostname namespaces when the pod is sandboxed. Its output is streamed back and skiff exits
with its exit code. Waits for the container to be running (--pod-running-timeout).`,
  examples: `
  skiff exec trainer-worker-0 -- hostname
  skiff exec trainer-master-0 -c pytorch -- sh -c 'echo $MASTER_ADDR'
  echo hi | skiff exec -i mypod -- cat`,
  flags: [
    NAMESPACE_FLAG,
    { name: 'container', short: 'c', type: 'string', valueName: 'NAME', description: 'container to run in (default: the annotated default, else the first one)' },
    { name: 'stdin', short: 'i', type: 'boolean', description: "pass this command's standard input to the container's command" },
    { name: 'pod-running-timeout', type: 'string', default: '1m', valueName: 'DURATION', description: 'how long to wait for the pod and container to be running' },
  ],

  async run(ctx) {
    const a = ctx.args;
    const [target, ...cmd] = a.positionals;
    if (!target) throw new UsageError('you must specify a pod, and a command after --');
    if (cmd.length === 0) throw new UsageError('you must specify at least one command for the container (after --)');
    const name = target.startsWith('pod/') ? target.slice(4) : target.startsWith('pods/') ? target.slice(5) : target;
    if (name.includes('/')) throw new UsageError(`exec runs in a pod: "${target}" is not a pod name`);
    const waitMs = parseDuration(a.string('pod-running-timeout') ?? '1m');
    if (waitMs === undefined) throw new UsageError(`invalid --pod-running-timeout "${a.string('pod-running-timeout')}"`);

    const deadline = Date.now() + waitMs;
    let container = await waitRunning(ctx, name, a.string('container'), waitMs);
    const search = new URLSearchParams();
    for (const c of cmd) search.append('command', c);
    search.set('container', container);
    const stdin = a.boolean('stdin');
    if (stdin) search.set('stdin', 'true');
    const url = `${ctx.server}/api/v1/namespaces/${encodeURIComponent(ctx.namespace)}/pods/${encodeURIComponent(name)}/exec?${search}`;
    for (;;) {
      let res: Response;
      try {
        const init: RequestInit & { duplex?: 'half' } = { method: 'POST', signal: ctx.signal, headers: { Accept: 'application/vnd.skiff.exec.v1, application/json', ...ctx.client.authHeaders() } };
        if (stdin) {
          init.body = Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>;
          init.duplex = 'half';
        }
        res = await fetch(url, init);
      } catch (e) {
        if (isAbortError(e)) return 130;
        throw new ConnectionError(ctx.server, (e as Error).message);
      }
      if (!res.ok) {
        const e = await errorFromResponse(res);
        // the container restarted between our look and the request: look again while there is time
        if (e.code === 400 && /is not running/.test(e.message) && Date.now() < deadline && !stdin) {
          container = await waitRunning(ctx, name, container, Math.max(0, deadline - Date.now()));
          continue;
        }
        throw e;
      }
      if (!res.body) throw new CliError('the server sent no exec stream');
      try {
        return await relay(ctx, res.body as unknown as AsyncIterable<Uint8Array>, name);
      } catch (e) {
        if (isAbortError(e) || ctx.signal?.aborted) return 130;
        throw e;
      }
    }
  },
};
