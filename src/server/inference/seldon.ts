// Seldon Core v1 prediction messages (`/api/v0.1/predictions`, `/api/v1.0/predictions`, `/predict`):
// `{"data": {"names": [...], "ndarray": [...]} | {"tensor": {"shape", "values"}}, "meta": {...}}`
// or `jsonData` / `strData` / `binData` (base64). The message comes as the JSON body, as the form
// field `json=`, or as the query parameter `?json=`. Numeric answers mirror the request's kind
// (tensor in → tensor out, ndarray in → ndarray out); other answers are ndarray; `meta.puid` is echoed.
import { isPlainObject as isObject } from '../../util/objects.js';
import type { Datatype, Tensor } from './tensor.js';
import { ProtocolError, elementCount, nestedShape, nestedToTensor, shapeText } from './tensor.js';
import { mediaType, parseJsonBody } from './v2.js';

export interface SeldonRequest {
  kind: 'ndarray' | 'tensor' | 'jsonData' | 'strData' | 'binData';
  names: string[];
  /** ndarray/tensor: the rows (a tensor's values nested by its shape); jsonData/strData/binData: the one payload */
  rows: unknown[];
  /** the tensor's shape (tensor) or the nesting of the rows (ndarray, when rectangular) */
  shape?: number[];
  meta?: Record<string, unknown>;
}

function messageText(body: Buffer, contentType?: string, query?: URLSearchParams): string {
  const fromQuery = query?.get('json');
  if (fromQuery !== null && fromQuery !== undefined) return fromQuery;
  const text = body.toString('utf8');
  const mt = mediaType(contentType);
  // a form (Seldon's wrapper reads its `json` field) — unless the body is plainly a JSON object, as
  // `curl -d '{...}'` sends it with a form content type
  if ((mt === 'application/x-www-form-urlencoded' && !text.trimStart().startsWith('{')) || (!text.trimStart().startsWith('{') && /^json=/.test(text))) {
    const field = new URLSearchParams(text).get('json');
    if (field === null) throw new ProtocolError(400, 'the form has no "json" field');
    return field;
  }
  if (mt.startsWith('multipart/')) throw new ProtocolError(400, 'multipart requests are not supported; send the message as JSON');
  return text;
}

function reshape(values: unknown[], shape: number[]): unknown[] {
  if (shape.length <= 1) return values;
  const stride = elementCount(shape.slice(1));
  const rows: unknown[] = [];
  for (let i = 0; i < (shape[0] as number); i++) rows.push(reshape(values.slice(i * stride, (i + 1) * stride), shape.slice(1)));
  return rows;
}

/** Parses a Seldon prediction request; 400 (to be answered with seldonError) when malformed. */
export function parseSeldonRequest(body: Buffer, contentType?: string, query?: URLSearchParams): SeldonRequest {
  const text = messageText(body, contentType, query);
  if (text.trim() === '') throw new ProtocolError(400, 'empty request: send a SeldonMessage as JSON');
  const msg = parseJsonBody(text);
  if (!isObject(msg)) throw new ProtocolError(400, 'the SeldonMessage must be a JSON object');
  const meta = msg['meta'];
  if (meta !== undefined && meta !== null && !isObject(meta)) throw new ProtocolError(400, '"meta" must be an object');
  const base = meta ? { meta } : {};
  const data = msg['data'];
  if (data !== undefined && data !== null) {
    if (!isObject(data)) throw new ProtocolError(400, '"data" must be an object');
    const rawNames = data['names'] ?? [];
    if (!Array.isArray(rawNames) || rawNames.some((n) => typeof n !== 'string')) throw new ProtocolError(400, '"data.names" must be a list of strings');
    const names = rawNames as string[];
    if (data['ndarray'] !== undefined) {
      const nd = data['ndarray'];
      if (!Array.isArray(nd)) throw new ProtocolError(400, '"data.ndarray" must be a list');
      let shape: number[] | undefined;
      try { shape = nestedShape('ndarray', nd); } catch { shape = undefined; }
      return { kind: 'ndarray', names, rows: nd, ...(shape ? { shape } : {}), ...base };
    }
    if (data['tensor'] !== undefined) {
      const t = data['tensor'];
      if (!isObject(t)) throw new ProtocolError(400, '"data.tensor" must be an object with "shape" and "values"');
      const shape = t['shape'];
      const values = t['values'];
      if (!Array.isArray(shape) || shape.some((d) => typeof d !== 'number' || !Number.isInteger(d) || d < 0)) {
        throw new ProtocolError(400, '"data.tensor.shape" must be a list of non-negative integers');
      }
      if (!Array.isArray(values) || values.some((v) => typeof v !== 'number')) throw new ProtocolError(400, '"data.tensor.values" must be a list of numbers');
      const dims = shape as number[];
      if (elementCount(dims) !== values.length) {
        throw new ProtocolError(400, `"data.tensor": shape ${shapeText(dims)} needs ${elementCount(dims)} values, got ${values.length}`);
      }
      return { kind: 'tensor', names, rows: dims.length === 0 ? values : reshape(values, dims), shape: dims, ...base };
    }
    if (data['tftensor'] !== undefined) throw new ProtocolError(400, '"data.tftensor" is not supported; send "ndarray" or "tensor"');
    throw new ProtocolError(400, '"data" must contain "ndarray" or "tensor"');
  }
  if (msg['jsonData'] !== undefined) return { kind: 'jsonData', names: [], rows: [msg['jsonData']], ...base };
  if (msg['strData'] !== undefined) {
    if (typeof msg['strData'] !== 'string') throw new ProtocolError(400, '"strData" must be a string');
    return { kind: 'strData', names: [], rows: [msg['strData']], ...base };
  }
  if (msg['binData'] !== undefined) {
    const b = msg['binData'];
    if (typeof b !== 'string' || !/^[A-Za-z0-9+/=\s_-]*$/.test(b)) throw new ProtocolError(400, '"binData" must be a base64 string');
    return { kind: 'binData', names: [], rows: [Buffer.from(b, 'base64')], ...base };
  }
  throw new ProtocolError(400, 'the SeldonMessage has no "data", "jsonData", "strData" or "binData"');
}

