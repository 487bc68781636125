// Pod subresources that stream: log and exec.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { ApiError, StatusReason } from '../../api/errors.js';
import { podLogContainer } from '../../api/core.js';
import type { Pod } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import type { PodExecSource, PodLogOptions, PodLogSource } from '../../substrate/substrate.js';
import { q, qBool, qInt } from './query.js';

/** The framing of an exec response (content type EXEC_CONTENT_TYPE): frames of one channel byte, a
 *  big-endian uint32 length and that many bytes. Channel 1 is stdout, 2 stderr; the last frame is
 *  channel 3, a JSON `{exitCode, signal?}`, or channel 4, a JSON Status for a failure after the start. */
export const ExecChannel = { stdout: 1, stderr: 2, exit: 3, error: 4 } as const;
export const EXEC_CONTENT_TYPE = 'application/vnd.skiff.exec.v1';

export function execFrame(channel: number, payload: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const head = Buffer.alloc(5);
  head.writeUInt8(channel, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

export async function servePodLog(logs: PodLogSource, pod: StoredObject, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const opts: PodLogOptions = {
    container: q(url, 'container'),
    follow: qBool(url, 'follow') && url.searchParams.has('follow'),
    previous: qBool(url, 'previous') && url.searchParams.has('previous'),
    tailLines: qInt(url, 'tailLines'),
    timestamps: qBool(url, 'timestamps') && url.searchParams.has('timestamps'),
    sinceSeconds: qInt(url, 'sinceSeconds'),
    limitBytes: qInt(url, 'limitBytes'),
  };
  const p = pod as Pod & StoredObject;
  if (!p.spec?.nodeName) {
    // no node runs it yet (a scheduling gate, or no room): kube-apiserver has no kubelet to ask, so after
    // checking the container it answers 204 with no body (LogLocation's empty location), and kubectl
    // logs prints nothing and succeeds
    podLogContainer(p, opts.container);
    res.writeHead(204);
    res.end();
    return;
  }
  const abort = new AbortController();
  req.on('close', () => abort.abort());
  res.on('close', () => abort.abort());
  const chunks = await logs.logs(pod, opts, abort.signal);
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'transfer-encoding': 'chunked' });
  res.flushHeaders();
  let sent = 0;
  for await (const chunk of chunks) {
    if (abort.signal.aborted) break;
    if (opts.limitBytes !== undefined) {
      const room = opts.limitBytes - sent;
      if (room <= 0) break;
      const buf = Buffer.from(chunk);
      res.write(buf.subarray(0, room));
      sent += Math.min(room, buf.length);
    } else res.write(chunk);
  }
  res.end();
}

/**
 * POST /api/v1/namespaces/{ns}/pods/{name}/exec?command=A&command=B[&container=C][&stdin=true]:
 * runs the command in the container and streams its output in EXEC_CONTENT_TYPE frames, ending
 * with its exit status. With stdin=true the request body is the command's standard input. The
 * command is killed when the client goes away.
 */
export async function servePodExec(source: PodExecSource | undefined, pod: StoredObject, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  if (!source) throw new ApiError(StatusReason.MethodNotAllowed, 'this server cannot run commands in pods');
  const command = url.searchParams.getAll('command');
  if (command.length === 0) throw new ApiError(StatusReason.BadRequest, 'you must specify at least one command for the container (query parameter command)');
  const stdin = qBool(url, 'stdin') && url.searchParams.has('stdin');
  const session = await source.exec(pod, { container: q(url, 'container'), command, stdin });
  let finished = false;
  const onClose = (): void => {
    if (!finished) session.kill();
  };
  res.on('close', onClose);
  if (session.stdin) {
    const input = session.stdin;
    input.on('error', () => { /* the command closed its stdin early */ });
    req.pipe(input);
  } else {
    req.resume();
  }
  res.writeHead(200, { 'content-type': EXEC_CONTENT_TYPE, 'cache-control': 'no-store', 'transfer-encoding': 'chunked' });
  res.flushHeaders();
  const pump = (stream: Readable, channel: number): Promise<void> => new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      if (!res.write(execFrame(channel, chunk))) {
        stream.pause();
        res.once('drain', () => stream.resume());
      }
    });
    stream.once('end', resolve);
    stream.once('error', () => resolve());
    stream.once('close', resolve);
  });
  const [status] = await Promise.all([session.done, pump(session.stdout, ExecChannel.stdout), pump(session.stderr, ExecChannel.stderr)]);
  finished = true;
  res.off('close', onClose);
  res.end(execFrame(ExecChannel.exit, JSON.stringify(status)));
}
