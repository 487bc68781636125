import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from './meta.js';
import { ResourceQuotaKind, exceeds, formatQuantity, hardOf, missingRequests, podUsage, pvcUsage, storageKeyOfResource } from './resourcequota.js';
import type { ResourceQuotaObject } from './resourcequota.js';

type Resources = { requests?: Record<string, string>; limits?: Record<string, string> };
const pod = (containers: Resources[], extra: Record<string, unknown> = {}, phase = 'Running'): KObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'team' },
  spec: { containers: containers.map((resources, i) => ({ name: `c${i}`, image: 'python', resources })), ...extra },
  status: { phase },
});
const quota = (hard: Record<string, string>): ResourceQuotaObject => ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'kf-resource-quota', namespace: 'team' }, spec: { hard } });
const plain = (m: Map<string, number>): Record<string, number> => Object.fromEntries([...m].sort(([a], [b]) => a.localeCompare(b)));

describe('quota usage', () => {
  it('sums containers exactly in thousandths and counts requests as cpu and requests.cpu', () => {
    const u = podUsage(pod([{ requests: { cpu: '100m', memory: '1Gi' } }, { requests: { cpu: '200m' }, limits: { cpu: '1', memory: '2Gi' } }]));
    assert.equal(u.get('cpu'), 300);
    assert.equal(u.get('requests.cpu'), 300);
    assert.equal(u.get('limits.cpu'), 1000);
    assert.equal(u.get('limits.memory'), 2 * 2 ** 30 * 1000);
    // the second container requests its memory limit, as the API server defaults it
    assert.equal(u.get('requests.memory'), 3 * 2 ** 30 * 1000);
    assert.equal(u.get('pods'), 1000);
    assert.equal(u.get('count/pods'), 1000);
  });

  it("counts HAMi's limits.nvidia.com/gpumem and gpucores per card, a percentage on the card size given", () => {
    const u = podUsage(pod([{ limits: { 'nvidia.com/gpu': '2', 'nvidia.com/gpumem': '3000', 'nvidia.com/gpucores': '25' } }, { limits: { 'nvidia.com/gpumem-percentage': '10' } }]), Date.now(), { gpuCardMemoryMiB: 40960 });
    assert.equal(u.get('limits.nvidia.com/gpumem'), (6000 + 4096) * 1000);
    assert.equal(u.get('limits.nvidia.com/gpucores'), 50 * 1000);
    assert.equal(podUsage(pod([{ limits: { cpu: '1' } }])).has('limits.nvidia.com/gpumem'), false);
    assert.equal(podUsage(pod([{ limits: { 'nvidia.com/gpu': '1', 'nvidia.com/gpumem': '1' } }], {}, 'Succeeded')).has('limits.nvidia.com/gpumem'), false);
  });

  it('counts a GPU limit as requests.nvidia.com/gpu, and no limits.* for extended resources', () => {
    const u = podUsage(pod([{ limits: { 'nvidia.com/gpu': '1' } }]));
    assert.equal(u.get('requests.nvidia.com/gpu'), 1000);
    assert.equal(u.has('limits.nvidia.com/gpu'), false);
  });

  it('takes the larger of the containers and each init container', () => {
    const u = podUsage(pod([{ requests: { cpu: '1' } }], { initContainers: [{ name: 'init', image: 'x', resources: { requests: { cpu: '3', memory: '1Mi' } } }] }));
    assert.equal(u.get('cpu'), 3000);
    assert.equal(u.get('memory'), 2 ** 20 * 1000);
  });

  it('a finished Pod keeps only count/pods', () => {
    assert.deepEqual(plain(podUsage(pod([{ requests: { cpu: '1' } }], {}, 'Succeeded'))), { 'count/pods': 1000 });
    assert.deepEqual(plain(podUsage(pod([{ requests: { cpu: '1' } }], {}, 'Failed'))), { 'count/pods': 1000 });
  });

  it('a PVC counts one claim and its storage', () => {
    const u = pvcUsage({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'v' }, spec: { resources: { requests: { storage: '5Gi' } } } });
    assert.equal(u.get('requests.storage'), 5 * 2 ** 30 * 1000);
    assert.equal(u.get('persistentvolumeclaims'), 1000);
  });

  it('maps quota names to the kinds they count', () => {
    assert.equal(storageKeyOfResource('requests.nvidia.com/gpu'), '/pods');
    assert.equal(storageKeyOfResource('memory'), '/pods');
    assert.equal(storageKeyOfResource('requests.storage'), '/persistentvolumeclaims');
    assert.equal(storageKeyOfResource('configmaps'), '/configmaps');
    assert.equal(storageKeyOfResource('count/jobs.batch'), 'batch/jobs');
    assert.equal(storageKeyOfResource('count/pytorchjobs.kubeflow.org'), 'kubeflow.org/pytorchjobs');
  });
});

