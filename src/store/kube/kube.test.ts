import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ApiError } from '../../api/errors.js';
import { defaultRegistry } from '../../api/index.js';
import { crdsFor, managedBy, managedByLabel, specHashAnnotation } from './crds.js';
import { errorFromStatus } from './http.js';
import { storageKinds } from './index.js';
import { inClusterConnection, KubeconfigError, loadKubeconfig, podNamespace } from './kubeconfig.js';
import { collectionPath, compareVersions, isBuiltInGroup, objectPath } from './paths.js';
import { withoutClientUid } from './store.js';
import { prepareWrite } from '../client.js';
import type { KObject } from '../../api/meta.js';

describe('kubernetes store: kubeconfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-kubeconfig-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'ca.crt'), 'CA PEM');
  const file = join(dir, 'config');
  writeFileSync(file, [
    'apiVersion: v1', 'kind: Config', 'current-context: a',
    'clusters:', '- name: one', '  cluster: {server: "https://127.0.0.1:6443/", certificate-authority: ca.crt}',
    `- name: two`, `  cluster: {server: "https://10.0.0.1", certificate-authority-data: ${Buffer.from('DATA PEM').toString('base64')}, insecure-skip-tls-verify: true}`,
    'users:', '- name: admin', '  user: {token: secret}', '- name: plugin', '  user: {exec: {command: aws}}',
    'contexts:', '- name: a', '  context: {cluster: one, user: admin}', '- name: b', '  context: {cluster: two, user: admin}', '- name: c', '  context: {cluster: two, user: plugin}',
  ].join('\n'));

  it('reads the current context: server, the CA file relative to the kubeconfig, the token', () => {
    const c = loadKubeconfig(file);
    assert.equal(c.server, 'https://127.0.0.1:6443');
    assert.equal(c.ca, 'CA PEM');
    assert.equal(c.token, 'secret');
    assert.match(c.source, /context a/);
  });

  it('reads another context and inline CA data', () => {
    const c = loadKubeconfig(file, 'b');
    assert.equal(c.ca, 'DATA PEM');
    assert.equal(c.insecureSkipTlsVerify, true);
  });

  it('reads a Pod\'s in-cluster contract, and nothing outside a Pod', () => {
    const sa = mkdtempSync(join(tmpdir(), 'skiff-sa-'));
    writeFileSync(join(sa, 'ca.crt'), 'POD CA');
    writeFileSync(join(sa, 'token'), 'pod-token\n');
    const c = inClusterConnection({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, sa);
    assert.deepEqual(c && { server: c.server, ca: c.ca, token: c.token }, { server: 'https://10.0.0.1:443', ca: 'POD CA', token: 'pod-token' });
    assert.equal(inClusterConnection({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, sa)?.server, 'https://[fd00::1]:443');
    assert.equal(inClusterConnection({}, sa), undefined);
    // the namespace the leader Lease goes in: POD_NAMESPACE (the downward API), else the service account's
    assert.equal(podNamespace({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, sa), undefined);
    writeFileSync(join(sa, 'namespace'), 'kubeflow\n');
    assert.equal(podNamespace({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, sa), 'kubeflow');
    assert.equal(podNamespace({ KUBERNETES_SERVICE_HOST: '10.0.0.1', POD_NAMESPACE: 'ml' }, sa), 'ml');
    assert.equal(podNamespace({}, sa), undefined, 'outside a Pod');
    rmSync(sa, { recursive: true, force: true });
  });

  it('refuses what it cannot use, naming the file and the reason', () => {
    assert.throws(() => loadKubeconfig(join(dir, 'missing')), (e: Error) => e instanceof KubeconfigError && /cannot read kubeconfig .*missing/.test(e.message));
    assert.throws(() => loadKubeconfig(file, 'nope'), /no context named "nope"/);
    assert.throws(() => loadKubeconfig(file, 'c'), /exec or auth-provider plugin/);
  });
});

describe('kubernetes store: paths and versions', () => {
  it('tells Kubernetes\' own groups from CRD groups', () => {
    for (const g of ['', 'batch', 'apps', 'rbac.authorization.k8s.io', 'networking.k8s.io']) assert.equal(isBuiltInGroup(g), true, g);
    for (const g of ['kubeflow.org', 'kueue.x-k8s.io', 'serving.kserve.io']) assert.equal(isBuiltInGroup(g), false, g);
  });

  it('builds collection and object paths', () => {
    const pods = { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true, hasStatus: true };
    const cq = { group: 'kueue.x-k8s.io', version: 'v1beta2', kind: 'ClusterQueue', plural: 'clusterqueues', namespaced: false, hasStatus: true };
    assert.equal(collectionPath(pods), '/api/v1/pods');
    assert.equal(collectionPath(pods, 'ns1'), '/api/v1/namespaces/ns1/pods');
    assert.equal(objectPath(pods, 'ns1', 'p', 'status'), '/api/v1/namespaces/ns1/pods/p/status');
    assert.equal(objectPath(cq, 'ignored', 'q'), '/apis/kueue.x-k8s.io/v1beta2/clusterqueues/q');
  });

  it('orders versions as Kubernetes prefers them', () => {
    assert.deepEqual(['v1alpha1', 'v2beta1', 'v1', 'v1beta1', 'v1beta2'].sort(compareVersions), ['v1', 'v2beta1', 'v1beta2', 'v1beta1', 'v1alpha1']);
  });

  it('maps a Status to the ApiError it stands for', () => {
    const e = errorFromStatus(409, { kind: 'Status', reason: 'Conflict', message: 'the object has been modified', code: 409, details: { name: 'x' } }, 'fallback');
    assert.ok(e instanceof ApiError);
    assert.equal(e.code, 409);
    assert.equal(e.details.name, 'x');
    assert.equal(errorFromStatus(410, { reason: 'Gone', message: 'too old' }, 'f').code, 410);
    assert.equal(errorFromStatus(502, 'bad gateway', 'fallback').message, 'fallback');
  });
});

describe('kubernetes store: CRDs', () => {
  const defs = defaultRegistry().all();
  const crds = crdsFor(defs);
  const byName = new Map(crds.map((c) => [c.metadata.name, c]));

  it('covers every kind Kubernetes does not serve itself, once per group and plural', () => {
    for (const d of defs) {
      if (isBuiltInGroup(d.group)) assert.equal(byName.has(`${d.plural}.${d.group}`), false);
      else assert.ok(byName.get(`${d.plural}.${d.group}`), `${d.kind} ${d.group}`);
    }
    assert.equal(byName.size, crds.length);
  });

  it('uses the upstream schema of a single-version Kubeflow kind, with its subresources', () => {
    const pt = byName.get('pytorchjobs.kubeflow.org');
    const v = pt?.spec.versions[0];
    assert.equal(v?.name, 'v1');
    assert.ok(v?.schema.openAPIV3Schema.properties?.spec, 'the Training Operator\'s schema');
    assert.deepEqual(Object.keys(v?.subresources ?? {}).sort(), ['scale', 'status']);
  });

  it('serves only the stored version of a kind Skiff converts, and keeps open several unconverted versions whose upstream schemas differ', () => {
    assert.deepEqual(byName.get('clusterqueues.kueue.x-k8s.io')?.spec.versions.map((v) => v.name), ['v1beta2']);
    const mpi = byName.get('mpijobs.kubeflow.org');
    assert.deepEqual(mpi?.spec.versions.map((v) => [v.name, v.storage]), [['v1', true], ['v2beta1', false]]);
    for (const v of mpi?.spec.versions ?? []) assert.equal(v.schema.openAPIV3Schema['x-kubernetes-preserve-unknown-fields'], true);
  });

  it('gives every version the upstream schema where all versions share it: Profiles, Notebooks', () => {
    const nb = byName.get('notebooks.kubeflow.org');
    assert.deepEqual(nb?.spec.versions.map((v) => [v.name, v.storage]), [['v1', true], ['v1beta1', false], ['v1alpha1', false]]);
    for (const v of nb?.spec.versions ?? []) {
      const spec = v.schema.openAPIV3Schema.properties?.spec;
      assert.ok(spec?.properties?.template, `${v.name}: the notebook-controller's schema`);
      assert.ok(spec?.properties?.template?.properties?.metadata, `${v.name}: with Skiff's spec.template.metadata`);
      assert.equal(v.schema.openAPIV3Schema['x-kubernetes-preserve-unknown-fields'], undefined);
    }
    const profile = byName.get('profiles.kubeflow.org');
    assert.deepEqual(profile?.spec.versions.map((v) => v.name), ['v1', 'v1beta1']);
    for (const v of profile?.spec.versions ?? []) assert.ok(v.schema.openAPIV3Schema.properties?.spec?.properties?.owner, `${v.name}: the profile-controller's schema`);
  });

  it('is labelled as Skiff\'s and carries the hash of its spec', () => {
    for (const c of crds) {
      assert.equal(c.metadata.labels[managedByLabel], managedBy);
      assert.match(c.metadata.annotations[specHashAnnotation] ?? '', /^[0-9a-f]{32}$/);
    }
    assert.equal(crdsFor(defs)[0]?.metadata.annotations[specHashAnnotation], crds[0]?.metadata.annotations[specHashAnnotation]);
  });

  it('lists and watches each kind once, in its stored version', () => {
    const kinds = storageKinds(defs);
    assert.equal(kinds.filter((k) => k.group === 'kubeflow.org' && k.plural === 'mpijobs').map((k) => k.version).join(), 'v1');
    assert.equal(kinds.filter((k) => k.plural === 'clusterqueues').map((k) => k.version).join(), 'v1beta2');
  });
});

describe('kubernetes store: a new object\'s uid is the cluster\'s', () => {
  it('a Job goes to the API server without the selector and labels defaulting made from Skiff\'s uid', () => {
    const def = defaultRegistry().forObject('batch/v1', 'Job');
    assert.ok(def);
    const job: KObject = {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'trial-1', namespace: 'default', uid: 'client-made-uid', labels: { 'katib.kubeflow.org/trial': 'trial-1' } },
      spec: { template: { metadata: { labels: { app: 'x' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
    };
    prepareWrite(def, job);
    assert.equal((job.spec as any).template.metadata.labels['controller-uid'], 'client-made-uid');
    withoutClientUid(job, 'client-made-uid');
    assert.equal((job.spec as any).selector, undefined);
    assert.deepEqual((job.spec as any).template.metadata.labels, { app: 'x', 'batch.kubernetes.io/job-name': 'trial-1', 'job-name': 'trial-1' });
  });
  it('keeps a selector the user wrote', () => {
    const job: KObject = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', uid: 'u1' }, spec: { manualSelector: true, selector: { matchLabels: { app: 'x' } }, template: { metadata: { labels: { app: 'x' } } } } };
    withoutClientUid(job, 'u1');
    assert.deepEqual((job.spec as any).selector, { matchLabels: { app: 'x' } });
    assert.deepEqual((job.spec as any).template.metadata.labels, { app: 'x' });
  });
});
