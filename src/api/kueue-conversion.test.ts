// kueue.x-k8s.io v1beta1 <-> v1beta2: the conversions themselves, round trips through the object
// client (a v1beta1 write stored as v1beta2 and read back in both versions, lists, patches, watches)
// and every Kueue object of the upstream corpus accepted, or refused naming the field as Kueue does.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import YAML from 'yaml';
import { conformanceDir, corpusFiles } from '../conformance-path.js';
import { Client } from '../store/client.js';
import { SqliteStore } from '../store/sqlite/store.js';
import type { WatchEvent } from '../store/store.js';
import { ApiError } from './errors.js';
import { defaultRegistry } from './index.js';
import { kueueToV1beta1, kueueToV1beta2, topologyDomainsFrom, topologySlicesFrom } from './kueue-conversion.js';
import { ClusterQueueKind, LocalQueueKind, WorkloadKind, kueueKinds, toV1beta1, toV1beta2 } from './kueue.js';
import type { KObject, StoredObject } from './meta.js';
import { clone } from './meta.js';
import type { KindDef } from './registry.js';

const v1beta1 = (kind: string): KindDef => kueueKinds.find((d) => d.kind === kind && d.version === 'v1beta1') as KindDef;
const meta = { name: 'x', uid: 'u', resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z' };
const template = { spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '1' } } }] } };

