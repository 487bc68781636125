// The autoscaler's decisions from the routes the InferenceService controller publishes and the load
// the data plane reports. The data plane here is a stand-in holding fixed readings; the real one
// (src/server/inference/gateway.ts) is exercised end to end by test/serving.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Autoscaler, desiredReplicas, targetPerReplica } from './autoscaler.js';
import type { DataPlaneEvent, LoadReading, Route, ServingDataPlane } from './data-plane.js';
import { makeRevision } from './testing.js';

class Reading implements LoadReading {
  current = 0;
  queued = 0;
  lastArrival = 0;
  concurrency = 0;
  rps = 0;
  window(): { concurrency: number; rps: number } {
    return { concurrency: this.concurrency, rps: this.rps };
  }
}

function plane(loads: Map<string, Reading>): ServingDataPlane {
  const unused = (): never => {
    throw new Error('the autoscaler only reads load');
  };
  return {
    domain: 'example.com',
    onChange: (_fn: (revKey: string, why: DataPlaneEvent) => void) => unused(),
    setRoute: unused, removeRoute: unused, setRevision: unused, removeRevision: unused, setReplicas: unused, setFailure: unused,
    ensureInProcess: unused, readyReplicas: unused, replicaReady: unused,
    load: (k) => loads.get(k),
  };
}

function route(name: string, ...revs: [string, number][]): Route {
  return { namespace: 'default', name, components: { predictor: revs.map(([revision, percent]) => ({ revision, percent })) }, latest: { predictor: revs[revs.length - 1]?.[0] ?? '' } };
}

describe('Autoscaler', () => {
  const setup = (): { scaler: Autoscaler; loads: Map<string, Reading>; changed: string[] } => {
    const loads = new Map<string, Reading>();
    const changed: string[] = [];
    return { scaler: new Autoscaler(plane(loads), (k) => changed.push(k)), loads, changed };
  };

  it('keeps what a revision has until its InferenceService is routed (start-up)', () => {
    const { scaler } = setup();
    const r = makeRevision('iris');
    assert.deepEqual(scaler.desired(r.key, r.obj().spec, true, 3), { replicas: 3 });
  });

  it('gives the newest revision one replica (or minReplicas) while it first loads', () => {
    const { scaler, changed } = setup();
    const r = makeRevision('iris').minReplicas(2);
    scaler.setRoute(route('iris', [r.key, 0]));
    // told as soon as its route names it newest, though it takes no traffic yet
    assert.deepEqual(changed, [r.key]);
    assert.deepEqual(scaler.desired(r.key, r.obj().spec, false, 0), { replicas: 2 });
  });

  it('a revision losing its traffic keeps its replicas for a grace period and asks to be looked at again', () => {
    const { scaler, changed } = setup();
    const old = makeRevision('iris', 1);
    const next = makeRevision('iris', 2);
    scaler.setRoute(route('iris', [old.key, 100]));
    assert.deepEqual(changed, [old.key]);
    scaler.setRoute(route('iris', [next.key, 100]));
    assert.deepEqual(changed.sort(), [old.key, old.key, next.key].sort());
    const d = scaler.desired(old.key, old.obj().spec, true, 2);
    assert.equal(d.replicas, 2);
    assert.ok((d.recheckMs ?? 0) > 0 && (d.recheckMs ?? 0) <= 30_010, `recheck after ${d.recheckMs} ms`);
  });

  it('a routed revision follows its load: concurrency over the target, bounded by maxReplicas', () => {
    const { scaler, loads } = setup();
    const r = makeRevision('iris').scaleMetric('concurrency', 1).maxReplicas(4);
    const load = new Reading();
    loads.set(r.key, load);
    scaler.setRoute(route('iris', [r.key, 100]));
    load.concurrency = 2;
    load.current = 2;
    // 2 in flight against 0.7 per replica: 3
    assert.deepEqual(scaler.desired(r.key, r.obj().spec, true, 1), { replicas: 3 });
    load.concurrency = 10;
    assert.deepEqual(scaler.desired(r.key, r.obj().spec, true, 3), { replicas: 4 });
  });

  it('a request waiting for a revision with nothing wanted asks for one replica', () => {
    const { scaler, loads } = setup();
    const r = makeRevision('iris').minReplicas(0);
    loads.set(r.key, new Reading());
    scaler.setRoute(route('iris', [r.key, 100]));
    scaler.track(r.key, r.obj().spec);
    scaler.demand(r.key);
    const load = loads.get(r.key) as Reading;
    load.current = 1;
    assert.equal(scaler.desired(r.key, r.obj().spec, true, 0).replicas, 1);
  });
});

describe('desiredReplicas', () => {
  it('rps targets 200 a replica at 70% by default', () => {
    const spec = makeRevision('iris').scaleMetric('rps').obj().spec;
    assert.equal(targetPerReplica(spec), 140);
    const load = new Reading();
    load.rps = 250;
    load.current = 1;
    assert.equal(desiredReplicas(spec, load, 1, Date.now()), 2);
  });

  it('goes to zero only after a whole window without requests, and not below minReplicas', () => {
    const spec = makeRevision('iris').minReplicas(0).windowSeconds(60).obj().spec;
    const load = new Reading();
    load.lastArrival = Date.now() - 10_000;
    assert.equal(desiredReplicas(spec, load, 1, Date.now()), 1);
    load.lastArrival = Date.now() - 61_000;
    assert.equal(desiredReplicas(spec, load, 1, Date.now()), 0);
    const kept = makeRevision('iris').minReplicas(1).obj().spec;
    assert.equal(desiredReplicas(kept, load, 1, Date.now()), 1);
  });
});
