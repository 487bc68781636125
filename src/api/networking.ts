// networking.k8s.io/v1 NetworkPolicy, defaulted and validated as kube-apiserver does
// (pkg/apis/networking/v1 defaults, pkg/apis/networking/validation). What a policy allows is decided,
// and enforced with nftables, in src/substrate/local/network-policy.ts.
import type { KObject } from './meta.js';
import type { KindDef } from './registry.js';
import { Validator } from './validation.js';
import { cidrContains, parseCidr } from '../util/cidr.js';

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export interface IPBlock {
  cidr: string;
  except?: string[];
}

/** one peer: pods by podSelector and/or namespaceSelector, or addresses by ipBlock */
export interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: IPBlock;
}

export type NetworkPolicyProtocol = 'TCP' | 'UDP' | 'SCTP';

export interface NetworkPolicyPort {
  /** TCP when left out */
  protocol?: NetworkPolicyProtocol;
  /** a number, or the name of a container port of the destination Pod; every port when left out */
  port?: number | string;
  /** with a numeric port: the range port..endPort */
  endPort?: number;
}

export interface NetworkPolicyIngressRule {
  from?: NetworkPolicyPeer[];
  ports?: NetworkPolicyPort[];
}

export interface NetworkPolicyEgressRule {
  to?: NetworkPolicyPeer[];
  ports?: NetworkPolicyPort[];
}

export type PolicyType = 'Ingress' | 'Egress';

export interface NetworkPolicySpec {
  podSelector?: LabelSelector;
  policyTypes?: PolicyType[];
  ingress?: NetworkPolicyIngressRule[];
  egress?: NetworkPolicyEgressRule[];
}

export interface NetworkPolicy extends KObject {
  spec?: NetworkPolicySpec;
}

const protocols: NetworkPolicyProtocol[] = ['TCP', 'UDP', 'SCTP'];
const policyTypes: PolicyType[] = ['Ingress', 'Egress'];

/**
 * The policy types of a spec: as written, or kube's default when none are (Ingress always, Egress
 * too when there are egress rules), so that a policy read before defaulting means the same.
 */
export function policyTypesOf(spec: NetworkPolicySpec | undefined): PolicyType[] {
  if (spec?.policyTypes?.length) return spec.policyTypes;
  return Array.isArray(spec?.egress) && spec.egress.length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
}

