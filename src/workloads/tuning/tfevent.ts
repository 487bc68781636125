// TensorFlow event files (what tf.summary and TensorBoard's SummaryWriter write) read for the
// TensorFlowEvent metrics collector, without TensorFlow: TFRecord framing, then the Event and Summary
// protobuf messages, decoded by hand for the few fields a metric needs.
//
// TFRecord: uint64 length (little-endian), uint32 masked CRC32C of those 8 bytes, the data, uint32
// masked CRC32C of the data. A record cut short at the end of the file (the writer is still writing)
// ends the read without error; a checksum that does not match is an error naming the offset.
import type { MetricLog } from '../../api/tuning-types.js';
import { epochToRfc3339 } from './metrics.js';

export class TfEventError extends Error {
  override readonly name = 'TfEventError';
}

const crcTable = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/** CRC-32C (Castagnoli), as TFRecord uses */
export function crc32c(buf: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of buf) c = (crcTable[(c ^ b) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** TFRecord's masking of a CRC, so a CRC of data that holds CRCs is not trivially related */
export function maskedCrc(buf: Uint8Array): number {
  const c = crc32c(buf);
  return ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

/** the records of a TFRecord file, whole ones only */
export function readRecords(file: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let off = 0;
  while (off + 12 <= file.length) {
    const header = file.subarray(off, off + 8);
    if (file.readUInt32LE(off + 8) !== maskedCrc(header)) throw new TfEventError(`TFRecord length checksum mismatch at byte ${off}`);
    const len = Number(file.readBigUInt64LE(off));
    const end = off + 12 + len + 4;
    if (end > file.length) break;
    const data = file.subarray(off + 12, off + 12 + len);
    if (file.readUInt32LE(off + 12 + len) !== maskedCrc(data)) throw new TfEventError(`TFRecord data checksum mismatch at byte ${off}`);
    out.push(data);
    off = end;
  }
  return out;
}

// ---- protobuf wire format ---------------------------------------------------------------------

interface Field {
  no: number;
  wire: number;
  /** varint value (as a bigint), or the bytes of a length-delimited / fixed field */
  varint?: bigint;
  bytes?: Buffer;
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let off = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (off >= buf.length) throw new TfEventError('truncated protobuf varint');
      const b = buf[off++] as number;
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  while (off < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, varint: varint() });
    else if (wire === 1 || wire === 5) {
      const n = wire === 1 ? 8 : 4;
      if (off + n > buf.length) throw new TfEventError('truncated protobuf fixed field');
      out.push({ no, wire, bytes: buf.subarray(off, off + n) });
      off += n;
    } else if (wire === 2) {
      const n = Number(varint());
      if (off + n > buf.length) throw new TfEventError('truncated protobuf field');
      out.push({ no, wire, bytes: buf.subarray(off, off + n) });
      off += n;
    } else throw new TfEventError(`unsupported protobuf wire type ${wire}`);
  }
  return out;
}

/** one scalar summary value of an event */
export interface ScalarEvent {
  wallTime: number;
  step: number;
  tag: string;
  value: number;
}

// TensorFlow's DataType numbers for the scalar types a metric is written as
const DT_FLOAT = 1;
const DT_DOUBLE = 2;
const DT_INT32 = 3;
const DT_INT64 = 9;

/** a scalar from a TensorProto: its typed value list or its raw content, by dtype */
function tensorScalar(buf: Buffer): number | undefined {
  let dtype = 0;
  let content: Buffer | undefined;
  for (const f of fields(buf)) {
    if (f.no === 1 && f.wire === 0) dtype = Number(f.varint);
    else if (f.no === 4 && f.bytes) content = f.bytes;
    else if (f.no === 5 && f.bytes) return f.wire === 5 ? f.bytes.readFloatLE(0) : f.bytes.length >= 4 ? f.bytes.readFloatLE(0) : undefined;
    else if (f.no === 6 && f.bytes) return f.bytes.length >= 8 ? f.bytes.readDoubleLE(0) : undefined;
    else if ((f.no === 7 || f.no === 10) && f.wire === 0) return Number(BigInt.asIntN(64, f.varint as bigint));
    else if ((f.no === 7 || f.no === 10) && f.bytes) return Number(BigInt.asIntN(64, fields(Buffer.concat([Buffer.from([8]), f.bytes]))[0]?.varint ?? 0n));
  }
  if (!content) return undefined;
  if (dtype === DT_FLOAT && content.length >= 4) return content.readFloatLE(0);
  if (dtype === DT_DOUBLE && content.length >= 8) return content.readDoubleLE(0);
  if (dtype === DT_INT32 && content.length >= 4) return content.readInt32LE(0);
  if (dtype === DT_INT64 && content.length >= 8) return Number(content.readBigInt64LE(0));
  return undefined;
}

/** the scalar values (simple_value, or a scalar tensor) of every event in a TFRecord file */
export function readScalarEvents(file: Buffer): ScalarEvent[] {
  const out: ScalarEvent[] = [];
  for (const rec of readRecords(file)) {
    let wallTime = 0;
    let step = 0;
    const summaries: Buffer[] = [];
    for (const f of fields(rec)) {
      if (f.no === 1 && f.wire === 1 && f.bytes) wallTime = f.bytes.readDoubleLE(0);
      else if (f.no === 2 && f.wire === 0) step = Number(BigInt.asIntN(64, f.varint as bigint));
      else if (f.no === 5 && f.bytes) summaries.push(f.bytes);
    }
    for (const s of summaries) {
      for (const vf of fields(s)) {
        if (vf.no !== 1 || !vf.bytes) continue;
        let tag = '';
        let value: number | undefined;
        for (const f of fields(vf.bytes)) {
          if (f.no === 1 && f.bytes) tag = f.bytes.toString('utf8');
          else if (f.no === 2 && f.wire === 5 && f.bytes) value = f.bytes.readFloatLE(0);
          else if (f.no === 8 && f.bytes) value = tensorScalar(f.bytes);
        }
        if (value !== undefined) out.push({ wallTime, step, tag, value });
      }
    }
  }
  return out;
}

function dirname(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? '' : p.slice(0, i);
}

/**
 * Katib's rule for which tags a metric takes: the tag starts with the metric name's last `/` part,
 * and, when the name has a directory part (`train/accuracy`), the event file's directory ends with it.
 */
export function tagMatches(tag: string, metricName: string, filePath: string): boolean {
  const parts = metricName.split('/');
  const last = parts[parts.length - 1] as string;
  const wantDir = parts.length >= 2 ? dirname(metricName) : dirname(filePath);
  return tag.startsWith(last) && dirname(filePath).endsWith(wantDir);
}

/**
 * Metric logs from the event files of a directory, file by file: each matching value stamped with
 * its event's wall time.
 */
export function tfEventMetrics(files: { path: string; data: Buffer }[], names: string[]): MetricLog[] {
  const out: MetricLog[] = [];
  for (const f of files) {
    let events: ScalarEvent[];
    try {
      events = readScalarEvents(f.data);
    } catch {
      // a file that is not an event file is passed over, as Katib's collector does
      continue;
    }
    for (const name of names) {
      for (const e of events) {
        if (tagMatches(e.tag, name, f.path)) out.push({ timeStamp: epochToRfc3339(e.wallTime), name, value: String(e.value) });
      }
    }
  }
  return out;
}
