import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentNode } from './node-agent.js';

void test('the Node an agent registers: capacity, the kubelet\'s conditions, its address and kubelet port, no control-plane role', () => {
  const n = agentNode('worker-1', { cpu: 8, memoryBytes: 16 * 1024 ** 3, gpus: [{ index: 0, uuid: 'GPU-1', name: 'NVIDIA H200', memoryMiB: 143_771 }] }, '1.2.3', '10.0.0.5', 10250);
  assert.equal(n.metadata.name, 'worker-1');
  assert.equal(n.metadata.labels?.['kubernetes.io/hostname'], 'worker-1');
  assert.equal(n.metadata.labels?.['node-role.kubernetes.io/control-plane'], undefined);
  assert.equal(n.metadata.labels?.['nvidia.com/gpu.present'], 'true');
  assert.deepEqual(n.status?.capacity, { cpu: '8', memory: '16Gi', pods: '110', 'ephemeral-storage': '0', 'nvidia.com/gpu': '10' });
  assert.deepEqual(n.status?.allocatable, n.status?.capacity);
  assert.deepEqual((n.status?.conditions as { type: string; status: string }[]).map((c) => `${c.type}=${c.status}`), ['MemoryPressure=False', 'DiskPressure=False', 'PIDPressure=False', 'Ready=True']);
  assert.deepEqual(n.status?.addresses, [{ type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'worker-1' }]);
  assert.deepEqual(n.status?.daemonEndpoints, { kubeletEndpoint: { Port: 10250 } });
  assert.equal(n.status?.nodeInfo?.kubeletVersion, 'skiff-1.2.3');
  assert.equal(n.status?.nodeInfo?.containerRuntimeVersion, 'skiff://1.2.3');
});

void test('deploy/kubernetes/node-agent grants every access the agent checks for at start-up', async () => {
  const { readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { parseAllDocuments } = await import('yaml');
  const { agentAccessNeeds } = await import('./node-agent.js');
  const { repoRoot } = await import('./main.js');
  type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };
  const docs = parseAllDocuments(readFileSync(join(repoRoot, 'deploy', 'kubernetes', 'node-agent', 'rbac.yaml'), 'utf8')).map((d) => d.toJS() as { kind: string; metadata: { namespace?: string }; rules?: Rule[] });
  const clusterRules = docs.filter((d) => d.kind === 'ClusterRole').flatMap((d) => d.rules ?? []);
  const roles = docs.filter((d) => d.kind === 'Role');
  const grants = (rules: Rule[], n: { group: string; resource: string; subresource?: string; verb: string }): boolean =>
    rules.some((r) => r.apiGroups.includes(n.group) && r.verbs.includes(n.verb) && r.resources.includes(n.subresource ? `${n.resource}/${n.subresource}` : n.resource));
  for (const n of agentAccessNeeds) {
    const rules = n.namespace ? [...clusterRules, ...roles.filter((r) => r.metadata.namespace === n.namespace).flatMap((r) => r.rules ?? [])] : clusterRules;
    assert.ok(grants(rules, n), `rbac.yaml grants ${n.verb} ${n.resource}${n.subresource ? `/${n.subresource}` : ''}${n.namespace ? ` in ${n.namespace}` : ''}`);
  }
  assert.ok(agentAccessNeeds.some((n) => n.resource === 'serviceaccounts' && n.subresource === 'token' && n.verb === 'create'));
});
