// KServe V1 (TF-Serving-like) predict bodies: `{"instances": [...]}` or `{"inputs": [...]}` in,
// `{"predictions": [...]}` out, `{"error": "..."}` on failure. `inputs` here is a list of rows (not
// V2 tensors) and wins when both keys are present. Any content type is read as JSON when the body is
// JSON (KServe itself only accepts an exact set of content types).
import type { Datatype, Tensor } from './tensor.js';
import { ProtocolError, nestedToTensor, tensorToNested } from './tensor.js';
import { parseJsonBody } from './v2.js';

export interface V1Request {
  instances: unknown[];
  key: 'instances' | 'inputs';
}

/** Parses a V1 predict/explain body; 400 when it is not JSON or has no list of instances/inputs. */
export function parseV1Request(body: Buffer, _contentType?: string): V1Request {
  const json = parseJsonBody(body.toString('utf8'));
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new ProtocolError(400, 'the request body must be a JSON object with "instances" or "inputs"');
  }
  const obj = json as Record<string, unknown>;
  const key = obj['inputs'] !== undefined ? 'inputs' : obj['instances'] !== undefined ? 'instances' : null;
  if (key === null) throw new ProtocolError(400, 'the request body has neither "instances" nor "inputs"');
  const instances = obj[key];
  if (!Array.isArray(instances)) throw new ProtocolError(400, `"${key}" must be a list`);
  return { instances, key };
}

/**
 * The instances of a V1 body that the batcher may merge with other requests': only a body that is
 * exactly `{"instances": [...]}`, as KServe's batcher reads it. TF Serving's columnar `inputs` (an
 * object of named columns, answered as `outputs`), a `signature_name` or any other key make the
 * request one of its own, sent as it came: merged, it would be answered in another shape or by
 * another signature. Undefined for those, and for bodies that are not JSON (the server says why).
 */
export function batchableInstances(body: Buffer): unknown[] | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  const keys = Object.keys(json);
  const instances = (json as Record<string, unknown>)['instances'];
  return keys.length === 1 && Array.isArray(instances) ? instances : undefined;
}

/**
 * The instances as one tensor whose first dim is the number of instances: rows must be
 * rectangular nested lists of numbers (or booleans/strings). The datatype is the model's when
 * given, else what numpy would infer (INT64, FP64, BOOL, BYTES).
 */
export function instancesToTensor(instances: unknown[], opts: { name?: string; datatype?: Datatype } = {}): Tensor {
  if (instances.length > 0 && instances.some((r) => typeof r === 'object' && r !== null && !Array.isArray(r))) {
    throw new ProtocolError(400, 'instances given as objects (named columns) are not supported by this model; send lists of values');
  }
  return nestedToTensor(opts.name ?? 'input-0', instances, opts.datatype);
}

/** a tensor as V1 predictions: one entry per row of dim 0 (a 0-d tensor gives one entry) */
export function tensorToInstances(t: Tensor): unknown[] {
  const nested = tensorToNested(t);
  return Array.isArray(nested) ? nested : [nested];
}

/** `{"predictions": [...]}` plus any extra keys (the batcher adds `batchId` and `message`) */
export function encodeV1Response(predictions: unknown[], extra?: Record<string, unknown>): { body: Buffer; headers: Record<string, string> } {
  const body = extra ? { ...extra, predictions } : { predictions };
  return { body: Buffer.from(JSON.stringify(body)), headers: { 'content-type': 'application/json' } };
}

/** a V1 error answer: {"error": message} */
export function v1Error(status: number, message: string): { status: number; body: Buffer; headers: Record<string, string> } {
  return { status, body: Buffer.from(JSON.stringify({ error: message })), headers: { 'content-type': 'application/json' } };
}