describe('quota admission arithmetic', () => {
  it('refuses with kube-apiserver message, naming only the exceeded resources', () => {
    const q = quota({ cpu: '2', memory: '2Gi', 'requests.nvidia.com/gpu': '1' });
    const used = new Map([['requests.nvidia.com/gpu', 1000], ['cpu', 500]]);
    const asked = podUsage(pod([{ requests: { cpu: '1', memory: '1Gi' }, limits: { 'nvidia.com/gpu': '1' } }]));
    assert.equal(exceeds(q, used, asked), 'exceeded quota: kf-resource-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=1, limited: requests.nvidia.com/gpu=1');
    assert.equal(exceeds(q, new Map(), asked), undefined);
  });

  it('adds thousandths exactly: 100m + 200m fits 300m', () => {
    const q = quota({ 'requests.cpu': '300m' });
    assert.equal(exceeds(q, new Map([['requests.cpu', 100]]), podUsage(pod([{ requests: { cpu: '200m' } }]))), undefined);
    assert.equal(exceeds(q, new Map([['requests.cpu', 101]]), podUsage(pod([{ requests: { cpu: '200m' } }]))),
      'exceeded quota: kf-resource-quota, requested: requests.cpu=200m, used: requests.cpu=101m, limited: requests.cpu=300m');
  });

  it('prints quantities in the quota\'s own style', () => {
    assert.equal(formatQuantity(2 * 2 ** 30 * 1000, '2Gi'), '2Gi');
    assert.equal(formatQuantity(1536 * 2 ** 20 * 1000, '2Gi'), '1536Mi');
    assert.equal(formatQuantity(2e9 * 1000, '2G'), '2G');
    assert.equal(formatQuantity(1500, '2'), '1500m');
    assert.equal(formatQuantity(0, '2'), '0');
    assert.equal(formatQuantity(10_000, 10), '10');
  });

  it('a Pod must state cpu and memory when a quota limits them (and only those)', () => {
    const hard = hardOf(quota({ cpu: '2', 'limits.memory': '2Gi', 'requests.nvidia.com/gpu': '1' }));
    assert.equal(missingRequests(pod([{}, { requests: { cpu: '1' } }]), hard), 'must specify cpu for: c0; limits.memory for: c0,c1');
    assert.equal(missingRequests(pod([{ limits: { cpu: '1', memory: '1Gi' } }]), hard), undefined);
    assert.equal(missingRequests(pod([{}]), hardOf(quota({ 'requests.nvidia.com/gpu': '1' }))), undefined);
  });

  it('validates hard names and quantities, naming the field', () => {
    const errs = ResourceQuotaKind.validate?.({ ...quota({ cpu: 'lots', 'bogus-thing': '1' }) }) ?? [];
    assert.deepEqual(errs.map((e) => e.field), ['spec.hard[cpu]', 'spec.hard[bogus-thing]']);
    assert.equal(ResourceQuotaKind.validate?.(quota({ 'count/jobs.batch': '3', 'requests.nvidia.com/gpu': '1', pods: '10' })).length, 0);
  });
});
