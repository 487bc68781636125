// Kueue's kinds: the CRDs' defaults and rules (schema and CEL) and Kueue's webhooks, each refusal
// naming its field as the API server and Kueue name it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FieldError } from './errors.js';
import { ClusterQueueKind, CohortKind, LocalQueueKind, ResourceFlavorKind, WorkloadKind, WorkloadPriorityClassKind, kueueKinds } from './kueue.js';
import type { KObject, StoredObject } from './meta.js';
import { clone } from './meta.js';
import { queuedAsPod } from './kueue-types.js';
import type { KindDef } from './registry.js';

const v1beta1 = (kind: string): KindDef => kueueKinds.find((d) => d.kind === kind && d.version === 'v1beta1') as KindDef;

function object(def: KindDef, name: string, body: Record<string, unknown>): KObject {
  return { apiVersion: `kueue.x-k8s.io/${def.version}`, kind: def.kind, metadata: { name, ...(def.namespaced ? { namespace: 'team-a' } : {}) }, ...body };
}

/** the errors of a create, after defaulting, as the object client checks it */
function errorsOf(def: KindDef, obj: KObject, old?: KObject): FieldError[] {
  const o = clone(obj);
  def.default?.(o);
  let prev: StoredObject | undefined;
  if (old) {
    prev = clone(old) as StoredObject;
    def.default?.(prev);
  }
  return def.validate?.(o, prev) ?? [];
}

/** the one error expected: its field and the start of its message */
function refused(def: KindDef, obj: KObject, field: string, message: string | RegExp, old?: KObject): void {
  const errs = errorsOf(def, obj, old);
  const hit = errs.find((e) => e.field === field && (typeof message === 'string' ? e.message.includes(message) : message.test(e.message)));
  assert.ok(hit, `expected ${field}: ${String(message)}; got ${JSON.stringify(errs)}`);
}

function accepted(def: KindDef, obj: KObject, old?: KObject): void {
  assert.deepEqual(errorsOf(def, obj, old), []);
}

const flavor = (name: string, resources: [string, unknown, Record<string, unknown>?][]): Record<string, unknown> => ({
  name, resources: resources.map(([r, q, extra]) => ({ name: r, nominalQuota: q, ...extra })),
});
const cq = (spec: Record<string, unknown>, name = 'cq'): KObject => object(ClusterQueueKind, name, { spec });
const cpuMem = (extra: Record<string, unknown> = {}, cpuExtra: Record<string, unknown> = {}): Record<string, unknown> => ({
  resourceGroups: [{ coveredResources: ['cpu', 'memory'], flavors: [flavor('default-flavor', [['cpu', 9, cpuExtra], ['memory', '36Gi']])] }], ...extra,
});

const template = (requests: Record<string, unknown> = { cpu: '1' }): Record<string, unknown> => ({ spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests } }], restartPolicy: 'Never' } });
const workload = (spec: Record<string, unknown>, extra: Record<string, unknown> = {}): KObject => object(WorkloadKind, 'wl', { spec: { queueName: 'user-queue', podSets: [{ name: 'main', count: 3, template: template() }], ...spec }, ...extra });

