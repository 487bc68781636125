// Leader election between replicas of Skiff on one cluster, on a coordination.k8s.io/v1 Lease, with
// client-go's leaderelection semantics so that Skiff and Kubernetes' own components read each other's
// Leases alike:
//   - a candidate takes the Lease when nobody holds it (no Lease, or an empty holderIdentity) or when
//     its record has not changed for leaseDurationSeconds as measured on the candidate's own clock
//     (the holder's renewTime is never compared with local time: clocks differ between machines);
//   - every write is an update at the resourceVersion read, so of two candidates one wins and the
//     other gets 409 and tries again a retry period later;
//   - the holder renews every retry period; a renewal that has not succeeded within the renew
//     deadline ends its leadership (renewDeadline < leaseDuration: it stops before anyone else may
//     take the Lease);
//   - leaseTransitions grows by one whenever the holder changes; acquireTime is when the present
//     holder took it; times are MicroTime;
//   - a holder that stops releases the Lease (ReleaseOnCancel): holderIdentity empty and a lease of
//     one second, so a standby takes over at its next try instead of waiting for expiry.
// Beyond client-go: the holder may publish annotations on the Lease (where it serves), written with
// every acquire and renewal and removed on release, which the others read from the Lease they poll.
import { isConflict, isNotFound } from '../api/errors.js';

/** The API server, as far as the Lease needs it (the cluster store's KubeHttp). */
export interface LeaseHttp {
  request<T = unknown>(method: string, path: string, opts?: { body?: unknown; timeoutMs?: number }): Promise<T>;
}

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface LeaseObject {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string; annotations?: Record<string, string>; [k: string]: unknown };
  spec?: LeaseSpec;
}

export interface LeaderElectionOptions {
  http: LeaseHttp;
  namespace: string;
  name: string;
  /** who this replica is: unique among candidates (client-go's convention is host_uuid) */
  identity: string;
  /** how long a non-holder waits after the Lease last changed before taking it (client-go: 15 s) */
  leaseDurationMs?: number;
  /** how long the holder keeps trying to renew before giving up leadership (client-go: 10 s) */
  renewDeadlineMs?: number;
  /** how often candidates try to take it and the holder renews it (client-go: 2 s) */
  retryPeriodMs?: number;
  log?: (msg: string) => void;
  /** annotations the holder keeps on the Lease while it holds it (where it serves, for the others) */
  annotations?: Record<string, string>;
  /** the clock (tests) */
  now?: () => number;
}

export const leaderElectionDefaults = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 } as const;

/** client-go's JitterFactor for the candidates' retries, so that they do not all ask at once */
const jitterFactor = 1.2;

/** a Lease's MicroTime: RFC 3339 with microseconds */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d+)Z$/, (_, f: string) => `.${f.padEnd(6, '0')}Z`);

/** Checks the durations as client-go's NewLeaderElector does; returns what is wrong, or undefined. */
export function checkLeaderElectionDurations(d: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number }): string | undefined {
  if (d.leaseDurationMs < 1000) return 'the lease duration must be at least one second (the Lease counts whole seconds)';
  if (d.leaseDurationMs <= d.renewDeadlineMs) return 'the lease duration must be greater than the renew deadline';
  if (d.renewDeadlineMs <= jitterFactor * d.retryPeriodMs) return `the renew deadline must be greater than ${jitterFactor} times the retry period`;
  if (d.retryPeriodMs < 1) return 'the retry period must be positive';
  return undefined;
}

export class LeaderElector {
  private readonly path: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly now: () => number;
  /** the record last read or written, its resourceVersion, and when (our clock) it last changed */
  private observed: { spec: LeaseSpec; resourceVersion: string | undefined; key: string; annotations: Record<string, string> } | undefined;
  private observedAt = 0;
  private leading = false;
  private stopping = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private resolveAcquired!: () => void;
  private resolveLost!: (why: string) => void;
  /** resolves when this replica becomes the leader */
  readonly acquired: Promise<void>;
  /** resolves, with why, when this replica loses leadership it held (never after release()) */
  readonly lost: Promise<string>;

