// The webhooks a cluster calls when Skiff runs on it (`skiff up --kubeconfig`/`--in-cluster`), over
// HTTPS with a certificate from the CA in their registration (src/store/kube/webhooks.ts):
// - POST /validate: admission.k8s.io/v1 AdmissionReview for creates and updates of the CRD kinds
//   Skiff validates. The answer is Skiff's own check (prepareWrite, what its object client runs before
//   every write), so a write kubectl sends straight to the cluster is refused as Skiff refuses it: the
//   Status with code 422 and the fields in the message and causes.
// - POST /convert: apiextensions.k8s.io/v1 ConversionReview for the CRDs whose versions Skiff
//   converts (Kueue's v1beta1 <-> v1beta2), with the kinds' own conversion (src/api/kueue-conversion.ts).
// Both are stateless: every replica serves them.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { KObject, StoredObject } from '../../api/meta.js';
import { clone } from '../../api/meta.js';
import type { KindRegistry } from '../../api/registry.js';
import { prepareWrite } from '../../store/client.js';
import { convertPath, validatePath } from '../../store/kube/webhooks.js';
import { isPlainObject } from '../../util/objects.js';

const maxBody = 8 * 1024 * 1024;

interface AdmissionRequest {
  uid: string;
  operation?: string;
  object?: unknown;
  oldObject?: unknown;
}

/** the response to an AdmissionReview: allowed, or refused with Skiff's Status */
export function reviewAdmission(registry: KindRegistry, review: unknown): Record<string, unknown> {
  const req = (isPlainObject(review) ? review.request : undefined) as AdmissionRequest | undefined;
  if (!isPlainObject(req) || typeof req.uid !== 'string') throw new ApiError(StatusReason.BadRequest, 'an AdmissionReview needs request.uid');
  const answer = (response: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: req.uid, ...response } });
  const obj = req.object;
  if (!isPlainObject(obj) || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return answer({ allowed: true });
  const def = registry.forObject(obj.apiVersion, obj.kind);
  // not a kind Skiff serves: not Skiff's to judge
  if (!def) return answer({ allowed: true });
  const update = req.operation === 'UPDATE';
  // an object on its way out: its finalizers must be able to come off, whatever it holds
  if (update && isPlainObject(obj.metadata) && obj.metadata.deletionTimestamp) return answer({ allowed: true });
  try {
    prepareWrite(def, clone(obj) as KObject, update && isPlainObject(req.oldObject) ? (clone(req.oldObject) as StoredObject) : undefined);
    return answer({ allowed: true });
  } catch (e) {
    const err = e instanceof ApiError ? e : new ApiError(StatusReason.BadRequest, `${def.kind} could not be checked: ${(e as Error).message}`);
    return answer({ allowed: false, status: err.toStatus() });
  }
}

/** one object in `desired`, through the stored version where one of the two converts */
function convertOne(registry: KindRegistry, obj: unknown, desired: string): KObject {
  if (!isPlainObject(obj) || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') throw new Error('an object without apiVersion or kind');
  const o = obj as unknown as KObject;
  if (o.apiVersion === desired) return o;
  const from = registry.forObject(o.apiVersion, o.kind);
  const to = registry.forObject(desired, o.kind);
  if (!from) throw new Error(`${o.kind} ${o.apiVersion} is not served`);
  if (!to) throw new Error(`${o.kind} ${desired} is not served`);
  if (from.group !== to.group) throw new Error(`${o.apiVersion} and ${desired} are different groups`);
  const stored = from.conversion ? from.conversion.toStorage(o) : o;
  const out = to.conversion ? to.conversion.fromStorage(stored) : { ...stored, apiVersion: desired };
  if (out.apiVersion !== desired) return { ...out, apiVersion: desired };
  return out;
}

/** the response to a ConversionReview: every object in the desired version, or a Failure naming which could not be */
export function reviewConversion(registry: KindRegistry, review: unknown): Record<string, unknown> {
  const req = isPlainObject(review) ? review.request : undefined;
  if (!isPlainObject(req) || typeof req.uid !== 'string') throw new ApiError(StatusReason.BadRequest, 'a ConversionReview needs request.uid');
  const answer = (response: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: req.uid, ...response } });
  const desired = req.desiredAPIVersion;
  if (typeof desired !== 'string' || !Array.isArray(req.objects)) return answer({ result: { status: 'Failure', message: 'request.desiredAPIVersion and request.objects are required' } });
  const converted: KObject[] = [];
  for (const [i, o] of req.objects.entries()) {
    try {
      converted.push(convertOne(registry, o, desired));
    } catch (e) {
      const name = isPlainObject(o) && isPlainObject(o.metadata) ? String(o.metadata.name ?? '') : '';
      return answer({ convertedObjects: [], result: { status: 'Failure', message: `objects[${i}]${name ? ` (${name})` : ''}: cannot convert to ${desired}: ${(e as Error).message}` } });
    }
  }
  return answer({ convertedObjects: converted, result: { status: 'Success' } });
}

export interface WebhookServerOptions {
  registry: KindRegistry;
  host: string;
  port: number;
  certPem: string;
  keyPem: string;
  log: (m: string) => void;
}

export interface WebhookServer {
  host: string;
  port: number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBody) {
        reject(new ApiError(StatusReason.RequestEntityTooLarge, `a review of more than ${maxBody} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Serves /validate and /convert over HTTPS at host:port (0: a free port). */
export async function startWebhookServer(opts: WebhookServerOptions): Promise<WebhookServer> {
  const reviews: Record<string, (registry: KindRegistry, body: unknown) => Record<string, unknown>> = { [validatePath]: reviewAdmission, [convertPath]: reviewConversion };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const send = (code: number, body: unknown): void => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const path = (req.url ?? '').split('?')[0] ?? '';
    const review = reviews[path];
    if (!review) return send(404, new ApiError(StatusReason.NotFound, `no webhook at ${path}`).toStatus());
    if (req.method !== 'POST') return send(405, new ApiError(StatusReason.MethodNotAllowed, `${req.method ?? ''} ${path}: a review is POSTed`).toStatus());
    try {
      const body = await readBody(req);
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch (e) {
        throw new ApiError(StatusReason.BadRequest, `the review is not JSON: ${(e as Error).message}`);
      }
      send(200, review(opts.registry, parsed));
    } catch (e) {
      const err = e instanceof ApiError ? e : new ApiError(StatusReason.InternalError, (e as Error).message);
      if (err.code >= 500) opts.log(`webhook ${path}: ${err.message}`);
      send(err.code, err.toStatus());
    }
  };
  const server: Server = createServer({ cert: opts.certPem, key: opts.keyPem }, (req, res) => void handle(req, res));
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const a = server.address() as AddressInfo;
  return {
    host: a.address,
    port: a.port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
