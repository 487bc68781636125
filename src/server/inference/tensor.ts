// Tensors as the inference gateway handles them: a name, an Open Inference Protocol datatype, a
// shape and the elements in row-major order in a typed array (one Buffer per element for BYTES).
// This module converts tensors from and to JSON values and the little-endian bytes of the binary
// tensor extension, and concatenates/splits them along the batch dimension for the batcher.
//
// Skiff assumes a little-endian host (x86-64, arm64): binary tensors are used in place.

export type Datatype =
  | 'BOOL' | 'UINT8' | 'UINT16' | 'UINT32' | 'UINT64' | 'INT8' | 'INT16' | 'INT32' | 'INT64'
  | 'FP16' | 'BF16' | 'FP32' | 'FP64' | 'BYTES';

/** BOOL → Uint8Array (0/1); FP16/BF16 → Uint16Array (raw bits); BYTES → one Buffer per element */
export type TensorData =
  | Uint8Array | Uint16Array | Uint32Array | BigUint64Array | Int8Array | Int16Array | Int32Array
  | BigInt64Array | Float32Array | Float64Array | Buffer[];

export interface Tensor {
  name: string;
  datatype: Datatype;
  shape: number[];
  data: TensorData;
  parameters?: Record<string, unknown>;
}

/** An error with the HTTP status the gateway answers with (400 for a bad request, 5xx for server-side faults). */
export class ProtocolError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

type NumericArray = Exclude<TensorData, Buffer[]>;
type TypedCtor = { new (n: number): NumericArray; new (buf: ArrayBufferLike, offset: number, length: number): NumericArray; BYTES_PER_ELEMENT: number };

interface DtypeInfo {
  /** bytes per element; 0 for BYTES */
  size: number;
  ctor: TypedCtor | null;
  /** how JSON values are read: float, integer within [min, max], 64-bit integer, boolean, string, refused */
  json: 'float' | 'int' | 'bigint' | 'bool' | 'bytes' | 'binary-only';
  min?: number;
  max?: number;
}

const INFO: Record<Datatype, DtypeInfo> = {
  BOOL: { size: 1, ctor: Uint8Array, json: 'bool' },
  UINT8: { size: 1, ctor: Uint8Array, json: 'int', min: 0, max: 0xff },
  UINT16: { size: 2, ctor: Uint16Array, json: 'int', min: 0, max: 0xffff },
  UINT32: { size: 4, ctor: Uint32Array, json: 'int', min: 0, max: 0xffffffff },
  UINT64: { size: 8, ctor: BigUint64Array as unknown as TypedCtor, json: 'bigint', min: 0, max: 2 ** 64 },
  INT8: { size: 1, ctor: Int8Array, json: 'int', min: -0x80, max: 0x7f },
  INT16: { size: 2, ctor: Int16Array, json: 'int', min: -0x8000, max: 0x7fff },
  INT32: { size: 4, ctor: Int32Array, json: 'int', min: -0x80000000, max: 0x7fffffff },
  INT64: { size: 8, ctor: BigInt64Array as unknown as TypedCtor, json: 'bigint', min: -(2 ** 63), max: 2 ** 63 },
  FP16: { size: 2, ctor: Uint16Array, json: 'binary-only' },
  BF16: { size: 2, ctor: Uint16Array, json: 'binary-only' },
  FP32: { size: 4, ctor: Float32Array, json: 'float' },
  FP64: { size: 8, ctor: Float64Array, json: 'float' },
  BYTES: { size: 0, ctor: null, json: 'bytes' },
};

export const DATATYPES = Object.keys(INFO) as Datatype[];

export function isDatatype(x: unknown): x is Datatype {
  return typeof x === 'string' && Object.prototype.hasOwnProperty.call(INFO, x);
}

/** bytes per element in the binary encoding; 0 for BYTES (variable) */
export function bytesPerElement(dt: Datatype): number {
  return INFO[dt].size;
}

