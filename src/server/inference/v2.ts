// The Open Inference Protocol (KServe V2) over REST: inference requests and responses as JSON and
// with the binary tensor data extension (a JSON header of `Inference-Header-Content-Length` bytes
// followed by the raw tensors of the inputs/outputs that carry `parameters.binary_data_size`).
//
// Skiff is lenient where KServe is strict about content types: `application/json; charset=utf-8`,
// no content type, or a JSON body sent as octet-stream without the length header are all read as
// JSON. A body that is not JSON needs `Inference-Header-Content-Length`.
import { isPlainObject as isObject } from '../../util/objects.js';
import type { Datatype, Tensor } from './tensor.js';
import {
  ProtocolError, checkShape, dataFromBytes, dataFromJson, dataToBytes, dataToJsonText, isDatatype, shapeText,
} from './tensor.js';

export interface RequestedOutput {
  name: string;
  parameters?: Record<string, unknown>;
}

export interface InferRequest {
  id?: string;
  inputs: Tensor[];
  outputs?: RequestedOutput[];
  parameters?: Record<string, unknown>;
}

export interface InferResponse {
  model_name: string;
  model_version?: string;
  id: string;
  parameters?: Record<string, unknown>;
  outputs: Tensor[];
}

export interface V2Headers {
  'content-type'?: string;
  'inference-header-content-length'?: string;
}

export interface Encoded {
  body: Buffer;
  headers: Record<string, string>;
}

/** the media type of a Content-Type header, lower case, without parameters */
export function mediaType(contentType: string | undefined): string {
  if (!contentType) return '';
  const semi = contentType.indexOf(';');
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/** whether a Content-Type (parameters allowed) announces JSON; an absent one counts as JSON */
export function isJsonContentType(contentType: string | undefined): boolean {
  const mt = mediaType(contentType);
  return mt === '' || mt === 'application/json' || mt === 'text/json' || mt.endsWith('+json');
}

/** whether the body's first non-blank byte opens a JSON object */
export function looksLikeJsonObject(body: Buffer): boolean {
  for (let i = 0; i < body.length && i < 64; i++) {
    const c = body[i];
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    if (c === 0xef && body[i + 1] === 0xbb && body[i + 2] === 0xbf) { i += 2; continue; } // UTF-8 BOM
    return c === 0x7b;
  }
  return false;
}

/** JSON.parse of a body, 400 with the parser's message when it is not JSON */
export function parseJsonBody(text: string, status = 400): unknown {
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (e) {
    throw new ProtocolError(status, `invalid JSON body: ${(e as Error).message}`);
  }
}

function optionalParams(v: unknown, what: string, status: number): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw new ProtocolError(status, `${what}: parameters must be an object`);
  return v;
}

/**
 * Splits a V2 body into its JSON header and the binary part. `status` is the one errors carry (400
 * for a client's request, 502 for a model server's answer).
 */
function splitBody(body: Buffer, headers: V2Headers, status: number): { json: unknown; binary: Buffer | null } {
  const hcl = headers['inference-header-content-length'];
  if (hcl !== undefined && hcl !== '') {
    if (!/^\s*\d+\s*$/.test(hcl)) throw new ProtocolError(status, `invalid inference-header-content-length ${JSON.stringify(hcl)}`);
    const len = Number(hcl);
    if (len === 0) {
      throw new ProtocolError(status, 'raw binary requests (inference-header-content-length: 0) are not supported; send a JSON header describing the inputs');
    }
    if (len > body.length) {
      throw new ProtocolError(status, `inference-header-content-length ${len} exceeds the body length ${body.length}`);
    }
    const json = parseJsonBody(body.toString('utf8', 0, len), status);
    return { json, binary: body.subarray(len) };
  }
  if (!isJsonContentType(headers['content-type'])) {
    // a JSON body under another content type is accepted; anything else needs the length header
    const missing = "received byte inputs, but the 'inference-header-content-length' header is missing.";
    if (!looksLikeJsonObject(body)) throw new ProtocolError(status, missing);
    try {
      return { json: JSON.parse(body.toString('utf8')), binary: null };
    } catch {
      throw new ProtocolError(status, missing);
    }
  }
  return { json: parseJsonBody(body.toString('utf8'), status), binary: null };
}

