import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildDiscovery,
  findByGVK,
  objectRef,
  resolveResource,
  resourcePath,
  resourcesInCategory,
  typeName,
  type APIGroupList,
  type APIResourceList,
} from './discovery.js';

const core: APIResourceList = {
  kind: 'APIResourceList',
  groupVersion: 'v1',
  resources: [
    { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['get', 'list'], shortNames: ['po'], categories: ['all'] },
    { name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
    { name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
    { name: 'events', singularName: 'event', namespaced: true, kind: 'Event', shortNames: ['ev'] },
    { name: 'namespaces', singularName: 'namespace', namespaced: false, kind: 'Namespace', shortNames: ['ns'] },
    { name: 'nodes', singularName: '', namespaced: false, kind: 'Node', shortNames: ['no'] },
  ],
};
const groups: APIGroupList = {
  kind: 'APIGroupList',
  groups: [
    {
      name: 'batch',
      versions: [{ groupVersion: 'batch/v1', version: 'v1' }, { groupVersion: 'batch/v1beta1', version: 'v1beta1' }],
      preferredVersion: { groupVersion: 'batch/v1', version: 'v1' },
    },
    { name: 'events.k8s.io', versions: [{ groupVersion: 'events.k8s.io/v1', version: 'v1' }], preferredVersion: { groupVersion: 'events.k8s.io/v1', version: 'v1' } },
    { name: 'kubeflow.org', versions: [{ groupVersion: 'kubeflow.org/v1', version: 'v1' }], preferredVersion: { groupVersion: 'kubeflow.org/v1', version: 'v1' } },
  ],
};
const lists: APIResourceList[] = [
  // deliberately out of order: the priority comes from the indexes
  { groupVersion: 'batch/v1beta1', resources: [{ name: 'jobs', singularName: 'job', namespaced: true, kind: 'Job' }] },
  core,
  {
    groupVersion: 'batch/v1',
    resources: [
      { name: 'jobs', singularName: 'job', namespaced: true, kind: 'Job', categories: ['all'] },
      { name: 'jobs/status', singularName: '', namespaced: true, kind: 'Job' },
      { name: 'cronjobs', singularName: 'cronjob', namespaced: true, kind: 'CronJob', shortNames: ['cj'] },
    ],
  },
  { groupVersion: 'events.k8s.io/v1', resources: [{ name: 'events', singularName: 'event', namespaced: true, kind: 'Event', shortNames: ['ev'] }] },
  { groupVersion: 'kubeflow.org/v1', resources: [{ name: 'pytorchjobs', singularName: 'pytorchjob', namespaced: true, kind: 'PyTorchJob', shortNames: ['ptj', 'po2'] }] },
];
const d = buildDiscovery({ versions: ['v1'] }, groups, lists);

void test('subresources are not kinds', () => {
  assert.equal(d.resources.some((r) => r.plural.includes('/')), false);
});

void test('resolves plural, singular, short name and Kind, case-insensitively', () => {
  for (const arg of ['jobs', 'job', 'Job', 'JOBS']) {
    const r = resolveResource(d, arg);
    assert.equal(r.group, 'batch', arg);
    assert.equal(r.version, 'v1', `${arg} resolves to the preferred version`);
  }
  assert.equal(resolveResource(d, 'po').kind, 'Pod');
  assert.equal(resolveResource(d, 'ptj').kind, 'PyTorchJob');
  assert.equal(resolveResource(d, 'PyTorchJob').plural, 'pytorchjobs');
  assert.equal(resolveResource(d, 'node').kind, 'Node', 'singular falls back to the lower-cased kind');
});

void test('core wins over groups for the same name; qualifying picks the group', () => {
  assert.equal(resolveResource(d, 'events').group, '');
  assert.equal(resolveResource(d, 'ev').group, '');
  assert.equal(resolveResource(d, 'events.events.k8s.io').group, 'events.k8s.io');
  assert.equal(resolveResource(d, 'jobs.batch').group, 'batch');
  assert.equal(resolveResource(d, 'job.batch').version, 'v1');
  assert.equal(resolveResource(d, 'jobs.v1beta1.batch').version, 'v1beta1');
  assert.equal(resolveResource(d, 'pods.v1').kind, 'Pod');
});

void test('unknown kinds give the kubectl message', () => {
  assert.throws(() => resolveResource(d, 'foo'), /the server doesn't have a resource type "foo"/);
  assert.throws(() => resolveResource(d, 'jobs.nope'), /resource type "jobs.nope"/);
  assert.throws(() => resolveResource(d, 'pods/log'), /resource type/);
});

void test('categories', () => {
  assert.deepEqual(resourcesInCategory(d, 'all')?.map((r) => r.plural), ['pods', 'jobs']);
  assert.equal(resourcesInCategory(d, 'none'), undefined);
});

void test('findByGVK maps manifests to resources', () => {
  assert.equal(findByGVK(d, 'batch/v1', 'Job')?.plural, 'jobs');
  assert.equal(findByGVK(d, 'v1', 'Namespace')?.namespaced, false);
  assert.equal(findByGVK(d, 'batch/v2', 'Job'), undefined);
});

void test('paths and names', () => {
  const jobs = resolveResource(d, 'jobs');
  const pods = resolveResource(d, 'pods');
  const ns = resolveResource(d, 'ns');
  assert.equal(resourcePath(jobs, { namespace: 'default', name: 'pi' }), '/apis/batch/v1/namespaces/default/jobs/pi');
  assert.equal(resourcePath(jobs, { namespace: 'default' }), '/apis/batch/v1/namespaces/default/jobs');
  assert.equal(resourcePath(jobs), '/apis/batch/v1/jobs');
  assert.equal(resourcePath(pods, { namespace: 'a', name: 'p', subresource: 'log' }), '/api/v1/namespaces/a/pods/p/log');
  assert.equal(resourcePath(ns, { namespace: 'ignored', name: 'team' }), '/api/v1/namespaces/team');
  assert.equal(typeName(jobs), 'job.batch');
  assert.equal(typeName(pods), 'pod');
  assert.equal(objectRef(jobs, 'pi'), 'job.batch/pi');
});
