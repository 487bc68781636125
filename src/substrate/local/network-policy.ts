// NetworkPolicy enforcement when every Pod has its own network namespace: the cluster's Pods,
// Namespaces and NetworkPolicies become one nftables table for `nft -f -`. The kernel then decides
// each new connection as Kubernetes defines it: a packet from Pod S to Pod D passes when S's egress
// allows it and D's ingress allows it; a Pod no policy isolates allows everything (or, with tenancy,
// only its own namespace's Pods); Pods reach the host only on Skiff's own ports. `allowed` answers
// the same question from the policies directly: it is the reference the ruleset is tested against.
//
// The table, in the order a packet meets it:
//   input / forward   base chains: anti-spoofing (a Pod's interface carries only that Pod's address),
//                     conntrack (replies and related ICMP pass), then the decision
//   out_<ns>_<pod>    an egress-isolated Pod: jumps to each selecting policy's egress chain, else deny
//   np-out_<ns>_<p>   a policy's egress rules; a match goes on to the destination's ingress (to-pod)
//   to-pod            a verdict map from the destination address to its ingress chain, else accept
//   in_<ns>_<pod>     an ingress-isolated Pod: jumps to each selecting policy's ingress chain, else deny
//   np-in_<ns>_<p>    a policy's ingress rules; a match accepts
//   ns_<ns>           a Pod no policy isolates, with tenancy: its namespace's Pods only
//   deny              TCP reset, or ICMP administratively prohibited: a refused connect fails at once
// Every chain an egress-allowed packet reaches after `goto to-pod` ends in a verdict, so `goto` never
// falls back into a policy chain.
import { createHash } from 'node:crypto';
import type { LabelSelector, NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort } from '../../api/networking.js';
import { policyTypesOf } from '../../api/networking.js';
import { matchLabels, selectorFromObject } from '../../store/selectors.js';
import { cidrEnd, formatIpv4, parseCidr, parseIp } from '../../util/cidr.js';

export interface PolicyPod {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  /** the Pod's IPv4 address */
  ip: string;
  /** the host side of its veth (<= 15 chars), where its packets enter the host */
  hostIf: string;
  /** all containers' ports, for named ports */
  ports: { name?: string; containerPort: number; protocol?: string }[];
}

export interface PolicyNamespace {
  name: string;
  labels: Record<string, string>;
}

export interface RulesetInput {
  /** nft table name, in family inet, e.g. "skiff" */
  table: string;
  pods: PolicyPod[];
  namespaces: PolicyNamespace[];
  /** the objects as stored */
  policies: NetworkPolicy[];
  /** the host's address on the Pod network (Skiff listens there) */
  nodeIp: string;
  /** TCP ports on nodeIp Pods may reach (Skiff's API, in-cluster HTTPS, Katib DB...) */
  nodePorts: number[];
  /** e.g. "10.89.0.0/16" */
  podCidr: string;
  /** true with tenancy: a Pod no policy selects takes traffic only from its own namespace */
  denyAcrossNamespaces: boolean;
}

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

// ---------------------------------------------------------------- the policies, resolved

/** the label kube-apiserver puts on every Namespace, which namespaceSelectors commonly name */
const namespaceNameLabel = 'kubernetes.io/metadata.name';

/**
 * Whether a selector selects `labels`. A selector the API server would have refused (an unknown
 * operator, In without values) selects nothing: a policy never allows more than it says.
 */
function selects(sel: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!sel || typeof sel !== 'object') return false;
  for (const e of sel.matchExpressions ?? []) {
    const n = e.values?.length ?? 0;
    if ((e.operator === 'In' || e.operator === 'NotIn') && n === 0) return false;
    if ((e.operator === 'Exists' || e.operator === 'DoesNotExist') && n > 0) return false;
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(e.operator)) return false;
  }
  return matchLabels(selectorFromObject(sel), labels);
}

interface Pod extends PolicyPod {
  /** the address as a number */
  addr: number;
}

interface Policy {
  namespace: string;
  name: string;
  /** `ns/name`, for comments */
  id: string;
  obj: NetworkPolicy;
  ingress: boolean;
  egress: boolean;
  /** the Pods its podSelector selects, sorted */
  selected: Pod[];
}

const byNamespaceName = <T extends { namespace: string; name: string }>(a: T, b: T): number =>
  a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

