// Knative's Pod autoscaler (KPA), reduced to what one machine needs: each revision's in-flight
// requests (queued at the gateway or being served) are integrated over time; the stable window
// (60 s by default, `autoscaling.knative.dev/window`) decides scaling down and the panic window (a
// tenth of it) scaling up, against `scaleTarget` per replica at 70% utilisation (Knative's
// default); `scaleMetric: rps` counts requests per second instead (target 200 by default). A
// revision with `minReplicas: 0` goes to zero after a whole stable window without requests, and back
// to one as soon as a request arrives, which waits at the gateway meanwhile. The gateway measures the
// load (as Knative's queue-proxy does); the decisions are the controllers', here.
import type { RevisionSpec } from '../../api/serving-revision.js';
import type { LoadReading, Route, ServingDataPlane } from './data-plane.js';
import { every, type Timer } from '../../util/timers.js';

export interface ScalePolicy {
  minReplicas: number;
  /** 0: unlimited */
  maxReplicas: number;
  scaleMetric: 'concurrency' | 'rps' | 'cpu' | 'memory';
  scaleTarget?: number;
  containerConcurrency: number;
  windowSeconds: number;
}

/** Knative's target utilisation */
const utilisation = 0.7;

export function targetPerReplica(p: ScalePolicy): number {
  if (p.scaleMetric === 'rps') return (p.scaleTarget ?? 200) * utilisation;
  // cpu and memory are not measured per replica here: they scale on concurrency with the default target
  const base = p.scaleMetric === 'concurrency' && p.scaleTarget ? p.scaleTarget : p.containerConcurrency > 0 ? p.containerConcurrency : 100;
  return Math.max(base * utilisation, 0.01);
}

/**
 * The replicas a revision that takes traffic should have. `current` is what it has now; the answer
 * only goes down on the stable window's evidence, and up on the panic window's.
 */
export function desiredReplicas(p: ScalePolicy, load: LoadReading, current: number, nowMs: number): number {
  const windowMs = Math.max(1, p.windowSeconds) * 1000;
  const target = targetPerReplica(p);
  const metric = (w: { concurrency: number; rps: number }): number => (p.scaleMetric === 'rps' ? w.rps : w.concurrency);
  const stable = Math.ceil(metric(load.window(windowMs)) / target - 1e-9);
  const panic = Math.ceil(metric(load.window(Math.max(1000, windowMs / 10))) / target - 1e-9);
  let want = Math.max(stable, Math.min(panic, Math.max(current, 1) * 2), load.current > 0 ? 1 : 0);
  // scale down only as far as the stable window allows; never below one while requests wait or
  // within a window of the last one
  if (want < current) want = Math.max(want, stable);
  const idle = load.current === 0 && nowMs - load.lastArrival >= windowMs;
  if (want === 0 && !idle) want = 1;
  const max = p.maxReplicas > 0 ? p.maxReplicas : Infinity;
  return Math.min(Math.max(want, p.minReplicas), max);
}

/** how long a loaded revision that takes no traffic keeps its replicas (Knative's scale-to-zero grace) */
const unroutedGraceMs = 30_000;

/**
 * Every revision's wanted replica count. It follows the routes the InferenceService controller
 * publishes (which revisions take traffic), looks at each routed revision's load once a second, and
 * calls `changed` with a revision's key when its answer moves, so the revision controller acts on it.
 */
export class Autoscaler {
  private readonly routes = new Map<string, Route>();
  private readonly routed = new Set<string>();
  /** every component's newest revision */
  private readonly latest = new Set<string>();
  private readonly specs = new Map<string, RevisionSpec>();
  private readonly wanted = new Map<string, number>();
  /** when a loaded revision was first seen taking no traffic */
  private readonly unrouted = new Map<string, number>();
  private tick: Timer | undefined;

  constructor(private readonly plane: ServingDataPlane, private readonly changed: (revKey: string) => void) {}