/** The rows of an ndarray/tensor request as one tensor (datatype the model's, or inferred like numpy). */
export function seldonToTensor(req: SeldonRequest, opts: { name?: string; datatype?: Datatype } = {}): Tensor {
  if (req.kind !== 'ndarray' && req.kind !== 'tensor') throw new ProtocolError(400, `${req.kind} requests cannot be turned into a tensor`);
  return nestedToTensor(opts.name ?? 'input-0', req.rows, opts.datatype ?? (req.kind === 'tensor' ? 'FP64' : undefined));
}

function allNumbers(v: unknown): boolean {
  if (Array.isArray(v)) return v.every(allNumbers);
  return typeof v === 'number';
}

function flatten(v: unknown, out: unknown[]): unknown[] {
  if (Array.isArray(v)) for (const x of v) flatten(x, out);
  else out.push(v);
  return out;
}

/**
 * The SeldonMessage answering `req` with `predictions` (rows). Numeric rectangular answers take
 * the request's kind; anything else is ndarray. `names` default to t:0…t:n-1 for 2-D answers.
 * jsonData/strData/binData requests are answered in kind with the single prediction.
 */
export function encodeSeldonResponse(req: SeldonRequest, predictions: unknown[], names?: string[]): Buffer {
  const meta: Record<string, unknown> = {};
  const puid = req.meta?.['puid'];
  if (puid !== undefined) meta['puid'] = puid;
  const one = predictions.length === 1 ? predictions[0] : predictions;
  if (req.kind === 'jsonData') return Buffer.from(JSON.stringify({ jsonData: one, meta }));
  if (req.kind === 'strData' && typeof one === 'string') return Buffer.from(JSON.stringify({ strData: one, meta }));
  if (req.kind === 'binData' && Buffer.isBuffer(one)) return Buffer.from(JSON.stringify({ binData: one.toString('base64'), meta }));
  let shape: number[] | null;
  try { shape = nestedShape('predictions', predictions); } catch { shape = null; }
  const numeric = shape !== null && allNumbers(predictions);
  const outNames = names ?? (shape && shape.length >= 2 ? Array.from({ length: shape[1] as number }, (_, i) => `t:${i}`) : []);
  if (numeric && req.kind === 'tensor' && shape) {
    return Buffer.from(JSON.stringify({ data: { names: outNames, tensor: { shape, values: flatten(predictions, []) } }, meta }));
  }
  return Buffer.from(JSON.stringify({ data: { names: outNames, ndarray: predictions }, meta }));
}

/** a Seldon error answer (HTTP 400 by default, like the Seldon python wrapper) */
export function seldonError(status: number, info: string): { status: number; body: Buffer; headers: Record<string, string> } {
  const body = { status: { status: 1, info, code: -1, reason: 'MICROSERVICE_BAD_DATA' } };
  return { status, body: Buffer.from(JSON.stringify(body)), headers: { 'content-type': 'application/json' } };
}