/** product of the dims (1 for a scalar) */
export function elementCount(shape: number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

export function shapeText(shape: number[]): string {
  return `[${shape.join(',')}]`;
}

/** a zero-filled data array for `n` elements of `dt` */
export function allocData(dt: Datatype, n: number): TensorData {
  const ctor = INFO[dt].ctor;
  if (!ctor) return Array.from({ length: n }, () => Buffer.alloc(0));
  return new ctor(n);
}

/** whether `data` has the array type `dt` keeps its elements in */
export function dataMatches(dt: Datatype, data: TensorData): boolean {
  const ctor = INFO[dt].ctor;
  return ctor ? data instanceof ctor : Array.isArray(data);
}

/** Checks that `shape` is a list of non-negative integers; returns it as numbers. */
export function checkShape(shape: unknown, what: string): number[] {
  if (!Array.isArray(shape)) throw new ProtocolError(400, `${what}: shape must be a list of non-negative integers, got ${JSON.stringify(shape)}`);
  for (const d of shape) {
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 0) {
      throw new ProtocolError(400, `${what}: shape ${JSON.stringify(shape)} must contain non-negative integers only`);
    }
  }
  return shape as number[];
}

/** Checks a tensor's data against its datatype and shape (type of array and element count). */
export function checkTensor(t: Tensor, what = `input "${t.name}"`): void {
  if (!isDatatype(t.datatype)) throw new ProtocolError(400, `${what}: unknown datatype ${JSON.stringify(t.datatype)}`);
  if (!dataMatches(t.datatype, t.data)) throw new ProtocolError(400, `${what}: data does not hold ${t.datatype} elements`);
  const n = elementCount(t.shape);
  if (t.data.length !== n) throw new ProtocolError(400, `${what}: shape ${shapeText(t.shape)} needs ${n} elements, got ${t.data.length}`);
}

// ---------------------------------------------------------------------------------------------
// JSON

function describe(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

/**
 * Reads the JSON `data` of a tensor (nested lists or one flat list, or a single value for a
 * one-element tensor) into the typed array of `dt`, checking every element against the datatype
 * and the element count against `shape`.
 */
export function dataFromJson(what: string, dt: Datatype, shape: number[], data: unknown): TensorData {
  const info = INFO[dt];
  const n = elementCount(shape);
  if (info.json === 'binary-only') {
    throw new ProtocolError(400, `${what}: ${dt} data cannot be sent as JSON; use the binary tensor data extension`);
  }
  if (!Array.isArray(data)) {
    if (data === undefined || data === null) throw new ProtocolError(400, `${what}: data is missing`);
    data = [data];
  }
  const list = data as unknown[];
  const bad = (i: number, v: unknown): never => {
    const need = info.json === 'float' ? 'a number'
      : info.json === 'bool' ? 'true or false'
      : info.json === 'bytes' ? 'a string'
      : `an integer in [${dt === 'INT64' ? '-2^63' : info.min}, ${dt === 'INT64' ? '2^63-1' : dt === 'UINT64' ? '2^64-1' : info.max}]`;
    throw new ProtocolError(400, `${what}: element ${i} (${describe(v)}) is not a valid ${dt} value, need ${need}`);
  };
  const countError = (got: number): never => {
    throw new ProtocolError(400, `${what}: shape ${shapeText(shape)} needs ${n} elements, got ${got}`);
  };

  // flat list of numbers into a float array: one tight loop, no intermediate arrays
  if (info.json === 'float' && (list.length === 0 || !Array.isArray(list[0]))) {
    if (list.length !== n) {
      if (list.some(Array.isArray)) return dataFromJsonNested(what, dt, n, list, bad, countError);
      countError(list.length);
    }
    const out = new (info.ctor as TypedCtor)(n) as Float32Array | Float64Array;
    for (let i = 0; i < n; i++) {
      const v = list[i];
      if (typeof v !== 'number') {
        if (Array.isArray(v)) return dataFromJsonNested(what, dt, n, list, bad, countError);
        bad(i, v);
      }
      out[i] = v as number;
    }
    return out;
  }
  return dataFromJsonNested(what, dt, n, list, bad, countError);
}

function dataFromJsonNested(
  what: string, dt: Datatype, n: number, list: unknown[],
  bad: (i: number, v: unknown) => never, countError: (got: number) => never,
): TensorData {
  const info = INFO[dt];
  let idx = 0;
  let write: (v: unknown) => void;
  let out: TensorData;
  switch (info.json) {
    case 'float': {
      const arr = new (info.ctor as TypedCtor)(n) as Float32Array | Float64Array;
      out = arr;
      write = (v) => { if (typeof v !== 'number') bad(idx, v); arr[idx] = v as number; };
      break;
    }
    case 'int': {
      const arr = new (info.ctor as TypedCtor)(n) as Int32Array;
      const min = info.min as number, max = info.max as number;
      out = arr;
      write = (v) => {
        if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) bad(idx, v);
        arr[idx] = v as number;
      };
      break;
    }
    case 'bigint': {
      const arr = new (info.ctor as TypedCtor)(n) as BigInt64Array;
      const min = info.min as number, max = info.max as number;
      out = arr;
      write = (v) => {
        // the upper bound (2^63 or 2^64) is exclusive; doubles above 2^53 are whole numbers already
        if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v >= max) {
          if (typeof v === 'string' && /^-?\d+$/.test(v)) {
            const b = BigInt(v);
            if (b >= BigInt(min) && b < BigInt(max)) { arr[idx] = b; return; }
          }
          bad(idx, v);
        }
        arr[idx] = BigInt(v as number);
      };
      break;
    }
    case 'bool': {
      const arr = new Uint8Array(n);
      out = arr;
      write = (v) => { if (typeof v !== 'boolean') bad(idx, v); arr[idx] = v ? 1 : 0; };
      break;
    }
    case 'bytes': {
      const arr: Buffer[] = new Array<Buffer>(n);
      out = arr;
      write = (v) => { if (typeof v !== 'string') bad(idx, v); arr[idx] = Buffer.from(v as string, 'utf8'); };
      break;
    }
    default:
      throw new ProtocolError(400, `${what}: ${dt} data cannot be sent as JSON; use the binary tensor data extension`);
  }
  const walk = (a: unknown[]): void => {
    for (let i = 0; i < a.length; i++) {
      const v = a[i];
      if (Array.isArray(v)) walk(v);
      else {
        if (idx < n) write(v);
        idx++;
      }
    }
  };
  walk(list);
  if (idx !== n) countError(idx);
  return out;
}

