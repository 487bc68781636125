// The kubelet API's /exec/{namespace}/{pod}/{container} and /attach/{namespace}/{pod}/{container},
// as kube-apiserver calls them for `kubectl exec` and `kubectl attach`: an HTTP upgrade to SPDY/3.1
// with the remotecommand protocol v4.channel.k8s.io. The API server opens one stream per channel,
// each named by its `streamType` header (error, stdin, stdout, stderr, resize); the command starts
// (or the attachment begins) once every stream the query asks for is open, and its end is a
// meta/v1 Status written on the error stream (kubectl exits with the code it carries). An attachment
// ends when the container's output does (it exited) or the API server goes away.
import type { IncomingMessage } from 'node:http';
import type { Duplex, Readable, Writable } from 'node:stream';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { Pod } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import type { PodAttachSession, PodAttachSource, PodExecSession, PodExecSource, TerminalSize } from '../../substrate/substrate.js';
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
  attach: PodAttachSource;
  log?: (msg: string) => void;
}

/** What runs behind the streams: a command, or the attached container. */
interface Running {
  stdin?: Writable;
  /** the output, each chunk on the stream it was written to, until the end; resolves with the Status to end on */
  output(write: (stream: 'stdout' | 'stderr', chunk: Buffer) => Promise<void> | undefined): Promise<ChannelStatus>;
  resize?(size: TerminalSize): Promise<void> | void;
  /** the API server went away before the end */
  kill(): void;
}

/** A kubelet's refusal before the upgrade: the status code and its text, as the kubelet writes it
 *  (plain text, which kube-apiserver passes on to kubectl). */
export class KubeletRefusal extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

function refuse(socket: Duplex, e: unknown): void {
  if (e instanceof KubeletRefusal) return rejectUpgradeText(socket, e.code, e.message);
  rejectUpgrade(socket, e);
}

/** `name_namespace`, the kubelet's full name of a Pod in its messages */
export const podFullName = (pod: StoredObject): string => `${pod.metadata.name}_${pod.metadata.namespace ?? 'default'}`;

/** Serves one upgrade request for /exec/... or /attach/... on the Pod; the container is the path's. */
export function serveKubeletExec(deps: KubeletExecDeps, pod: StoredObject, container: string, req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, kind: 'exec' | 'attach' = 'exec'): void {
  void startStreams(deps, pod, container, req, socket, head, url, kind).catch((e: unknown) => refuse(socket, e));
}

