// Request bodies in Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`), which
// client-go, and so kubectl's typed commands (`create namespace`, `create secret`, `cordon`, ...), send
// for Kubernetes' own kinds. A body is read into the object the same client would have sent as JSON:
// the message fills the Go struct, and the struct's JSON (omitempty, pointers, inline fields, Time,
// Quantity, IntOrString, bytes as base64, maps with sorted keys) is what the rest of Skiff sees.
// The messages come from k8s.io/api's generated.proto, as data (src/api/schemas/protobuf.json,
// made by scripts/gen-protobuf.mjs).
import { readFileSync } from 'node:fs';
import { ApiError, StatusReason } from './errors.js';
import { schemaFilePath } from './structural-schema.js';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** the 4 bytes before every protobuf object: `k8s\0` */
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** [field number, JSON name ('' when inline), type, flags: r repeated, p pointer, o omitempty, z omitzero, i inline] */
type FieldDesc = [number, string, string, string];
interface MessageDesc {
  f: FieldDesc[];
  /** a named Go slice: the message's one field holds the elements */
  list?: boolean;
}
interface Descriptors {
  kinds: Record<string, string>;
  messages: Record<string, MessageDesc>;
}

let descriptors: Descriptors | undefined;
function data(): Descriptors {
  descriptors ??= JSON.parse(readFileSync(schemaFilePath('protobuf.json'), 'utf8')) as Descriptors;
  return descriptors;
}

/** true for `application/vnd.kubernetes.protobuf` with or without parameters */
export function isProtobufMediaType(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() === PROTOBUF_MEDIA_TYPE;
}

/** whether a kind's protobuf bodies can be read (Kubernetes' own kinds; never a custom resource) */
export function readsProtobuf(apiVersion: string, kind: string): boolean {
  return data().kinds[`${apiVersion}/${kind}`] !== undefined;
}

/** a decoding failure, in the words of Go's generated unmarshalers */
class WireError extends Error {}

// ---------------------------------------------------------------- the wire

type Raw = { wire: 0; v: bigint } | { wire: 1 | 5; b: Buffer } | { wire: 2; b: Buffer };

function readVarint(buf: Buffer, at: { i: number }): bigint {
  let out = 0n;
  for (let shift = 0n; shift < 70n; shift += 7n) {
    if (at.i >= buf.length) throw new WireError('unexpected EOF');
    const b = buf[at.i++] as number;
    out |= BigInt(b & 0x7f) << shift;
    if (b < 0x80) return out;
  }
  throw new WireError('proto: integer overflow');
}

/** every field of one message, by number, in the order they came */
function readFields(buf: Buffer): Map<number, Raw[]> {
  const out = new Map<number, Raw[]>();
  const at = { i: 0 };
  while (at.i < buf.length) {
    const key = readVarint(buf, at);
    const num = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (num <= 0) throw new WireError(`proto: illegal tag ${num} (wire type ${wire})`);
    let raw: Raw;
    switch (wire) {
      case 0:
        raw = { wire, v: readVarint(buf, at) };
        break;
      case 1:
      case 5: {
        const n = wire === 1 ? 8 : 4;
        if (at.i + n > buf.length) throw new WireError('unexpected EOF');
        raw = { wire, b: buf.subarray(at.i, at.i + n) };
        at.i += n;
        break;
      }
      case 2: {
        const len = readVarint(buf, at);
        if (len < 0n || len > BigInt(buf.length - at.i)) throw new WireError(len < 0n ? 'proto: negative length found during unmarshaling' : 'unexpected EOF');
        raw = { wire, b: buf.subarray(at.i, at.i + Number(len)) };
        at.i += Number(len);
        break;
      }
      default:
        throw new WireError(`proto: illegal wireType ${wire}`);
    }
    const list = out.get(num);
    if (list) list.push(raw);
    else out.set(num, [raw]);
  }
  return out;
}

// ---------------------------------------------------------------- scalars

const numeric = new Set(['int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64', 'double', 'float', 'bool']);

