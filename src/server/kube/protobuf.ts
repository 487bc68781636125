// Kubernetes' protobuf request bodies, as JSON objects. kubectl's typed clients send built-in kinds as
// `application/vnd.kubernetes.protobuf` (`kubectl create configmap|secret|namespace|job`, `auth
// can-i`, a typed delete's DeleteOptions); Skiff reads them with the message table that
// scripts/gen-protobuf.mjs makes from k8s.io/api's generated.proto, and answers in JSON, which those
// clients accept too.
import { readFileSync } from 'node:fs';
import { ApiError, StatusReason } from '../../api/errors.js';
import { schemaFilePath } from '../../api/structural-schema.js';

export const protobufMediaType = 'application/vnd.kubernetes.protobuf';

interface FieldDef {
  name: string;
  type?: string;
  map?: [string, string];
  repeated?: boolean;
  inline?: boolean;
  pointer?: boolean;
}

type Messages = Record<string, Record<string, FieldDef>>;

let table: Messages | undefined;
function messages(): Messages {
  table ??= (JSON.parse(readFileSync(schemaFilePath('protobuf.json'), 'utf8')) as { messages: Messages }).messages;
  return table;
}

export function isProtobuf(contentType: string | undefined): boolean {
  return (contentType ?? '').toLowerCase().startsWith(protobufMediaType);
}

function bad(why: string): ApiError {
  return new ApiError(StatusReason.BadRequest, `the protobuf request body could not be decoded: ${why}`);
}

/** a wire value: varint (bigint), 64- or 32-bit (bytes) or length-delimited (bytes) */
interface Wire {
  no: number;
  wire: number;
  v: bigint | Buffer;
}

function varint(buf: Buffer, pos: number): [bigint, number] {
  let out = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw bad('a varint runs past the end');
    const b = buf[pos++] as number;
    out |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [out, pos];
    shift += 7n;
    if (shift > 63n) throw bad('a varint is too long');
  }
}

function wires(buf: Buffer): Wire[] {
  const out: Wire[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [tag, p] = varint(buf, pos);
    pos = p;
    const no = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (wire === 0) {
      const [v, q] = varint(buf, pos);
      out.push({ no, wire, v });
      pos = q;
    } else if (wire === 2) {
      const [len, q] = varint(buf, pos);
      const end = q + Number(len);
      if (end > buf.length) throw bad('a field runs past the end');
      out.push({ no, wire, v: buf.subarray(q, end) });
      pos = end;
    } else if (wire === 1 || wire === 5) {
      const size = wire === 1 ? 8 : 4;
      if (pos + size > buf.length) throw bad('a field runs past the end');
      out.push({ no, wire, v: buf.subarray(pos, pos + size) });
      pos += size;
    } else {
      throw bad(`wire type ${wire} is not supported`);
    }
  }
  return out;
}

const numeric = new Set(['int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'bool', 'double', 'float', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64']);

function scalar(type: string, w: Wire): unknown {
  const { v } = w;
  if (type === 'string') return Buffer.isBuffer(v) ? v.toString('utf8') : '';
  if (type === 'bytes') return Buffer.isBuffer(v) ? v.toString('base64') : '';
  if (type === 'double' && Buffer.isBuffer(v) && v.length === 8) return v.readDoubleLE(0);
  if (type === 'float' && Buffer.isBuffer(v) && v.length === 4) return v.readFloatLE(0);
  if (typeof v !== 'bigint') throw bad(`a ${type} field has wire type ${w.wire}`);
  if (type === 'bool') return v !== 0n;
  if (type === 'int32' || type === 'int64') return Number(BigInt.asIntN(64, v));
  if (type === 'sint32' || type === 'sint64') return Number((v >> 1n) ^ -(v & 1n));
  return Number(v);
}

/** a packed repeated numeric field's values */
function unpack(type: string, buf: Buffer): unknown[] {
  if (type === 'double' || type === 'fixed64' || type === 'sfixed64') {
    return Array.from({ length: buf.length / 8 }, (_, i) => scalar(type, { no: 0, wire: 1, v: buf.subarray(i * 8, i * 8 + 8) }));
  }
  const out: unknown[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [v, q] = varint(buf, pos);
    out.push(scalar(type, { no: 0, wire: 0, v }));
    pos = q;
  }
  return out;
}

const meta = 'k8s.io.apimachinery.pkg.apis.meta.v1.';

function rfc3339(seconds: number, nanos: number, fractionDigits: number): string {
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  if (!fractionDigits) return `${base}Z`;
  return `${base}.${String(Math.floor(nanos / 10 ** (9 - fractionDigits))).padStart(fractionDigits, '0')}Z`;
}

