// Reading the CRI-format container logs that skiff-shim writes, for the pod log API.
//
// Each line of the file is one entry: `<RFC3339Nano> <stdout|stderr> <F|P> <content>`. `P` entries
// are pieces of a longer line; the line goes on in the next entry and ends with an `F` one. Output is
// what Kubernetes' pod log endpoint returns: the content, one line per logical line, optionally
// prefixed with the timestamp of its first entry.
import * as fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { FileChanges } from './file-changes.js';

export interface LogOptions { tailLines?: number; timestamps?: boolean; sinceSeconds?: number; limitBytes?: number }

const NL = 0x0a;
const SPACE = 0x20;
const READ_CHUNK = 256 * 1024;
const TAIL_CHUNK = 64 * 1024;
const FOLLOW_POLL_MS = 100;

/** Returns the log text as Kubernetes' pod log endpoint does: content lines only, each prefixed with
 *  '<timestamp> ' when timestamps is true; P chunks are joined with the following line.
 *  A log file that does not exist (yet) reads as empty. */
export async function readLog(file: string, opts: LogOptions): Promise<string> {
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw e;
  }
  try {
    const size = (await fh.stat()).size;
    const start = opts.tailLines === undefined ? 0 : await findTailStart(fh, size, opts.tailLines);
    const fmt = new Formatter(opts);
    const reader = new LineReader(fh, start);
    let out = '';
    await reader.read(size, (line) => { out += fmt.line(line); return !fmt.full; });
    return out + fmt.end();
  } finally {
    await fh.close();
  }
}

/** Follow: yields existing content (honouring tailLines) then new lines as they are appended, until
 *  `isDone()` returns true (the container exited, so nothing more will come: what is in the file
 *  then is still read) or the signal aborts. Also ends once limitBytes have been returned. */
export async function* followLog(file: string, opts: LogOptions, isDone: () => boolean, signal: AbortSignal): AsyncGenerator<string> {
  const fmt = new Formatter(opts);
  let fh: fs.promises.FileHandle | undefined;
  let reader: LineReader | undefined;
  const changes = new FileChanges(FOLLOW_POLL_MS, signal);
  try {
    while (!signal.aborted) {
      // Sampled before reading: everything the container wrote before it was done is in the file.
      const done = isDone();
      if (!fh) {
        try {
          fh = await fs.promises.open(file, 'r');
          const size = (await fh.stat()).size;
          reader = new LineReader(fh, opts.tailLines === undefined ? 0 : await findTailStart(fh, size, opts.tailLines));
          changes.watch(file);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        }
      }
      if (fh && reader) {
        const size = (await fh.stat()).size;
        if (size < reader.pos) reader.reset(); // truncated under us: start over
        let out = '';
        await reader.read(size, (line) => { out += fmt.line(line); return !fmt.full; });
        if (done || fmt.full) out += fmt.end();
        if (out) yield out;
        if (fmt.full) return;
      }
      if (done) return;
      await changes.next();
    }
  } finally {
    changes.close();
    await fh?.close();
  }
}

/** Reads whole physical lines (without their '\n') forward from an offset; an incomplete last line
 *  is kept for the next call. */
class LineReader {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly fh: fs.promises.FileHandle, public pos: number) {}

  reset(): void {
    this.pos = 0;
    this.pending = Buffer.alloc(0);
  }

  /** Calls onLine for each complete line up to `end`; stops early when onLine returns false. */
  async read(end: number, onLine: (line: Buffer) => boolean): Promise<void> {
    while (this.pos < end) {
      const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, end - this.pos));
      const { bytesRead } = await this.fh.read(buf, 0, buf.length, this.pos);
      if (bytesRead === 0) return;
      this.pos += bytesRead;
      const data = this.pending.length ? Buffer.concat([this.pending, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
      let start = 0;
      for (let nl = data.indexOf(NL); nl !== -1; nl = data.indexOf(NL, start)) {
        const more = onLine(data.subarray(start, nl));
        start = nl + 1;
        if (!more) return;
      }
      this.pending = Buffer.from(data.subarray(start));
    }
  }
}

interface Entry { timestamp: string; partial: boolean; content: Buffer }

/** Splits one physical line into its fields. */
function parseEntry(line: Buffer): Entry | null {
  const s1 = line.indexOf(SPACE);
  if (s1 <= 0) return null;
  const s2 = line.indexOf(SPACE, s1 + 1);
  if (s2 === -1) return null;
  const timestamp = line.toString('latin1', 0, s1);
  const s3 = line.indexOf(SPACE, s2 + 1);
  const tagEnd = s3 === -1 ? line.length : s3;
  if (tagEnd - s2 === 2 && (line[s2 + 1] === 0x46 /* F */ || line[s2 + 1] === 0x50 /* P */)) {
    return { timestamp, partial: line[s2 + 1] === 0x50, content: s3 === -1 ? Buffer.alloc(0) : line.subarray(s3 + 1) };
  }
  // No tag: an older writer; the rest of the line is the content.
  return { timestamp, partial: false, content: line.subarray(s2 + 1) };
}

