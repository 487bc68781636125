// The kubelet API's /exec/{namespace}/{pod}/{container}, as kube-apiserver calls it for `kubectl exec`:
// an HTTP upgrade to SPDY/3.1 with the remotecommand protocol v4.channel.k8s.io. The API server opens
// one stream per channel, each named by its `streamType` header (error, stdin, stdout, stderr,
// resize); the command starts once every stream the query asks for is open, and its end is a
// meta/v1 Status written on the error stream (kubectl exits with the code it carries).
import type { IncomingMessage } from 'node:http';
import type { Duplex, Readable } from 'node:stream';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { Pod } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import type { PodExecSource } from '../../substrate/substrate.js';
import { ResizeDecoder, exitStatus, internalErrorStatus, successStatus, type ChannelStatus } from './remotecommand.js';
import { SpdySession, type SpdyStream } from './spdy-session.js';
import { rejectUpgrade, rejectUpgradeText } from './upgrade.js';

export const EXEC_PROTOCOL = 'v4.channel.k8s.io';
/** how long the API server has to open the streams it asked for (the kubelet's streamCreationTimeout) */
const streamWaitMs = 30_000;
const streamTypes = new Set(['error', 'stdin', 'stdout', 'stderr', 'resize']);

function headerList(v: string | string[] | undefined): string[] {
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
}

/** the kubelet's names for the streams: `input`, `output`, `error`, `tty` ("1" or "true") */
function kubeletFlags(url: URL): { stdin: boolean; stdout: boolean; stderr: boolean; tty: boolean } {
  const flag = (name: string): boolean => {
    const v = url.searchParams.get(name);
    return v !== null && v !== '0' && v.toLowerCase() !== 'false';
  };
  const tty = flag('tty');
  // a terminal has one output stream
  return { stdin: flag('input'), stdout: flag('output'), stderr: flag('error') && !tty, tty };
}

export interface KubeletExecDeps {
  exec: PodExecSource;
  log?: (msg: string) => void;
}

/** Serves one upgrade request for /exec/... on the Pod; the container is the path's. */
export function serveKubeletExec(deps: KubeletExecDeps, pod: StoredObject, container: string, req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): void {
  const p = pod as Pod & StoredObject;
  if (![...(p.spec.initContainers ?? []), ...p.spec.containers].some((c) => c.name === container)) {
    return rejectUpgrade(socket, new ApiError(StatusReason.BadRequest, `container ${container} is not valid for pod ${p.metadata.name}`));
  }
  const command = url.searchParams.getAll('command');
  if (command.length === 0) return rejectUpgrade(socket, new ApiError(StatusReason.BadRequest, 'you must specify at least one command for the container'));
  const flags = kubeletFlags(url);
  if (!flags.stdin && !flags.stdout && !flags.stderr) return rejectUpgrade(socket, new ApiError(StatusReason.BadRequest, 'you must specify at least 1 of stdin, stdout, stderr'));
  if (!String(req.headers.upgrade ?? '').toLowerCase().includes('spdy/3.1')) {
    return rejectUpgrade(socket, new ApiError(StatusReason.BadRequest, 'unable to upgrade: the kubelet API\'s exec needs Upgrade: SPDY/3.1'));
  }
  const offered = headerList(req.headers['x-stream-protocol-version']);
  if (!offered.includes(EXEC_PROTOCOL)) {
    return rejectUpgradeText(socket, 403, `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${EXEC_PROTOCOL}]`, { 'X-Accepted-Stream-Protocol-Versions': EXEC_PROTOCOL });
  }
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${EXEC_PROTOCOL}\r\n\r\n`);

  const wanted = new Set(['error', ...(flags.stdin ? ['stdin'] : []), ...(flags.stdout ? ['stdout'] : []), ...(flags.stderr ? ['stderr'] : []), ...(flags.tty ? ['resize'] : [])]);
  const streams = new Map<string, SpdyStream>();
  let started = false;
  let finished = false;
  let kill: (() => void) | undefined;
  const session = new SpdySession({
    send: (b) => socket.write(b),
    onDrain: (cb) => socket.on('drain', cb),
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    close: () => socket.end(() => socket.destroy()),
  }, {
    vet: (headers) => {
      const type = headers.get('streamtype')?.[0] ?? '';
      return streamTypes.has(type) ? undefined : `unknown stream type "${type}"`;
    },
    onStream: (s) => {
      streams.set(s.header('streamtype') ?? '', s);
      if (!started && [...wanted].every((t) => streams.has(t))) {
        started = true;
        clearTimeout(timer);
        void run();
      }
    },
    // the API server went away: the command goes with it
    onClose: () => {
      clearTimeout(timer);
      if (!finished) kill?.();
    },
    log: deps.log,
  });
  const timer = setTimeout(() => {
    if (!started) session.close(new Error('timed out waiting for the API server to open the exec streams'));
  }, streamWaitMs);
  socket.on('data', (b: Buffer) => session.receive(b));
  socket.on('end', () => session.close());
  socket.on('error', () => session.close());
  socket.on('close', () => session.close());
  if (head.length) session.receive(head);

  const finish = (status: ChannelStatus): void => {
    finished = true;
    const err = streams.get('error');
    err?.write(Buffer.from(JSON.stringify(status)));
    for (const s of streams.values()) s.end();
    // the API server closes its side once it has read the status; ours goes a moment later
    setTimeout(() => session.close(), 1000).unref();
  };

  async function run(): Promise<void> {
    let exec;
    try {
      exec = await deps.exec.exec(pod, { container, command, stdin: flags.stdin, tty: flags.tty });
    } catch (e) {
      return finish(internalErrorStatus((e as Error).message));
    }
    kill = () => exec.kill();
    const input = exec.stdin;
    const stdinStream = streams.get('stdin');
    if (stdinStream && input) {
      input.on('error', () => { /* the command closed its stdin early */ });
      stdinStream.onData = (d) => {
        if (!input.write(d)) {
          session.pause();
          input.once('drain', () => session.resume());
        }
      };
      stdinStream.onEnd = () => input.end();
    }
    const resize = streams.get('resize');
    if (resize && exec.resize) {
      const decoder = new ResizeDecoder();
      resize.onData = (d) => {
        try {
          for (const size of decoder.push(d)) void exec.resize?.(size);
        } catch {
          resize.reset();
        }
      };
    }
    const pump = (from: Readable, to: SpdyStream | undefined): Promise<void> => new Promise((resolve) => {
      from.on('data', (chunk: Buffer) => {
        if (to && !to.write(chunk)) {
          from.pause();
          session.onDrain(() => from.resume());
        }
      });
      from.once('end', resolve);
      from.once('error', () => resolve());
      from.once('close', resolve);
    });
    const [end] = await Promise.all([
      exec.done,
      pump(exec.stdout, streams.get('stdout')),
      pump(exec.stderr, streams.get('stderr') ?? (flags.tty ? streams.get('stdout') : undefined)),
    ]);
    finish(end.exitCode === 0 ? successStatus() : exitStatus(command, end.exitCode));
  }
}