/** kube's IsValidPortName: an IANA_SVC_NAME */
function portNameErrors(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 15) errs.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(name)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.includes('--')) errs.push('must not contain consecutive hyphens');
  if (name.startsWith('-') || name.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

const portRange = 'must be between 1 and 65535, inclusive';

function validatePort(v: Validator, port: unknown, at: string): void {
  if (!v.object(at, port, true)) return;
  if (port.protocol !== undefined && port.protocol !== null) v.oneOf(`${at}.protocol`, port.protocol, protocols);
  const p = port.port as unknown;
  const end = port.endPort as unknown;
  const endIsInt = end !== undefined && end !== null && v.int(`${at}.endPort`, end);
  if (p === undefined || p === null) {
    if (endIsInt) v.invalid(`${at}.endPort`, end, 'may not be specified when `port` is not specified');
  } else if (typeof p === 'number') {
    if (!Number.isInteger(p)) v.wrongType(`${at}.port`, p, 'integer or string');
    else if (p < 1 || p > 65535) v.invalid(`${at}.port`, p, portRange);
    if (endIsInt) {
      // kube names the start port as the value here, not endPort
      if (Number.isInteger(p) && end < p) v.invalid(`${at}.endPort`, p, 'must be greater than or equal to `port`');
      if (end < 1 || end > 65535) v.invalid(`${at}.endPort`, end, portRange);
    }
  } else if (typeof p === 'string') {
    if (endIsInt) v.invalid(`${at}.endPort`, end, 'may not be specified when `port` is non-numeric');
    for (const msg of portNameErrors(p)) v.invalid(`${at}.port`, p, msg);
  } else v.wrongType(`${at}.port`, p, 'integer or string');
}

const cidrMessage = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

function validateIpBlock(v: Validator, block: unknown, at: string): void {
  if (!v.object(at, block, true)) return;
  if (block.cidr === undefined || block.cidr === null || block.cidr === '') return v.required(`${at}.cidr`);
  if (!v.string(`${at}.cidr`, block.cidr)) return;
  const cidr = parseCidr(block.cidr);
  if (!cidr) return v.invalid(`${at}.cidr`, block.cidr, cidrMessage);
  if (!v.stringArray(`${at}.except`, block.except)) return;
  block.except.forEach((e: string, i: number) => {
    const ex = parseCidr(e);
    if (!ex) return v.invalid(`${at}.except[${i}]`, e, cidrMessage);
    if (!cidrContains(cidr, { family: ex.family, value: ex.base }) || cidr.prefix >= ex.prefix) {
      v.invalid(`${at}.except[${i}]`, e, 'must be a strict subset of `cidr`');
    }
  });
}

function validatePeer(v: Validator, peer: unknown, at: string): void {
  if (!v.object(at, peer, true)) return;
  let peers = 0;
  for (const sel of ['podSelector', 'namespaceSelector'] as const) {
    if (peer[sel] === undefined || peer[sel] === null) continue;
    peers++;
    v.labelSelector(`${at}.${sel}`, peer[sel]);
  }
  const hasBlock = peer.ipBlock !== undefined && peer.ipBlock !== null;
  if (hasBlock) {
    peers++;
    validateIpBlock(v, peer.ipBlock, `${at}.ipBlock`);
  }
  if (peers === 0) v.required(at, 'Required value: must specify a peer');
  else if (peers > 1 && hasBlock) v.add(at, 'FieldValueForbidden', 'Forbidden: may not specify both ipBlock and another peer');
}

function validateRules(v: Validator, rules: unknown, at: string, peersField: 'from' | 'to'): void {
  if (!v.array(at, rules)) return;
  rules.forEach((rule: unknown, i: number) => {
    const r = `${at}[${i}]`;
    if (!v.object(r, rule, true)) return;
    if (v.array(`${r}.ports`, rule.ports)) rule.ports.forEach((p: unknown, j: number) => validatePort(v, p, `${r}.ports[${j}]`));
    const peers = rule[peersField] as unknown;
    if (v.array(`${r}.${peersField}`, peers)) peers.forEach((p: unknown, j: number) => validatePeer(v, p, `${r}.${peersField}[${j}]`));
  });
}

export function validateNetworkPolicySpec(v: Validator, spec: unknown): void {
  if (!v.object('spec', spec, true)) return;
  if (spec.podSelector === undefined || spec.podSelector === null) v.required('spec.podSelector');
  else v.labelSelector('spec.podSelector', spec.podSelector);
  validateRules(v, spec.ingress, 'spec.ingress', 'from');
  validateRules(v, spec.egress, 'spec.egress', 'to');
  const types = spec.policyTypes as unknown;
  if (!v.array('spec.policyTypes', types)) return;
  if (types.length > policyTypes.length) return v.invalid('spec.policyTypes', types, 'may not specify more than two policyTypes');
  types.forEach((t: unknown, i: number) => {
    if (!policyTypes.includes(t as PolicyType)) v.notSupported(`spec.policyTypes[${i}]`, t, policyTypes);
  });
}

export const NetworkPolicyKind: KindDef = {
  group: 'networking.k8s.io', version: 'v1', kind: 'NetworkPolicy', plural: 'networkpolicies', singular: 'networkpolicy', shortNames: ['netpol'],
  namespaced: true, hasStatus: false,
  default(obj) {
    obj.spec ??= {};
    const spec = obj.spec as Record<string, unknown>;
    if (typeof spec !== 'object' || Array.isArray(spec)) return;
    // podSelector is a struct in kube's types: a policy that leaves it out selects every Pod
    spec.podSelector ??= {};
    for (const list of [spec.ingress, spec.egress]) {
      if (!Array.isArray(list)) continue;
      for (const rule of list) {
        if (!rule || typeof rule !== 'object' || !Array.isArray(rule.ports)) continue;
        for (const p of rule.ports) if (p && typeof p === 'object') p.protocol ??= 'TCP';
      }
    }
    const types = spec.policyTypes;
    if (types === undefined || types === null || (Array.isArray(types) && types.length === 0)) spec.policyTypes = policyTypesOf(spec as NetworkPolicySpec);
  },
  validate(obj) {
    const v = new Validator();
    v.dnsSubdomain('metadata.name', obj.metadata.name);
    validateNetworkPolicySpec(v, obj.spec);
    return v.errors;
  },
};

export const networkingKinds: KindDef[] = [NetworkPolicyKind];