function ipv4(s: string, what: string): number {
  const ip = parseIp(s);
  if (!ip || ip.family !== 4) throw new Error(`${what}: ${JSON.stringify(s)} is not an IPv4 address`);
  return Number(ip.value);
}

/** the input checked and indexed once; both the ruleset and the reference evaluator read it */
class Cluster {
  readonly pods: Pod[];
  readonly byAddr = new Map<number, Pod>();
  readonly policies: Policy[];
  readonly cidr: [number, number];
  readonly node: number;
  private readonly nsLabels = new Map<string, Record<string, string>>();

  constructor(input: RulesetInput) {
    const cidr = parseCidr(input.podCidr);
    if (!cidr || cidr.family !== 4) throw new Error(`podCidr: ${JSON.stringify(input.podCidr)} is not an IPv4 CIDR`);
    this.cidr = [Number(cidr.base), Number(cidrEnd(cidr))];
    this.node = ipv4(input.nodeIp, 'nodeIp');
    for (const p of input.nodePorts) if (!Number.isInteger(p) || p < 1 || p > 65535) throw new Error(`nodePorts: ${p} is not a port`);
    const ifs = new Set<string>();
    this.pods = input.pods.map((p) => {
      const at = `Pod ${p.namespace}/${p.name}`;
      const addr = ipv4(p.ip, at);
      if (!this.inCidr(addr)) throw new Error(`${at}: ${p.ip} is outside podCidr ${input.podCidr}`);
      if (this.byAddr.has(addr)) throw new Error(`${at}: ${p.ip} is another Pod's address too`);
      // an interface name goes into the ruleset between quotes
      if (!/^[A-Za-z0-9_.-]{1,15}$/.test(p.hostIf)) throw new Error(`${at}: ${JSON.stringify(p.hostIf)} is not an interface name`);
      if (ifs.has(p.hostIf)) throw new Error(`${at}: interface ${p.hostIf} is another Pod's too`);
      ifs.add(p.hostIf);
      const pod = { ...p, addr };
      this.byAddr.set(addr, pod);
      return pod;
    }).sort(byNamespaceName);
    for (const ns of input.namespaces) this.nsLabels.set(ns.name, ns.labels);
    this.policies = input.policies.map((obj): Policy => {
      const namespace = obj.metadata.namespace ?? '';
      const name = obj.metadata.name ?? '';
      const types = policyTypesOf(obj.spec);
      return {
        namespace, name, id: `${namespace}/${name}`, obj,
        ingress: types.includes('Ingress'), egress: types.includes('Egress'),
        selected: this.pods.filter((p) => p.namespace === namespace && selects(obj.spec?.podSelector ?? {}, p.labels)),
      };
    }).sort(byNamespaceName);
  }

  inCidr(addr: number): boolean {
    return addr >= this.cidr[0] && addr <= this.cidr[1];
  }

  namespaceLabels(ns: string): Record<string, string> {
    return { ...this.nsLabels.get(ns), [namespaceNameLabel]: ns };
  }

  /** the policies that isolate a Pod in one direction */
  isolating(pod: Pod, direction: 'ingress' | 'egress'): Policy[] {
    return this.policies.filter((p) => p[direction] && p.selected.includes(pod));
  }

  /** the Pods a selector peer names, from the policy's namespace or those its namespaceSelector selects */
  peerPods(peer: NetworkPolicyPeer, policyNs: string): Pod[] {
    if (peer.ipBlock || (!peer.podSelector && !peer.namespaceSelector)) return [];
    return this.pods.filter((p) =>
      (peer.namespaceSelector ? selects(peer.namespaceSelector, this.namespaceLabels(p.namespace)) : p.namespace === policyNs)
      && (peer.podSelector ? selects(peer.podSelector, p.labels) : true));
  }
}

/** a port entry's protocol: TCP when left out */
const protocolOf = (p: NetworkPolicyPort): Protocol => (p.protocol === 'UDP' || p.protocol === 'SCTP' ? p.protocol : 'TCP');

/** the container ports of `pod` a named port entry means (name and protocol both match) */
function namedPorts(pod: PolicyPod, name: string, protocol: Protocol): number[] {
  return pod.ports.filter((c) => c.name === name && (c.protocol ?? 'TCP') === protocol).map((c) => c.containerPort);
}

