// Owner garbage collection: when an owner is gone, its dependents go too (background propagation);
// `orphan` and `foregroundDeletion` finalizers are honoured. Keys are owner uids, so a restart only
// needs to look for owner uids that no longer exist.
import { ApiError, isNotFound } from '../api/errors.js';
import type { StoredObject } from '../api/meta.js';
import type { KindRegistry } from '../api/registry.js';
import type { Client } from '../store/client.js';
import type { Store } from '../store/store.js';
import type { Result } from './controller.js';
import type { ControlMetrics } from './metrics.js';
import { WorkQueue } from './queue.js';

export class GarbageCollector {
  private readonly queue = new WorkQueue();
  private sub?: { stop(): void };
  private loop?: Promise<void>;
  /** owners being deleted with a foreground or orphan finalizer, by uid */
  private readonly pendingOwners = new Map<string, { resource: string; namespace: string; name: string }>();

  constructor(private readonly client: Client, private readonly store: Store, private readonly registry: KindRegistry, private readonly log: (m: string) => void = () => undefined, metrics?: ControlMetrics) {
    // its queue under the name kube-controller-manager's garbage collector gives the queue it deletes from
    metrics?.addQueue('garbage_collector_attempt_to_delete', '', this.queue);
  }

  async start(): Promise<void> {
    this.sub = this.store.subscribe((c) => {
      const uid = c.object.metadata.uid;
      const fins = c.object.metadata.finalizers ?? [];
      if (c.type === 'DELETED') this.queue.add(uid);
      else if (c.object.metadata.deletionTimestamp && (fins.includes('orphan') || fins.includes('foregroundDeletion'))) {
        this.pendingOwners.set(uid, { resource: c.resource, namespace: c.object.metadata.namespace ?? '', name: c.object.metadata.name });
        this.queue.add(uid);
      }
    });
    // resync: dependents whose owners vanished while we were down
    for (const uid of await this.store.ownerUids()) if (!(await this.store.uidExists(uid))) this.queue.add(uid);
    for (const def of this.registry.all()) {
      for (const obj of await this.client.listAll(def)) {
        const fins = obj.metadata.finalizers ?? [];
        if (obj.metadata.deletionTimestamp && (fins.includes('orphan') || fins.includes('foregroundDeletion'))) {
          this.pendingOwners.set(obj.metadata.uid, { resource: `${def.group}/${def.plural}`, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name });
          this.queue.add(obj.metadata.uid);
        }
      }
    }
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    for (;;) {
      const uid = await this.queue.get();
      if (uid === undefined) return;
      try {
        const r = await this.collect(uid);
        this.queue.forget(uid);
        if (r.requeueAfter) this.queue.addAfter(uid, r.requeueAfter);
      } catch (e) {
        this.log(`garbage collector: owner ${uid}: ${(e as Error).message}`);
        this.queue.addRateLimited(uid);
      } finally {
        this.queue.done(uid);
      }
    }
  }

  private async collect(ownerUid: string): Promise<Result> {
    const owner = this.pendingOwners.get(ownerUid);
    const ownerDef = owner ? this.registry.forStorageKey(owner.resource) : undefined;
    let ownerObj: StoredObject | undefined;
    if (owner && ownerDef) ownerObj = await this.client.find(ownerDef, { namespace: owner.namespace || undefined, name: owner.name });
    if (ownerObj && ownerObj.metadata.uid !== ownerUid) ownerObj = undefined;
    const fins = ownerObj?.metadata.finalizers ?? [];
    const orphan = fins.includes('orphan');
    const foreground = fins.includes('foregroundDeletion');
    if (ownerObj && !orphan && !foreground) {
      this.pendingOwners.delete(ownerUid);
      return {};
    }
    const deps = await this.store.dependents(ownerUid);
    let remaining = 0;
    for (const d of deps) {
      const def = this.registry.forStorageKey(d.resource);
      if (!def) continue;
      const dep = await this.client.find(def, { namespace: d.namespace || undefined, name: d.name });
      if (!dep) continue;
      const others = (dep.metadata.ownerReferences ?? []).filter((r) => r.uid !== ownerUid);
      if (orphan || others.length > 0) {
        // still owned by someone else, or told to orphan: drop only this reference
        const alive = [];
        for (const r of others) if (await this.store.uidExists(r.uid)) alive.push(r);
        if (orphan || alive.length > 0) {
          dep.metadata.ownerReferences = others;
          try {
            await this.client.update(dep);
          } catch (e) {
            if (!isNotFound(e)) throw e;
          }
          continue;
        }
      }
      remaining++;
      try {
        if (!dep.metadata.deletionTimestamp) await this.client.delete(def, { namespace: d.namespace || undefined, name: d.name }, { propagationPolicy: foreground ? 'Foreground' : 'Background' });
      } catch (e) {
        if (!(e instanceof ApiError && isNotFound(e))) throw e;
      }
    }
    if (ownerObj && ownerDef) {
      if (foreground && remaining > 0) return { requeueAfter: 250 };
      ownerObj.metadata.finalizers = fins.filter((f) => f !== 'orphan' && f !== 'foregroundDeletion');
      try {
        await this.client.update(ownerObj);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      this.pendingOwners.delete(ownerUid);
    }
    return {};
  }

  idle(): boolean {
    return this.queue.idle();
  }

  async stop(): Promise<void> {
    this.sub?.stop();
    this.queue.shutdown();
    await this.loop;
  }
}