/** the elements as plain JSON values, flat (numbers, booleans, strings; 64-bit integers as numbers) */
export function dataToJson(dt: Datatype, data: TensorData): unknown[] {
  const info = INFO[dt];
  if (info.json === 'binary-only') throw new ProtocolError(500, `${dt} data cannot be written as JSON`);
  if (dt === 'BYTES') return (data as Buffer[]).map((b) => b.toString('utf8'));
  if (dt === 'BOOL') return Array.from(data as Uint8Array, (v) => v !== 0);
  if (info.json === 'bigint') return Array.from(data as BigInt64Array, (v) => Number(v));
  const out = Array.from(data as Float64Array);
  if (info.json === 'float') for (let i = 0; i < out.length; i++) if (!Number.isFinite(out[i])) out[i] = null as unknown as number;
  return out;
}

/**
 * The elements as the text of a flat JSON list, built without an intermediate array for numeric
 * types. Non-finite floats become null (JSON has no NaN/Infinity).
 */
export function dataToJsonText(dt: Datatype, data: TensorData): string {
  const info = INFO[dt];
  if (info.json === 'float') {
    const arr = data as Float32Array | Float64Array;
    for (let i = 0; i < arr.length; i++) {
      if (!Number.isFinite(arr[i])) return JSON.stringify(dataToJson(dt, data));
    }
    return `[${arr.join(',')}]`;
  }
  if (info.json === 'int' || info.json === 'bigint') return `[${(data as Int32Array).join(',')}]`;
  return JSON.stringify(dataToJson(dt, data));
}

/** a JSON value nested like the shape (a scalar for a 0-d tensor) */
export function tensorToNested(t: Tensor): unknown {
  const flat = dataToJson(t.datatype, t.data);
  if (t.shape.length === 0) return flat[0];
  return nest(flat, t.shape, 0, 0);
}

