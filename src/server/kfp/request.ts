// What every KFP resource handler shares: the store behind the API (objects found by their KFP id,
// listed, paged as KFP pages), the request body, and readers for KFP's request JSON that name the
// field they reject (protojson accepts camelCase and snake_case; the handlers see snake_case).
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Kinds } from '../../api/index.js';
import type { RecurringRunObj } from '../../api/kfp-objects.js';
import { KfpAnnotations } from '../../api/kfp-objects.js';
import type { KObject, StoredObject } from '../../api/meta.js';
import { now } from '../../api/meta.js';
import type { Run, RunTask, TaskStatus } from '../../api/pipelines.js';
import { RunLabels } from '../../api/pipelines.js';
import type { KindDef } from '../../api/registry.js';
import { isDns1123Subdomain } from '../../api/validation.js';
import type { PipelineSpec, PlatformSpec } from '../../api/kfp/ir.js';
import type { Client } from '../../store/client.js';
import { isPlainObject } from '../../util/objects.js';
import { readBody } from '../body.js';
import { badRequest, KfpError, notFound, snake } from './errors.js';
import type { Shape } from './list.js';
import { listPage } from './list.js';
import type { S3Stores } from '../../artifacts/s3.js';
import type { ArtifactStore } from '../../artifacts/store.js';
import type { Call } from './router.js';
import { forbidden } from '../auth/messages.js';
import { requestUser, type Authorizer } from '../auth/types.js';
import { kfpCheck, type KfpAccess } from './authz.js';

export interface KfpApiDeps {
  client: Client;
  version: string;
  /** the run controller's default pipeline root: artifacts are read back only from under a run's root */
  pipelineRoot?: string;
  /** where artifacts are read back from */
  artifacts?: ArtifactStore;
  /** where artifacts of runs whose root is in S3 are read back from */
  s3?: S3Stores;
  /** tenancy on: every request is authorized as KFP's multi-user mode does; without it, nothing is asked */
  authorizer?: Authorizer;
}

export const DEFAULT_NS = 'default';

export type KfpCall = Call<KfpContext>;

export interface ListBody {
  items: Shape[];
  total_size: number;
  next_page_token?: string;
}

/** The store as the KFP API reads and writes it. */
export class KfpContext {
  constructor(readonly deps: KfpApiDeps) {}

  get client(): Client {
    return this.deps.client;
  }

  /** KFP's multi-user mode: namespaces are required and every request is authorized */
  get multiUser(): boolean {
    return this.deps.authorizer !== undefined;
  }

  /** refuses the request (403, or 400 for one naming no namespace) unless its user may do this */
  authorize(req: IncomingMessage, access: KfpAccess): void {
    const authorizer = this.deps.authorizer;
    if (!authorizer) return;
    const c = kfpCheck(access);
    if ('open' in c) return;
    if ('invalid' in c) throw badRequest(c.invalid);
    const attrs = { user: requestUser(req), resource: c.attributes };
    const d = authorizer.authorize(attrs);
    if (!d.allowed) throw new KfpError(403, forbidden(attrs, d.reason).message);
  }

  /** the object, once the request's user may do `verb` to it in its namespace */
  authorized<T extends StoredObject>(req: IncomingMessage, resource: KfpAccess['resource'], verb: string, o: T): T {
    this.authorize(req, { resource, verb, namespace: o.metadata.namespace, name: o.metadata.name });
    return o;
  }

  /** whether the request's user may do this: what a list across namespaces keeps */
  may(req: IncomingMessage, access: KfpAccess): boolean {
    try {
      this.authorize(req, access);
      return true;
    } catch (e) {
      if (e instanceof KfpError) return false;
      throw e;
    }
  }

  /** an object by its KFP id (its name) in whatever namespace it lives */
  async get<T extends KObject>(def: KindDef, id: string, what: string): Promise<T & StoredObject> {
    if (!isDns1123Subdomain(id)) throw notFound(what, id);
    const page = await this.client.list<T>(def, { fieldSelector: `metadata.name=${id}` });
    const found = page.items[0];
    if (!found) throw notFound(what, id);
    return def === Kinds.Run ? ((await this.withTasks(found as unknown as Run & StoredObject)) as unknown as T & StoredObject) : found;
  }

  /** A running Run's task records are RunTask objects (an ended one carries them in status.tasks): join them in. */
  async withTasks(run: Run & StoredObject): Promise<Run & StoredObject> {
    if (!run.status || run.status.tasks) return run;
    const records = await this.client.listAll<RunTask>(Kinds.RunTask, { namespace: run.metadata.namespace, labelSelector: `${RunLabels.run}=${run.metadata.name}` });
    const tasks: Record<string, TaskStatus> = {};
    for (const o of records) if (o.metadata.ownerReferences?.some((r) => r.uid === run.metadata.uid)) tasks[o.spec.path] = o.status;
    return { ...run, status: { ...run.status, tasks } };
  }