describe('Kueue defaulting', () => {
  it('fills a ClusterQueue as its CRD does and leaves an absent namespaceSelector absent (no namespace), {} as {} (every one)', () => {
    const obj = cq({ resourceGroups: [] });
    ClusterQueueKind.default?.(obj);
    assert.deepEqual(obj.spec, {
      resourceGroups: [], queueingStrategy: 'BestEffortFIFO', stopPolicy: 'None',
      flavorFungibility: { whenCanBorrow: 'MayStopSearch', whenCanPreempt: 'TryNextFlavor' },
      preemption: { reclaimWithinCohort: 'Never', borrowWithinCohort: { policy: 'Never' }, withinClusterQueue: 'Never' },
    });
    const all = cq({ namespaceSelector: {}, fairSharing: {}, preemption: { withinClusterQueue: 'LowerPriority' } });
    ClusterQueueKind.default?.(all);
    assert.deepEqual(all.spec.namespaceSelector, {});
    assert.deepEqual(all.spec.fairSharing, { weight: 1 });
    assert.deepEqual(all.spec.preemption, { reclaimWithinCohort: 'Never', borrowWithinCohort: { policy: 'Never' }, withinClusterQueue: 'LowerPriority' });
    const nulled = cq({ namespaceSelector: null });
    ClusterQueueKind.default?.(nulled);
    assert.equal('namespaceSelector' in nulled.spec, false);
  });

  it('fills a LocalQueue\'s stopPolicy and a Workload\'s pod set names, counts and active', () => {
    const lq = object(LocalQueueKind, 'lq', { spec: { clusterQueue: 'cq' } });
    LocalQueueKind.default?.(lq);
    assert.deepEqual(lq.spec, { clusterQueue: 'cq', stopPolicy: 'None' });
    const wl = object(WorkloadKind, 'wl', { spec: { podSets: [{ template: template() }] } });
    WorkloadKind.default?.(wl);
    assert.equal(wl.spec.active, true);
    assert.deepEqual([wl.spec.podSets[0].name, wl.spec.podSets[0].count], ['main', 1]);
  });

  it('accepts a defaulted ClusterQueue, LocalQueue, Workload and the rest as they come', () => {
    accepted(ClusterQueueKind, cq(cpuMem({ namespaceSelector: {} })));
    accepted(LocalQueueKind, object(LocalQueueKind, 'lq', { spec: { clusterQueue: 'cq' } }));
    accepted(WorkloadKind, workload({}));
    accepted(CohortKind, object(CohortKind, 'co', { spec: { parentName: 'root', resourceGroups: cpuMem().resourceGroups } }));
    accepted(ResourceFlavorKind, object(ResourceFlavorKind, 'rf', { spec: { nodeLabels: { 'cloud.provider.com/spot': 'true' }, nodeTaints: [{ key: 'spot', value: 'true', effect: 'NoSchedule' }] } }));
    accepted(WorkloadPriorityClassKind, object(WorkloadPriorityClassKind, 'p', { value: 10000, description: 'Sample priority' }));
  });
});

