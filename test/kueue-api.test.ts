// Kueue's API (kueue.x-k8s.io v1beta2, and v1beta1 converted) as kubectl and the Python client see it
// against `skiff up`: every YAML of Kueue's examples and of its v1beta1 (v0.14) examples applied with
// kubectl and read back in both versions, Kueue's columns and short names, `kubectl explain` in both
// versions, CustomObjectsApi across versions, and invalid objects refused with 422 naming the field.
//
// Objects of kinds Skiff serves that are not Kueue's (Jobs, Pods, training jobs) are created with
// --dry-run=server: this file is about the API; test/queues.test.ts runs labelled jobs through the
// queue controllers. Objects of kinds Skiff does not serve are skipped;
// the test prints which and why.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { defaultRegistry } from '../src/api/index.js';
import { kueueKinds, toV1beta1, toV1beta2 } from '../src/api/kueue.js';
import type { KObject } from '../src/api/meta.js';
import { conformanceDir, corpusFiles } from '../src/conformance-path.js';
import { TestServer } from './harness.js';

const base = join(conformanceDir(), 'kueue');
const registry = defaultRegistry();
const group = 'kueue.x-k8s.io';

/** what Kueue itself refuses among its examples: the field and the words of the refusal */
const refusedUpstream: Record<string, [string, string]> = {
  'examples/admin/minimal-cq.yaml': ['spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]', 'Unsupported value: "default-flavor"'],
  'legacy-v1beta1/examples/admin/minimal-cq.yaml': ['spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]', 'Unsupported value: "default-flavor"'],
  'legacy-v1beta1/concepts_cluster_queue-07.yaml': ['spec.resourceGroups[0]', 'Invalid value: flavors must have the same number of resources as the coveredResources'],
  'legacy-v1beta1/concepts_cluster_queue-08.yaml': ['spec.resourceGroups[0]', 'Invalid value: flavors must have the same number of resources as the coveredResources'],
  'legacy-v1beta1/concepts_workload_priority_class-03.yaml': ['spec.podSets', 'Required value'],
};

/** excerpts of Kueue's docs whose job has no spec ("spec: ..."): the API server refuses them as any job without one */
const truncatedJobs: Record<string, string> = {
  'legacy-v1beta1/concepts_workload_priority_class-02.yaml': 'The Job "sample-job" is invalid: spec: Required value',
  'legacy-v1beta1/concepts_workload_priority_class-04.yaml': 'The MPIJob "pi" is invalid',
};

/** `want` is in `live`: every field it sets has the same value there (lists item by item) */
function contains(live: unknown, want: unknown, path = ''): string | undefined {
  if (want === null || want === undefined) return undefined;
  if (Array.isArray(want)) {
    if (!Array.isArray(live) || live.length !== want.length) return `${path}: ${JSON.stringify(live)} is not ${JSON.stringify(want)}`;
    for (let i = 0; i < want.length; i++) {
      const why = contains(live[i], want[i], `${path}[${i}]`);
      if (why) return why;
    }
    return undefined;
  }
  if (typeof want === 'object') {
    if (!live || typeof live !== 'object') return `${path}: missing`;
    for (const [k, v] of Object.entries(want)) {
      const why = contains((live as Record<string, unknown>)[k], v, `${path}.${k}`);
      if (why) return why;
    }
    return undefined;
  }
  return live === want ? undefined : `${path}: ${JSON.stringify(live)} is not ${JSON.stringify(want)}`;
}

/** the parts of an object a reader compares: everything but metadata, which the server fills */
const body = (o: KObject): Record<string, unknown> => {
  const { metadata: _m, ...rest } = o;
  return rest;
};

/** objects as kubectl reads them: YAML 1.1, so that a string such as "on" stays a quoted string, not a boolean */
const yamlOf = (docs: KObject[]): string => docs.map((d) => YAML.stringify(d, { version: '1.1' })).join('---\n');