  async all<T extends KObject>(def: KindDef, namespace?: string, labelSelector?: string): Promise<(T & StoredObject)[]> {
    return this.client.listAll<T>(def, { namespace, labelSelector });
  }

  /** one page of `items` as the request's filter, sort_by, page_size and page_token ask */
  page(items: Shape[], url: URL, keys: readonly string[], idKey: string): ListBody {
    return listPage(items, { filter: q(url, 'filter'), sort_by: q(url, 'sort_by'), page_size: q(url, 'page_size'), page_token: q(url, 'page_token') }, { keys, idKey });
  }

  async setLabel(def: KindDef, o: StoredObject, key: string, value: string): Promise<void> {
    if (o.metadata.labels?.[key] === value) return;
    await this.client.patch(def, { namespace: o.metadata.namespace, name: o.metadata.name }, { metadata: { labels: { [key]: value } } }, 'merge');
  }

  /** enables or disables a recurring run, stamping when (archiving an experiment disables its recurring runs too) */
  async setRecurringRunMode(rr: RecurringRunObj & StoredObject, mode: 'ENABLE' | 'DISABLE'): Promise<void> {
    if (rr.spec.mode === mode) return;
    await this.client.patch(Kinds.RecurringRun, { namespace: rr.metadata.namespace, name: rr.metadata.name }, { metadata: { annotations: { [KfpAnnotations.updatedAt]: now() } }, spec: { mode } }, 'merge');
  }
}

/** a list answer: the items under their proto field name, the total, and the next page's token */
export function listBody(key: string, p: ListBody): Shape {
  const out: Shape = { [key]: p.items, total_size: p.total_size };
  if (p.next_page_token) out.next_page_token = p.next_page_token;
  return out;
}

/** the request body as JSON; an empty body is `{}` */
export async function jsonBody(req: IncomingMessage): Promise<unknown> {
  const buf = await readBody(req);
  if (buf.length === 0) return {};
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch (e) {
    throw badRequest(`the request body is not valid JSON: ${(e as Error).message}`);
  }
}

/** a query parameter; an empty one counts as absent */
export const q = (url: URL, name: string): string | undefined => {
  const v = url.searchParams.get(name);
  return v === null || v === '' ? undefined : v;
};

/** A request object with its keys in snake_case (protojson accepts both), checked against the known fields. */
export function fields(v: unknown, where: string, known: readonly string[]): Record<string, any> {
  if (v === undefined || v === null) return {};
  if (!isPlainObject(v)) throw badRequest(`${where}: expected a JSON object`);
  const out: Record<string, any> = {};
  for (const [k, val] of Object.entries(v)) {
    const s = snake(k);
    if (!known.includes(s)) throw badRequest(`${where ? where + ': ' : ''}unknown field "${k}"`);
    if (val !== null && val !== undefined) out[s] = val;
  }
  return out;
}

export function str(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw badRequest(`${field}: expected a string`);
  return v;
}

/** an int64 field: a JSON number or a decimal string */
export function int64(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw badRequest(`${field}: ${JSON.stringify(v)} is not an integer`);
  return n;
}

export function tagsOf(v: unknown, field: string): Record<string, string> | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  let t = v;
  if (typeof v === 'string') {
    try {
      t = JSON.parse(v);
    } catch {
      throw badRequest(`${field}: not a JSON object of strings`);
    }
  }
  if (!isPlainObject(t) || !Object.values(t).every((x) => typeof x === 'string')) throw badRequest(`${field}: expected an object of strings`);
  return t as Record<string, string>;
}

/** a pipeline_spec as sent: the PipelineSpec, or `{pipeline_spec, platform_spec}` */
export function unwrapSpec(v: unknown, field: string): { spec: PipelineSpec; platform?: PlatformSpec } {
  if (!isPlainObject(v)) throw badRequest(`${field}: expected a PipelineSpec object`);
  if (isPlainObject(v.pipeline_spec) || isPlainObject(v.pipelineSpec)) {
    const spec = (v.pipeline_spec ?? v.pipelineSpec) as PipelineSpec;
    const platform = (v.platform_spec ?? v.platformSpec) as PlatformSpec | undefined;
    return isPlainObject(platform) ? { spec, platform } : { spec };
  }
  return { spec: v as PipelineSpec };
}

/** a deterministic UUID-shaped name, for objects that must exist once (the Default experiment) */
export function stableId(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