  constructor(private readonly opts: LeaderElectionOptions) {
    this.path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(opts.namespace)}/leases/${encodeURIComponent(opts.name)}`;
    this.leaseDurationMs = opts.leaseDurationMs ?? leaderElectionDefaults.leaseDurationMs;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? leaderElectionDefaults.renewDeadlineMs;
    this.retryPeriodMs = opts.retryPeriodMs ?? leaderElectionDefaults.retryPeriodMs;
    const wrong = checkLeaderElectionDurations({ leaseDurationMs: this.leaseDurationMs, renewDeadlineMs: this.renewDeadlineMs, retryPeriodMs: this.retryPeriodMs });
    if (wrong) throw new Error(`leader election: ${wrong}`);
    this.now = opts.now ?? Date.now;
    this.acquired = new Promise((r) => (this.resolveAcquired = r));
    this.lost = new Promise((r) => (this.resolveLost = r));
  }

  get identity(): string {
    return this.opts.identity;
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** the holder as last read: this replica, another, or nobody ('') */
  leader(): string | undefined {
    return this.observed?.spec.holderIdentity;
  }

  /** the Lease's annotations as last read or written (the holder's published ones among them) */
  annotations(): Record<string, string> {
    return this.observed?.annotations ?? {};
  }

  /** Starts trying to acquire the Lease, then renewing it; see `acquired` and `lost`. */
  start(): void {
    this.loop ??= this.run();
  }

  /**
   * Stops trying; a holder releases the Lease so that a standby takes it at its next retry. Whatever
   * the Lease protects must have stopped before this is called.
   */
  async release(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
    if (!this.leading) return;
    this.leading = false;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const lease = attempt === 0 && this.observed ? undefined : await this.get();
        if (lease && lease.spec?.holderIdentity !== this.opts.identity) return;
        const resourceVersion = lease?.metadata.resourceVersion ?? this.observed?.resourceVersion;
        const spec = lease?.spec ?? this.observed?.spec ?? {};
        const at = microTime(this.now());
        // what this replica published goes with its leadership; anything else on the Lease stays
        const annotations = { ...(lease?.metadata.annotations ?? this.observed?.annotations ?? {}) };
        for (const k of Object.keys(this.opts.annotations ?? {})) delete annotations[k];
        await this.opts.http.request('PUT', this.path, {
          body: this.leaseObject(resourceVersion, { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: at, renewTime: at, leaseTransitions: spec.leaseTransitions ?? 0 }, annotations),
          timeoutMs: this.renewDeadlineMs,
        });
        this.opts.log?.(`leader election: released Lease ${this.opts.namespace}/${this.opts.name}`);
        return;
      } catch (e) {
        if (!isConflict(e) || attempt === 1) {
          this.opts.log?.(`leader election: releasing Lease ${this.opts.namespace}/${this.opts.name}: ${(e as Error).message}`);
          return;
        }
      }
    }
  }

  private async run(): Promise<void> {
    // acquire: retry every retry period (with jitter) until it is ours
    for (;;) {
      if (this.stopping) return;
      if (await this.tryAcquireOrRenew(this.retryPeriodMs)) break;
      await this.sleep(this.retryPeriodMs * (1 + Math.random() * (jitterFactor - 1)));
    }
    if (this.stopping) {
      // taken as we were told to stop: release() gives it back
      this.leading = true;
      return;
    }
    this.leading = true;
    this.opts.log?.(`leader election: ${this.opts.identity} acquired Lease ${this.opts.namespace}/${this.opts.name}`);
    this.resolveAcquired();
    // renew: each round tries every retry period until it succeeds or the renew deadline passes
    for (;;) {
      await this.sleep(this.retryPeriodMs);
      if (this.stopping) return;
      const deadline = this.now() + this.renewDeadlineMs;
      let renewed = false;
      for (;;) {
        const left = deadline - this.now();
        if (left <= 0) break;
        if (await this.tryAcquireOrRenew(left)) {
          renewed = true;
          break;
        }
        if (this.stopping) return;
        // another holder: no point retrying until the deadline
        if (!this.leadingByRecord()) break;
        await this.sleep(Math.min(this.retryPeriodMs, Math.max(0, deadline - this.now())));
      }
      if (this.stopping) return;
      if (!renewed) {
        this.leading = false;
        const holder = this.observed?.spec.holderIdentity;
        const why = holder && holder !== this.opts.identity
          ? `Lease ${this.opts.namespace}/${this.opts.name} is held by ${holder}`
          : `Lease ${this.opts.namespace}/${this.opts.name} not renewed within the renew deadline (${this.renewDeadlineMs / 1000}s)`;
        this.opts.log?.(`leader election lost: ${why}`);
        this.resolveLost(why);
        return;
      }
    }
  }

  private leadingByRecord(): boolean {
    return this.observed?.spec.holderIdentity === this.opts.identity;
  }

  private async get(timeoutMs?: number): Promise<LeaseObject | undefined> {
    try {
      return await this.opts.http.request<LeaseObject>('GET', this.path, timeoutMs ? { timeoutMs } : {});
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  private leaseObject(resourceVersion: string | undefined, spec: LeaseSpec, annotations?: Record<string, string>): LeaseObject {
    return {
      apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
      metadata: { name: this.opts.name, namespace: this.opts.namespace, ...(resourceVersion ? { resourceVersion } : {}), ...(annotations && Object.keys(annotations).length ? { annotations } : {}) },
      spec,
    };
  }

  private observe(lease: LeaseObject): void {
    const spec = lease.spec ?? {};
    const key = JSON.stringify([spec.holderIdentity ?? '', spec.leaseDurationSeconds, spec.acquireTime, spec.renewTime, spec.leaseTransitions]);
    if (key !== this.observed?.key) this.observedAt = this.now();
    this.observed = { spec, resourceVersion: lease.metadata.resourceVersion, key, annotations: lease.metadata.annotations ?? {} };
  }

  /** one try: true when the Lease is ours afterwards */
  private async tryAcquireOrRenew(timeoutMs: number): Promise<boolean> {
    const now = this.now();
    const seconds = Math.round(this.leaseDurationMs / 1000);
    const at = microTime(now);
    try {
      const lease = await this.get(timeoutMs);
      if (!lease) {
        const created = await this.opts.http.request<LeaseObject>('POST', `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.opts.namespace)}/leases`, {
          body: this.leaseObject(undefined, { holderIdentity: this.opts.identity, leaseDurationSeconds: seconds, acquireTime: at, renewTime: at, leaseTransitions: 0 }, this.opts.annotations),
          timeoutMs,
        });
        this.observe(created);
        return true;
      }
      this.observe(lease);
      const spec = lease.spec ?? {};
      const holder = spec.holderIdentity ?? '';
      const mine = holder === this.opts.identity;
      const validForMs = (spec.leaseDurationSeconds ?? seconds) * 1000;
      if (holder && !mine && this.observedAt + validForMs > now) return false;
      const updated = await this.opts.http.request<LeaseObject>('PUT', this.path, {
        body: {
          ...lease,
          // every renewal writes them again: an address that changed (or an annotation someone
          // removed) is right again a retry period later
          ...(this.opts.annotations ? { metadata: { ...lease.metadata, annotations: { ...lease.metadata.annotations, ...this.opts.annotations } } } : {}),
          spec: {
            ...spec,
            holderIdentity: this.opts.identity, leaseDurationSeconds: seconds, renewTime: at,
            acquireTime: mine && spec.acquireTime ? spec.acquireTime : at,
            leaseTransitions: mine ? spec.leaseTransitions ?? 0 : (spec.leaseTransitions ?? 0) + 1,
          },
        },
        timeoutMs,
      });
      if (!mine) this.opts.log?.(`leader election: took Lease ${this.opts.namespace}/${this.opts.name} from ${holder || 'nobody (released)'}`);
      this.observe(updated);
      return true;
    } catch (e) {
      // a 409 is another candidate's write between our read and ours: the next try reads it
      if (!isConflict(e)) this.opts.log?.(`leader election: Lease ${this.opts.namespace}/${this.opts.name}: ${(e as Error).message}`);
      return false;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(t);
        this.wake = undefined;
        resolve();
      };
    });
  }
}