describe('Kueue\'s API against kubectl and the Python client', () => {
  let s: TestServer;
  const ok = async (args: string[], input?: string): Promise<string> => {
    const r = await s.kubectl(args, input);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const refused = async (args: string[], input: string, ...expected: string[]): Promise<string> => {
    const r = await s.kubectl(args, input);
    assert.notEqual(r.code, 0, `kubectl ${args.join(' ')} should have been refused:\n${input}`);
    for (const e of expected) assert.ok(r.stderr.includes(e), `expected ${JSON.stringify(e)} in: ${r.stderr}`);
    return r.stderr;
  };

  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
  });

  it('applies every YAML of examples/ and legacy-v1beta1/, reads each Kueue object back in both versions, and deletes it', async (t) => {
    const files = [...corpusFiles(join(base, 'examples')), ...corpusFiles(join(base, 'legacy-v1beta1'))];
    assert.ok(files.length >= 40, `${files.length} files`);
    const skipped: string[] = [];
    const dryRun: string[] = [];
    const refusedJobs: string[] = [];
    let applied = 0;
    for (const file of files) {
      const name = relative(base, file);
      const docs = YAML.parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJSON() as KObject | null).filter((d): d is KObject => !!d);
      const kueue = docs.filter((d) => d.apiVersion.startsWith(`${group}/`) && registry.forObject(d.apiVersion, d.kind));
      const namespaces = docs.filter((d) => d.kind === 'Namespace');
      const others = docs.filter((d) => !kueue.includes(d) && !namespaces.includes(d) && registry.forObject(d.apiVersion, d.kind));
      for (const d of docs) {
        if (!registry.forObject(d.apiVersion, d.kind)) skipped.push(`${name}: ${d.kind} ${d.apiVersion} ${d.metadata?.name ?? d.metadata?.generateName ?? ''}: kind not served by Skiff`);
      }
      if (namespaces.length) await ok(['apply', '-f', '-'], yamlOf(namespaces));
      if (others.length && truncatedJobs[name]) {
        await refused(['create', '--dry-run=server', '-f', '-'], yamlOf(others), truncatedJobs[name]);
        refusedJobs.push(`${name}: ${truncatedJobs[name]}`);
      } else if (others.length) {
        // generateName needs create; a dry run shows the server takes them as they are
        await ok(['create', '--dry-run=server', '-f', '-'], yamlOf(others));
        for (const d of others) dryRun.push(`${name}: ${d.kind} ${d.metadata?.name ?? d.metadata?.generateName}`);
      }
      if (!kueue.length) continue;
      const why = refusedUpstream[name];
      if (why) {
        await refused(['apply', '-f', file], '', 'is invalid', `${why[0]}: ${why[1]}`);
        continue;
      }
      await ok(['apply', '-f', '-'], yamlOf(kueue));
      applied += kueue.length;
      // read back in the version written: what the file says, as the conversion leaves it
      const live = JSON.parse(await ok(['get', '-f', '-', '-o', 'json'], yamlOf(kueue)));
      const items: KObject[] = live.kind === 'List' ? live.items : [live];
      assert.equal(items.length, kueue.length, name);
      items.forEach((item, i) => {
        const doc = kueue[i] as KObject;
        const want = doc.apiVersion.endsWith('/v1beta1') ? toV1beta1(toV1beta2(doc)) : doc;
        const why = contains(body(item), body(want));
        assert.equal(why, undefined, `${name} ${doc.kind}/${doc.metadata.name}: ${why}`);
      });
      // and in the other version: the same stored object, converted
      for (const item of items) {
        const version = item.apiVersion.endsWith('/v1beta1') ? 'v1beta2' : 'v1beta1';
        const def = kueueKinds.find((d) => d.kind === item.kind && d.version === version);
        assert.ok(def);
        const ns = item.metadata.namespace ? ['-n', item.metadata.namespace] : [];
        const other = JSON.parse(await ok(['get', `${def.plural}.${version}.${group}`, item.metadata.name ?? '', ...ns, '-o', 'json']));
        assert.equal(other.apiVersion, `${group}/${version}`);
        assert.deepEqual(body(other), body(version === 'v1beta1' ? toV1beta1(item) : toV1beta2(item)), `${name} ${item.kind}/${item.metadata.name} as ${version}`);
        assert.equal(other.metadata.resourceVersion, item.metadata.resourceVersion);
      }
      await ok(['delete', '--wait=false', '-f', '-'], yamlOf(kueue));
    }
    t.diagnostic(`${applied} Kueue objects applied and read back in both versions; ${Object.keys(refusedUpstream).length} files refused as Kueue refuses them`);
    for (const d of dryRun) t.diagnostic(`created with --dry-run=server (not a Kueue kind; no queue controller yet to hold it): ${d}`);
    for (const d of refusedJobs) t.diagnostic(`refused, a job without a spec (an excerpt of the docs): ${d}`);
    for (const sk of skipped) t.diagnostic(`skipped: ${sk}`);
    assert.ok(applied >= 40, `${applied} applied`);
    assert.deepEqual([...new Set(skipped.map((x) => x.split(': ')[1]?.split(' ')[0]))].sort(), ['AdmissionCheck', 'Deployment', 'JobSet', 'ProvisioningRequestConfig', 'Topology']);
  });

  it('lists cq,lq,wl,rf with Kueue\'s columns and short names, in both versions', async () => {
    await ok(['apply', '-f', join(base, 'examples', 'admin', 'single-clusterqueue-setup.yaml')]);
    await ok(['apply', '-f', join(base, 'legacy-v1beta1', 'concepts_cluster_queue-05.yaml')]);
    await ok(['apply', '-f', '-'], YAML.stringify({
      apiVersion: `${group}/v1beta2`, kind: 'Workload', metadata: { name: 'sample-job' },
      spec: { queueName: 'user-queue', podSets: [{ name: 'main', count: 3, template: { spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '1' } } }], restartPolicy: 'Never' } } }] },
    }));
    const all = await ok(['get', 'cq,lq,wl,rf']);
    for (const line of [/clusterqueue\.kueue\.x-k8s\.io\/cluster-queue/, /clusterqueue\.kueue\.x-k8s\.io\/team-a-cq\s+team-ab/, /localqueue\.kueue\.x-k8s\.io\/user-queue\s+cluster-queue/, /workload\.kueue\.x-k8s\.io\/sample-job\s+user-queue/, /resourceflavor\.kueue\.x-k8s\.io\/default-flavor/]) {
      assert.match(all, line);
    }
    const header = (out: string): string[] => (out.split('\n')[0] ?? '').trim().split(/\s{2,}/);
    assert.deepEqual(header(await ok(['get', 'cq'])), ['NAME', 'COHORT', 'PENDING WORKLOADS']);
    assert.deepEqual(header(await ok(['get', 'cq', '-o', 'wide'])), ['NAME', 'COHORT', 'STRATEGY', 'PENDING WORKLOADS', 'ADMITTED WORKLOADS']);
    assert.match(await ok(['get', 'cq', '-o', 'wide']), /team-a-cq\s+team-ab\s+BestEffortFIFO/);
    // v1beta1's column reads .spec.cohort
    assert.match(await ok(['get', `clusterqueues.v1beta1.${group}`]), /team-a-cq\s+team-ab/);
    assert.deepEqual(header(await ok(['get', 'queues'])), ['NAME', 'CLUSTERQUEUE', 'PENDING WORKLOADS', 'ADMITTED WORKLOADS']);
    assert.deepEqual(header(await ok(['get', 'kwl'])), ['NAME', 'QUEUE', 'RESERVED IN', 'ADMITTED', 'FINISHED', 'AGE']);
    assert.deepEqual(header(await ok(['get', 'flavors'])), ['NAME', 'AGE']);
    await ok(['apply', '-f', join(base, 'legacy-v1beta1', 'concepts_workload_priority_class-01.yaml')]);
    assert.match(await ok(['get', 'wpc']), /sample-priority\s+10000/);
    const resources = (await ok(['api-resources', `--api-group=${group}`, '--no-headers'])).trim().split('\n').map((l) => l.trim().split(/\s+/));
    assert.deepEqual(resources.map((r) => [r[0], r[1]]), [
      ['clusterqueues', 'cq'], ['cohorts', 'co'], ['localqueues', 'queue,queues,lq'], ['resourceflavors', 'flavor,flavors,rf'],
      ['workloadpriorityclasses', 'wpc'], ['workloads', 'kwl,kueueworkload,kueueworkloads,wl'],
    ]);
    assert.ok(resources.every((r) => r[2] === `${group}/v1beta2`), 'v1beta2 is the preferred version');
  });

  it('explains both versions from the OpenAPI documents', async () => {
    assert.match(await ok(['explain', 'clusterqueue.spec.cohortName']), /FIELD: cohortName <string>/);
    assert.match(await ok(['explain', '--api-version=kueue.x-k8s.io/v1beta1', 'clusterqueue.spec.cohort']), /FIELD: cohort <string>/);
    assert.match(await ok(['explain', 'workload.spec.priorityClassRef']), /group\s+<string> -required-/);
    assert.match(await ok(['explain', 'clusterqueue.spec.preemption.reclaimWithinCohort']), /ENUM:\s+Never\s+LowerPriority\s+Any/);
  });

  it('refuses invalid objects with the field named, in either version', async () => {
    const cqSpec = (spec: Record<string, unknown>, version = 'v1beta2'): string => YAML.stringify({ apiVersion: `${group}/${version}`, kind: 'ClusterQueue', metadata: { name: 'bad' }, spec });
    const rg = (resources: unknown[], covered = ['cpu']): unknown[] => [{ coveredResources: covered, flavors: [{ name: 'default-flavor', resources }] }];
    await refused(['apply', '-f', '-'], cqSpec({ cohortName: 'c', resourceGroups: rg([{ name: 'cpu', nominalQuota: 9, lendingLimit: 10 }]) }),
      'The ClusterQueue "bad" is invalid: spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: "10": must be less than or equal to the nominalQuota');
    await refused(['apply', '-f', '-'], cqSpec({ resourceGroups: rg([{ name: 'cpu', nominalQuota: 9, borrowingLimit: 1 }], ['cpu', 'memory']) }, 'v1beta1'),
      'spec: Invalid value: borrowingLimit must be nil when cohort is empty', 'spec.resourceGroups[0]: Invalid value: flavors must have the same number of resources as the coveredResources');
    await refused(['apply', '-f', '-'], cqSpec({ preemption: { borrowWithinCohort: { policy: 'LowerPriority' } } }), 'spec.preemption: Invalid value: reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never');
    await refused(['apply', '-f', '-'], cqSpec({ queueingStrategy: 'Random', stopPolicy: 'Pause' }), 'spec.queueingStrategy: Unsupported value: "Random"', 'spec.stopPolicy: Unsupported value: "Pause"');
    await refused(['apply', '-f', '-'], cqSpec({ resourceGroups: [...rg([{ name: 'cpu', nominalQuota: 1 }]), { coveredResources: ['cpu'], flavors: [{ name: 'spot', resources: [{ name: 'cpu', nominalQuota: '-1' }] }] }] }),
      'spec.resourceGroups[1].coveredResources[0]: Duplicate value: "cpu"', 'spec.resourceGroups[1].flavors[0].resources[0].nominalQuota: Invalid value: "-1": must be greater than or equal to 0');
    const lq = (clusterQueue: string): string => YAML.stringify({ apiVersion: `${group}/v1beta2`, kind: 'LocalQueue', metadata: { name: 'fixed' }, spec: { clusterQueue } });
    await ok(['apply', '-f', '-'], lq('cq-a'));
    await refused(['apply', '-f', '-'], lq('cq-b'), 'The LocalQueue "fixed" is invalid: spec.clusterQueue: Invalid value: "cq-b": field is immutable');
    const wl = (spec: Record<string, unknown>): string => YAML.stringify({ apiVersion: `${group}/v1beta2`, kind: 'Workload', metadata: { name: 'bad-wl' }, spec });
    const tmpl = { spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    await refused(['apply', '-f', '-'], wl({ podSets: [{ name: 'main', count: 2, minCount: 3, template: tmpl }] }), 'spec.podSets[0]: Invalid value: minCount should be positive and less or equal to count');
    await refused(['apply', '-f', '-'], wl({ podSets: [{ name: 'main', template: tmpl }], priorityClassRef: { group: 'scheduling.k8s.io', kind: 'WorkloadPriorityClass', name: 'x' }, priority: 1 }), 'spec.priorityClassRef: Invalid value: only the PriorityClass kind is allowed for the scheduling.k8s.io group');
    await refused(['apply', '-f', '-'], wl({ podSets: Array.from({ length: 19 }, (_, i) => ({ name: `p${i}`, template: tmpl })) }), 'spec.podSets: Too many: 19: must have at most 18 items');
    await refused(['apply', '-f', '-'], wl({ podSets: [{ name: 'main', template: { spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { pods: '1' } } }] } } }] }),
      'spec.podSets[0].template.spec.containers[0].resources.requests[pods]: Invalid value: "pods": the key is reserved for internal kueue use');
    // a status write is checked too: QuotaReserved needs an admission (a queue that does not exist
    // keeps the queue controllers from admitting it first)
    await ok(['apply', '-f', '-'], wl({ queueName: 'no-such-queue', podSets: [{ name: 'main', template: tmpl }] }));
    const status = JSON.stringify({ status: { conditions: [{ type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', message: 'Quota reserved in ClusterQueue cluster-queue', lastTransitionTime: '2026-01-01T00:00:00Z' }] } });
    await refused(['patch', 'workload', 'bad-wl', '--subresource=status', '--type=merge', '-p', status], '', 'The Workload "bad-wl" is invalid: status.admission: Required value: must be set while the QuotaReserved condition is true');
  });

  it('the Python client\'s CustomObjectsApi writes and reads across both versions, and is refused an invalid one', async () => {
    const r = await s.python(`
import json
from kubernetes import client, config
config.load_kube_config()
api = client.CustomObjectsApi()
g = 'kueue.x-k8s.io'
out = {}
cq = {'apiVersion': g + '/v1beta1', 'kind': 'ClusterQueue', 'metadata': {'name': 'py-cq'},
      'spec': {'cohort': 'py', 'namespaceSelector': {}, 'flavorFungibility': {'whenCanPreempt': 'Preempt'},
               'resourceGroups': [{'coveredResources': ['cpu'], 'flavors': [{'name': 'default-flavor', 'resources': [{'name': 'cpu', 'nominalQuota': 4, 'lendingLimit': 2}]}]}]}}
created = api.create_cluster_custom_object(g, 'v1beta1', 'clusterqueues', cq)
out['created'] = [created['apiVersion'], created['spec']['cohort'], created['spec']['flavorFungibility']['whenCanPreempt']]
v2 = api.get_cluster_custom_object(g, 'v1beta2', 'clusterqueues', 'py-cq')
out['v1beta2'] = [v2['apiVersion'], v2['spec'].get('cohortName'), 'cohort' in v2['spec'], v2['spec']['queueingStrategy']]
patched = api.patch_cluster_custom_object(g, 'v1beta2', 'clusterqueues', 'py-cq', {'spec': {'cohortName': 'py-2'}})
out['patched'] = patched['spec']['cohortName']
out['v1beta1'] = api.get_cluster_custom_object(g, 'v1beta1', 'clusterqueues', 'py-cq')['spec']['cohort']
wl = {'apiVersion': g + '/v1beta1', 'kind': 'Workload', 'metadata': {'name': 'py-wl'},
      'spec': {'queueName': 'user-queue', 'priorityClassSource': 'kueue.x-k8s.io/workloadpriorityclass', 'priorityClassName': 'sample-priority', 'priority': 10000,
               'podSets': [{'name': 'main', 'count': 1, 'template': {'spec': {'containers': [{'name': 'c', 'image': 'busybox'}]}}}]}}
api.create_namespaced_custom_object(g, 'v1beta1', 'default', 'workloads', wl)
got = api.get_namespaced_custom_object(g, 'v1beta2', 'default', 'workloads', 'py-wl')
out['ref'] = got['spec']['priorityClassRef']
out['listed'] = sorted(w['metadata']['name'] for w in api.list_namespaced_custom_object(g, 'v1beta1', 'default', 'workloads')['items'])
try:
    api.create_cluster_custom_object(g, 'v1beta2', 'clusterqueues', {'apiVersion': g + '/v1beta2', 'kind': 'ClusterQueue', 'metadata': {'name': 'py-bad'},
        'spec': {'resourceGroups': [{'coveredResources': ['cpu'], 'flavors': [{'name': 'f', 'resources': [{'name': 'cpu', 'nominalQuota': 1, 'lendingLimit': 1}]}]}], 'fairSharing': {'weight': '-1'}}})
except client.ApiException as e:
    out['bad'] = [e.status, sorted(c['field'] for c in json.loads(e.body)['details']['causes'])]
api.delete_cluster_custom_object(g, 'v1beta1', 'clusterqueues', 'py-cq')
api.delete_namespaced_custom_object(g, 'v1beta2', 'default', 'workloads', 'py-wl')
print(json.dumps(out))
`);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? 'null');
    assert.deepEqual(out.created, [`${group}/v1beta1`, 'py', 'MayStopSearch']);
    assert.deepEqual(out.v1beta2, [`${group}/v1beta2`, 'py', false, 'BestEffortFIFO']);
    assert.equal(out.patched, 'py-2');
    assert.equal(out.v1beta1, 'py-2');
    assert.deepEqual(out.ref, { group, kind: 'WorkloadPriorityClass', name: 'sample-priority' });
    assert.ok(out.listed.includes('py-wl'), JSON.stringify(out.listed));
    assert.deepEqual(out.bad, [422, ['spec.fairSharing', 'spec.resourceGroups[0].flavors[0].resources[0].lendingLimit']]);
  });
});