/** the kinds whose JSON is not their message's fields */
function special(type: string, buf: Buffer): { value: unknown } | undefined {
  switch (type) {
    case `${meta}Time`:
    case `${meta}MicroTime`: {
      const f = message(type, buf) as { seconds?: number; nanos?: number };
      // a zero time is how Go writes an unset one
      if (!f.seconds && !f.nanos) return { value: undefined };
      return { value: rfc3339(f.seconds ?? 0, f.nanos ?? 0, type.endsWith('MicroTime') ? 6 : 0) };
    }
    case `${meta}Duration`: {
      const ns = (message(type, buf) as { duration?: number }).duration ?? 0;
      return { value: `${ns / 1e9}s` };
    }
    case 'k8s.io.apimachinery.pkg.util.intstr.IntOrString': {
      const f = message(type, buf) as { type?: number; intVal?: number; strVal?: string };
      return { value: f.type === 1 ? f.strVal ?? '' : f.intVal ?? 0 };
    }
    case 'k8s.io.apimachinery.pkg.api.resource.Quantity':
      return { value: (message(type, buf) as { string?: string }).string ?? '0' };
    case 'k8s.io.apimachinery.pkg.runtime.RawExtension':
    case `${meta}FieldsV1`: {
      const raw = wires(buf).find((w) => w.no === 1)?.v;
      if (!Buffer.isBuffer(raw) || raw.length === 0) return { value: undefined };
      try {
        return { value: JSON.parse(raw.toString('utf8')) };
      } catch {
        throw bad(`the raw JSON in a ${type.split('.').pop()} does not parse`);
      }
    }
  }
  return undefined;
}

function value(type: string, w: Wire): unknown {
  if (!messages()[type]) return scalar(type, w);
  if (!Buffer.isBuffer(w.v)) throw bad(`a ${type.split('.').pop()} field has wire type ${w.wire}`);
  const s = special(type, w.v);
  return s ? s.value : message(type, w.v);
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false || v === undefined;
}

/** a message as the JSON object Kubernetes would write for it */
function message(type: string, buf: Buffer): Record<string, unknown> {
  const fields = messages()[type];
  if (!fields) throw bad(`no message ${type}`);
  const out: Record<string, unknown> = {};
  for (const w of wires(buf)) {
    const f = fields[String(w.no)];
    if (!f) continue; // a field newer than the table: skipped, as a protobuf reader does
    if (f.map) {
      if (!Buffer.isBuffer(w.v)) throw bad(`map ${f.name} has wire type ${w.wire}`);
      let k: unknown = '';
      let v: unknown = f.map[1] === 'string' || f.map[1] === 'bytes' ? '' : undefined;
      for (const e of wires(w.v)) {
        if (e.no === 1) k = value(f.map[0], e);
        else if (e.no === 2) v = value(f.map[1], e);
      }
      const m = (out[f.name] ??= {}) as Record<string, unknown>;
      m[String(k)] = v ?? {};
      continue;
    }
    const type = f.type as string;
    if (f.repeated) {
      const list = (out[f.name] ??= []) as unknown[];
      if (numeric.has(type) && w.wire === 2 && Buffer.isBuffer(w.v)) list.push(...unpack(type, w.v));
      else list.push(value(type, w));
      continue;
    }
    const v = value(type, w);
    if (f.inline && v && typeof v === 'object') {
      Object.assign(out, v);
      continue;
    }
    // a plain field's zero is its default, which Kubernetes' JSON leaves out; a pointer's was set
    if (v === undefined || (!f.pointer && isZero(v))) {
      delete out[f.name];
      continue;
    }
    out[f.name] = v;
  }
  return out;
}

/** group/version → the protobuf package of its kinds */
function packageOf(apiVersion: string, kind: string): string | undefined {
  if (kind === 'DeleteOptions') return meta.slice(0, -1);
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  if (!version) return undefined;
  const short = group === '' ? 'core' : (group as string).replace(/\.k8s\.io$/, '');
  return `k8s.io.api.${short}.${version}`;
}

/**
 * Decodes a Kubernetes protobuf body (the `k8s\0` prefix, then runtime.Unknown with the object's
 * TypeMeta and bytes) into the JSON object it stands for.
 */
export function decodeProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || body.subarray(0, 4).toString('latin1') !== 'k8s\0') throw bad('it does not start with the k8s protobuf prefix');
  let apiVersion = '';
  let kind = '';
  let raw: Buffer = Buffer.alloc(0);
  for (const w of wires(body.subarray(4))) {
    if (w.no === 1 && Buffer.isBuffer(w.v)) {
      for (const t of wires(w.v)) {
        if (t.no === 1 && Buffer.isBuffer(t.v)) apiVersion = t.v.toString('utf8');
        if (t.no === 2 && Buffer.isBuffer(t.v)) kind = t.v.toString('utf8');
      }
    } else if (w.no === 2 && Buffer.isBuffer(w.v)) {
      raw = w.v;
    } else if (w.no === 3 && Buffer.isBuffer(w.v) && w.v.length) {
      throw bad(`content encoding ${w.v.toString('utf8')} is not supported`);
    }
  }
  const pkg = packageOf(apiVersion, kind);
  const type = pkg && `${pkg}.${kind}`;
  if (!type || !messages()[type]) {
    throw new ApiError(StatusReason.UnsupportedMediaType, `the body of the request was in an unknown format - protobuf is read for Kubernetes' built-in kinds Skiff serves, not ${apiVersion}/${kind}; send it as application/json`);
  }
  const out = message(type, raw);
  return { apiVersion, kind, ...out };
}
