// kubectl's typed clients send review requests (`auth can-i`, `auth whoami`) as Kubernetes protobuf,
// not JSON. Skiff answers in JSON, which those clients accept; this reads just enough of the request:
// the `k8s\0` envelope (runtime.Unknown) and the review's spec fields, by their numbers in
// k8s.io/api's generated.proto.
import { ApiError, StatusReason } from '../../api/errors.js';

export const protobufMediaType = 'application/vnd.kubernetes.protobuf';

type Fields = Map<number, (Buffer | bigint)[]>;

function bad(why: string): ApiError {
  return new ApiError(StatusReason.BadRequest, `the protobuf request body could not be decoded: ${why}`);
}

function varint(buf: Buffer, pos: number): [bigint, number] {
  let out = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw bad('truncated varint');
    const b = buf[pos++] as number;
    out |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [out, pos];
    shift += 7n;
    if (shift > 63n) throw bad('varint too long');
  }
}

/** a message's fields by number: varints as bigint, length-delimited values as bytes */
function fields(buf: Buffer): Fields {
  const out: Fields = new Map();
  let pos = 0;
  while (pos < buf.length) {
    const [tag, p1] = varint(buf, pos);
    pos = p1;
    const no = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    let value: Buffer | bigint;
    if (wire === 0) {
      [value, pos] = varint(buf, pos);
    } else if (wire === 2) {
      const [len, p2] = varint(buf, pos);
      const end = p2 + Number(len);
      if (end > buf.length) throw bad('truncated field');
      value = buf.subarray(p2, end);
      pos = end;
    } else if (wire === 1 || wire === 5) {
      const size = wire === 1 ? 8 : 4;
      if (pos + size > buf.length) throw bad('truncated field');
      value = buf.subarray(pos, pos + size);
      pos += size;
    } else {
      throw bad(`unsupported wire type ${wire}`);
    }
    const list = out.get(no) ?? [];
    list.push(value);
    out.set(no, list);
  }
  return out;
}

function bytesOf(f: Fields, no: number): Buffer | undefined {
  const v = f.get(no)?.[0];
  return Buffer.isBuffer(v) ? v : undefined;
}

function str(f: Fields, no: number): string | undefined {
  return bytesOf(f, no)?.toString('utf8');
}

/** string fields by number → an object with those names, leaving out the absent ones */
function strings(buf: Buffer | undefined, names: Record<number, string>): Record<string, string> | undefined {
  if (!buf) return undefined;
  const f = fields(buf);
  const out: Record<string, string> = {};
  for (const [no, name] of Object.entries(names)) {
    const v = str(f, Number(no));
    if (v !== undefined) out[name] = v;
  }
  return out;
}

const resourceAttributes = { 1: 'namespace', 2: 'verb', 3: 'group', 4: 'version', 5: 'resource', 6: 'subresource', 7: 'name' };
const nonResourceAttributes = { 1: 'path', 2: 'verb' };

/** the review in a protobuf body, as the JSON object it stands for */
export function decodeReview(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || body.subarray(0, 4).toString('latin1') !== 'k8s\0') throw bad('it does not start with the k8s protobuf prefix');
  const unknown = fields(body.subarray(4));
  const typeMeta = fields(bytesOf(unknown, 1) ?? Buffer.alloc(0));
  const apiVersion = str(typeMeta, 1);
  const kind = str(typeMeta, 2);
  const raw = fields(bytesOf(unknown, 2) ?? Buffer.alloc(0));
  const out: Record<string, unknown> = {};
  if (apiVersion) out.apiVersion = apiVersion;
  if (kind) out.kind = kind;
  if (kind === 'SelfSubjectAccessReview') {
    const spec = fields(bytesOf(raw, 2) ?? Buffer.alloc(0));
    const s: Record<string, unknown> = {};
    const ra = strings(bytesOf(spec, 1), resourceAttributes);
    const nra = strings(bytesOf(spec, 2), nonResourceAttributes);
    if (ra) s.resourceAttributes = ra;
    if (nra) s.nonResourceAttributes = nra;
    out.spec = s;
  } else if (kind === 'SelfSubjectRulesReview') {
    out.spec = strings(bytesOf(raw, 2), { 1: 'namespace' }) ?? {};
  }
  return out;
}