describe('Kueue\'s conversions', () => {
  it('ClusterQueue: cohort <-> cohortName, admissionChecks -> admissionChecksStrategy, Borrow and Preempt -> MayStopSearch', () => {
    const old: KObject = {
      apiVersion: 'kueue.x-k8s.io/v1beta1', kind: 'ClusterQueue', metadata: meta,
      spec: { cohort: 'team-ab', admissionChecks: ['prov', 'check'], flavorFungibility: { whenCanBorrow: 'Borrow', whenCanPreempt: 'Preempt' } },
      status: { pendingWorkloads: 1, pendingWorkloadsStatus: { clusterQueuePendingWorkload: [], lastChangeTime: '2026-01-01T00:00:00Z' }, fairSharing: { weightedShare: 0, admissionFairSharingStatus: { consumedResources: {}, lastUpdate: '2026-01-01T00:00:00Z' } } },
    };
    const up = kueueToV1beta2(old);
    assert.equal(up.apiVersion, 'kueue.x-k8s.io/v1beta2');
    assert.deepEqual(up.spec, { cohortName: 'team-ab', admissionChecksStrategy: { admissionChecks: [{ name: 'prov' }, { name: 'check' }] }, flavorFungibility: { whenCanBorrow: 'MayStopSearch', whenCanPreempt: 'MayStopSearch' } });
    assert.deepEqual(up.status, { pendingWorkloads: 1, fairSharing: { weightedShare: 0 } });
    // nothing goes back into admissionChecks: v1beta1 serves the strategy too
    const down = kueueToV1beta1({ ...up, spec: { ...up.spec, concurrentAdmissionPolicy: { migration: { mode: 'TryPreferredFlavors' } } } });
    assert.deepEqual(down.spec, { cohort: 'team-ab', admissionChecksStrategy: { admissionChecks: [{ name: 'prov' }, { name: 'check' }] }, flavorFungibility: { whenCanBorrow: 'MayStopSearch', whenCanPreempt: 'MayStopSearch' } });
    assert.equal(kueueToV1beta1(up).apiVersion, 'kueue.x-k8s.io/v1beta1');
    assert.deepEqual(old.spec.cohort, 'team-ab', 'the argument is left as it was');
  });

  it('LocalQueue: status.flavorUsage <-> flavorsUsage, v1beta1\'s status.flavors dropped', () => {
    const usage = [{ name: 'default-flavor', resources: [{ name: 'cpu', total: '3' }] }];
    const up = kueueToV1beta2({ apiVersion: 'kueue.x-k8s.io/v1beta1', kind: 'LocalQueue', metadata: meta, spec: { clusterQueue: 'cq' }, status: { flavorUsage: usage, flavors: [{ name: 'default-flavor', resources: ['cpu'] }], pendingWorkloads: 2 } });
    assert.deepEqual(up.status, { flavorsUsage: usage, pendingWorkloads: 2 });
    assert.deepEqual(kueueToV1beta1(up).status, { flavorUsage: usage, pendingWorkloads: 2 });
  });

  it('Workload: priorityClassSource/Name <-> priorityClassRef, the execution time\'s old spelling, preemption gates dropped going down', () => {
    const wl = (spec: Record<string, unknown>, status: Record<string, unknown> = {}): KObject => ({ apiVersion: 'kueue.x-k8s.io/v1beta1', kind: 'Workload', metadata: meta, spec: { podSets: [], ...spec }, status });
    const wpc = kueueToV1beta2(wl({ priorityClassSource: 'kueue.x-k8s.io/workloadpriorityclass', priorityClassName: 'sample-priority', priority: 10000 }, { accumulatedPastExexcutionTimeSeconds: 30 }));
    assert.deepEqual(wpc.spec.priorityClassRef, { group: 'kueue.x-k8s.io', kind: 'WorkloadPriorityClass', name: 'sample-priority' });
    assert.equal(wpc.spec.priorityClassSource, undefined);
    assert.deepEqual(wpc.status, { accumulatedPastExecutionTimeSeconds: 30 });
    const pod = kueueToV1beta2(wl({ priorityClassSource: 'scheduling.k8s.io/priorityclass', priorityClassName: 'system-node-critical' }));
    assert.deepEqual(pod.spec.priorityClassRef, { group: 'scheduling.k8s.io', kind: 'PriorityClass', name: 'system-node-critical' });
    // an empty source names no class, whatever the name says (as Kueue's switch)
    assert.equal(kueueToV1beta2(wl({ priorityClassSource: '', priorityClassName: 'x' })).spec.priorityClassRef, undefined);
    const down = kueueToV1beta1({ ...wpc, spec: { ...wpc.spec, preemptionGates: [{ name: 'g' }] }, status: { ...wpc.status, preemptionGates: [{ name: 'g', position: 'Open' }] } });
    assert.deepEqual(down.spec, { podSets: [], priorityClassSource: 'kueue.x-k8s.io/workloadpriorityclass', priorityClassName: 'sample-priority', priority: 10000 });
    assert.deepEqual(down.status, { accumulatedPastExexcutionTimeSeconds: 30 });
  });

  it('a topology assignment: v1beta1\'s domains <-> one compact v1beta2 slice', () => {
    const levels = ['cloud.com/block', 'kubernetes.io/hostname'];
    const domains = [
      { values: ['block-1', 'pool-a-node-0'], count: 2 },
      { values: ['block-1', 'pool-a-node-1'], count: 2 },
      { values: ['block-1', 'pool-a-node-12'], count: 2 },
    ];
    const slices = topologySlicesFrom(levels, domains);
    assert.deepEqual(slices, [{
      domainCount: 3,
      valuesPerLevel: [{ universal: 'block-1' }, { individual: { prefix: 'pool-a-node-', roots: ['0', '1', '12'] } }],
      podCounts: { universal: 2 },
    }]);
    assert.deepEqual(topologyDomainsFrom(levels, slices), domains);
    const uneven = [{ values: ['ab-x'], count: 1 }, { values: ['cd-x'], count: 3 }];
    const s2 = topologySlicesFrom(['h'], uneven);
    assert.deepEqual(s2, [{ domainCount: 2, valuesPerLevel: [{ individual: { suffix: '-x', roots: ['ab', 'cd'] } }], podCounts: { individual: [1, 3] } }]);
    assert.deepEqual(topologyDomainsFrom(['h'], s2), uneven);
    // prefix and suffix never overlap within the shortest value
    assert.deepEqual(topologyDomainsFrom(['h'], topologySlicesFrom(['h'], [{ values: ['ababa'], count: 1 }, { values: ['aba'], count: 1 }])).map((d) => d.values[0]), ['ababa', 'aba']);
    const wl: KObject = {
      apiVersion: 'kueue.x-k8s.io/v1beta1', kind: 'Workload', metadata: meta, spec: { podSets: [{ name: 'main', count: 6, template }] },
      status: { admission: { clusterQueue: 'cq', podSetAssignments: [{ name: 'main', count: 6, topologyAssignment: { levels, domains } }] } },
    };
    const up = kueueToV1beta2(wl);
    assert.deepEqual(up.status.admission.podSetAssignments[0].topologyAssignment, { levels, slices });
    assert.deepEqual(kueueToV1beta1(up), wl);
  });

  it('a stored v1beta2 object comes back the same after a trip through v1beta1, for every v1beta2 object of the corpus', () => {
    let n = 0;
    for (const obj of corpusObjects().filter((o) => o.obj.apiVersion === 'kueue.x-k8s.io/v1beta2' && served(o.obj))) {
      const stored = clone(obj.obj);
      const def = kueueKinds.find((d) => d.kind === stored.kind && d.version === 'v1beta2') as KindDef;
      def.default?.(stored);
      // the v1beta2-only fields are lost going down, as with Kueue's webhook
      if (stored.spec?.concurrentAdmissionPolicy) continue;
      assert.deepEqual(toV1beta2(toV1beta1(stored)), stored, obj.file);
      n++;
    }
    assert.ok(n >= 50, `${n} objects`);
  });
});