describe('ClusterQueue validation', () => {
  it('every flavor of a resource group lists exactly its covered resources, in order', () => {
    refused(ClusterQueueKind, cq({ resourceGroups: [{ coveredResources: ['cpu', 'memory'], flavors: [flavor('f', [['cpu', 9]])] }] }),
      'spec.resourceGroups[0]', 'Invalid value: flavors must have the same number of resources as the coveredResources');
    refused(ClusterQueueKind, cq({ resourceGroups: [{ coveredResources: ['cpu', 'memory'], flavors: [flavor('f', [['memory', '1Gi'], ['cpu', 9]])] }] }),
      'spec.resourceGroups[0].flavors[0].resources[0].name', 'Invalid value: "memory": must match the name in coveredResources');
  });

  it('a resource and a flavor belong to one resource group only', () => {
    const groups = (r2: string, f2: string): KObject => cq({ resourceGroups: [
      { coveredResources: ['cpu'], flavors: [flavor('a', [['cpu', 1]])] },
      { coveredResources: [r2], flavors: [flavor(f2, [[r2, 1]])] },
    ] });
    refused(ClusterQueueKind, groups('cpu', 'b'), 'spec.resourceGroups[1].coveredResources[0]', 'Duplicate value: "cpu"');
    refused(ClusterQueueKind, groups('nvidia.com/gpu', 'a'), 'spec.resourceGroups[1].flavors[0].name', 'Duplicate value: "a"');
    accepted(ClusterQueueKind, groups('nvidia.com/gpu', 'b'));
  });

  it('borrowingLimit and lendingLimit need a cohort; lendingLimit is at most nominalQuota', () => {
    refused(ClusterQueueKind, cq(cpuMem({}, { borrowingLimit: 1 })), 'spec', 'Invalid value: borrowingLimit must be nil when cohort is empty');
    refused(ClusterQueueKind, cq(cpuMem({}, { lendingLimit: 1 })), 'spec.resourceGroups[0].flavors[0].resources[0].lendingLimit', 'Invalid value: "1": must be nil when cohort is empty');
    refused(ClusterQueueKind, cq(cpuMem({ cohortName: 'team-ab' }, { lendingLimit: 10 })), 'spec.resourceGroups[0].flavors[0].resources[0].lendingLimit', 'Invalid value: "10": must be less than or equal to the nominalQuota');
    accepted(ClusterQueueKind, cq(cpuMem({ cohortName: 'team-ab' }, { lendingLimit: 9, borrowingLimit: 1 })));
  });

  it('quantities are not negative', () => {
    refused(ClusterQueueKind, cq({ resourceGroups: [{ coveredResources: ['cpu'], flavors: [flavor('f', [['cpu', '-1']])] }] }),
      'spec.resourceGroups[0].flavors[0].resources[0].nominalQuota', 'Invalid value: "-1": must be greater than or equal to 0');
    refused(ClusterQueueKind, cq(cpuMem({ cohortName: 'c' }, { borrowingLimit: '-500m' })), 'spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit', 'must be greater than or equal to 0');
    refused(ClusterQueueKind, cq({ resourceGroups: [{ coveredResources: ['cpu'], flavors: [flavor('f', [['cpu', 'lots']])] }] }),
      'spec.resourceGroups[0].flavors[0].resources[0].nominalQuota', 'should match');
  });

  it('reclaimWithinCohort Never forbids borrowWithinCohort', () => {
    refused(ClusterQueueKind, cq(cpuMem({ preemption: { borrowWithinCohort: { policy: 'LowerPriority' } } })), 'spec.preemption', 'Invalid value: reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never');
    accepted(ClusterQueueKind, cq(cpuMem({ cohortName: 'c', preemption: { reclaimWithinCohort: 'Any', borrowWithinCohort: { policy: 'LowerPriority', maxPriorityThreshold: 100 } } })));
    refused(ClusterQueueKind, cq(cpuMem({ preemption: { withinClusterQueue: 'Any' } })), 'spec.preemption.withinClusterQueue', 'Unsupported value: "Any"');
  });

  it('at most 16 resource groups, 64 resources and 64 flavors in a group, 256 flavors and 256 resources in all', () => {
    const resources = (n: number, prefix = 'r'): string[] => Array.from({ length: n }, (_, i) => `example.com/${prefix}${i}`);
    const group = (names: string[], flavors: number, prefix: string): Record<string, unknown> => ({
      coveredResources: names, flavors: Array.from({ length: flavors }, (_, i) => flavor(`${prefix}-${i}`, names.map((n) => [n, 1]))),
    });
    refused(ClusterQueueKind, cq({ resourceGroups: Array.from({ length: 17 }, (_, i) => group([`example.com/g${i}`], 1, `g${i}`)) }), 'spec.resourceGroups', 'Too many: 17: must have at most 16 items');
    refused(ClusterQueueKind, cq({ resourceGroups: [group(resources(65), 1, 'f')] }), 'spec.resourceGroups[0].coveredResources', 'Too many: 65');
    refused(ClusterQueueKind, cq({ resourceGroups: [group(['cpu'], 65, 'f')] }), 'spec.resourceGroups[0].flavors', 'Too many: 65');
    const wide = cq({ resourceGroups: Array.from({ length: 5 }, (_, i) => group([`example.com/g${i}`], 52, `g${i}`)) });
    refused(ClusterQueueKind, wide, 'spec.resourceGroups', 'Invalid value: 260: total number of flavors across all resourceGroups must be ≤ 256, got 260');
    const many = cq({ resourceGroups: Array.from({ length: 5 }, (_, i) => group(resources(52, `g${i}-`), 1, `g${i}`)) });
    refused(ClusterQueueKind, many, 'spec.resourceGroups', 'total number of covered resources across all resourceGroups must be ≤ 256, got 260');
    refused(ClusterQueueKind, cq({ resourceGroups: [group(resources(64), 9, 'f')] }), 'spec.resourceGroups[0]', 'number of flavor-resource combinations in a resourceGroup must be ≤ 512, got 576');
  });

  it('a fair-sharing weight is 0 or more than 1n', () => {
    refused(ClusterQueueKind, cq(cpuMem({ fairSharing: { weight: '-1' } })), 'spec.fairSharing', 'Invalid value: "-1": must be greater than or equal to 0');
    refused(ClusterQueueKind, cq(cpuMem({ fairSharing: { weight: '1n' } })), 'spec.fairSharing', 'When not 0, weight must be > 10e-9');
    accepted(ClusterQueueKind, cq(cpuMem({ fairSharing: { weight: 0 } })));
    accepted(ClusterQueueKind, cq(cpuMem({ fairSharing: { weight: '0.75' } })));
  });

  it('queueingStrategy, stopPolicy and flavorFungibility take their enums; preference wants TryNextFlavor twice', () => {
    refused(ClusterQueueKind, cq(cpuMem({ queueingStrategy: 'Random' })), 'spec.queueingStrategy', 'Unsupported value: "Random": supported values: "StrictFIFO", "BestEffortFIFO"');
    refused(ClusterQueueKind, cq(cpuMem({ stopPolicy: 'Pause' })), 'spec.stopPolicy', 'Unsupported value: "Pause": supported values: "None", "Hold", "HoldAndDrain"');
    refused(ClusterQueueKind, cq(cpuMem({ flavorFungibility: { whenCanBorrow: 'Borrow' } })), 'spec.flavorFungibility.whenCanBorrow', 'Unsupported value: "Borrow"');
    refused(ClusterQueueKind, cq(cpuMem({ flavorFungibility: { preference: 'PreemptionOverBorrowing' } })), 'spec.flavorFungibility', 'preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor');
    accepted(ClusterQueueKind, cq(cpuMem({ flavorFungibility: { whenCanBorrow: 'TryNextFlavor', whenCanPreempt: 'TryNextFlavor', preference: 'PreemptionOverBorrowing' } })));
  });

  it('names: the queue, its cohort, flavors, resources, selector and admission checks', () => {
    refused(ClusterQueueKind, object(ClusterQueueKind, 'Team_A', { spec: cpuMem() }), 'metadata.name', 'RFC 1123 subdomain');
    refused(ClusterQueueKind, cq(cpuMem({ cohortName: 'Team_AB' })), 'spec.cohortName', 'should match');
    refused(ClusterQueueKind, cq({ resourceGroups: [{ coveredResources: ['Bad Name'], flavors: [flavor('f', [['Bad Name', 1]])] }] }), 'spec.resourceGroups[0].coveredResources[0]', 'Invalid value: "Bad Name"');
    refused(ClusterQueueKind, cq({ resourceGroups: [{ coveredResources: ['cpu'], flavors: [flavor('Spot', [['cpu', 1]])] }] }), 'spec.resourceGroups[0].flavors[0].name', 'should match');
    refused(ClusterQueueKind, cq(cpuMem({ namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'Is', values: ['a'] }] } })), 'spec.namespaceSelector.matchExpressions[0].operator', 'not a valid selector operator');
    refused(ClusterQueueKind, cq(cpuMem({ admissionChecksStrategy: { admissionChecks: [{ name: 'prov', onFlavors: ['spot'] }] } })),
      'spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]', 'Unsupported value: "spot": supported values: "default-flavor"');
  });

  it('concurrentAdmissionPolicy cannot change', () => {
    const old = cq(cpuMem({ concurrentAdmissionPolicy: { migration: { mode: 'TryPreferredFlavors' } } }));
    refused(ClusterQueueKind, cq(cpuMem({ concurrentAdmissionPolicy: { migration: { mode: 'RetainFirstAdmission' } } })), 'spec.concurrentAdmissionPolicy', 'field is immutable', old);
  });
});

