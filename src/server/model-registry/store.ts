// The registry's entities in Skiff's store: ids from one counter, objects found by id in the request's
// namespace, listed by kind and parent, created and updated with upstream's uniqueness rules (a name
// once per parent, an externalId once per type) and upstream's error messages.
import { isNotFound } from '../../api/errors.js';
import type { StoredObject } from '../../api/meta.js';
import { modelRegistryApiVersion, RegistryLabels, type RegistryObject } from '../../api/model-registry.js';
import type { Client } from '../../store/client.js';
import { nextRegistryId } from '../../workloads/registry/ids.js';
import { artifactTypes, ModelArtifact, type Entity } from './entities.js';
import { conflict, notFound } from './errors.js';

export type Obj = RegistryObject & StoredObject;

/** a readable name for messages: `registered model` */
export const words = (e: Entity): string => e.type.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

export class RegistryStore {
  /** the tail of each namespace's queue of writes (see `exclusive`) */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(readonly client: Client) {}

  /**
   * Runs `fn` after every earlier write to the namespace's registry has finished: a uniqueness check
   * and the write it allows are one step, so two requests racing with one name cannot both pass.
   * (Servers sharing one cluster each keep their own queue.)
   */
  async exclusive<T>(ns: string, fn: () => Promise<T>): Promise<T> {
    const before = this.queues.get(ns) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.queues.set(ns, tail);
    try {
      return await run;
    } finally {
      if (this.queues.get(ns) === tail) this.queues.delete(ns);
    }
  }

  /** the next id, from the counter every namespace's registry shares */
  nextId(): Promise<string> {
    return nextRegistryId(this.client);
  }

  async find(e: Entity, ns: string, id: string): Promise<Obj | undefined> {
    const o = await this.client.find<RegistryObject>(e.def, { namespace: ns, name: id });
    // one stored kind holds four artifact types: an id of another type is not this one
    if (o && e.artifactType && o.spec.artifactType !== e.artifactType) return undefined;
    return o;
  }

  /** the entity by id, or upstream's 404 */
  async get(e: Entity, ns: string, id: string): Promise<Obj> {
    const o = await this.find(e, ns, id);
    if (!o) throw notFound(`no ${words(e)} found for id ${id}`);
    return o;
  }

  /** an artifact of any type by id, with its type */
  async findArtifact(ns: string, id: string): Promise<{ e: Entity; o: Obj } | undefined> {
    const m = await this.client.find<RegistryObject>(ModelArtifact.def, { namespace: ns, name: id });
    if (m) return { e: ModelArtifact, o: m };
    const other = await this.client.find<RegistryObject>(artifactTypes['doc-artifact']!.def, { namespace: ns, name: id });
    const e = other && artifactTypes[String(other.spec.artifactType)];
    return other && e ? { e, o: other } : undefined;
  }

  async list(e: Entity, ns: string, labels: Record<string, string> = {}): Promise<Obj[]> {
    const labelSelector = Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',') || undefined;
    const items = await this.client.listAll<RegistryObject>(e.def, { namespace: ns, labelSelector });
    return e.artifactType && e !== ModelArtifact ? items.filter((o) => o.spec.artifactType === e.artifactType) : items;
  }

  /** every artifact, of every type or of one */
  async listArtifacts(ns: string, labels: Record<string, string> = {}, artifactType?: string): Promise<{ e: Entity; o: Obj }[]> {
    const types = artifactType ? [artifactTypes[artifactType] as Entity] : [ModelArtifact, artifactTypes['doc-artifact'] as Entity];
    const out: { e: Entity; o: Obj }[] = [];
    for (const t of types) {
      const labelSelector = Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',') || undefined;
      for (const o of await this.client.listAll<RegistryObject>(t.def, { namespace: ns, labelSelector })) {
        const e = t === ModelArtifact ? ModelArtifact : artifactTypes[String(o.spec.artifactType)];
        if (e && (!artifactType || e.artifactType === artifactType)) out.push({ e, o });
      }
    }
    return out;
  }

  /** upstream's uniqueness: a name once among its siblings, an externalId once per type in the registry */
  async checkUnique(e: Entity, ns: string, fields: Record<string, unknown>, siblings: Record<string, string>, self?: string): Promise<void> {
    if (typeof fields.name === 'string') {
      // an artifact's name is its own within its model version or experiment run; one in neither is
      // unique among those in neither (a metric's past values share its name and are no clash)
      const scoped = Object.keys(siblings).length > 0;
      const loose = (o: Obj): boolean => !o.metadata.labels?.[RegistryLabels.parent] && !o.metadata.labels?.[RegistryLabels.experimentRun];
      const clash = (await this.list(e, ns, siblings)).find((o) => o.spec.name === fields.name && o.metadata.name !== self && !o.metadata.labels?.[RegistryLabels.history] && (scoped || !e.artifactType || loose(o)));
      if (clash) throw conflict(`${words(e)} with name ${fields.name} already exists (id ${clash.metadata.name})`);
    }
    if (typeof fields.externalId === 'string') {
      const clash = (await this.list(e, ns)).find((o) => o.spec.externalId === fields.externalId && o.metadata.name !== self);
      if (clash) throw conflict(`${words(e)} with externalId ${fields.externalId} already exists (id ${clash.metadata.name})`);
    }
  }

  async create(e: Entity, ns: string, fields: Record<string, unknown>, labels: Record<string, string>): Promise<Obj> {
    const id = await this.nextId();
    const now = String(Date.now());
    const spec: Record<string, unknown> = { ...e.defaults, ...fields, createTimeSinceEpoch: now, lastUpdateTimeSinceEpoch: now };
    // one stored kind holds four artifact types: the type is what tells them apart
    if (e.artifactType) spec.artifactType = e.artifactType;
    const state = spec.state ?? spec.desiredState;
    const all = { ...labels, ...(typeof state === 'string' ? { [RegistryLabels.state]: state } : {}) };
    try {
      return await this.client.create<RegistryObject>({ apiVersion: modelRegistryApiVersion, kind: e.def.kind, metadata: { name: id, namespace: ns, labels: all }, spec: spec as RegistryObject['spec'] });
    } catch (err) {
      if (isNotFound(err)) throw notFound(`namespace ${ns} does not exist`);
      throw err;
    }
  }

  /** deletes the object (only Skiff's aliases are deleted: upstream's entities are archived) */
  async remove(e: Entity, o: Obj): Promise<void> {
    try {
      await this.client.delete(e.def, { namespace: o.metadata.namespace, name: o.metadata.name });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** the entity with `fields` merged in (a field left out keeps its value), its update time stamped */
  async update(o: Obj, fields: Record<string, unknown>, labels: Record<string, string> = {}): Promise<Obj> {
    const spec = { ...o.spec, ...fields, lastUpdateTimeSinceEpoch: String(Math.max(Date.now(), Number(o.spec.lastUpdateTimeSinceEpoch) + 1)) };
    const state = spec.state ?? spec.desiredState;
    const merged = { ...o.metadata.labels, ...labels, ...(typeof state === 'string' ? { [RegistryLabels.state]: state } : {}) };
    return this.client.update<RegistryObject>({ ...o, metadata: { ...o.metadata, labels: merged }, spec });
  }
}