/** one Kueue object of the corpus, with where it came from */
interface CorpusObject {
  file: string;
  obj: KObject;
}

function corpusObjects(): CorpusObject[] {
  const base = join(conformanceDir(), 'kueue');
  const out: CorpusObject[] = [];
  for (const dir of ['examples', 'legacy-v1beta1', 'docs-extracted']) {
    for (const file of corpusFiles(join(base, dir))) {
      let docs: unknown[];
      try {
        docs = YAML.parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJSON() as unknown);
      } catch {
        continue; // docs-extracted/tasks_manage_administer_cluster_quotas-13.yaml: upstream's typo, not YAML
      }
      for (const d of docs) {
        const o = d as KObject | null;
        if (o && typeof o.apiVersion === 'string' && o.apiVersion.startsWith('kueue.x-k8s.io/')) out.push({ file: relative(base, file), obj: o });
      }
    }
  }
  return out;
}

const servedKinds = new Set(kueueKinds.map((d) => d.kind));
const served = (o: KObject): boolean => servedKinds.has(o.kind);

/** what Kueue itself refuses in its own corpus, and why (the field and the message) */
const refusedUpstream: Record<string, [string, string]> = {
  // an admission check restricted to a flavor the ClusterQueue does not have
  'examples/admin/minimal-cq.yaml': ['spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]', 'Unsupported value: "default-flavor"'],
  'legacy-v1beta1/examples/admin/minimal-cq.yaml': ['spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]', 'Unsupported value: "default-flavor"'],
  // excerpts of the docs that quote only the cpu line of a cpu+memory flavor
  'docs-extracted/concepts_cluster_queue-09.yaml': ['spec.resourceGroups[0]', 'flavors must have the same number of resources as the coveredResources'],
  'docs-extracted/concepts_cluster_queue-10.yaml': ['spec.resourceGroups[0]', 'flavors must have the same number of resources as the coveredResources'],
  'legacy-v1beta1/concepts_cluster_queue-07.yaml': ['spec.resourceGroups[0]', 'flavors must have the same number of resources as the coveredResources'],
  'legacy-v1beta1/concepts_cluster_queue-08.yaml': ['spec.resourceGroups[0]', 'flavors must have the same number of resources as the coveredResources'],
  // an excerpt ending in "...": no pod sets, which v1beta1 requires (v1beta2 does not)
  'legacy-v1beta1/concepts_workload_priority_class-03.yaml': ['spec.podSets', 'Required value'],
  // an excerpt with a placeholder field
  'docs-extracted/concepts_admission_fair_sharing-01.yaml': ['spec.resources', 'unknown field "resources"'],
};

async function newClient(): Promise<Client> {
  const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry(), []);
  for (const name of ['default', 'team-a', 'team-b', 'kueue-test']) await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return client;
}

