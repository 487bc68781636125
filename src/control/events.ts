// core/v1 Events for the transitions a person would want to see. Repeats of the same event on the same
// object bump `count` instead of making a new object, as the Kubernetes recorder does.
import { createHash } from 'node:crypto';
import type { StoredObject } from '../api/meta.js';
import { now } from '../api/meta.js';
import { Kinds } from '../api/index.js';
import { isAlreadyExists, isConflict, isNotFound } from '../api/errors.js';
import type { Client } from '../store/client.js';

export type EventType = 'Normal' | 'Warning';

export interface Recorder {
  event(obj: StoredObject, type: EventType, reason: string, message: string): void;
}

/**
 * Kubernetes' spam filter (client-go's EventSourceObjectSpamFilter): each object gets a bucket of 25
 * events from a component, refilled one every 5 minutes; past that its events are dropped. A
 * 1,000-task Run would otherwise get 1,000 TaskStarted events, each a write.
 */
export const SpamFilter = { burst: 25, refillMs: 300_000, objects: 4096 } as const;

export class EventRecorder implements Recorder {
  private chain: Promise<void> = Promise.resolve();
  /** tokens left per object uid, and when they were counted */
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly client: Client, private readonly component: string, private readonly clock: () => number = Date.now) {}

  private allowed(uid: string): boolean {
    const t = this.clock();
    const b = this.buckets.get(uid) ?? { tokens: SpamFilter.burst, at: t };
    b.tokens = Math.min(SpamFilter.burst, b.tokens + (t - b.at) / SpamFilter.refillMs);
    b.at = t;
    this.buckets.delete(uid); // re-inserted last: the map's order is least recently used first
    if (this.buckets.size >= SpamFilter.objects) this.buckets.delete(this.buckets.keys().next().value as string);
    this.buckets.set(uid, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  event(obj: StoredObject, type: EventType, reason: string, message: string): void {
    if (!this.allowed(obj.metadata.uid ?? `${obj.metadata.namespace}/${obj.metadata.name}`)) return;
    // writes are serialised and never fail the caller: an event is a note, not state
    this.chain = this.chain.then(() => this.write(obj, type, reason, message)).catch(() => undefined);
  }

  /** resolves when every event recorded so far is written */
  flush(): Promise<void> {
    return this.chain;
  }

  private async write(obj: StoredObject, type: EventType, reason: string, message: string): Promise<void> {
    const namespace = obj.metadata.namespace || 'default';
    const digest = createHash('sha1').update(`${obj.metadata.uid}|${type}|${reason}|${message}`).digest('hex').slice(0, 12);
    const name = `${obj.metadata.name}.${digest}`.slice(0, 253);
    const at = now();
    // most events are new: create first, and count a repeat only when the name is taken
    let repeat = false;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const existing = repeat ? await this.client.find(Kinds.Event, { namespace, name }) : undefined;
        if (existing) {
          existing.count = Number(existing.count ?? 1) + 1;
          existing.lastTimestamp = at;
          await this.client.update(existing);
        } else {
          await this.client.create({
            apiVersion: 'v1',
            kind: 'Event',
            metadata: { name, namespace },
            involvedObject: {
              apiVersion: obj.apiVersion,
              kind: obj.kind,
              name: obj.metadata.name,
              namespace: obj.metadata.namespace,
              uid: obj.metadata.uid,
              resourceVersion: obj.metadata.resourceVersion,
            },
            type,
            reason,
            message,
            source: { component: this.component },
            reportingComponent: this.component,
            firstTimestamp: at,
            lastTimestamp: at,
            count: 1,
          });
        }
        return;
      } catch (e) {
        if (isAlreadyExists(e)) {
          repeat = true;
          continue;
        }
        if (isConflict(e)) continue;
        if (isNotFound(e)) return; // the namespace is gone
        throw e;
      }
    }
  }
}

/** Deletes Events whose last occurrence is older than `ttlMs`, as the API server's event TTL does. */
export async function sweepEvents(client: Client, ttlMs: number, now = Date.now()): Promise<number> {
  let removed = 0;
  for (const ev of await client.listAll(Kinds.Event)) {
    const last = Date.parse(String(ev.lastTimestamp ?? ev.metadata.creationTimestamp));
    if (Number.isFinite(last) && now - last > ttlMs) {
      try {
        await client.delete(Kinds.Event, { namespace: ev.metadata.namespace, name: ev.metadata.name });
        removed++;
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  }
  return removed;
}