/** Reads a list of request inputs / response outputs, taking binary data from `binary` in order. */
function parseTensors(list: unknown, kind: 'input' | 'output', binary: Buffer | null, status: number): Tensor[] {
  const field = `${kind}s`;
  if (!Array.isArray(list)) throw new ProtocolError(status, `"${field}" must be a list`);
  const out: Tensor[] = [];
  const seen = new Set<string>();
  let pos = 0;
  list.forEach((raw, i) => {
    if (!isObject(raw)) throw new ProtocolError(status, `${field}[${i}] must be an object`);
    const name = raw['name'];
    if (typeof name !== 'string' || name === '') throw new ProtocolError(status, `${field}[${i}]: "name" must be a non-empty string`);
    const what = `${kind} "${name}"`;
    if (seen.has(name)) throw new ProtocolError(status, `${what} appears more than once`);
    seen.add(name);
    const datatype = raw['datatype'];
    if (!isDatatype(datatype)) throw new ProtocolError(status, `${what}: unknown datatype ${JSON.stringify(datatype)}`);
    if (raw['shape'] === undefined) throw new ProtocolError(status, `${what}: "shape" is missing`);
    const shape = checkShape(raw['shape'], what);
    let parameters = optionalParams(raw['parameters'], what, status);
    const size = parameters?.['binary_data_size'];
    let tensor: Tensor;
    if (size !== undefined && size !== null) {
      if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) {
        throw new ProtocolError(status, `${what}: binary_data_size must be a non-negative integer`);
      }
      if (binary === null) {
        throw new ProtocolError(status, `${what} has binary_data_size but the body has no binary part (inference-header-content-length is missing)`);
      }
      if (raw['data'] !== undefined) throw new ProtocolError(status, `${what} has both "data" and binary_data_size`);
      if (pos + size > binary.length) {
        throw new ProtocolError(status, `${what}: binary_data_size ${size} runs past the end of the body (${binary.length - pos} bytes left)`);
      }
      const data = dataFromBytes(what, datatype, shape, binary.subarray(pos, pos + size));
      pos += size;
      const { binary_data_size: _size, ...rest } = parameters as Record<string, unknown>;
      parameters = Object.keys(rest).length > 0 ? rest : undefined;
      tensor = { name, datatype, shape, data };
    } else {
      if (raw['data'] === undefined) {
        const grpc = raw['contents'] !== undefined ? ' ("contents" belongs to the gRPC protocol; REST carries "data")' : '';
        throw new ProtocolError(status, `${what}: "data" is missing${grpc}`);
      }
      tensor = { name, datatype, shape, data: dataFromJson(what, datatype, shape, raw['data']) };
    }
    if (parameters) tensor.parameters = parameters;
    out.push(tensor);
  });
  if (binary !== null && pos !== binary.length) {
    throw new ProtocolError(status, `the body has ${binary.length - pos} bytes of binary data that no ${kind} claims`);
  }
  return out;
}

function parseId(v: unknown, status: number): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  throw new ProtocolError(status, '"id" must be a string');
}

/** Parses a client's inference request. Errors are ProtocolError(400) naming the offending input. */
export function parseInferRequest(body: Buffer, headers: V2Headers): InferRequest {
  const { json, binary } = splitBody(body, headers, 400);
  if (!isObject(json)) throw new ProtocolError(400, 'the inference request must be a JSON object');
  if (json['inputs'] === undefined) throw new ProtocolError(400, '"inputs" is missing');
  const inputs = parseTensors(json['inputs'], 'input', binary, 400);
  if (inputs.length === 0) throw new ProtocolError(400, '"inputs" must not be empty');
  const req: InferRequest = { inputs };
  const id = parseId(json['id'], 400);
  if (id !== undefined) req.id = id;
  const parameters = optionalParams(json['parameters'], 'request', 400);
  if (parameters) req.parameters = parameters;
  const outputs = json['outputs'];
  if (outputs !== undefined && outputs !== null) {
    if (!Array.isArray(outputs)) throw new ProtocolError(400, '"outputs" must be a list');
    req.outputs = outputs.map((o, i) => {
      if (!isObject(o) || typeof o['name'] !== 'string') throw new ProtocolError(400, `outputs[${i}] must be an object with a "name"`);
      const r: RequestedOutput = { name: o['name'] };
      const p = optionalParams(o['parameters'], `output "${o['name']}"`, 400);
      if (p) r.parameters = p;
      return r;
    });
  }
  return req;
}

/** Parses what a model server answered; a malformed answer is ProtocolError(502). */
export function parseInferResponse(body: Buffer, headers: V2Headers): InferResponse {
  const { json, binary } = splitBody(body, headers, 502);
  if (!isObject(json)) throw new ProtocolError(502, 'the model server answered something other than a JSON object');
  if (typeof json['error'] === 'string' && json['outputs'] === undefined) throw new ProtocolError(502, `the model server answered an error: ${json['error']}`);
  const outputs = parseTensors(json['outputs'] ?? [], 'output', binary, 502);
  const res: InferResponse = {
    model_name: typeof json['model_name'] === 'string' ? json['model_name'] : '',
    id: parseId(json['id'], 502) ?? '',
    outputs,
  };
  const version = json['model_version'];
  if (version !== undefined && version !== null) res.model_version = String(version);
  const parameters = optionalParams(json['parameters'], 'response', 502);
  if (parameters) res.parameters = parameters;
  return res;
}