describe('the upstream corpus through the object client', () => {
  it('accepts every Kueue object of examples/, legacy-v1beta1/ and docs-extracted/ but those Kueue refuses, naming the field', async () => {
    const client = await newClient();
    const skipped = new Set<string>();
    let accepted = 0;
    for (const { file, obj } of corpusObjects()) {
      if (!served(obj)) {
        skipped.add(obj.kind);
        continue;
      }
      const o = clone(obj);
      if (o.kind === 'LocalQueue' || o.kind === 'Workload') o.metadata.namespace ??= 'default';
      const why = refusedUpstream[file];
      try {
        await client.create(o, { dryRun: true });
        assert.equal(why, undefined, `${file} was accepted, Kueue refuses it`);
        accepted++;
      } catch (e) {
        if (!(e instanceof ApiError) || !why) throw new Error(`${file}: ${(e as Error).message}`);
        assert.equal(e.code, 422);
        assert.ok(e.details.causes?.some((c) => c.field === why[0] && c.message.includes(why[1])), `${file}: ${e.message}`);
      }
    }
    assert.ok(accepted >= 90, `${accepted} accepted`);
    // AdmissionCheck, ProvisioningRequestConfig and Topology are Kueue's, not served by Skiff (yet)
    assert.deepEqual([...skipped].sort(), ['AdmissionCheck', 'ProvisioningRequestConfig', 'Topology']);
  });
});