function nest(flat: unknown[], shape: number[], dim: number, offset: number): unknown[] {
  const len = shape[dim] as number;
  if (dim === shape.length - 1) return flat.slice(offset, offset + len);
  const stride = elementCount(shape.slice(dim + 1));
  const out = new Array<unknown>(len);
  for (let i = 0; i < len; i++) out[i] = nest(flat, shape, dim + 1, offset + i * stride);
  return out;
}

/** The shape of a rectangular nested list; throws 400 naming `what` when it is ragged. */
export function nestedShape(what: string, value: unknown): number[] {
  const shape: number[] = [];
  let v = value;
  while (Array.isArray(v)) {
    shape.push(v.length);
    v = v[0];
  }
  const check = (a: unknown, dim: number): void => {
    if (dim === shape.length) {
      if (Array.isArray(a)) throw new ProtocolError(400, `${what}: ragged nested list (more levels than ${shapeText(shape)})`);
      return;
    }
    if (!Array.isArray(a) || a.length !== shape[dim]) {
      throw new ProtocolError(400, `${what}: ragged nested list, expected ${shapeText(shape)}`);
    }
    for (const x of a) check(x, dim + 1);
  };
  check(value, 0);
  return shape;
}

/** The datatype numpy would pick for the leaves of a nested list: BOOL, INT64, FP64 or BYTES. */
export function inferDatatype(what: string, value: unknown): Datatype {
  let kind: 'bool' | 'int' | 'float' | 'str' | null = null;
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) { for (const x of v) visit(x); return; }
    const k = typeof v === 'boolean' ? 'bool' : typeof v === 'number' ? (Number.isInteger(v) ? 'int' : 'float') : typeof v === 'string' ? 'str' : null;
    if (k === null) throw new ProtocolError(400, `${what}: unsupported value ${describe(v)} (need numbers, booleans or strings)`);
    if (kind === null || kind === k) kind = k;
    else if ((kind === 'int' && k === 'float') || (kind === 'float' && k === 'int')) kind = 'float';
    else throw new ProtocolError(400, `${what}: mixes ${kind === 'str' ? 'strings' : kind === 'bool' ? 'booleans' : 'numbers'} with ${k === 'str' ? 'strings' : k === 'bool' ? 'booleans' : 'numbers'}`);
  };
  visit(value);
  return kind === 'bool' ? 'BOOL' : kind === 'str' ? 'BYTES' : kind === 'float' ? 'FP64' : kind === 'int' ? 'INT64' : 'FP64';
}

/**
 * A tensor from a rectangular nested list of rows (V1 `instances`, Seldon `ndarray`): the shape is
 * the nesting, the datatype the given one or the one numpy would infer.
 */
export function nestedToTensor(name: string, rows: unknown[], datatype?: Datatype): Tensor {
  const what = `input "${name}"`;
  const shape = nestedShape(what, rows);
  const dt = datatype ?? inferDatatype(what, rows);
  return { name, datatype: dt, shape, data: dataFromJson(what, dt, shape, rows) };
}

// ---------------------------------------------------------------------------------------------
// binary tensor extension

/**
 * Reads one tensor's bytes (little-endian, row-major; BOOL one byte; BYTES elements each a 4-byte
 * little-endian length then the bytes). Numeric data is a view over `buf` when its offset is
 * aligned for the element size, a copy otherwise; BYTES elements are views.
 */
export function dataFromBytes(what: string, dt: Datatype, shape: number[], buf: Buffer): TensorData {
  const n = elementCount(shape);
  const info = INFO[dt];
  if (!info.ctor) {
    const out: Buffer[] = [];
    let pos = 0;
    while (pos < buf.length) {
      if (pos + 4 > buf.length) throw new ProtocolError(400, `${what}: BYTES element ${out.length} is cut off in its length prefix`);
      const len = buf.readUInt32LE(pos);
      pos += 4;
      if (pos + len > buf.length) throw new ProtocolError(400, `${what}: BYTES element ${out.length} declares ${len} bytes but only ${buf.length - pos} remain`);
      out.push(buf.subarray(pos, pos + len));
      pos += len;
    }
    if (out.length !== n) throw new ProtocolError(400, `${what}: shape ${shapeText(shape)} needs ${n} elements, got ${out.length}`);
    return out;
  }
  const expected = n * info.size;
  if (buf.length !== expected) {
    throw new ProtocolError(400, `${what}: binary_data_size ${buf.length} does not match shape ${shapeText(shape)} of ${dt} (${expected} bytes)`);
  }
  if (buf.byteOffset % info.size === 0) return new info.ctor(buf.buffer, buf.byteOffset, n);
  const out = new info.ctor(n);
  new Uint8Array(out.buffer, out.byteOffset, expected).set(buf);
  return out;
}