// ---------------------------------------------------------------- the reference evaluator

/** whether an ipBlock holds an address: inside cidr, outside every except (IPv4 blocks only hold IPv4) */
function blockHolds(block: { cidr: string; except?: string[] }, addr: number): boolean {
  const inside = (s: string): boolean => {
    const c = parseCidr(s);
    return c !== undefined && c.family === 4 && addr >= Number(c.base) && addr <= Number(cidrEnd(c));
  };
  return inside(block.cidr) && !(block.except ?? []).some(inside);
}

function peersAllow(c: Cluster, peers: NetworkPolicyPeer[] | undefined, policyNs: string, addr: number, pod: Pod | undefined): boolean {
  if (!peers || peers.length === 0) return true;
  return peers.some((peer) => {
    if (peer.ipBlock) return !peer.podSelector && !peer.namespaceSelector && blockHolds(peer.ipBlock, addr);
    return pod !== undefined && c.peerPods(peer, policyNs).includes(pod);
  });
}

function portsAllow(ports: NetworkPolicyPort[] | undefined, dst: Pod | undefined, port: number, proto: Protocol | 'ICMP'): boolean {
  if (!ports || ports.length === 0) return true;
  return ports.some((p) => {
    if (protocolOf(p) !== proto) return false;
    if (p.port === undefined || p.port === null) return true;
    if (typeof p.port === 'number') return port >= p.port && port <= (p.endPort ?? p.port);
    return dst !== undefined && namedPorts(dst, p.port, proto).includes(port);
  });
}

/**
 * Whether a new connection (or datagram) from address `src` to `dst` on `port` is let through, as
 * Kubernetes defines it, given the host's hooks: the host's own traffic is never filtered; a Pod
 * reaches nodeIp only on nodePorts (TCP); from outside podCidr nothing is restricted; otherwise the
 * source Pod's egress and the destination Pod's ingress must both allow it. `ICMP` stands for every
 * protocol without ports: only a rule that lists no ports lets it through.
 */
export function allowed(input: RulesetInput, src: string, dst: string, port: number, proto: Protocol | 'ICMP' = 'TCP'): boolean {
  const c = new Cluster(input);
  const s = ipv4(src, 'src');
  const d = ipv4(dst, 'dst');
  // a Pod's own address stays inside its namespace; the host sends through its output hook
  if (s === d || s === c.node || !c.inCidr(s)) return true;
  if (d === c.node) return proto === 'TCP' && input.nodePorts.includes(port);
  const from = c.byAddr.get(s);
  const to = c.byAddr.get(d);
  if (from) {
    const egress = c.isolating(from, 'egress');
    const ok = egress.length === 0 || egress.some((p) => (p.obj.spec?.egress ?? []).some((r) => peersAllow(c, r.to, p.namespace, d, to) && portsAllow(r.ports, to, port, proto)));
    if (!ok) return false;
  }
  if (!to) return true;
  const ingress = c.isolating(to, 'ingress');
  if (ingress.length === 0) return !input.denyAcrossNamespaces || from?.namespace === to.namespace;
  return ingress.some((p) => (p.obj.spec?.ingress ?? []).some((r) => peersAllow(c, r.from, p.namespace, s, from) && portsAllow(r.ports, to, port, proto)));
}

// ---------------------------------------------------------------- address and port sets

type Range = [number, number];