function scalar(type: string, raw: Raw, field: string): unknown {
  const wrong = (): WireError => new WireError(`proto: wrong wireType = ${raw.wire} for field ${field}`);
  switch (type) {
    case 'string':
      if (raw.wire !== 2) throw wrong();
      return raw.b.toString('utf8');
    case 'bytes':
      if (raw.wire !== 2) throw wrong();
      return raw.b.toString('base64');
    case 'bool':
      if (raw.wire !== 0) throw wrong();
      return raw.v !== 0n;
    case 'int32':
      if (raw.wire !== 0) throw wrong();
      return Number(BigInt.asIntN(32, raw.v));
    case 'int64':
      if (raw.wire !== 0) throw wrong();
      return Number(BigInt.asIntN(64, raw.v));
    case 'uint32':
      if (raw.wire !== 0) throw wrong();
      return Number(BigInt.asUintN(32, raw.v));
    case 'uint64':
      if (raw.wire !== 0) throw wrong();
      return Number(BigInt.asUintN(64, raw.v));
    case 'sint32':
    case 'sint64':
      if (raw.wire !== 0) throw wrong();
      return Number((raw.v >> 1n) ^ -(raw.v & 1n));
    case 'double':
      if (raw.wire !== 1) throw wrong();
      return raw.b.readDoubleLE(0);
    case 'float':
      if (raw.wire !== 5) throw wrong();
      return raw.b.readFloatLE(0);
    case 'fixed32':
    case 'sfixed32':
      if (raw.wire !== 5) throw wrong();
      return type === 'fixed32' ? raw.b.readUInt32LE(0) : raw.b.readInt32LE(0);
    case 'fixed64':
    case 'sfixed64':
      if (raw.wire !== 1) throw wrong();
      return Number(type === 'fixed64' ? raw.b.readBigUInt64LE(0) : raw.b.readBigInt64LE(0));
  }
  throw new WireError(`proto: field ${field} has the unknown type ${type}`);
}

/** a repeated numeric field may come packed: one length-delimited run of values */
function unpack(type: string, raws: Raw[]): Raw[] {
  if (!numeric.has(type) || raws.every((r) => r.wire !== 2)) return raws;
  const out: Raw[] = [];
  for (const r of raws) {
    if (r.wire !== 2) {
      out.push(r);
      continue;
    }
    const fixed = type === 'double' || type.endsWith('fixed64') ? 8 : type === 'float' || type.endsWith('fixed32') ? 4 : 0;
    if (fixed) {
      if (r.b.length % fixed) throw new WireError('unexpected EOF');
      for (let i = 0; i < r.b.length; i += fixed) out.push({ wire: fixed === 8 ? 1 : 5, b: r.b.subarray(i, i + fixed) });
    } else {
      const at = { i: 0 };
      while (at.i < r.b.length) out.push({ wire: 0, v: readVarint(r.b, at) });
    }
  }
  return out;
}

function zeroScalar(type: string): unknown {
  if (type === 'string') return '';
  if (type === 'bool') return false;
  if (type === 'bytes') return null;
  return 0;
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false || v === null;
}

// ---------------------------------------------------------------- the types with their own JSON

/** seconds of Go's zero time.Time (year 1), which marshals as null */
const GO_ZERO_SECONDS = -62135596800n;

function timestamp(buf: Buffer, micro: boolean): string | null {
  if (!buf.length) return null;
  const f = readFields(buf);
  const seconds = last(f.get(1)) ? BigInt.asIntN(64, varint(last(f.get(1)) as Raw, 'seconds')) : 0n;
  const nanos = micro && last(f.get(2)) ? Number(BigInt.asIntN(32, varint(last(f.get(2)) as Raw, 'nanos'))) : 0;
  if (seconds === GO_ZERO_SECONDS && nanos === 0) return null;
  const d = new Date(Number(seconds) * 1000);
  if (Number.isNaN(d.getTime())) throw new WireError(`proto: the time ${seconds}s is out of range`);
  const base = d.toISOString().slice(0, 19);
  // metav1.Time is written to the second; MicroTime to the microsecond (RFC3339Micro keeps its zeros)
  return micro ? `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${base}Z`;
}

function varint(raw: Raw, field: string): bigint {
  if (raw.wire !== 0) throw new WireError(`proto: wrong wireType = ${raw.wire} for field ${field}`);
  return raw.v;
}

function last(raws: Raw[] | undefined): Raw | undefined {
  return raws?.[raws.length - 1];
}

/** Go's time.Duration.String(): 1h2m3.5s, 1.5ms, 0s */
export function goDuration(ns: bigint): string {
  if (ns === 0n) return '0s';
  const neg = ns < 0n;
  let u = neg ? -ns : ns;
  const frac = (v: bigint, digits: number): string => {
    const s = v.toString().padStart(digits, '0').replace(/0+$/, '');
    return s ? `.${s}` : '';
  };
  let out: string;
  if (u < 1_000_000_000n) {
    const [unit, scale, digits] = u < 1000n ? ['ns', 1n, 0] : u < 1_000_000n ? ['µs', 1000n, 3] : ['ms', 1_000_000n, 6];
    out = `${u / scale}${digits ? frac(u % scale, digits) : ''}${unit}`;
  } else {
    const fracS = frac(u % 1_000_000_000n, 9);
    u /= 1_000_000_000n;
    const s = u % 60n;
    u /= 60n;
    out = `${s}${fracS}s`;
    if (u > 0n) {
      out = `${u % 60n}m${out}`;
      u /= 60n;
      if (u > 0n) out = `${u}h${out}`;
    }
  }
  return neg ? `-${out}` : out;
}