/** The tensor's bytes in the binary encoding: a view over the data for numeric types, one new Buffer for BYTES. */
export function dataToBytes(dt: Datatype, data: TensorData): Buffer {
  if (INFO[dt].ctor) {
    const a = data as NumericArray;
    return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  }
  const bufs = data as Buffer[];
  let total = 0;
  for (const b of bufs) total += 4 + b.length;
  const out = Buffer.allocUnsafe(total);
  let pos = 0;
  for (const b of bufs) {
    out.writeUInt32LE(b.length, pos);
    b.copy(out, pos + 4);
    pos += 4 + b.length;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// batching

function sameDims(a: number[], b: number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 1; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Concatenates tensors along dim 0 (the batch). Names, datatypes and the other dims must agree. */
export function concatRows(parts: Tensor[]): Tensor {
  const first = parts[0];
  if (!first) throw new ProtocolError(500, 'nothing to concatenate');
  if (first.shape.length === 0) throw new ProtocolError(400, `input "${first.name}": a scalar tensor has no batch dimension`);
  let rows = 0;
  let total = 0;
  for (const p of parts) {
    if (p.name !== first.name) throw new ProtocolError(400, `cannot batch input "${p.name}" with input "${first.name}"`);
    if (p.datatype !== first.datatype) throw new ProtocolError(400, `input "${p.name}": cannot batch ${p.datatype} with ${first.datatype}`);
    if (!sameDims(p.shape, first.shape)) {
      throw new ProtocolError(400, `input "${p.name}": cannot batch shape ${shapeText(p.shape)} with ${shapeText(first.shape)}`);
    }
    rows += p.shape[0] as number;
    total += p.data.length;
  }
  if (parts.length === 1) return first;
  const shape = [rows, ...first.shape.slice(1)];
  let data: TensorData;
  const ctor = INFO[first.datatype].ctor;
  if (!ctor) {
    data = ([] as Buffer[]).concat(...parts.map((p) => p.data as Buffer[]));
  } else {
    const out = new ctor(total);
    let pos = 0;
    for (const p of parts) {
      (out as Float64Array).set(p.data as Float64Array, pos);
      pos += p.data.length;
    }
    data = out;
  }
  const t: Tensor = { name: first.name, datatype: first.datatype, shape, data };
  if (first.parameters) t.parameters = first.parameters;
  return t;
}

/** Splits a tensor along dim 0 into parts of the given row counts (views, no copies). */
export function splitRows(t: Tensor, rows: number[]): Tensor[] {
  const batch = t.shape[0];
  const sum = rows.reduce((a, b) => a + b, 0);
  if (batch === undefined || batch !== sum) {
    throw new ProtocolError(500, `output "${t.name}": shape ${shapeText(t.shape)} cannot be split into ${sum} rows`);
  }
  const stride = elementCount(t.shape.slice(1));
  const out: Tensor[] = [];
  let row = 0;
  for (const r of rows) {
    const start = row * stride, end = (row + r) * stride;
    const data = Array.isArray(t.data) ? t.data.slice(start, end) : (t.data as Float64Array).subarray(start, end);
    const part: Tensor = { name: t.name, datatype: t.datatype, shape: [r, ...t.shape.slice(1)], data };
    if (t.parameters) part.parameters = t.parameters;
    out.push(part);
    row += r;
  }
  return out;
}

/** Whether two requests' inputs can go in one batch: same names, datatypes and non-batch dims. */
export function batchCompatible(a: Tensor[], b: Tensor[]): boolean {
  if (a.length !== b.length) return false;
  for (const x of a) {
    const y = b.find((t) => t.name === x.name);
    if (!y || y.datatype !== x.datatype || x.shape.length === 0 || !sameDims(x.shape, y.shape)) return false;
  }
  return true;
}