describe('v1beta1 through the object client', () => {
  const cqV1 = (name: string, spec: Record<string, unknown>): KObject => ({ apiVersion: 'kueue.x-k8s.io/v1beta1', kind: 'ClusterQueue', metadata: { name }, spec });

  it('stores a v1beta1 write as v1beta2 and answers each version in its own words', async () => {
    const client = await newClient();
    const created = await client.create(cqV1('team-a-cq', { cohort: 'team-ab', namespaceSelector: {}, flavorFungibility: { whenCanBorrow: 'Borrow' } }));
    assert.equal(created.apiVersion, 'kueue.x-k8s.io/v1beta1');
    assert.equal(created.spec.cohort, 'team-ab');
    assert.equal(created.spec.flavorFungibility.whenCanBorrow, 'MayStopSearch');
    const stored = await client.store.get(ClusterQueueKind, { name: 'team-a-cq' });
    assert.equal(stored.apiVersion, 'kueue.x-k8s.io/v1beta2');
    assert.equal(stored.spec.cohortName, 'team-ab');
    assert.equal(stored.spec.cohort, undefined);
    assert.equal(stored.spec.queueingStrategy, 'BestEffortFIFO');
    assert.equal((await client.get(ClusterQueueKind, { name: 'team-a-cq' })).spec.cohortName, 'team-ab');
    const listed = await client.list(v1beta1('ClusterQueue'));
    assert.deepEqual(listed.items.map((o) => [o.apiVersion, o.spec.cohort, o.spec.cohortName]), [['kueue.x-k8s.io/v1beta1', 'team-ab', undefined]]);
    // a merge patch in v1beta1's words lands in v1beta2's field
    const patched = await client.patch(v1beta1('ClusterQueue'), { name: 'team-a-cq' }, { spec: { cohort: 'team-xy' } }, 'merge');
    assert.equal(patched.spec.cohort, 'team-xy');
    assert.equal((await client.get(ClusterQueueKind, { name: 'team-a-cq' })).spec.cohortName, 'team-xy');
    // a v1beta2 write read through v1beta1
    await client.create({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'LocalQueue', metadata: { name: 'lq', namespace: 'team-a' }, spec: { clusterQueue: 'team-a-cq' } });
    const lq = await client.get(v1beta1('LocalQueue'), { namespace: 'team-a', name: 'lq' });
    assert.deepEqual([lq.apiVersion, lq.spec.clusterQueue], ['kueue.x-k8s.io/v1beta1', 'team-a-cq']);
    const deleted = await client.delete(v1beta1('LocalQueue'), { namespace: 'team-a', name: 'lq' });
    assert.equal(deleted.apiVersion, 'kueue.x-k8s.io/v1beta1');
  });

  it('refuses a v1beta1 update that breaks a rule, naming the field of the version written', async () => {
    const client = await newClient();
    await client.create({ apiVersion: 'kueue.x-k8s.io/v1beta1', kind: 'LocalQueue', metadata: { name: 'lq', namespace: 'team-a' }, spec: { clusterQueue: 'cq-a' } });
    const live = await client.get(v1beta1('LocalQueue'), { namespace: 'team-a', name: 'lq' });
    await assert.rejects(client.update({ ...live, spec: { ...live.spec, clusterQueue: 'cq-b' } }), (e: ApiError) =>
      e.code === 422 && e.message === 'LocalQueue.kueue.x-k8s.io "lq" is invalid: spec.clusterQueue: Invalid value: "cq-b": field is immutable');
  });

  it('writes a status through v1beta1 (flavorUsage) into v1beta2 (flavorsUsage), and watches in the version asked for', async () => {
    const client = await newClient();
    const events: WatchEvent[] = [];
    const w = client.watch(v1beta1('LocalQueue'), { namespace: 'team-a' }, (e) => events.push(e));
    await client.create({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'LocalQueue', metadata: { name: 'lq', namespace: 'team-a' }, spec: { clusterQueue: 'cq' } });
    const live = await client.get(v1beta1('LocalQueue'), { namespace: 'team-a', name: 'lq' });
    const usage = [{ name: 'default-flavor', resources: [{ name: 'cpu', total: '2' }] }];
    const written = await client.updateStatus({ ...live, status: { pendingWorkloads: 1, reservingWorkloads: 0, admittedWorkloads: 1, flavorUsage: usage } });
    assert.deepEqual(written.status.flavorUsage, usage);
    const stored = await client.get<KObject>(LocalQueueKind, { namespace: 'team-a', name: 'lq' });
    assert.deepEqual(stored.status.flavorsUsage, usage);
    await new Promise((r) => setTimeout(r, 50));
    w.stop();
    assert.deepEqual(events.map((e) => [e.type, e.object.apiVersion, e.object.status?.flavorUsage?.length ?? 0]), [['ADDED', 'kueue.x-k8s.io/v1beta1', 0], ['MODIFIED', 'kueue.x-k8s.io/v1beta1', 1]]);
  });

  it('checks a Workload\'s status writes, whichever version they come in', async () => {
    const client = await newClient();
    await client.create({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'Workload', metadata: { name: 'wl', namespace: 'team-a' }, spec: { queueName: 'lq', podSets: [{ name: 'main', count: 2, template }] } });
    const live = await client.get<StoredObject>(WorkloadKind, { namespace: 'team-a', name: 'wl' });
    const reserved = { type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', message: 'Quota reserved in ClusterQueue cq', lastTransitionTime: '2026-01-01T00:00:00Z' };
    await assert.rejects(client.updateStatus({ ...live, status: { conditions: [reserved] } }), (e: ApiError) =>
      e.code === 422 && e.details.causes?.[0]?.field === 'status.admission');
    const oldLive = await client.get(v1beta1('Workload'), { namespace: 'team-a', name: 'wl' });
    await assert.rejects(client.updateStatus({ ...oldLive, status: { conditions: [reserved], admission: { clusterQueue: 'cq', podSetAssignments: [{ name: 'workers', count: 2 }] } } }), (e: ApiError) =>
      e.details.causes?.some((c) => c.field === 'status.admission.podSetAssignments[0].name') === true);
    const ok = await client.updateStatus({ ...live, status: { conditions: [reserved], admission: { clusterQueue: 'cq', podSetAssignments: [{ name: 'main', count: 2, flavors: { cpu: 'default-flavor' }, resourceUsage: { cpu: '2' } }] } } });
    assert.equal(ok.status.admission.clusterQueue, 'cq');
    // and while it holds quota its pod sets stay
    await assert.rejects(client.update({ ...ok, spec: { ...ok.spec, podSets: [{ name: 'main', count: 3, template }] } }), (e: ApiError) =>
      e.details.causes?.some((c) => c.field === 'spec.podSets.0' && c.message.endsWith('field is immutable')) === true);
  });
});