describe('Cohort validation', () => {
  const cohort = (spec: Record<string, unknown>): KObject => object(CohortKind, 'co', { spec });
  it('limits need a parent; a Cohort may lend more than its own nominal quota', () => {
    refused(CohortKind, cohort(cpuMem({}, { borrowingLimit: 1 })), 'spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit', 'Invalid value: "1": must be nil when parent is empty');
    accepted(CohortKind, cohort(cpuMem({ parentName: 'root' }, { lendingLimit: 100, borrowingLimit: 1 })));
    refused(CohortKind, cohort({ fairSharing: { weight: '-2' } }), 'spec.fairSharing', 'must be greater than or equal to 0');
    refused(CohortKind, cohort({ parentName: 'Root' }), 'spec.parentName', 'should match');
  });
});

describe('LocalQueue validation', () => {
  const lq = (spec: Record<string, unknown>): KObject => object(LocalQueueKind, 'lq', { spec });
  it('spec.clusterQueue is immutable; stopPolicy takes its enum', () => {
    refused(LocalQueueKind, lq({ clusterQueue: 'cq-b' }), 'spec.clusterQueue', 'Invalid value: "cq-b": field is immutable', lq({ clusterQueue: 'cq-a' }));
    accepted(LocalQueueKind, lq({ clusterQueue: 'cq-a', stopPolicy: 'Hold' }), lq({ clusterQueue: 'cq-a' }));
    refused(LocalQueueKind, lq({ clusterQueue: 'cq', stopPolicy: 'Drain' }), 'spec.stopPolicy', 'Unsupported value: "Drain"');
    refused(LocalQueueKind, lq({ clusterQueue: 'Cluster Queue' }), 'spec.clusterQueue', 'should match');
  });
});