/** JSON text of one tensor, its data written as a flat list or, when `binarySize` is given, as a binary_data_size parameter */
function tensorJson(t: Tensor, binarySize: number | null, extraParams?: Record<string, unknown>): string {
  let params: Record<string, unknown> | undefined = t.parameters || extraParams ? { ...t.parameters, ...extraParams } : undefined;
  if (params && 'binary_data_size' in params) {
    const { binary_data_size: _s, ...rest } = params;
    params = rest;
  }
  if (binarySize !== null) params = { ...params, binary_data_size: binarySize };
  let s = `{"name":${JSON.stringify(t.name)},"datatype":"${t.datatype}","shape":${shapeText(t.shape)}`;
  if (params && Object.keys(params).length > 0) s += `,"parameters":${JSON.stringify(params)}`;
  if (binarySize === null) s += `,"data":${dataToJsonText(t.datatype, t.data)}`;
  return `${s}}`;
}

function needsBinary(dt: Datatype): boolean {
  return dt === 'FP16' || dt === 'BF16';
}

function assemble(header: string, chunks: Buffer[]): Encoded {
  const head = Buffer.from(header, 'utf8');
  if (chunks.length === 0) return { body: head, headers: { 'content-type': 'application/json' } };
  return {
    body: Buffer.concat([head, ...chunks]),
    headers: { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(head.length) },
  };
}

/**
 * Encodes a request for a model server: JSON, or with `binary` every input's bytes after the JSON
 * header (FP16/BF16 inputs always go binary). `binaryOutputs` asks the server for binary outputs.
 */
export function encodeInferRequest(req: InferRequest, opts: { binary?: boolean; binaryOutputs?: boolean } = {}): Encoded {
  const chunks: Buffer[] = [];
  const inputs = req.inputs.map((t) => {
    if (opts.binary || needsBinary(t.datatype)) {
      const bytes = dataToBytes(t.datatype, t.data);
      chunks.push(bytes);
      return tensorJson(t, bytes.length);
    }
    return tensorJson(t, null);
  });
  let s = '{';
  if (req.id !== undefined) s += `"id":${JSON.stringify(req.id)},`;
  const parameters = opts.binaryOutputs ? { ...req.parameters, binary_data_output: true } : req.parameters;
  if (parameters) s += `"parameters":${JSON.stringify(parameters)},`;
  s += `"inputs":[${inputs.join(',')}]`;
  if (req.outputs) s += `,"outputs":${JSON.stringify(req.outputs)}`;
  return assemble(`${s}}`, chunks);
}

/**
 * Encodes the answer to `requested`: only the outputs it asked for (all when it named none), each
 * binary when asked (output `binary_data`, else request `binary_data_output`) or when FP16/BF16,
 * JSON otherwise. `model_version` is left out when unset.
 */
export function encodeInferResponse(res: InferResponse, requested: InferRequest): Encoded {
  const asked = requested.outputs;
  const askedBy = new Map<string, RequestedOutput>();
  for (const o of asked ?? []) askedBy.set(o.name, o);
  const outputs = asked && asked.length > 0 ? res.outputs.filter((t) => askedBy.has(t.name)) : res.outputs;
  const allBinary = requested.parameters?.['binary_data_output'] === true;
  const chunks: Buffer[] = [];
  const parts = outputs.map((t) => {
    const own = askedBy.get(t.name)?.parameters?.['binary_data'];
    const binary = typeof own === 'boolean' ? own : allBinary;
    if (binary || needsBinary(t.datatype)) {
      const bytes = dataToBytes(t.datatype, t.data);
      chunks.push(bytes);
      return tensorJson(t, bytes.length);
    }
    return tensorJson(t, null);
  });
  let s = `{"model_name":${JSON.stringify(res.model_name)}`;
  if (res.model_version !== undefined && res.model_version !== null) s += `,"model_version":${JSON.stringify(res.model_version)}`;
  s += `,"id":${JSON.stringify(res.id)}`;
  if (res.parameters) s += `,"parameters":${JSON.stringify(res.parameters)}`;
  s += `,"outputs":[${parts.join(',')}]}`;
  return assemble(s, chunks);
}

/** a V2 error answer: {"error": message} */
export function v2Error(status: number, message: string): { status: number; body: Buffer; headers: Record<string, string> } {
  return { status, body: Buffer.from(JSON.stringify({ error: message })), headers: { 'content-type': 'application/json' } };
}

export interface TensorMetadata {
  name: string;
  datatype: Datatype;
  shape: number[];
}

/** the body of GET /v2/models/{name}[/versions/{v}] */
export function modelMetadata(m: { name: string; versions?: string[]; platform: string; inputs: TensorMetadata[]; outputs: TensorMetadata[] }): Buffer {
  const meta: Record<string, unknown> = { name: m.name };
  if (m.versions) meta['versions'] = m.versions;
  meta['platform'] = m.platform;
  meta['inputs'] = m.inputs.map((t) => ({ name: t.name, datatype: t.datatype, shape: t.shape }));
  meta['outputs'] = m.outputs.map((t) => ({ name: t.name, datatype: t.datatype, shape: t.shape }));
  return Buffer.from(JSON.stringify(meta));
}
