// Kubeflow Profiles end to end: upstream's example Profiles applied with kubectl make their namespace,
// bindings, service accounts and quota; the quota refuses a Pod and holds a Job back as
// kube-apiserver does; contributors come and go through KFAM; deleting the Profile removes the namespace.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { conformanceDir } from '../src/conformance-path.js';
import { TestServer } from './harness.js';

const profiles = join(conformanceDir(), 'profiles');
const ns = 'test-user-profile';
const gpuPod = (name: string): string => JSON.stringify({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns },
  spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python:3.11', command: ['sleep', '300'], resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { 'nvidia.com/gpu': '1' } } }] },
});
const refusal = 'exceeded quota: kf-resource-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=1, limited: requests.nvidia.com/gpu=1';

describe('Profiles and ResourceQuota', { skip: !existsSync(profiles) && 'no ../shared/conformance/profiles here' }, () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
  });

  it('applies upstream Profiles: namespace, bindings, service accounts and quota appear', async () => {
    const v1beta1 = await s.kubectl(['apply', '-f', join(profiles, 'dashboard-repo', 'samples', '_v1beta1_profile.yaml')]);
    assert.equal(v1beta1.code, 0, v1beta1.stderr);
    const v1 = await s.kubectl(['apply', '-f', join(profiles, 'website-docs-extracted', 'my-profile.yaml')]);
    assert.equal(v1.code, 0, v1.stderr);
    const nsObj = await s.until('the namespace', async () => {
      const r = await s.req('GET', `/api/v1/namespaces/${ns}`);
      return r.status === 200 ? r.body : undefined;
    });
    assert.equal(nsObj.metadata.annotations.owner, 'test-user@kubeflow.org');
    assert.equal(nsObj.metadata.labels['app.kubernetes.io/part-of'], 'kubeflow-profile');
    assert.equal(nsObj.metadata.labels['pipelines.kubeflow.org/enabled'], 'true');
    const admin = await s.until('the owner binding', async () => {
      const r = await s.req('GET', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings/namespaceAdmin`);
      return r.status === 200 ? r.body : undefined;
    });
    assert.deepEqual(admin.metadata.annotations, { user: 'test-user@kubeflow.org', role: 'admin' });
    assert.equal(admin.roleRef.name, 'kubeflow-admin');
    for (const sa of ['default-editor', 'default-viewer']) {
      await s.until(`ServiceAccount ${sa}`, async () => (await s.req('GET', `/api/v1/namespaces/${ns}/serviceaccounts/${sa}`)).status === 200);
      await s.until(`RoleBinding ${sa}`, async () => (await s.req('GET', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings/${sa}`)).status === 200);
    }
    const quota = await s.until('the quota with its status', async () => {
      const r = await s.req('GET', `/api/v1/namespaces/${ns}/resourcequotas/kf-resource-quota`);
      return r.status === 200 && r.body.status?.used ? r.body : undefined;
    });
    assert.deepEqual(quota.status.hard, { cpu: '2', memory: '2Gi', persistentvolumeclaims: '1', 'requests.nvidia.com/gpu': '1', 'requests.storage': '5Gi' });
    assert.equal(quota.status.used['requests.nvidia.com/gpu'], '0');
    await s.until('the second Profile\'s namespace', async () => (await s.req('GET', '/api/v1/namespaces/my-profile')).status === 200);
  });

  it('kubectl get profiles and kubectl describe quota', async () => {
    const get = await s.kubectl(['get', 'profiles']);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /^NAME\s+AGE\n/);
    assert.match(get.stdout, /\nmy-profile\s+\d+s\n/);
    assert.match(get.stdout, new RegExp(`\\n${ns}\\s+\\d+s`));
    const describe = await s.kubectl(['describe', 'quota', '-n', ns]);
    assert.equal(describe.code, 0, describe.stderr);
    assert.match(describe.stdout, /Name:\s+kf-resource-quota/);
    assert.match(describe.stdout, /requests\.nvidia\.com\/gpu\s+0\s+1/);
    assert.match(describe.stdout, /memory\s+0\s+2Gi/);
    const quota = await s.kubectl(['get', 'quota', '-n', ns]);
    assert.match(quota.stdout, /NAME\s+AGE\s+REQUEST\s+LIMIT/);
    assert.match(quota.stdout, /cpu: 0\/2, memory: 0\/2Gi, persistentvolumeclaims: 0\/1, requests.nvidia.com\/gpu: 0\/1, requests.storage: 0\/5Gi/);
  });

  it('refuses a Pod beyond the GPU quota 403 with kube-apiserver\'s message, and one that states no cpu', async () => {
    const first = await s.kubectl(['apply', '-f', '-'], gpuPod('gpu-1'));
    assert.equal(first.code, 0, first.stderr);
    const second = await s.kubectl(['apply', '-f', '-'], gpuPod('gpu-2'));
    assert.notEqual(second.code, 0);
    assert.match(second.stderr, /Error from server \(Forbidden\)/);
    assert.ok(second.stderr.includes(`pods "gpu-2" is forbidden: ${refusal}`), second.stderr);
    const raw = await s.req('POST', `/api/v1/namespaces/${ns}/pods`, JSON.parse(gpuPod('gpu-3')));
    assert.equal(raw.status, 403);
    assert.equal(raw.body.reason, 'Forbidden');
    const bare = await s.kubectl(['run', 'bare', '-n', ns, '--image=python:3.11', '--restart=Never', '--', 'true']);
    assert.notEqual(bare.code, 0);
    assert.match(bare.stderr, /pods "bare" is forbidden: failed quota: kf-resource-quota: must specify cpu for: bare; memory for: bare/);
    await s.until('the quota to count the GPU in use', async () => (await s.get(`/api/v1/namespaces/${ns}/resourcequotas/kf-resource-quota`)).status?.used?.['requests.nvidia.com/gpu'] === '1');
  });

  it('a Job beyond the quota keeps trying, its events say why, and it starts once the GPU is free', async () => {
    const job = {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'wants-gpu', namespace: ns },
      spec: { backoffLimit: 0, template: JSON.parse(gpuPod('x')) },
    };
    delete job.spec.template.apiVersion;
    delete job.spec.template.kind;
    job.spec.template.metadata = {};
    job.spec.template.spec.containers[0].command = ['python', '-c', 'print("ran")'];
    const r = await s.kubectl(['apply', '-f', '-'], JSON.stringify(job));
    assert.equal(r.code, 0, r.stderr);
    await s.until('a FailedCreate event naming the quota', async () => {
      const ev = await s.get(`/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=wants-gpu`);
      return (ev.items as { reason: string; message: string }[]).some((e) => e.reason === 'FailedCreate' && e.message.includes('exceeded quota: kf-resource-quota'));
    });
    const described = await s.kubectl(['describe', 'job', 'wants-gpu', '-n', ns]);
    assert.match(described.stdout, /FailedCreate.*exceeded quota: kf-resource-quota/);
    assert.equal((await s.req('GET', `/apis/batch/v1/namespaces/${ns}/jobs/wants-gpu`)).status, 200);
    const del = await s.kubectl(['delete', 'pod', 'gpu-1', '-n', ns, '--grace-period=0', '--force']);
    assert.equal(del.code, 0, del.stderr);
    await s.until('the Job to create its Pod', async () => {
      const pods = await s.get(`/api/v1/namespaces/${ns}/pods?labelSelector=job-name=wants-gpu`);
      return pods.items.length > 0;
    }, 120_000);
  });

  it('adds and removes a contributor through /kfam/v1/bindings', async () => {
    const binding = { user: { kind: 'User', name: 'bob@example.com' }, referredNamespace: ns, RoleRef: { kind: 'ClusterRole', name: 'kubeflow-edit' } };
    const add = await s.req('POST', '/kfam/v1/bindings', binding);
    assert.equal(add.status, 200, add.text);
    const rb = await s.get(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings/user-bob-example-com-clusterrole-edit`);
    assert.deepEqual(rb.metadata.annotations, { user: 'bob@example.com', role: 'edit' });
    assert.equal(rb.roleRef.name, 'kubeflow-edit');
    assert.deepEqual(rb.subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob@example.com' }]);
    const listed = await s.get(`/kfam/v1/bindings?namespace=${ns}`);
    assert.deepEqual(listed.bindings.map((b: { user: { name: string }; RoleRef: { name: string } }) => `${b.user.name}:${b.RoleRef.name}`).sort(), ['bob@example.com:edit', 'test-user@kubeflow.org:admin']);
    const bobs = await s.get('/kfam/v1/bindings?user=bob@example.com');
    assert.deepEqual(bobs.bindings, [{ user: { kind: 'User', name: 'bob@example.com' }, referredNamespace: ns, RoleRef: { kind: 'ClusterRole', name: 'edit' }, status: 'Succeeded' }]);
    const bad = await s.req('POST', '/kfam/v1/bindings', { ...binding, RoleRef: { kind: 'ClusterRole', name: 'cluster-admin' } });
    assert.equal(bad.status, 400);
    const removed = await s.req('DELETE', '/kfam/v1/bindings', binding);
    assert.equal(removed.status, 200, removed.text);
    assert.equal((await s.req('GET', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings/user-bob-example-com-clusterrole-edit`)).status, 404);
    assert.equal((await s.get('/kfam/v1/role/clusteradmin?user=skiff-admin')), true);
  });

  it('deleting the Profile deletes its namespace', async () => {
    const del = await s.kubectl(['delete', 'profile', ns, '--wait=true', '--timeout=60s']);
    assert.equal(del.code, 0, del.stderr);
    await s.until('the namespace to be gone', async () => (await s.req('GET', `/api/v1/namespaces/${ns}`)).status === 404, 120_000);
  });
});