async function startStreams(deps: KubeletExecDeps, pod: StoredObject, container: string, req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, kind: 'exec' | 'attach'): Promise<void> {
  const p = pod as Pod & StoredObject;
  const spec = [...(p.spec.initContainers ?? []), ...p.spec.containers].find((c) => c.name === container);
  if (!spec) {
    // kube-apiserver checks the name first (`container X is not valid for pod P`); a kubelet asked directly answers this
    if (kind === 'attach') throw new KubeletRefusal(500, `container ${container} not found in pod ${podFullName(pod)}`);
    throw new ApiError(StatusReason.BadRequest, `container ${container} is not valid for pod ${p.metadata.name}`);
  }
  const command = url.searchParams.getAll('command');
  if (kind === 'exec' && command.length === 0) throw new ApiError(StatusReason.BadRequest, 'you must specify at least one command for the container');
  const flags = kubeletFlags(url);
  if (!flags.stdin && !flags.stdout && !flags.stderr) throw new ApiError(StatusReason.BadRequest, 'you must specify at least 1 of stdin, stdout, stderr');
  if (!String(req.headers.upgrade ?? '').toLowerCase().includes('spdy/3.1')) {
    throw new ApiError(StatusReason.BadRequest, `unable to upgrade: the kubelet API's ${kind} needs Upgrade: SPDY/3.1`);
  }
  const offered = headerList(req.headers['x-stream-protocol-version']);
  if (!offered.includes(EXEC_PROTOCOL)) {
    return rejectUpgradeText(socket, 403, `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${EXEC_PROTOCOL}]`, { 'X-Accepted-Stream-Protocol-Versions': EXEC_PROTOCOL });
  }
  // an attachment is made before the upgrade, as the kubelet asks the runtime for it: a container
  // that is not running is refused with a status code, not a Status on an error stream
  let attached: Running | undefined;
  const abort = new AbortController();
  if (kind === 'attach') {
    let session: PodAttachSession;
    try {
      session = await deps.attach.attach(pod, { container, stdin: flags.stdin }, abort.signal);
    } catch (e) {
      throw new KubeletRefusal(e instanceof ApiError && e.code === 404 ? 404 : 500, (e as Error).message);
    }
    attached = attachRunning(session, flags.tty, abort);
    if (socket.destroyed) return attached.kill();
  }
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${EXEC_PROTOCOL}\r\n\r\n`);

  const wanted = new Set(['error', ...(flags.stdin ? ['stdin'] : []), ...(flags.stdout ? ['stdout'] : []), ...(flags.stderr ? ['stderr'] : []), ...(flags.tty ? ['resize'] : [])]);
  const streams = new Map<string, SpdyStream>();
  let started = false;
  let finished = false;
  let kill: (() => void) | undefined = attached ? () => attached.kill() : undefined;
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
    // the API server went away: the command (or the attachment) goes with it
    onClose: () => {
      clearTimeout(timer);
      if (!finished) kill?.();
    },
    log: deps.log,
  });
  const timer = setTimeout(() => {
    if (!started) session.close(new Error(`timed out waiting for the API server to open the ${kind} streams`));
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
    let running: Running;
    if (attached) running = attached;
    else {
      try {
        running = execRunning(await deps.exec.exec(pod, { container, command, stdin: flags.stdin, tty: flags.tty }), command);
      } catch (e) {
        return finish(internalErrorStatus((e as Error).message));
      }
    }
    kill = () => running.kill();
    const input = running.stdin;
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
    // a container without stdin: what the client sends is read and dropped, as containerd does
    const resize = streams.get('resize');
    if (resize && running.resize) {
      const decoder = new ResizeDecoder();
      resize.onData = (d) => {
        try {
          for (const size of decoder.push(d)) void running.resize?.(size);
        } catch {
          resize.reset();
        }
      };
    }
    const out = { stdout: streams.get('stdout'), stderr: streams.get('stderr') ?? (flags.tty ? streams.get('stdout') : undefined) };
    let status: ChannelStatus;
    try {
      status = await running.output((stream, chunk) => {
        const to = out[stream];
        if (!to || to.write(chunk)) return undefined;
        return new Promise<void>((resolve) => session.onDrain(resolve));
      });
    } catch (e) {
      status = internalErrorStatus(`error ${kind === 'attach' ? 'attaching to container' : 'executing command in container'}: ${(e as Error).message}`);
    }
    if (!finished) finish(status);
  }
}

function execRunning(exec: PodExecSession, command: string[]): Running {
  const pump = (from: Readable, stream: 'stdout' | 'stderr', write: (stream: 'stdout' | 'stderr', chunk: Buffer) => Promise<void> | undefined): Promise<void> => new Promise((resolve) => {
    from.on('data', (chunk: Buffer) => {
      const wait = write(stream, chunk);
      if (wait) {
        from.pause();
        void wait.then(() => from.resume());
      }
    });
    from.once('end', resolve);
    from.once('error', () => resolve());
    from.once('close', resolve);
  });
  return {
    ...(exec.stdin ? { stdin: exec.stdin } : {}),
    async output(write) {
      const [end] = await Promise.all([exec.done, pump(exec.stdout, 'stdout', write), pump(exec.stderr, 'stderr', write)]);
      return end.exitCode === 0 ? successStatus() : exitStatus(command, end.exitCode);
    },
    ...(exec.resize ? { resize: (size: TerminalSize) => exec.resize?.(size) } : {}),
    kill: () => exec.kill(),
  };
}

function attachRunning(session: PodAttachSession, tty: boolean, abort: AbortController): Running {
  return {
    ...(session.stdin ? { stdin: session.stdin } : {}),
    async output(write) {
      for await (const chunk of session.output) {
        // on a terminal there is one output stream
        const wait = write(tty ? 'stdout' : chunk.stream, chunk.data);
        if (wait) await wait;
      }
      // detached: the container's stdin stays open for the next attachment (stdinOnce aside)
      session.stdin?.destroy();
      return successStatus();
    },
    ...(session.resize ? { resize: (size: TerminalSize) => session.resize?.(size) } : {}),
    kill: () => {
      abort.abort();
      session.stdin?.destroy();
    },
  };
}
