import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from './meta.js';
import { NetworkPolicyKind } from './networking.js';

const policy = (spec: unknown, name = 'p'): KObject => ({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace: 'team' }, spec });

/** the errors of an object after defaulting, as the API server checks it on create */
function errors(obj: KObject): { field: string; type: string; message: string }[] {
  NetworkPolicyKind.default?.(obj);
  return NetworkPolicyKind.validate?.(obj) ?? [];
}
const fields = (obj: KObject): string[] => errors(obj).map((e) => e.field);

describe('NetworkPolicy defaulting', () => {
  it('fills podSelector, each port\'s protocol and policyTypes as kube-apiserver does', () => {
    const obj = policy({ egress: [{ ports: [{ port: 53, protocol: 'UDP' }, { port: 80 }] }] });
    NetworkPolicyKind.default?.(obj);
    assert.deepEqual(obj.spec, { podSelector: {}, egress: [{ ports: [{ port: 53, protocol: 'UDP' }, { port: 80, protocol: 'TCP' }] }], policyTypes: ['Ingress', 'Egress'] });
    const bare = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'deny', namespace: 'team' } } as KObject;
    NetworkPolicyKind.default?.(bare);
    assert.deepEqual(bare.spec, { podSelector: {}, policyTypes: ['Ingress'] });
    const egressOnly = policy({ podSelector: {}, policyTypes: ['Egress'], ingress: [{}] });
    NetworkPolicyKind.default?.(egressOnly);
    assert.deepEqual(egressOnly.spec.policyTypes, ['Egress']);
  });
});

