import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, StatusReason } from '../api/errors.js';
import { checkLeaderElectionDurations, LeaderElector, type LeaseHttp, type LeaseSpec } from './leader-election.js';

type Lease = { apiVersion: string; kind: string; metadata: { name: string; namespace: string; resourceVersion?: string; annotations?: Record<string, string> }; spec?: LeaseSpec };

/** one Lease behind a fake API server: compare-and-swap on resourceVersion, and a switch to fail every call */
class FakeLeases implements LeaseHttp {
  lease: Lease | undefined;
  private rv = 0;
  down = false;
  writes = 0;

  async request<T>(method: string, _path: string, opts: { body?: unknown } = {}): Promise<T> {
    await new Promise((r) => setImmediate(r));
    if (this.down) throw new Error('connect ECONNREFUSED');
    const body = opts.body as Lease | undefined;
    if (method === 'GET') {
      if (!this.lease) throw ApiError.notFound('Lease', 'coordination.k8s.io', 'skiff-controllers');
      return structuredClone(this.lease) as T;
    }
    if (method === 'POST') {
      if (this.lease) throw new ApiError(StatusReason.AlreadyExists, 'leases.coordination.k8s.io "skiff-controllers" already exists');
    } else if (body?.metadata.resourceVersion !== this.lease?.metadata.resourceVersion) {
      throw new ApiError(StatusReason.Conflict, 'Operation cannot be fulfilled on leases.coordination.k8s.io "skiff-controllers": the object has been modified; please apply your changes to the latest version and try again');
    }
    this.writes++;
    this.lease = structuredClone({ ...(body as Lease), metadata: { ...(body as Lease).metadata, resourceVersion: String(++this.rv) } });
    return structuredClone(this.lease) as T;
  }
}

const fast = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 150 };
const elector = (api: FakeLeases, identity: string, annotations?: Record<string, string>): LeaderElector => new LeaderElector({ http: api, namespace: 'skiff-system', name: 'skiff-controllers', identity, ...fast, ...(annotations ? { annotations } : {}) });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('leader election on a Lease', () => {
  it('checks its durations as client-go does', () => {
    assert.equal(checkLeaderElectionDurations({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2000 }), undefined);
    assert.match(checkLeaderElectionDurations({ leaseDurationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2000 }) ?? '', /greater than the renew deadline/);
    assert.match(checkLeaderElectionDurations({ leaseDurationMs: 15_000, renewDeadlineMs: 2000, retryPeriodMs: 2000 }) ?? '', /1\.2 times the retry period/);
  });

  it('one of two candidates holds it; the other takes it when released, and leaseTransitions counts the change', async () => {
    const api = new FakeLeases();
    const a = elector(api, 'a');
    a.start();
    await a.acquired;
    const b = elector(api, 'b');
    b.start();
    const first = structuredClone(api.lease?.spec);
    assert.equal(first?.holderIdentity, 'a');
    assert.equal(first?.leaseTransitions, 0);
    assert.equal(first?.leaseDurationSeconds, 1);
    assert.match(first?.renewTime ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    // well past the lease duration: a renews, so b never takes it
    await sleep(1600);
    assert.equal(b.isLeader(), false);
    assert.equal(api.lease?.spec?.holderIdentity, 'a');
    assert.notEqual(api.lease?.spec?.renewTime, first?.renewTime);
    assert.equal(api.lease?.spec?.acquireTime, first?.acquireTime, 'a renewal keeps acquireTime');
    const t0 = Date.now();
    await a.release();
    assert.equal(api.lease?.spec?.holderIdentity, '');
    await b.acquired;
    assert.ok(Date.now() - t0 < 500, `took over after ${Date.now() - t0} ms, at its next try rather than at expiry`);
    assert.equal(api.lease?.spec?.holderIdentity, 'b');
    assert.equal(api.lease?.spec?.leaseTransitions, 1);
    await b.release();
  });

  it('a holder that stops renewing is replaced once the lease duration has passed', async () => {
    const api = new FakeLeases();
    const a = elector(api, 'a');
    a.start();
    await a.acquired;
    const b = elector(api, 'b');
    b.start();
    await sleep(300);
    // a stops renewing without releasing (its process was killed)
    (a as unknown as { stopping: boolean }).stopping = true;
    const t0 = Date.now();
    await b.acquired;
    const waited = Date.now() - t0;
    assert.ok(waited >= 600 && waited < 2000, `took over after ${waited} ms`);
    assert.equal(api.lease?.spec?.leaseTransitions, 1);
    await b.release();
  });

  it('a holder that cannot reach the API server loses within the renew deadline', async () => {
    const api = new FakeLeases();
    const a = elector(api, 'a');
    a.start();
    await a.acquired;
    api.down = true;
    const t0 = Date.now();
    const why = await a.lost;
    const after = Date.now() - t0;
    assert.equal(a.isLeader(), false);
    assert.match(why, /not renewed within the renew deadline/);
    // the next round starts a retry period later, then tries for the renew deadline
    assert.ok(after < fast.retryPeriodMs + fast.renewDeadlineMs + 300, `lost after ${after} ms`);
    // and a lost leadership is not released: the record is not its to clear any more
    const writes = api.writes;
    api.down = false;
    await a.release();
    assert.equal(api.writes, writes);
  });

  it('the holder publishes its annotations on the Lease, keeps them on renewal, and removes them on release; a standby reads them', async () => {
    const api = new FakeLeases();
    const key = 'skiff.dev/leader-address';
    const a = elector(api, 'a', { [key]: 'http://10.0.0.1:8080' });
    a.start();
    await a.acquired;
    assert.equal(api.lease?.metadata.annotations?.[key], 'http://10.0.0.1:8080');
    const b = elector(api, 'b', { [key]: 'http://10.0.0.2:8080' });
    b.start();
    // someone else's annotation stays; one of ours that was removed comes back at the next renewal
    if (api.lease) api.lease.metadata.annotations = { other: 'x' };
    await sleep(400);
    assert.deepEqual(api.lease?.metadata.annotations, { other: 'x', [key]: 'http://10.0.0.1:8080' });
    assert.equal(b.leader(), 'a');
    assert.equal(b.annotations()[key], 'http://10.0.0.1:8080', 'the standby reads the holder\'s from the Lease it polls');
    await a.release();
    await b.acquired;
    assert.equal(api.lease?.metadata.annotations?.[key], 'http://10.0.0.2:8080', 'the new holder publishes its own');
    await b.release();
    assert.deepEqual(api.lease?.metadata.annotations, { other: 'x' }, 'released: its address goes, the rest stays');
  });
});