/** Nanoseconds since the epoch of an RFC3339(Nano) timestamp, as a bigint; null if unparseable. */
function timestampNs(ts: string): bigint | null {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(ts);
  if (!m) return null;
  const secs = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(secs)) return null;
  return BigInt(secs) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/** Turns entries into pod log text, applying timestamps, sinceSeconds and limitBytes. */
class Formatter {
  private inLine = false; // the last entry was a P: the next one continues its line
  private skipping = false; // the current line is older than sinceSeconds
  private remaining: number;
  private readonly decoder = new StringDecoder('utf8');
  private readonly since: bigint | null;

  constructor(private readonly opts: LogOptions) {
    this.remaining = opts.limitBytes !== undefined && opts.limitBytes >= 0 ? opts.limitBytes : Infinity;
    this.since = opts.sinceSeconds !== undefined
      ? (BigInt(Date.now()) - BigInt(Math.floor(opts.sinceSeconds * 1000))) * 1_000_000n
      : null;
  }

  get full(): boolean { return this.remaining <= 0; }

  line(raw: Buffer): string {
    const e = parseEntry(raw);
    if (!e || this.full) return '';
    let out = '';
    if (!this.inLine) {
      const ns = this.since === null ? null : timestampNs(e.timestamp);
      this.skipping = ns !== null && this.since !== null && ns < this.since;
      if (!this.skipping && this.opts.timestamps) out += this.emit(Buffer.from(e.timestamp + ' ', 'latin1'));
    }
    if (!this.skipping) {
      out += this.emit(e.content);
      if (!e.partial) out += this.emit(Buffer.from('\n'));
    }
    this.inLine = e.partial;
    return out;
  }

  /** The rest of a multi-byte character cut by limitBytes or left at the end. */
  end(): string { return this.decoder.end(); }

  private emit(b: Buffer): string {
    if (this.full) return '';
    const part = b.length > this.remaining ? b.subarray(0, this.remaining) : b;
    this.remaining -= part.length;
    return this.decoder.write(part);
  }
}

/** Offset where the last n logical lines of the file start, reading backwards in chunks. A logical
 *  line ends with an F entry, or with the end of the file after P entries (a line still being
 *  written). An incomplete last physical line (no '\n' yet) is not counted. */
async function findTailStart(fh: fs.promises.FileHandle, size: number, n: number): Promise<number> {
  let pos = size;
  let next = Buffer.alloc(0); // the start of the chunk read before (which follows the current one)
  let end = -1; // offset just past the last '\n': where complete data ends
  let after = -1; // start of the line evaluated last (the one after the current)
  let count = 0;
  while (pos > 0) {
    const len = Math.min(TAIL_CHUNK, pos);
    pos -= len;
    const chunk = Buffer.allocUnsafe(len);
    const { bytesRead } = await fh.read(chunk, 0, len, pos);
    if (bytesRead < len) return 0; // shrank under us: read it all
    const data = Buffer.concat([chunk, next.subarray(0, 256)]);
    for (let i = len - 1; i >= -1; i--) {
      if (i >= 0 && data[i] !== NL) continue;
      if (i === -1 && pos > 0) break; // the line goes on into the chunk before
      if (end === -1) {
        if (i === -1) break;
        end = after = pos + i + 1;
        if (n <= 0) return end;
        continue;
      }
      // The line starting at pos+i+1 is complete: is it the end of a logical line?
      const header = data.subarray(i + 1, i + 1 + 128);
      const nl = header.indexOf(NL);
      const entry = parseEntry(nl === -1 ? header : header.subarray(0, nl));
      const boundary = after === end || !entry?.partial;
      if (boundary) {
        if (count === n) return after;
        count++;
      }
      after = pos + i + 1;
    }
    next = chunk;
  }
  return 0;
}

// FallbackToLogsOnError: Kubernetes' kubelet takes the log's last 80 lines or 2048 bytes, the smaller
export const terminationLogLines = 80;
const terminationLogBytes = 2048;

/** the end of a log as a termination message: its last lines, at most terminationLogBytes of them */
export function logTail(log: string): string {
  const text = log.replace(/\s+$/, '');
  const bytes = Buffer.from(text);
  if (bytes.length <= terminationLogBytes) return text;
  // cut at a line start within the last 2048 bytes, so the message begins with a whole line
  const end = bytes.subarray(bytes.length - terminationLogBytes).toString('utf8').replace(/^\uFFFD+/, '');
  const nl = end.indexOf('\n');
  return nl >= 0 && nl < end.length - 1 ? end.slice(nl + 1) : end;
}