/** JSON for a message that marshals itself (or a zero value when `buf` is undefined: the field was absent) */
function special(name: string, buf: Buffer | undefined): { value: unknown } | undefined {
  switch (name) {
    case 'apis.meta.v1.Time':
      return { value: buf ? timestamp(buf, false) : null };
    case 'apis.meta.v1.MicroTime':
      return { value: buf ? timestamp(buf, true) : null };
    case 'apis.meta.v1.Duration': {
      const raw = buf ? last(readFields(buf).get(1)) : undefined;
      return { value: goDuration(raw ? BigInt.asIntN(64, varint(raw, 'duration')) : 0n) };
    }
    case 'api.resource.Quantity': {
      const raw = buf ? last(readFields(buf).get(1)) : undefined;
      return { value: raw ? scalar('string', raw, 'string') : '0' };
    }
    case 'util.intstr.IntOrString': {
      const f = buf ? readFields(buf) : new Map<number, Raw[]>();
      const type = last(f.get(1));
      if (type && varint(type, 'type') === 1n) {
        const s = last(f.get(3));
        return { value: s ? scalar('string', s, 'strVal') : '' };
      }
      const i = last(f.get(2));
      return { value: i ? scalar('int32', i, 'intVal') : 0 };
    }
    case 'runtime.RawExtension':
    case 'apis.meta.v1.FieldsV1': {
      const raw = buf ? last(readFields(buf).get(1)) : undefined;
      if (!raw) return { value: null };
      if (raw.wire !== 2) throw new WireError(`proto: wrong wireType = ${raw.wire} for field Raw`);
      // what a client embeds is JSON (kube's RawExtension and FieldsV1 marshal their bytes as they are)
      try {
        return { value: raw.b.length ? JSON.parse(raw.b.toString('utf8')) : null };
      } catch {
        throw new WireError(`the embedded object of ${name.split('.').pop()} is not JSON`);
      }
    }
  }
  return undefined;
}

// ---------------------------------------------------------------- messages

const OMIT = Symbol('omit');

function messageJson(name: string, buf: Buffer): Record<string, unknown> | unknown[] | null {
  const desc = data().messages[name];
  if (!desc) throw new WireError(`no message ${name}`);
  const fields = readFields(buf);
  if (desc.list) {
    const [num, , type] = desc.f[0] as FieldDesc;
    const items = unpack(type, fields.get(num) ?? []);
    return items.length ? items.map((r) => valueOf(type, r, 'items')) : null;
  }
  const out: Record<string, unknown> = {};
  for (const [num, json, type, flags] of desc.f) {
    const got = fields.get(num) ?? [];
    const v = fieldJson(json, type, flags, got);
    if (v === OMIT) continue;
    // omitzero: Go leaves out a zero value, a zero Time (null) and an absent struct among them
    if (flags.includes('z') && (isZero(v) || (type.includes('.') && !got.length))) continue;
    if (flags.includes('i')) Object.assign(out, v as Record<string, unknown>);
    else out[json] = v;
  }
  return out;
}

/** one value of a field (an element of a repeated field, a map's key or value) */
function valueOf(type: string, raw: Raw | undefined, field: string): unknown {
  if (data().messages[type] === undefined && !type.includes('.')) return raw ? scalar(type, raw, field) : zeroScalar(type);
  if (raw && raw.wire !== 2) throw new WireError(`proto: wrong wireType = ${raw.wire} for field ${field}`);
  const own = special(type, raw?.b);
  if (own) return own.value;
  if (!raw) return data().messages[type]?.list ? null : messageJson(type, Buffer.alloc(0));
  return messageJson(type, raw.b);
}