  start(): void {
    this.tick ??= every(1000, () => this.autoscale()).unref();
  }

  stop(): void {
    this.tick?.clear();
    this.tick = undefined;
  }

  setRoute(route: Route): void {
    this.routes.set(`${route.namespace}/${route.name}`, route);
    this.recomputeRouted();
  }

  removeRoute(namespace: string, name: string): void {
    this.routes.delete(`${namespace}/${name}`);
    this.recomputeRouted();
  }

  /**
   * A revision whose answer may change with the routes is told: one that starts or stops taking
   * traffic, and one that becomes or stops being its component's newest (a new revision waits for
   * its route before it gets its first replica).
   */
  private recomputeRouted(): void {
    const before = new Set(this.routed);
    const latestBefore = new Set(this.latest);
    this.routed.clear();
    this.latest.clear();
    for (const r of this.routes.values()) {
      for (const t of Object.values(r.components)) for (const x of t ?? []) if (x.percent > 0) this.routed.add(x.revision);
      for (const k of Object.values(r.latest)) if (k) this.latest.add(k);
    }
    for (const k of new Set([...before, ...this.routed, ...latestBefore, ...this.latest])) {
      if (before.has(k) !== this.routed.has(k) || latestBefore.has(k) !== this.latest.has(k)) this.changed(k);
    }
  }

  /** the revision exists with this spec */
  track(revKey: string, spec: RevisionSpec): void {
    this.specs.set(revKey, spec);
  }

  forget(revKey: string): void {
    this.specs.delete(revKey);
    this.wanted.delete(revKey);
    this.unrouted.delete(revKey);
  }

  /** a request waits for a revision with nothing ready: it wants at least one replica */
  demand(revKey: string): void {
    if (this.specs.has(revKey) && (this.wanted.get(revKey) ?? 0) < 1) this.wanted.set(revKey, 1);
  }

  /**
   * The replicas a revision should have now, and when to ask again. Until the controller has
   * published the revision's InferenceService route (start-up), it keeps what it has. A revision
   * not yet loaded gets one (Knative's initial scale) while it is its component's newest; one that
   * takes no traffic gets none, after a grace period (traffic may be about to move to it); one that
   * does, what its load says.
   */
  desired(revKey: string, spec: RevisionSpec, loadedOnce: boolean, current: number): { replicas: number; recheckMs?: number } {
    this.track(revKey, spec);
    const ns = revKey.slice(0, revKey.indexOf('/'));
    const route = this.routes.get(`${ns}/${spec.inferenceService}`);
    if (!route) return { replicas: current };
    const routed = this.routed.has(revKey);
    const latest = route.latest[spec.component] === revKey;
    const load = this.plane.load(revKey);
    const queued = load?.queued ?? 0;
    if (routed || queued > 0) this.unrouted.delete(revKey);
    if (!loadedOnce && latest) return { replicas: Math.max(1, spec.minReplicas) };
    if (!routed) {
      if (queued > 0) return { replicas: Math.max(1, current) };
      const since = this.unrouted.get(revKey) ?? Date.now();
      this.unrouted.set(revKey, since);
      const left = since + unroutedGraceMs - Date.now();
      return left > 0 ? { replicas: current, recheckMs: left + 10 } : { replicas: 0 };
    }
    const before = this.wanted.get(revKey) ?? Math.max(spec.minReplicas, 1, current);
    const n = load ? desiredReplicas(spec, load, before, Date.now()) : before;
    this.wanted.set(revKey, n);
    return { replicas: n };
  }

  private autoscale(): void {
    for (const [key, spec] of this.specs) {
      if (!this.routed.has(key)) continue;
      const load = this.plane.load(key);
      if (!load) continue;
      const before = this.wanted.get(key);
      const n = desiredReplicas(spec, load, before ?? Math.max(spec.minReplicas, 1), Date.now());
      if (n !== before) {
        this.wanted.set(key, n);
        this.changed(key);
      }
    }
  }
}
