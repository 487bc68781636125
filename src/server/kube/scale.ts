// The `/scale` subresource of kinds that declare one (KindDef.scale, as a CRD's subresources.scale):
// an autoscaling/v1 Scale read from and written to the paths the kind names, as kube-apiserver serves
// it for custom resources (`kubectl scale pytorchjob/x --replicas=4`, an autoscaler). A path that is
// not in the object reads as 0, as upstream reads it.
import { ApiError, StatusReason } from '../../api/errors.js';
import type { KObject, StoredObject } from '../../api/meta.js';
import type { KindDef } from '../../api/registry.js';
import type { Client } from '../../store/client.js';
import { applyJsonPatch, mergePatch } from '../../store/patch.js';

export interface Scale {
  kind: 'Scale';
  apiVersion: 'autoscaling/v1';
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string; creationTimestamp?: string };
  spec: { replicas?: number };
  status: { replicas: number; selector?: string };
}

const segments = (path: string): string[] => path.replace(/^\./, '').split('.').filter(Boolean);

function readPath(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const k of segments(path)) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

function writePath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = segments(path);
  let cur = obj;
  for (const k of keys.slice(0, -1)) {
    const next = cur[k];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[keys[keys.length - 1] ?? ''] = value;
}

function int(v: unknown): number {
  return typeof v === 'number' && Number.isInteger(v) ? v : 0;
}

export function scaleOf(def: KindDef, obj: StoredObject): Scale {
  const paths = def.scale ?? { specReplicasPath: '', statusReplicasPath: '' };
  const selector = paths.labelSelectorPath ? readPath(obj, paths.labelSelectorPath) : undefined;
  const m = obj.metadata;
  return {
    kind: 'Scale', apiVersion: 'autoscaling/v1',
    metadata: { name: m.name, ...(m.namespace ? { namespace: m.namespace } : {}), uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp },
    spec: { replicas: int(readPath(obj, paths.specReplicasPath)) },
    status: { replicas: int(readPath(obj, paths.statusReplicasPath)), ...(typeof selector === 'string' && selector ? { selector } : {}) },
  };
}

/** GET, PUT or PATCH on {plural}/{name}/scale; answers the Scale as it is after the request. */
export async function serveScale(client: Client, def: KindDef, key: { namespace?: string; name: string }, method: string,
  body: () => Promise<unknown>, patchType: 'json' | 'merge'): Promise<Scale> {
  if (!def.scale) throw new ApiError(StatusReason.NotFound, `the server could not find the requested resource: ${def.plural}/scale`);
  const live = await client.get(def, key);
  if (method === 'GET') return scaleOf(def, live);
  if (method !== 'PUT' && method !== 'PATCH') throw new ApiError(StatusReason.MethodNotAllowed, `${method} is not supported on ${def.plural}/scale`);
  const current = scaleOf(def, live);
  const raw = await body();
  const wanted = (method === 'PUT' ? raw : patchType === 'json' ? applyJsonPatch(current, raw) : mergePatch(current, raw)) as Partial<Scale> | null;
  if (wanted === null || typeof wanted !== 'object' || Array.isArray(wanted)) throw new ApiError(StatusReason.BadRequest, 'the request body must be an autoscaling/v1 Scale');
  if (wanted.kind !== undefined && wanted.kind !== 'Scale') throw new ApiError(StatusReason.BadRequest, `the body is a ${String(wanted.apiVersion)}/${String(wanted.kind)}, not an autoscaling/v1 Scale`);
  const name = wanted.metadata?.name ?? key.name;
  if (name !== key.name) throw new ApiError(StatusReason.BadRequest, `the name of the object (${name}) does not match the name on the URL (${key.name})`);
  const replicas = wanted.spec?.replicas ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas)) {
    throw ApiError.invalid('Scale', 'autoscaling', key.name, [{ field: 'spec.replicas', type: 'FieldValueTypeInvalid', message: `Invalid value: ${JSON.stringify(replicas)}: must be an integer` }]);
  }
  if (replicas < 0) {
    throw ApiError.invalid('Scale', 'autoscaling', key.name, [{ field: 'spec.replicas', type: 'FieldValueInvalid', message: `Invalid value: ${replicas}: must be greater than or equal to 0` }]);
  }
  const next = structuredClone(live) as KObject & StoredObject;
  writePath(next as unknown as Record<string, unknown>, def.scale.specReplicasPath, replicas);
  // the Scale's resourceVersion, when it has one, is the precondition of the write
  const rv = wanted.metadata?.resourceVersion;
  if (rv) next.metadata.resourceVersion = rv;
  return scaleOf(def, await client.update(next));
}