function fieldJson(json: string, type: string, flags: string, raws: Raw[]): unknown {
  const omitempty = flags.includes('o');
  const pointer = flags.includes('p');
  const empty = omitempty ? OMIT : null;
  if (flags.includes('r')) {
    const items = unpack(type, raws);
    return items.length ? items.map((r) => valueOf(type, r, json)) : empty;
  }
  if (type.startsWith('map<')) {
    const [keyType = 'string', valueType = 'string'] = type.slice(4, -1).split(',');
    if (!raws.length) return empty;
    const entries = new Map<string, unknown>();
    for (const r of raws) {
      if (r.wire !== 2) throw new WireError(`proto: wrong wireType = ${r.wire} for field ${json}`);
      const kv = readFields(r.b);
      const key = String(valueOf(keyType, last(kv.get(1)), json));
      const valueRaw = last(kv.get(2));
      // a map value that is bytes reads as empty bytes, not nil, when absent
      entries.set(key, valueRaw === undefined && valueType === 'bytes' ? '' : valueOf(valueType, valueRaw, json));
    }
    // Go's encoding/json writes map keys sorted
    return Object.fromEntries([...entries.keys()].sort().map((k) => [k, entries.get(k)]));
  }
  const isMessage = type.includes('.');
  if (!raws.length) {
    if (pointer) return empty;
    if (isMessage) return valueOf(type, undefined, json);
    const zero = zeroScalar(type);
    return omitempty && isZero(zero) ? OMIT : zero;
  }
  if (isMessage) {
    for (const r of raws) if (r.wire !== 2) throw new WireError(`proto: wrong wireType = ${r.wire} for field ${json}`);
    // a message field that comes more than once is merged, as protobuf merges: its bytes read as one
    const merged: Raw = { wire: 2, b: raws.length === 1 ? (raws[0] as { b: Buffer }).b : Buffer.concat(raws.map((r) => (r as { b: Buffer }).b)) };
    return valueOf(type, merged, json);
  }
  const v = valueOf(type, last(raws), json);
  if (type === 'bytes') return omitempty && v === '' ? OMIT : v;
  return !pointer && omitempty && isZero(v) ? OMIT : v;
}

// ---------------------------------------------------------------- the body

interface GroupVersionKind {
  apiVersion: string;
  kind: string;
}

function versionOf(apiVersion: string): string {
  return apiVersion.slice(apiVersion.indexOf('/') + 1);
}

/**
 * A protobuf body as the JSON object it stands for, `kind` and `apiVersion` first. `into` is the kind
 * the request's path serves: it fills a missing kind, and a kind whose bodies cannot be read as protobuf
 * (a custom resource) is refused as kube-apiserver refuses it, 400, the body's kind "cannot be handled as"
 * the path's. Without `into` the body's own kind decides.
 */
export function decodeProtobufObject(buf: Buffer, into?: GroupVersionKind): Record<string, unknown> {
  const unrecognized = (why: string): ApiError =>
    new ApiError(StatusReason.BadRequest, into ? `the object provided is unrecognized (must be of type ${into.kind}): ${why}` : `the object provided is unrecognized: ${why}`);
  if (!buf.length) throw unrecognized('empty data');
  if (buf.length < MAGIC.length || !buf.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw unrecognized(`provided data does not appear to be a protobuf message, expected prefix [${[...MAGIC].join(' ')}]`);
  }
  if (buf.length === MAGIC.length) throw unrecognized('empty body');
  let typeMeta: GroupVersionKind;
  let raw: Buffer;
  try {
    const unknown = readFields(buf.subarray(MAGIC.length));
    const tm = last(unknown.get(1));
    const tmFields = tm && tm.wire === 2 ? readFields(tm.b) : new Map<number, Raw[]>();
    const str = (r: Raw | undefined, field: string): string => (r ? (scalar('string', r, field) as string) : '');
    typeMeta = { apiVersion: str(last(tmFields.get(1)), 'APIVersion'), kind: str(last(tmFields.get(2)), 'Kind') };
    const rawField = last(unknown.get(2));
    if (rawField && rawField.wire !== 2) throw new WireError(`proto: wrong wireType = ${rawField.wire} for field Raw`);
    raw = rawField?.b ?? Buffer.alloc(0);
  } catch (e) {
    if (e instanceof WireError) throw unrecognized(e.message);
    throw e;
  }
  // the path's kind fills what the body leaves out, as kube-apiserver's decoder defaults them
  const gvk: GroupVersionKind = { apiVersion: typeMeta.apiVersion || into?.apiVersion || '', kind: typeMeta.kind || into?.kind || '' };
  const cannot = (why: string): ApiError =>
    new ApiError(StatusReason.BadRequest, `${gvk.kind} in version ${JSON.stringify(versionOf(gvk.apiVersion))} cannot be handled as a ${into?.kind ?? gvk.kind}: ${why}`);
  if (into && !readsProtobuf(into.apiVersion, into.kind)) {
    throw cannot('object *unstructured.Unstructured does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message');
  }
  if (!gvk.kind) throw unrecognized(`Object 'Kind' is missing in '${JSON.stringify(typeMeta)}'`);
  if (!gvk.apiVersion) throw unrecognized(`Object 'apiVersion' is missing in '${JSON.stringify(typeMeta)}'`);
  const name = data().kinds[`${gvk.apiVersion}/${gvk.kind}`];
  if (!name) throw cannot(`no kind ${JSON.stringify(gvk.kind)} is registered for version ${JSON.stringify(gvk.apiVersion)}`);
  try {
    return { kind: gvk.kind, apiVersion: gvk.apiVersion, ...(messageJson(name, raw) as Record<string, unknown>) };
  } catch (e) {
    if (e instanceof WireError) throw cannot(e.message);
    throw e;
  }
}