describe('ResourceFlavor validation', () => {
  const rf = (spec: Record<string, unknown>): KObject => object(ResourceFlavorKind, 'rf', { spec });
  it('node labels, taints and tolerations as Kueue\'s webhook and CRD check them', () => {
    refused(ResourceFlavorKind, rf({ nodeLabels: { 'bad key!': 'x' } }), 'spec.nodeLabels', 'Invalid value: "bad key!"');
    refused(ResourceFlavorKind, rf({ nodeLabels: { zone: 'not a value' } }), 'spec.nodeLabels', 'Invalid value: "not a value"');
    refused(ResourceFlavorKind, rf({ nodeTaints: [{ key: 'spot', effect: 'Sometimes' }] }), 'spec.nodeTaints', "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'");
    refused(ResourceFlavorKind, rf({ nodeTaints: [{ key: 'spot', effect: 'NoSchedule' }, { key: 'spot', value: 'x', effect: 'NoSchedule' }] }), 'spec.nodeTaints[1]', 'taints must be unique by key and effect pair');
    refused(ResourceFlavorKind, rf({ nodeTaints: [{ key: 'bad key', effect: 'NoSchedule' }] }), 'spec.nodeTaints[0].key', 'Invalid value: "bad key"');
    refused(ResourceFlavorKind, rf({ tolerations: [{ operator: 'Equal', value: 'x' }] }), 'spec.tolerations', "operator must be Exists when 'key' is empty");
    refused(ResourceFlavorKind, rf({ tolerations: [{ key: 'k', operator: 'Exists', value: 'x' }] }), 'spec.tolerations', "a value must be empty when 'operator' is 'Exists'");
    refused(ResourceFlavorKind, rf({ tolerations: [{ key: 'k', effect: 'NoSchedule', tolerationSeconds: 5 }] }), 'spec.tolerations', "effect must be 'NoExecute' when 'tolerationSeconds' is set");
    refused(ResourceFlavorKind, rf({ nodeLabels: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`l${i}`, 'x'])) }), 'spec.nodeLabels', 'must have at most 8 properties');
  });

  it('topologyName wants node labels and stays once set', () => {
    refused(ResourceFlavorKind, rf({ topologyName: 'default', nodeLabels: {} }), 'spec', 'at least one nodeLabel is required when topology is set');
    const withTopology = rf({ topologyName: 'default', nodeLabels: { pool: 'gpu' } });
    accepted(ResourceFlavorKind, withTopology);
    refused(ResourceFlavorKind, rf({ topologyName: 'other', nodeLabels: { pool: 'gpu' } }), 'spec', 'topologyName is immutable when topologyName is set', withTopology);
  });
});

describe('WorkloadPriorityClass validation', () => {
  it('has an int32 value', () => {
    refused(WorkloadPriorityClassKind, object(WorkloadPriorityClassKind, 'p', { description: 'no value' }), 'value', 'Required value');
    refused(WorkloadPriorityClassKind, object(WorkloadPriorityClassKind, 'p', { value: 'high' }), 'value', 'must be of type integer');
  });
});