describe('NetworkPolicy validation', () => {
  it('accepts Kubernetes\' documented examples', () => {
    const docs = [
      { podSelector: {}, policyTypes: ['Ingress'] },
      { podSelector: {}, ingress: [{}], policyTypes: ['Ingress'] },
      { podSelector: {}, policyTypes: ['Egress'] },
      { podSelector: {}, egress: [{}], policyTypes: ['Egress'] },
      { podSelector: {}, policyTypes: ['Ingress', 'Egress'] },
      {
        podSelector: { matchLabels: { role: 'db' } }, policyTypes: ['Ingress', 'Egress'],
        ingress: [{
          from: [{ ipBlock: { cidr: '172.17.0.0/16', except: ['172.17.1.0/24'] } }, { namespaceSelector: { matchLabels: { project: 'myproject' } } }, { podSelector: { matchLabels: { role: 'frontend' } } }],
          ports: [{ protocol: 'TCP', port: 6379 }],
        }],
        egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/24' } }], ports: [{ protocol: 'TCP', port: 5978 }] }],
      },
      { podSelector: { matchLabels: { role: 'db' } }, egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/24' } }], ports: [{ protocol: 'TCP', port: 32000, endPort: 32768 }] }] },
      { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['a', 'b'] }] }, podSelector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] } }], ports: [{ port: 'http' }, { protocol: 'SCTP' }] }] },
      { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '2001:db8::/32', except: ['2001:db8:1::/48'] } }] }] },
    ];
    for (const spec of docs) assert.deepEqual(errors(policy(spec)), [], JSON.stringify(spec));
  });

  it('names each bad field, in kube-apiserver\'s words', () => {
    const cases: [string, unknown, string, string][] = [
      ['a policy type that is neither', { policyTypes: ['Ingress', 'Sideways'] }, 'spec.policyTypes[1]', 'Unsupported value: "Sideways": supported values: "Ingress", "Egress"'],
      ['three policy types', { policyTypes: ['Ingress', 'Egress', 'Ingress'] }, 'spec.policyTypes', 'may not specify more than two policyTypes'],
      ['a protocol other than TCP, UDP and SCTP', { ingress: [{ ports: [{ protocol: 'ICMP', port: 1 }] }] }, 'spec.ingress[0].ports[0].protocol', 'Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"'],
      ['port 0', { ingress: [{ ports: [{ port: 0 }] }] }, 'spec.ingress[0].ports[0].port', 'Invalid value: 0: must be between 1 and 65535, inclusive'],
      ['port 65536', { egress: [{ ports: [{ port: 65536 }] }] }, 'spec.egress[0].ports[0].port', 'must be between 1 and 65535, inclusive'],
      ['a port name in capitals', { ingress: [{ ports: [{ port: 'HTTP' }] }] }, 'spec.ingress[0].ports[0].port', 'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'],
      ['a port name of digits', { ingress: [{ ports: [{ port: '8080' }] }] }, 'spec.ingress[0].ports[0].port', 'must contain at least one letter (a-z)'],
      ['a port name over 15 characters', { ingress: [{ ports: [{ port: 'a-very-long-port-name' }] }] }, 'spec.ingress[0].ports[0].port', 'must be no more than 15 characters'],
      ['endPort below port', { egress: [{ ports: [{ port: 32000, endPort: 31000 }] }] }, 'spec.egress[0].ports[0].endPort', 'Invalid value: 32000: must be greater than or equal to `port`'],
      ['endPort with a named port', { egress: [{ ports: [{ port: 'http', endPort: 90 }] }] }, 'spec.egress[0].ports[0].endPort', 'may not be specified when `port` is non-numeric'],
      ['endPort without a port', { egress: [{ ports: [{ endPort: 90 }] }] }, 'spec.egress[0].ports[0].endPort', 'may not be specified when `port` is not specified'],
      ['endPort over 65535', { egress: [{ ports: [{ port: 80, endPort: 70000 }] }] }, 'spec.egress[0].ports[0].endPort', 'Invalid value: 70000: must be between 1 and 65535, inclusive'],
      ['a CIDR that is not one', { ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/33' } }] }] }, 'spec.ingress[0].from[0].ipBlock.cidr', 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'],
      ['an address without a prefix', { ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.1' } }] }] }, 'spec.ingress[0].from[0].ipBlock.cidr', 'must be a valid CIDR value'],
      ['an ipBlock without cidr', { ingress: [{ from: [{ ipBlock: { except: ['10.0.0.0/8'] } }] }] }, 'spec.ingress[0].from[0].ipBlock.cidr', 'Required value'],
      ['an except outside cidr', { egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.1.0.0/24'] } }] }] }, 'spec.egress[0].to[0].ipBlock.except[0]', 'Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`'],
      ['an except as wide as cidr', { egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.0.0.0/16'] } }] }] }, 'spec.egress[0].to[0].ipBlock.except[0]', 'must be a strict subset of `cidr`'],
      ['an except that is not a CIDR', { egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.0.0.300/24'] } }] }] }, 'spec.egress[0].to[0].ipBlock.except[0]', 'must be a valid CIDR value'],
      ['ipBlock beside a podSelector', { ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/8' }, podSelector: {} }] }] }, 'spec.ingress[0].from[0]', 'Forbidden: may not specify both ipBlock and another peer'],
      ['ipBlock beside a namespaceSelector', { egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/8' }, namespaceSelector: {} }] }] }, 'spec.egress[0].to[0]', 'may not specify both ipBlock and another peer'],
      ['an empty peer', { ingress: [{ from: [{}] }] }, 'spec.ingress[0].from[0]', 'Required value: must specify a peer'],
      ['a selector operator kube does not know', { podSelector: { matchExpressions: [{ key: 'app', operator: 'Like', values: ['a'] }] } }, 'spec.podSelector.matchExpressions[0].operator', 'Invalid value: "Like": not a valid selector operator'],
      ['In without values', { ingress: [{ from: [{ podSelector: { matchExpressions: [{ key: 'app', operator: 'In' }] } }] }] }, 'spec.ingress[0].from[0].podSelector.matchExpressions[0].values', "Required value: must be specified when `operator` is 'In' or 'NotIn'"],
      ['Exists with values', { ingress: [{ from: [{ namespaceSelector: { matchExpressions: [{ key: 'app', operator: 'Exists', values: ['x'] }] } }] }] }, 'spec.ingress[0].from[0].namespaceSelector.matchExpressions[0].values', "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"],
      ['a selector key that is not a label key', { podSelector: { matchExpressions: [{ key: 'a/b/c', operator: 'Exists' }] } }, 'spec.podSelector.matchExpressions[0].key', 'a qualified name must consist of'],
      ['a selector value that is not a label value', { podSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['-bad-'] }] } }, 'spec.podSelector.matchExpressions[0].values[0]', 'a valid label must be an empty string or consist of'],
      ['a matchLabels key that is not a label key', { podSelector: { matchLabels: { '-app': 'x' } } }, 'spec.podSelector.matchLabels', 'Invalid value: "-app": name part must consist of'],
      ['a matchLabels value that is not a label value', { podSelector: { matchLabels: { app: 'a b' } } }, 'spec.podSelector.matchLabels', 'Invalid value: "a b": a valid label must be'],
      ['a ports list that is an object', { ingress: [{ ports: { port: 80 } }] }, 'spec.ingress[0].ports', 'expected array'],
      ['a port that is neither number nor name', { ingress: [{ ports: [{ port: true }] }] }, 'spec.ingress[0].ports[0].port', 'expected integer or string'],
    ];
    for (const [what, spec, field, message] of cases) {
      const errs = errors(policy({ podSelector: {}, ...(spec as object) }));
      const found = errs.find((e) => e.field === field);
      assert.ok(found, `${what}: no error at ${field} in ${JSON.stringify(errs)}`);
      assert.ok(found.message.includes(message), `${what}: ${JSON.stringify(found.message)} does not say ${JSON.stringify(message)}`);
    }
  });

  it('refuses a name that is not a DNS subdomain, and a spec that is no object', () => {
    assert.deepEqual(fields(policy({ podSelector: {} }, 'Not_A_Name')), ['metadata.name']);
    assert.deepEqual(errors({ ...policy(undefined), spec: 'everything' }).map((e) => [e.field, e.type]), [['spec', 'FieldValueTypeInvalid']]);
  });

  it('requires podSelector when defaulting did not fill it (the stored form always has one)', () => {
    assert.deepEqual(NetworkPolicyKind.validate?.(policy({ ingress: [] }))?.map((e) => e.message), ['Required value']);
  });
});
