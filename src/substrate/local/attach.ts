// `kubectl attach` on the local substrate: the container's output as skiff-shim appends it to the
// CRI log, from the moment of attaching, each piece on the stream it was written to (the pod log
// API merges the two; attach keeps them apart, as a container runtime's attach does).
import * as fs from 'node:fs';
import type { OutputChunk } from '../substrate.js';
import { FileChanges } from './file-changes.js';

const NL = 0x0a;
const POLL_MS = 100;
const READ_CHUNK = 256 * 1024;

/** One CRI log line `<timestamp> <stdout|stderr> <F|P> <content>` as the bytes the container wrote. */
export function entryOutput(line: Buffer): OutputChunk | null {
  const s1 = line.indexOf(0x20);
  const s2 = s1 < 0 ? -1 : line.indexOf(0x20, s1 + 1);
  if (s2 < 0) return null;
  const stream = line.toString('latin1', s1 + 1, s2);
  if (stream !== 'stdout' && stream !== 'stderr') return null;
  const s3 = line.indexOf(0x20, s2 + 1);
  const tag = line.toString('latin1', s2 + 1, s3 < 0 ? line.length : s3);
  const content = s3 < 0 ? Buffer.alloc(0) : line.subarray(s3 + 1);
  // a P entry is a piece of a longer line: the newline comes with the F entry that ends it
  return { stream, data: tag === 'P' ? content : Buffer.concat([content, Buffer.from('\n')]) };
}

/**
 * Yields what is appended to the log file after the call, until `isDone()` (the container exited:
 * what it wrote before is still read) or the signal aborts. Consecutive pieces of one stream come
 * out as one chunk.
 */
export function followOutput(file: string, isDone: () => boolean, signal: AbortSignal): AsyncGenerator<OutputChunk> {
  // where "after the call" starts is taken now, not when the caller first asks for output: an attach
  // that forwards stdin before it reads would otherwise skip the container's answer to it
  let start = 0;
  try {
    start = fs.statSync(file).size;
  } catch { /* not written yet: everything in it will be new */ }
  return followFrom(file, start, isDone, signal);
}

async function* followFrom(file: string, from: number, isDone: () => boolean, signal: AbortSignal): AsyncGenerator<OutputChunk> {
  let fh: fs.promises.FileHandle | undefined;
  let pos = from;
  let pending = Buffer.alloc(0);
  const changes = new FileChanges(POLL_MS, signal);
  try {
    while (!signal.aborted) {
      const done = isDone();
      if (!fh) {
        try {
          fh = await fs.promises.open(file, 'r');
          changes.watch(file);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        }
      }
      if (fh) {
        const size = (await fh.stat()).size;
        if (size < pos) { pos = 0; pending = Buffer.alloc(0); }
        const out: OutputChunk[] = [];
        while (pos < size) {
          const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, size - pos));
          const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
          if (bytesRead === 0) break;
          pos += bytesRead;
          const data = pending.length ? Buffer.concat([pending, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
          let start = 0;
          for (let nl = data.indexOf(NL); nl !== -1; nl = data.indexOf(NL, start)) {
            const chunk = entryOutput(data.subarray(start, nl));
            start = nl + 1;
            if (!chunk) continue;
            const last = out[out.length - 1];
            if (last && last.stream === chunk.stream) last.data = Buffer.concat([last.data, chunk.data]);
            else out.push(chunk);
          }
          pending = Buffer.from(data.subarray(start));
        }
        for (const c of out) yield c;
      }
      if (done) return;
      await changes.next();
    }
  } finally {
    changes.close();
    await fh?.close();
  }
}
