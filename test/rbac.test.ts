// RBAC as kubectl and the Python client see it against `skiff up`: Roles and bindings applied with
// kubectl, `kubectl auth can-i` for impersonated users (the access reviews answered by RBAC), the
// bootstrap roles and Kubeflow's aggregated kubeflow-edit, SubjectAccessReview and
// LocalSubjectAccessReview as a service asks them, and the tables kubectl prints for the four kinds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestServer } from './harness.js';

const policy = `
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: team-a}
rules:
- apiGroups: [""]
  resources: [pods, pods/log]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [configmaps]
  resourceNames: [settings]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-reads, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: namespaceAdmin, namespace: team-b}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kubeflow-edit}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: bob}
- {kind: ServiceAccount, name: default-editor}
`;

describe('RBAC', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
    const applied = await s.kubectl(['apply', '-f', '-'], policy);
    assert.equal(applied.code, 0, applied.stderr);
  });
  after(async () => {
    await s?.cleanup();
  });

  const canI = async (args: string[]): Promise<string> => {
    const r = await s.kubectl(['auth', 'can-i', ...args]);
    assert.ok(r.code === 0 || r.code === 1, r.stderr);
    return r.stdout.trim();
  };

  it('kubectl auth can-i --as answers from the Roles and bindings applied', async () => {
    await s.until('alice may list pods in team-a', async () => (await canI(['list', 'pods', '-n', 'team-a', '--as', 'alice'])) === 'yes', 10_000);
    assert.equal(await canI(['list', 'pods', '-n', 'team-b', '--as', 'alice']), 'no');
    assert.equal(await canI(['list', 'pods', '--all-namespaces', '--as', 'alice']), 'no');
    assert.equal(await canI(['delete', 'pods', '-n', 'team-a', '--as', 'alice']), 'no');
    assert.equal(await canI(['get', 'pods', '--subresource=log', '-n', 'team-a', '--as', 'alice']), 'yes');
    assert.equal(await canI(['create', 'pods', '--subresource=exec', '-n', 'team-a', '--as', 'alice']), 'no');
    assert.equal(await canI(['get', 'configmaps/settings', '-n', 'team-a', '--as', 'alice']), 'yes');
    assert.equal(await canI(['get', 'configmaps/other', '-n', 'team-a', '--as', 'alice']), 'no');
    // the one local user is in system:masters
    assert.equal(await canI(['delete', 'namespaces']), 'yes');
    // every authenticated user may ask about itself and read discovery (system:basic-user, system:discovery)
    assert.equal(await canI(['create', 'selfsubjectaccessreviews', '--as', 'alice']), 'yes');
    assert.equal(await canI(['get', '/apis/batch', '--as', 'alice']), 'yes');
    assert.equal(await canI(['get', '/metrics', '--as', 'alice']), 'no');
  });

  it("Kubeflow's kubeflow-edit is aggregated from the components' roles", async () => {
    await s.until('bob may create experiments in team-b', async () => (await canI(['create', 'experiments.kubeflow.org', '-n', 'team-b', '--as', 'bob'])) === 'yes', 10_000);
    assert.equal(await canI(['create', 'pytorchjobs.kubeflow.org', '-n', 'team-b', '--as', 'bob']), 'yes');
    assert.equal(await canI(['create', 'pods', '--subresource=exec', '-n', 'team-b', '--as', 'bob']), 'yes');
    assert.equal(await canI(['create', 'runs.pipelines.kubeflow.org', '-n', 'team-b', '--as', 'bob']), 'yes');
    // edit does not manage access: that is kubeflow-admin's
    assert.equal(await canI(['create', 'rolebindings', '-n', 'team-b', '--as', 'bob']), 'no');
    assert.equal(await canI(['create', 'experiments.kubeflow.org', '-n', 'team-a', '--as', 'bob']), 'no');
    // a namespace's service account, as Kubeflow's default-editor
    assert.equal(await canI(['create', 'inferenceservices.serving.kserve.io', '-n', 'team-b', '--as', 'system:serviceaccount:team-b:default-editor']), 'yes');
    assert.equal(await canI(['create', 'inferenceservices.serving.kserve.io', '-n', 'team-a', '--as', 'system:serviceaccount:team-b:default-editor']), 'no');
    const admin = JSON.parse((await s.kubectl(['get', 'clusterrole', 'kubeflow-admin', '-o', 'json'])).stdout);
    assert.ok(admin.rules.some((r: any) => r.resources?.includes('rolebindings')), 'kubeflow-admin has rolebindings');
    assert.ok(admin.rules.some((r: any) => r.resources?.includes('notebooks')), 'kubeflow-admin has notebooks through kubeflow-edit');
  });

  it('kubectl auth can-i --list --as lists the rules in the namespace', async () => {
    const r = await s.kubectl(['auth', 'can-i', '--list', '--as', 'alice', '-n', 'team-a']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n').map((l) => l.trim().split(/\s{2,}/));
    const row = (res: string): string[] | undefined => lines.find((cols) => cols[0] === res);
    assert.deepEqual(row('pods'), ['pods', '[]', '[]', '[get list watch]']);
    assert.deepEqual(row('pods/log'), ['pods/log', '[]', '[]', '[get list watch]']);
    assert.deepEqual(row('configmaps'), ['configmaps', '[]', '[settings]', '[get]']);
    assert.deepEqual(row('selfsubjectaccessreviews.authorization.k8s.io'), ['selfsubjectaccessreviews.authorization.k8s.io', '[]', '[]', '[create]']);
    const other = await s.kubectl(['auth', 'can-i', '--list', '--as', 'alice', '-n', 'team-b']);
    assert.equal(other.stdout.split('\n').some((l) => l.startsWith('pods ')), false, other.stdout);
  });

  it('SubjectAccessReview and LocalSubjectAccessReview answer for the subject they name', async () => {
    const sar = await s.create('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
      spec: { user: 'alice', groups: ['system:authenticated'], resourceAttributes: { namespace: 'team-a', verb: 'get', resource: 'pods', subresource: 'log' } },
    });
    assert.deepEqual(sar.status, { allowed: true, reason: 'RBAC: allowed by RoleBinding "alice-reads/team-a" of Role "pod-reader" to User "alice"' });
    const denied = await s.create('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'alice', resourceAttributes: { namespace: 'team-b', verb: 'list', resource: 'pods' } },
    });
    assert.equal(denied.status.allowed, false);
    const bad = await s.req('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } });
    assert.equal(bad.status, 422, bad.text);
    assert.match(bad.body.message, /at least one of user or group must be specified/);
    // the Python client, as Kubeflow's web apps ask
    const out = await s.python(`
import json
from kubernetes import client, config
config.load_kube_config()
api = client.AuthorizationV1Api()
review = client.V1LocalSubjectAccessReview(metadata={'namespace': 'team-b'}, spec=client.V1SubjectAccessReviewSpec(user='bob', resource_attributes=client.V1ResourceAttributes(verb='create', group='kubeflow.org', resource='notebooks')))
r = api.create_namespaced_local_subject_access_review('team-b', review)
print(json.dumps({'allowed': r.status.allowed, 'reason': r.status.reason}))
`);
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout.trim()), { allowed: true, reason: 'RBAC: allowed by RoleBinding "namespaceAdmin/team-b" of ClusterRole "kubeflow-edit" to User "bob"' });
    const mismatch = await s.req('POST', '/apis/authorization.k8s.io/v1/namespaces/team-a/localsubjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', spec: { user: 'bob', resourceAttributes: { namespace: 'team-b', verb: 'get', resource: 'pods' } },
    });
    assert.equal(mismatch.status, 422, mismatch.text);
  });

  it('impersonation: the local admin may act as anyone; a service account gets its groups', async () => {
    const r = await s.req('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods' } },
    }, { 'impersonate-user': 'system:serviceaccount:team-b:default-editor', 'impersonate-group': 'system:masters' });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.status.allowed, true, 'the local admin may impersonate system:masters');
    const who = await s.kubectl(['auth', 'whoami', '--as', 'system:serviceaccount:team-b:default-editor', '-o', 'json']);
    assert.equal(who.code, 0, who.stderr);
    assert.deepEqual(JSON.parse(who.stdout).status.userInfo, { username: 'system:serviceaccount:team-b:default-editor', groups: ['system:serviceaccounts', 'system:serviceaccounts:team-b', 'system:authenticated'] });
  });

  it('kubectl get prints the four kinds as kube-apiserver does', async () => {
    const bindings = await s.kubectl(['get', 'rolebindings', '-n', 'team-b', '-o', 'wide']);
    assert.equal(bindings.code, 0, bindings.stderr);
    const [head, row] = bindings.stdout.trim().split('\n').map((l) => l.trim().split(/\s{2,}/));
    assert.deepEqual(head, ['NAME', 'ROLE', 'AGE', 'USERS', 'GROUPS', 'SERVICEACCOUNTS']);
    assert.equal(row?.[0], 'namespaceAdmin');
    assert.equal(row?.[1], 'ClusterRole/kubeflow-edit');
    assert.deepEqual(row?.slice(3), ['bob', '/default-editor']);
    const crb = await s.kubectl(['get', 'clusterrolebinding', 'system:public-info-viewer', '-o', 'wide']);
    assert.match(crb.stdout, /system:public-info-viewer\s+ClusterRole\/system:public-info-viewer\s+\S+\s+system:authenticated, system:unauthenticated/);
    const roles = await s.kubectl(['get', 'clusterroles', 'cluster-admin', 'view']);
    assert.equal(roles.code, 0, roles.stderr);
    const lines = roles.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /^NAME\s+CREATED AT$/);
    assert.match(lines[1] ?? '', /^cluster-admin\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const role = await s.kubectl(['get', 'role', '-n', 'team-a']);
    assert.match(role.stdout, /^pod-reader\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m);
  });
});
