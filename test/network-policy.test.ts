// NetworkPolicy as kubectl and the Python client see it against `skiff up`: Kubernetes' documented
// policies applied with kubectl (and re-applied: a strategic merge patch), printed as `kubectl get
// netpol` prints them, explained from the OpenAPI documents, written and read through
// NetworkingV1Api, and invalid ones refused with 422 naming the field.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { TestServer } from './harness.js';

/** the policies of https://kubernetes.io/docs/concepts/services-networking/network-policies/ */
const docs = `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: test-network-policy, namespace: default}
spec:
  podSelector:
    matchLabels: {role: db}
  policyTypes: [Ingress, Egress]
  ingress:
  - from:
    - ipBlock:
        cidr: 172.17.0.0/16
        except: [172.17.1.0/24]
    - namespaceSelector:
        matchLabels: {project: myproject}
    - podSelector:
        matchLabels: {role: frontend}
    ports:
    - {protocol: TCP, port: 6379}
  egress:
  - to:
    - ipBlock: {cidr: 10.0.0.0/24}
    ports:
    - {protocol: TCP, port: 5978}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: default-deny-ingress}
spec:
  podSelector: {}
  policyTypes: [Ingress]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-all-ingress}
spec:
  podSelector: {}
  ingress: [{}]
  policyTypes: [Ingress]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: default-deny-egress}
spec:
  podSelector: {}
  policyTypes: [Egress]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-all-egress}
spec:
  podSelector: {}
  egress: [{}]
  policyTypes: [Egress]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: default-deny-all}
spec:
  podSelector: {}
  policyTypes: [Ingress, Egress]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: multi-port-egress, namespace: default}
spec:
  podSelector:
    matchLabels: {role: db}
  policyTypes: [Egress]
  egress:
  - to:
    - ipBlock: {cidr: 10.0.0.0/24}
    ports:
    - {protocol: TCP, port: 32000, endPort: 32768}
`;

const collection = '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies';