/** sorted, disjoint, adjacent ones joined: what an nft interval set takes */
function merge(ranges: Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: Range[] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function subtract(ranges: Range[], cut: Range[]): Range[] {
  let out = merge(ranges);
  for (const [clo, chi] of merge(cut)) {
    out = out.flatMap(([lo, hi]): Range[] => {
      if (chi < lo || clo > hi) return [[lo, hi]];
      const parts: Range[] = [];
      if (lo < clo) parts.push([lo, clo - 1]);
      if (chi < hi) parts.push([chi + 1, hi]);
      return parts;
    });
  }
  return out;
}

function cidrRange(s: string): Range | undefined {
  const c = parseCidr(s);
  return c && c.family === 4 ? [Number(c.base), Number(cidrEnd(c))] : undefined;
}

/** an ipBlock's IPv4 addresses: cidr minus except (an IPv6 block holds none a Pod can use) */
function blockRanges(block: { cidr: string; except?: string[] }): Range[] {
  const whole = cidrRange(block.cidr);
  if (!whole) return [];
  return subtract([whole], (block.except ?? []).map(cidrRange).filter((r): r is Range => r !== undefined));
}

/** `10.0.0.0/24` when a range is one aligned block, else `10.0.0.1-10.0.0.5` */
function formatRange([lo, hi]: Range): string {
  if (lo === hi) return formatIpv4(lo);
  const size = hi - lo + 1;
  if ((size & (size - 1)) === 0 && lo % size === 0) return `${formatIpv4(lo)}/${32 - Math.log2(size)}`;
  return `${formatIpv4(lo)}-${formatIpv4(hi)}`;
}

const portText = ([lo, hi]: Range): string => (lo === hi ? String(lo) : `${lo}-${hi}`);

/** `{ a, b }`, or `a` alone */
function set(items: string[]): string {
  return items.length === 1 ? (items[0] as string) : `{ ${items.join(', ')} }`;
}

const nftProto: Record<Protocol, string> = { TCP: 'tcp', UDP: 'udp', SCTP: 'sctp' };
const protoOrder: Protocol[] = ['TCP', 'UDP', 'SCTP'];
const allPorts: Range = [0, 65535];

/** a match on protocol and destination port: `tcp dport { 80, 443 }`, or a concatenation across protocols */
function portMatch(byProto: Map<Protocol, Range[]>): string {
  const protos = protoOrder.filter((p) => byProto.has(p));
  if (protos.length === 1) {
    const proto = protos[0] as Protocol;
    const ranges = merge(byProto.get(proto) ?? []);
    if (ranges.length === 1 && ranges[0]?.[0] === 0 && ranges[0][1] === 65535) return `meta l4proto ${nftProto[proto]}`;
    return `${nftProto[proto]} dport ${set(ranges.map(portText))}`;
  }
  const items = protos.flatMap((p) => merge(byProto.get(p) ?? []).map((r) => `${nftProto[p]} . ${portText(r)}`));
  return `meta l4proto . th dport { ${items.join(', ')} }`;
}

/** the numeric port entries of a rule, by protocol (an entry without a port is every port) */
function numericPorts(ports: NetworkPolicyPort[]): Map<Protocol, Range[]> {
  const out = new Map<Protocol, Range[]>();
  for (const p of ports) {
    if (typeof p.port === 'string') continue;
    const range: Range = typeof p.port === 'number' ? [p.port, p.endPort ?? p.port] : allPorts;
    // an endPort below port (which validation refuses) is an empty range
    if (range[1] < range[0]) continue;
    out.set(protocolOf(p), [...(out.get(protocolOf(p)) ?? []), range]);
  }
  return out;
}

/** `ip daddr . meta l4proto . th dport { … }` elements: the named port entries resolved on each Pod */
function namedPortElements(ports: NetworkPolicyPort[], pods: Pod[]): string[] {
  const out: string[] = [];
  for (const pod of [...pods].sort((a, b) => a.addr - b.addr)) {
    for (const proto of protoOrder) {
      const numbers = ports.filter((p) => typeof p.port === 'string' && protocolOf(p) === proto).flatMap((p) => namedPorts(pod, p.port as string, proto));
      for (const r of merge(numbers.map((n): Range => [n, n]))) out.push(`${formatIpv4(pod.addr)} . ${nftProto[proto]} . ${portText(r)}`);
    }
  }
  return out;
}

// ---------------------------------------------------------------- the ruleset

/** a chain name nft reads as one identifier; a long one is cut and told apart by a hash */
function chainName(prefix: string, ns: string, name: string): string {
  const full = `${prefix}_${ns}_${name}`;
  if (full.length <= 200) return full;
  return `${full.slice(0, 190)}_${createHash('sha256').update(full).digest('hex').slice(0, 8)}`;
}

/** nft keeps comments up to 128 bytes; names are ASCII */
const comment = (text: string): string => `comment "${text.slice(0, 128)}"`;

interface Chain {
  name: string;
  head?: string;
  rules: string[];
}

/** the rules of one policy direction: `match verdict`, one per rule and kind of port */
function policyRules(c: Cluster, p: Policy, direction: 'ingress' | 'egress', verdict: string): string[] {
  const out: string[] = [];
  const rules = direction === 'ingress' ? p.obj.spec?.ingress ?? [] : p.obj.spec?.egress ?? [];
  const addrField = direction === 'ingress' ? 'ip saddr' : 'ip daddr';
  const tail = `${verdict} ${comment(p.id)}`;
  for (const rule of rules) {
    const peers = (direction === 'ingress' ? (rule as { from?: NetworkPolicyPeer[] }).from : (rule as { to?: NetworkPolicyPeer[] }).to) ?? [];
    const ports = rule.ports ?? [];
    // the peers' addresses; undefined when the rule names none (every address)
    let addrs: Range[] | undefined;
    let peerPods: Pod[] = c.pods;
    if (peers.length > 0) {
      const ranges: Range[] = [];
      const pods = new Set<Pod>();
      for (const peer of peers) {
        if (peer.ipBlock) {
          if (peer.podSelector || peer.namespaceSelector) continue;
          const block = blockRanges(peer.ipBlock);
          ranges.push(...block);
          for (const pod of c.pods) if (block.some(([lo, hi]) => pod.addr >= lo && pod.addr <= hi)) pods.add(pod);
        } else {
          for (const pod of c.peerPods(peer, p.namespace)) {
            ranges.push([pod.addr, pod.addr]);
            pods.add(pod);
          }
        }
      }
      addrs = merge(ranges);
      if (addrs.length === 0) continue;
      peerPods = [...pods];
    }
    const addrMatch = addrs ? `${addrField} ${set(addrs.map(formatRange))} ` : '';
    if (ports.length === 0) {
      out.push(`${addrMatch}${tail}`);
      continue;
    }
    const numeric = numericPorts(ports);
    if (numeric.size > 0) out.push(`${addrMatch}${portMatch(numeric)} ${tail}`);
    // a named port is a container port of the destination: the Pods this policy selects for
    // ingress, the peers' Pods for egress (whose addresses the elements name, so no other match)
    const named = namedPortElements(ports, direction === 'ingress' ? p.selected : peerPods);
    if (named.length > 0) out.push(`${direction === 'ingress' ? addrMatch : ''}ip daddr . meta l4proto . th dport { ${named.join(', ')} } ${tail}`);
  }
  return out;
}

/** The nftables script (`nft -f -`) that enforces `input.policies`: replaces the whole table at once. */
export function networkPolicyRuleset(input: RulesetInput): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(input.table)) throw new Error(`table: ${JSON.stringify(input.table)} is not an nft table name`);
  const c = new Cluster(input);
  const chains: Chain[] = [];
  const podCidr = formatRange(c.cidr);
  const node = formatIpv4(c.node);

  const guard: string[] = [];
  if (c.pods.length > 0) {
    // Pods have IPv4 addresses only: IPv6 from them would pass around every IPv4 rule
    guard.push('iifname @pod_ifs meta nfproto ipv6 drop');
    // before conntrack: a forged source must not ride on another Pod's connection
    guard.push('iifname @pod_ifs iifname . ip saddr != @pod_sources drop');
  }

  const nodePorts = merge(input.nodePorts.map((p): Range => [p, p]));
  chains.push({
    name: 'input',
    head: 'type filter hook input priority filter; policy accept;',
    rules: [
      ...guard,
      'iif "lo" accept',
      `ip saddr != ${podCidr} accept`,
      // a Pod address from anywhere but a known Pod's link: forged, or a Pod this ruleset does not know yet
      'iifname != @pod_ifs drop',
      'ct state established,related accept',
      'ct state invalid drop',
      ...(nodePorts.length > 0 ? [`ip daddr ${node} tcp dport ${set(nodePorts.map(portText))} accept`] : []),
      'goto deny',
    ],
  });

  const egressChains = new Map<Pod, string>();
  for (const pod of c.pods) {
    const policies = c.isolating(pod, 'egress');
    if (policies.length > 0) egressChains.set(pod, chainName('out', pod.namespace, pod.name));
  }
  chains.push({
    name: 'forward',
    head: 'type filter hook forward priority filter; policy accept;',
    rules: [
      ...guard,
      // from outside the Pods (another host, a container engine's bridge) nothing is restricted
      `ip saddr != ${podCidr} accept`,
      'iifname != @pod_ifs drop',
      'ct state established,related accept',
      'ct state invalid drop',
      ...(egressChains.size > 0 ? [`ip saddr vmap { ${[...egressChains].sort(([a], [b]) => a.addr - b.addr).map(([pod, chain]) => `${formatIpv4(pod.addr)} : goto ${chain}`).join(', ')} }`] : []),
      'goto to-pod',
    ],
  });

  // policy chains, then the Pods' chains that jump to them
  const policyChains = new Map<string, string>();
  for (const p of c.policies) {
    if (p.selected.length === 0) continue;
    for (const direction of ['ingress', 'egress'] as const) {
      if (!p[direction]) continue;
      const rules = policyRules(c, p, direction, direction === 'ingress' ? 'accept' : 'goto to-pod');
      if (rules.length === 0) continue;
      const name = chainName(direction === 'ingress' ? 'np-in' : 'np-out', p.namespace, p.name);
      policyChains.set(`${direction}|${p.id}`, name);
      chains.push({ name, rules });
    }
  }
  const podChain = (pod: Pod, direction: 'ingress' | 'egress', name: string): Chain => ({
    name,
    rules: [
      ...c.isolating(pod, direction).flatMap((p) => {
        const target = policyChains.get(`${direction}|${p.id}`);
        return target ? [`jump ${target}`] : [];
      }),
      `goto deny ${comment(`${direction} of ${pod.namespace}/${pod.name}: no policy allows it`)}`,
    ],
  });
  for (const [pod, name] of egressChains) chains.push(podChain(pod, 'egress', name));

  const ingressTargets: [Pod, string][] = [];
  const namespaces = new Set<string>();
  for (const pod of c.pods) {
    if (c.isolating(pod, 'ingress').length > 0) {
      const name = chainName('in', pod.namespace, pod.name);
      chains.push(podChain(pod, 'ingress', name));
      ingressTargets.push([pod, name]);
    } else if (input.denyAcrossNamespaces) {
      ingressTargets.push([pod, `ns_${pod.namespace}`]);
      namespaces.add(pod.namespace);
    }
  }
  for (const ns of [...namespaces].sort()) {
    const members = merge([...c.pods.filter((p) => p.namespace === ns).map((p): Range => [p.addr, p.addr]), [c.node, c.node]]);
    chains.push({ name: `ns_${ns}`, rules: [`ip saddr ${set(members.map(formatRange))} accept`, `goto deny ${comment(`only ${ns}'s Pods reach a Pod no policy isolates`)}`] });
  }
  chains.push({
    name: 'to-pod',
    rules: [
      ...(ingressTargets.length > 0 ? [`ip daddr vmap { ${ingressTargets.sort(([a], [b]) => a.addr - b.addr).map(([pod, chain]) => `${formatIpv4(pod.addr)} : goto ${chain}`).join(', ')} }`] : []),
      // an address of the Pod network this ruleset knows no Pod at: nothing may reach it yet
      ...(input.denyAcrossNamespaces ? [`ip daddr ${podCidr} goto deny ${comment('no known Pod at this address')}`] : []),
      'accept',
    ],
  });
  chains.push({ name: 'deny', rules: ['meta l4proto tcp counter reject with tcp reset', 'counter reject with icmpx admin-prohibited'] });

  const lines = [`table inet ${input.table}`, `delete table inet ${input.table}`, `table inet ${input.table} {`];
  lines.push('\tset pod_ifs {', '\t\ttype ifname;');
  if (c.pods.length > 0) lines.push(`\t\telements = { ${[...c.pods].sort((a, b) => (a.hostIf < b.hostIf ? -1 : 1)).map((p) => `"${p.hostIf}"`).join(', ')} }`);
  lines.push('\t}', '\tset pod_sources {', '\t\ttype ifname . ipv4_addr;');
  if (c.pods.length > 0) lines.push(`\t\telements = { ${[...c.pods].sort((a, b) => (a.hostIf < b.hostIf ? -1 : 1)).map((p) => `"${p.hostIf}" . ${formatIpv4(p.addr)}`).join(', ')} }`);
  lines.push('\t}');
  for (const ch of chains) {
    lines.push('', `\tchain ${ch.name} {`);
    if (ch.head) lines.push(`\t\t${ch.head}`);
    for (const r of ch.rules) lines.push(`\t\t${r}`);
    lines.push('\t}');
  }
  lines.push('}', '');
  return lines.join('\n');
}