describe('Workload validation', () => {
  const podSet = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ name, count: 2, template: template(), ...extra });
  it('1 to 18 pod sets, their names unique and DNS labels, counts >= 0, minCount <= count and on one pod set at most', () => {
    refused(WorkloadKind, workload({ podSets: [] }), 'spec.podSets', 'should have at least 1 items');
    refused(WorkloadKind, workload({ podSets: Array.from({ length: 19 }, (_, i) => podSet(`p${i}`)) }), 'spec.podSets', 'Too many: 19: must have at most 18 items');
    accepted(WorkloadKind, workload({ podSets: Array.from({ length: 18 }, (_, i) => podSet(`p${i}`)) }));
    refused(WorkloadKind, workload({ podSets: [podSet('main'), podSet('main')] }), 'spec.podSets[1]', 'Duplicate value');
    refused(WorkloadKind, workload({ podSets: [podSet('Main')] }), 'spec.podSets[0].name', 'should match');
    refused(WorkloadKind, workload({ podSets: [podSet('main', { count: -1 })] }), 'spec.podSets[0].count', 'should be greater than or equal to 0');
    refused(WorkloadKind, workload({ podSets: [podSet('main', { minCount: 3 })] }), 'spec.podSets[0]', 'minCount should be positive and less or equal to count');
    refused(WorkloadKind, workload({ podSets: [podSet('main', { minCount: 0 })] }), 'spec.podSets[0].minCount', 'should be greater than or equal to 1');
    refused(WorkloadKind, workload({ podSets: [podSet('a', { minCount: 1 }), podSet('b', { minCount: 1 })] }), 'spec.podSets', 'Invalid value: 2: at most one podSet can use minCount');
    accepted(WorkloadKind, workload({ podSets: [podSet('a', { minCount: 1 }), podSet('b')] }));
  });

  it('priorityClassRef: its kinds go with their groups, and it needs a priority', () => {
    const ref = (group: string, kind: string): Record<string, unknown> => ({ priorityClassRef: { group, kind, name: 'high' }, priority: 100 });
    accepted(WorkloadKind, workload(ref('kueue.x-k8s.io', 'WorkloadPriorityClass')));
    accepted(WorkloadKind, workload(ref('scheduling.k8s.io', 'PriorityClass')));
    refused(WorkloadKind, workload(ref('scheduling.k8s.io', 'WorkloadPriorityClass')), 'spec.priorityClassRef', 'only the PriorityClass kind is allowed for the scheduling.k8s.io group');
    refused(WorkloadKind, workload(ref('kueue.x-k8s.io', 'PriorityClass')), 'spec.priorityClassRef', 'only the WorkloadPriorityClass kind is allowed for the kueue.x-k8s.io group');
    refused(WorkloadKind, workload(ref('example.com', 'PriorityClass')), 'spec.priorityClassRef.group', 'Unsupported value: "example.com"');
    refused(WorkloadKind, workload({ priorityClassRef: { group: 'kueue.x-k8s.io', kind: 'WorkloadPriorityClass', name: 'high' } }), 'spec', 'priority should not be nil when priorityClassRef is set');
  });

  it('requests: never the reserved `pods`, never negative; names and bounds of the rest', () => {
    refused(WorkloadKind, workload({ podSets: [podSet('main', { template: template({ pods: 1 }) })] }), 'spec.podSets[0].template.spec.containers[0].resources.requests[pods]', 'Invalid value: "pods": the key is reserved for internal kueue use');
    refused(WorkloadKind, workload({ podSets: [podSet('main', { template: template({ cpu: '-1' }) })] }), 'spec.podSets[0].template.spec.containers[0].resources.requests[cpu]', 'must be greater than or equal to 0');
    refused(WorkloadKind, workload({ queueName: 'User Queue' }), 'spec.queueName', 'should match');
    refused(WorkloadKind, workload({ maximumExecutionTimeSeconds: 0 }), 'spec.maximumExecutionTimeSeconds', 'should be greater than or equal to 1');
    refused(WorkloadKind, workload({ podSets: [podSet('main', { template: { metadata: { labels: { 'a b': 'c' } }, spec: template().spec } })] }), 'spec.podSets[0].template.metadata.labels', 'Invalid value: "a b"');
  });

  const reserved = { conditions: [{ type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', message: 'Quota reserved in ClusterQueue cq', lastTransitionTime: '2026-01-01T00:00:00Z' }] };
  const admission = { clusterQueue: 'cq', podSetAssignments: [{ name: 'main', flavors: { cpu: 'default-flavor' }, resourceUsage: { cpu: '3' }, count: 3 }] };

  it('while it holds quota: pod sets, queue and admission stay as they are', () => {
    const old = workload({}, { status: { ...reserved, admission } });
    refused(WorkloadKind, workload({ podSets: [{ name: 'main', count: 4, template: template() }] }), 'spec.podSets.0', 'field is immutable', old);
    refused(WorkloadKind, workload({ queueName: 'other-queue' }), '<nil>', 'queueName is immutable while workload quota reserved', old);
    refused(WorkloadKind, workload({ priorityClassRef: { group: 'kueue.x-k8s.io', kind: 'WorkloadPriorityClass', name: 'high' }, priority: 1 }), '<nil>', 'priorityClassRef is immutable while workload quota reserved', old);
    // priority itself may change, as may everything once the quota is released
    accepted(WorkloadKind, workload({ priority: 5 }), old);
    accepted(WorkloadKind, workload({ queueName: 'other-queue' }), workload({}));
  });
});

describe('Workload status validation', () => {
  const stored = (status: Record<string, unknown> = {}): StoredObject => {
    const wl = workload({}, { status });
    WorkloadKind.default?.(wl);
    wl.metadata = { ...wl.metadata, uid: 'u', resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z' };
    return wl as StoredObject;
  };
  const statusErrors = (status: Record<string, unknown>, before: Record<string, unknown> = {}): FieldError[] => {
    const old = stored(before);
    return WorkloadKind.validateStatus?.({ ...clone(old), status }, old) ?? [];
  };
  const has = (errs: FieldError[], field: string, message: string): void => {
    assert.ok(errs.some((e) => e.field === field && e.message.includes(message)), `expected ${field}: ${message}; got ${JSON.stringify(errs)}`);
  };
  const cond = (type: string, status = 'True', reason = type): Record<string, unknown> => ({ type, status, reason, message: `${type} ${status}`, lastTransitionTime: '2026-01-01T00:00:00Z' });
  const admission = (name = 'main', cpu = '3', count = 3): Record<string, unknown> => ({ clusterQueue: 'cq', podSetAssignments: [{ name, flavors: { cpu: 'default-flavor' }, resourceUsage: { cpu }, count }] });

  it('QuotaReserved needs an admission naming the pod sets, usage a multiple of the count', () => {
    assert.deepEqual(statusErrors({ conditions: [cond('QuotaReserved')], admission: admission() }), []);
    has(statusErrors({ conditions: [cond('QuotaReserved')] }), 'status.admission', 'Required value: must be set while the QuotaReserved condition is true');
    has(statusErrors({ conditions: [cond('QuotaReserved')], admission: admission('workers') }), 'status.admission.podSetAssignments[0].name', 'Not found: "workers"');
    has(statusErrors({ conditions: [cond('QuotaReserved')], admission: admission('main', '1') }), 'status.admission.podSetAssignments[0].resourceUsage[cpu]', 'is not a multiple of 3');
    has(statusErrors({ conditions: [cond('QuotaReserved')], admission: { clusterQueue: 'cq', podSetAssignments: [] } }), '<nil>', 'podSetAssignments must have the same number of podSets as the spec');
  });

  it('conditions as metav1.Condition; reclaimable pods name a pod set and only grow while reserved', () => {
    has(statusErrors({ conditions: [cond('Admitted', 'Maybe')] }), 'status.conditions[0].status', 'Unsupported value: "Maybe"');
    has(statusErrors({ conditions: [{ type: 'Admitted', status: 'True' }] }), 'status.conditions[0].reason', 'Required value');
    has(statusErrors({ reclaimablePods: [{ name: 'workers', count: 1 }] }), 'status.reclaimablePods[workers].name', 'Unsupported value: "workers": supported values: "main"');
    has(statusErrors({ reclaimablePods: [{ name: 'main', count: 4 }] }), 'status.reclaimablePods[main].count', 'Invalid value: 4: should be less or equal to 3');
    const held = { conditions: [cond('QuotaReserved')], admission: admission() };
    has(statusErrors({ ...held, reclaimablePods: [{ name: 'main', count: 1 }] }, { ...held, reclaimablePods: [{ name: 'main', count: 2 }] }), 'status.reclaimablePods[main].count', 'cannot be less than 2');
    has(statusErrors({ ...held }, { ...held, reclaimablePods: [{ name: 'main', count: 2 }] }), 'status.reclaimablePods[main]', 'cannot be removed');
  });

  it('an admission is set or cleared, not changed; clusterName comes from the nominated ones and then stays', () => {
    const held = { conditions: [cond('QuotaReserved')], admission: admission() };
    has(statusErrors({ conditions: [cond('QuotaReserved')], admission: { ...admission(), clusterQueue: 'other' } }, held), 'status.admission', 'field is immutable');
    assert.deepEqual(statusErrors({ conditions: [cond('QuotaReserved', 'False', 'Pending')] }, held), []);
    has(statusErrors({ clusterName: 'west' }, { nominatedClusterNames: ['east'] }), 'status.clusterName', 'when setting clusterName it must be one of the nominatedClusterNames');
    has(statusErrors({ clusterName: 'east', nominatedClusterNames: ['east'] }, { nominatedClusterNames: ['east'] }), 'status', 'clusterName and nominatedClusterNames are mutually exclusive');
    has(statusErrors({ clusterName: 'west' }, { clusterName: 'east' }), 'status', 'clusterName is immutable once set');
  });
});

describe('v1beta1 validation', () => {
  it('judges a v1beta1 object by v1beta1\'s schema, then by Kueue\'s webhooks on it as v1beta2', () => {
    const old = v1beta1('ClusterQueue');
    const obj = (spec: Record<string, unknown>): KObject => object(old, 'cq', { spec });
    accepted(old, obj({ cohort: 'team-ab', flavorFungibility: { whenCanBorrow: 'Borrow', whenCanPreempt: 'Preempt' }, admissionChecks: ['prov'] }));
    refused(old, obj(cpuMem({}, { borrowingLimit: 1 })), 'spec', 'borrowingLimit must be nil when cohort is empty');
    refused(old, obj(cpuMem({ cohort: 'team-ab' }, { lendingLimit: 10 })), 'spec.resourceGroups[0].flavors[0].resources[0].lendingLimit', 'must be less than or equal to the nominalQuota');
    refused(old, obj({ cohortName: 'team-ab' }), 'spec.cohortName', 'unknown field "cohortName"');
    const wl = v1beta1('Workload');
    refused(wl, object(wl, 'wl', { spec: { queueName: 'q' } }), 'spec.podSets', 'Required value');
    refused(wl, object(wl, 'wl', { spec: { podSets: [{ name: 'main', count: 1, template: template() }], priorityClassSource: 'example.com/x' } }), 'spec.priorityClassSource', 'Unsupported value');
  });
});

describe('queuedAsPod', () => {
  const owned = (apiVersion: string, kind: string, controller = true) => ({ ownerReferences: [{ apiVersion, kind, controller }] });
  it('queues a Pod as itself unless its controller is a kind Kueue integrates', () => {
    assert.equal(queuedAsPod({}), true);
    assert.equal(queuedAsPod(owned('kubeflow.org/v1beta1', 'Notebook')), true);
    assert.equal(queuedAsPod(owned('pipelines.kubeflow.org/v2beta1', 'Run')), true);
    assert.equal(queuedAsPod(owned('batch/v1', 'Job', false)), true, 'an owner that is not the controller');
    assert.equal(queuedAsPod(owned('batch/v1', 'Job')), false);
    assert.equal(queuedAsPod(owned('kubeflow.org/v1', 'PyTorchJob')), false);
    assert.equal(queuedAsPod(owned('kubeflow.org/v2beta1', 'MPIJob')), false);
  });
});