describe('NetworkPolicy', () => {
  let s: TestServer;
  const ok = async (args: string[], input?: string): Promise<string> => {
    const r = await s.kubectl(args, input);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
  });

  it('kubectl applies the documented policies, lists them as netpol and reads them back defaulted', async () => {
    const applied = await ok(['apply', '-f', '-'], docs);
    for (const name of ['test-network-policy', 'default-deny-ingress', 'allow-all-ingress', 'default-deny-egress', 'allow-all-egress', 'default-deny-all', 'multi-port-egress']) {
      assert.match(applied, new RegExp(`networkpolicy.networking.k8s.io/${name} created`));
    }
    const table = (await ok(['get', 'netpol'])).trim().split('\n').map((l) => l.trim().split(/\s+/));
    assert.deepEqual(table[0], ['NAME', 'POD-SELECTOR', 'AGE']);
    assert.deepEqual(table.slice(1).map((r) => [r[0], r[1]]), [
      ['allow-all-egress', '<none>'], ['allow-all-ingress', '<none>'], ['default-deny-all', '<none>'], ['default-deny-egress', '<none>'],
      ['default-deny-ingress', '<none>'], ['multi-port-egress', 'role=db'], ['test-network-policy', 'role=db'],
    ]);
    const live = JSON.parse(await ok(['get', 'networkpolicy', 'test-network-policy', '-o', 'json']));
    const want = YAML.parseAllDocuments(docs)[0]?.toJSON() as { spec: unknown };
    assert.deepEqual(live.spec, want.spec);
    const multi = JSON.parse(await ok(['get', 'networkpolicies.networking.k8s.io/multi-port-egress', '-o', 'json']));
    assert.deepEqual(multi.spec.egress[0].ports, [{ protocol: 'TCP', port: 32000, endPort: 32768 }]);
    // kube's defaulting: Ingress is implied, Egress too when there are egress rules
    const bare = JSON.parse(await ok(['create', '-f', '-', '-o', 'json'], JSON.stringify({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'bare' }, spec: { egress: [{ ports: [{ port: 53, protocol: 'UDP' }, { port: 'dns-tcp' }] }] } })));
    assert.deepEqual(bare.spec, { podSelector: {}, egress: [{ ports: [{ port: 53, protocol: 'UDP' }, { port: 'dns-tcp', protocol: 'TCP' }] }], policyTypes: ['Ingress', 'Egress'] });
    await ok(['delete', 'netpol', 'bare']);
  });

  it('kubectl re-applies a changed policy (a strategic merge patch) and explains the kind from the OpenAPI documents', async () => {
    const changed = docs.split('---')[0]?.replace('port: 6379', 'port: 6380').replace('role: frontend', 'role: web') ?? '';
    assert.match(await ok(['apply', '-f', '-'], changed), /networkpolicy.networking.k8s.io\/test-network-policy configured/);
    const live = JSON.parse(await ok(['get', 'netpol', 'test-network-policy', '-o', 'json']));
    assert.deepEqual(live.spec.ingress[0].ports, [{ protocol: 'TCP', port: 6380 }]);
    assert.deepEqual(live.spec.ingress[0].from[2], { podSelector: { matchLabels: { role: 'web' } } });
    assert.equal(live.spec.ingress[0].from.length, 3);
    const explained = await ok(['explain', 'networkpolicy.spec.ingress.ports']);
    assert.match(explained, /endPort\s+<integer>/);
    const resources = (await ok(['api-resources', '--api-group=networking.k8s.io', '--no-headers'])).trim().split(/\s+/);
    assert.deepEqual(resources, ['networkpolicies', 'netpol', 'networking.k8s.io/v1', 'true', 'NetworkPolicy']);
  });

  it('kubectl is refused an invalid policy, with the field named', async () => {
    const bad = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'bad' }, spec: { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/8' }, podSelector: {} }] }] } };
    const r = await s.kubectl(['apply', '-f', '-'], JSON.stringify(bad));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /The NetworkPolicy "bad" is invalid: spec\.ingress\[0\]\.from\[0\]: Forbidden: may not specify both ipBlock and another peer/);
  });

  it('the Python client\'s NetworkingV1Api creates, lists, reads, patches and deletes, and is refused an invalid one', async () => {
    const r = await s.python(`
import json
from kubernetes import client, config
config.load_kube_config()
net = client.NetworkingV1Api()
out = {}
sel = client.V1LabelSelector
body = client.V1NetworkPolicy(
    metadata=client.V1ObjectMeta(name='py-policy'),
    spec=client.V1NetworkPolicySpec(
        pod_selector=sel(match_labels={'app': 'web'}),
        ingress=[client.V1NetworkPolicyIngressRule(
            _from=[client.V1NetworkPolicyPeer(namespace_selector=sel(match_labels={'project': 'x'}), pod_selector=sel(match_labels={'role': 'client'}))],
            ports=[client.V1NetworkPolicyPort(port='http'), client.V1NetworkPolicyPort(port=9000, end_port=9100, protocol='UDP')])]))
created = net.create_namespaced_network_policy('default', body)
out['types'] = created.spec.policy_types
out['listed'] = sorted(p.metadata.name for p in net.list_namespaced_network_policy('default').items)
out['everywhere'] = sorted(f'{p.metadata.namespace}/{p.metadata.name}' for p in net.list_network_policy_for_all_namespaces(label_selector='').items if p.metadata.name == 'py-policy')
got = net.read_namespaced_network_policy('py-policy', 'default')
out['ports'] = [[p.port, p.end_port, p.protocol] for p in got.spec.ingress[0].ports]
out['peer'] = [got.spec.ingress[0]._from[0].namespace_selector.match_labels, got.spec.ingress[0]._from[0].pod_selector.match_labels]
patched = net.patch_namespaced_network_policy('py-policy', 'default', {'spec': {'policyTypes': ['Ingress', 'Egress']}})
out['patched'] = patched.spec.policy_types
try:
    net.create_namespaced_network_policy('default', {'metadata': {'name': 'bad'}, 'spec': {'podSelector': {}, 'egress': [{'ports': [{'port': 70000}, {'port': 'http', 'endPort': 90}]}]}})
except client.ApiException as e:
    out['bad'] = [e.status, sorted(c['field'] for c in json.loads(e.body)['details']['causes'])]
net.delete_namespaced_network_policy('py-policy', 'default')
out['after'] = 'py-policy' in [p.metadata.name for p in net.list_namespaced_network_policy('default').items]
print(json.dumps(out))
`);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? 'null');
    assert.deepEqual(out.types, ['Ingress']);
    assert.ok(out.listed.includes('py-policy') && out.listed.includes('test-network-policy'), JSON.stringify(out.listed));
    assert.deepEqual(out.everywhere, ['default/py-policy']);
    assert.deepEqual(out.ports, [['http', null, 'TCP'], [9000, 9100, 'UDP']]);
    assert.deepEqual(out.peer, [{ project: 'x' }, { role: 'client' }]);
    assert.deepEqual(out.patched, ['Ingress', 'Egress']);
    assert.deepEqual(out.bad, [422, ['spec.egress[0].ports[0].port', 'spec.egress[0].ports[1].endPort']]);
    assert.equal(out.after, false);
  });

  it('refuses each invalid policy with 422 and a cause naming the field', async () => {
    const cases: [unknown, string, string][] = [
      [{ podSelector: {}, policyTypes: ['Ingress', 'Sideways'] }, 'spec.policyTypes[1]', 'FieldValueNotSupported'],
      [{ podSelector: {}, ingress: [{ ports: [{ protocol: 'ICMP' }] }] }, 'spec.ingress[0].ports[0].protocol', 'FieldValueNotSupported'],
      [{ podSelector: {}, ingress: [{ ports: [{ port: 'Not_A_Name' }] }] }, 'spec.ingress[0].ports[0].port', 'FieldValueInvalid'],
      [{ podSelector: {}, egress: [{ ports: [{ port: 100, endPort: 99 }] }] }, 'spec.egress[0].ports[0].endPort', 'FieldValueInvalid'],
      [{ podSelector: {}, egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['192.168.0.0/16'] } }] }] }, 'spec.egress[0].to[0].ipBlock.except[0]', 'FieldValueInvalid'],
      [{ podSelector: {}, egress: [{ to: [{ ipBlock: { cidr: '10.0.0.300/8' } }] }] }, 'spec.egress[0].to[0].ipBlock.cidr', 'FieldValueInvalid'],
      [{ podSelector: {}, ingress: [{ from: [{ namespaceSelector: {}, ipBlock: { cidr: '10.0.0.0/8' } }] }] }, 'spec.ingress[0].from[0]', 'FieldValueForbidden'],
      [{ podSelector: { matchExpressions: [{ key: 'app', operator: 'In' }] } }, 'spec.podSelector.matchExpressions[0].values', 'FieldValueRequired'],
      [{ podSelector: {}, ingress: [{ from: [{}] }] }, 'spec.ingress[0].from[0]', 'FieldValueRequired'],
    ];
    for (const [spec, field, reason] of cases) {
      const res = await s.req('POST', collection, { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'bad' }, spec });
      assert.equal(res.status, 422, `${field}: ${res.text}`);
      assert.equal(res.body.reason, 'Invalid');
      assert.deepEqual(res.body.details.causes.map((c: { field: string; reason: string }) => [c.field, c.reason]), [[field, reason]], res.text);
      assert.match(res.body.message, new RegExp(`^NetworkPolicy\\.networking\\.k8s\\.io "bad" is invalid: ${field.replace(/[.[\]]/g, '\\$&')}: `));
    }
  });
});
