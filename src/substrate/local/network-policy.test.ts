import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { describe, it } from 'node:test';
import type { NetworkPolicy, NetworkPolicySpec } from '../../api/networking.js';
import { allowed, networkPolicyRuleset, type PolicyNamespace, type PolicyPod, type RulesetInput } from './network-policy.js';

const pod = (namespace: string, name: string, ip: string, labels: Record<string, string> = {}, ports: PolicyPod['ports'] = []): PolicyPod =>
  ({ namespace, name, ip, labels, hostIf: `sk${ip.split('.').slice(2).join('x')}`, ports });
const np = (namespace: string, name: string, spec: NetworkPolicySpec): NetworkPolicy =>
  ({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace }, spec });

// Kubernetes' documentation's cast: a database, its frontend, a web server with a named port, a
// client in another project, and a frontend in a namespace no policy names
const db = pod('default', 'db', '10.89.0.2', { role: 'db' }, [{ name: 'redis', containerPort: 6379 }]);
const frontend = pod('default', 'frontend', '10.89.0.3', { role: 'frontend' });
const web = pod('default', 'web', '10.89.0.4', { app: 'web' }, [{ name: 'http', containerPort: 8080 }, { name: 'dns', containerPort: 53, protocol: 'UDP' }]);
const client = pod('myproject', 'client', '10.89.1.2', { role: 'client' });
const stranger = pod('other', 'frontend', '10.89.2.2', { role: 'frontend' });
const pods = [db, frontend, web, client, stranger];
const node = '10.89.0.1';

function input(policies: NetworkPolicy[], extra: Partial<RulesetInput> = {}): RulesetInput {
  return {
    table: 'skiff', pods, policies, nodeIp: node, nodePorts: [6443, 8443], podCidr: '10.89.0.0/16', denyAcrossNamespaces: false,
    namespaces: [{ name: 'default', labels: {} }, { name: 'myproject', labels: { project: 'myproject' } }, { name: 'other', labels: {} }],
    ...extra,
  };
}

/** `allowed` over every ordered pair of Pods, as `from>to` for those it lets through */
function reachable(inp: RulesetInput, port: number, proto: 'TCP' | 'UDP' | 'SCTP' | 'ICMP' = 'TCP'): string[] {
  const out: string[] = [];
  for (const s of inp.pods) {
    for (const d of inp.pods) if (s !== d && allowed(inp, s.ip, d.ip, port, proto)) out.push(`${s.namespace}/${s.name}>${d.namespace}/${d.name}`);
  }
  return out;
}
const everyPair = (list: PolicyPod[]): string[] => list.flatMap((s) => list.filter((d) => d !== s).map((d) => `${s.namespace}/${s.name}>${d.namespace}/${d.name}`));

const testNetworkPolicy = np('default', 'test-network-policy', {
  podSelector: { matchLabels: { role: 'db' } },
  policyTypes: ['Ingress', 'Egress'],
  ingress: [{
    from: [{ ipBlock: { cidr: '172.17.0.0/16', except: ['172.17.1.0/24'] } }, { namespaceSelector: { matchLabels: { project: 'myproject' } } }, { podSelector: { matchLabels: { role: 'frontend' } } }],
    ports: [{ protocol: 'TCP', port: 6379 }],
  }],
  egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/24' } }], ports: [{ protocol: 'TCP', port: 5978 }] }],
});

describe('the reference evaluator on Kubernetes\' documented policies', () => {
  it('without policies every Pod reaches every Pod; with tenancy only its own namespace\'s', () => {
    assert.deepEqual(reachable(input([]), 80), everyPair(pods));
    assert.deepEqual(reachable(input([], { denyAcrossNamespaces: true }), 80), ['default/db>default/frontend', 'default/db>default/web', 'default/frontend>default/db', 'default/frontend>default/web', 'default/web>default/db', 'default/web>default/frontend']);
  });

  it('the host: Pods reach nodeIp on nodePorts over TCP only; the host and other networks are never restricted', () => {
    const inp = input([np('default', 'default-deny-all', { podSelector: {}, policyTypes: ['Ingress', 'Egress'] })], { denyAcrossNamespaces: true });
    assert.equal(allowed(inp, db.ip, node, 6443), true);
    assert.equal(allowed(inp, db.ip, node, 22), false);
    assert.equal(allowed(inp, db.ip, node, 6443, 'UDP'), false);
    assert.equal(allowed(inp, node, db.ip, 22), true);
    assert.equal(allowed(inp, '192.168.1.5', db.ip, 22), true);
    assert.equal(allowed(inp, db.ip, db.ip, 22), true);
  });

  it('default deny ingress: no Pod of the namespace takes traffic from any Pod; egress is untouched', () => {
    const inp = input([np('default', 'default-deny-ingress', { podSelector: {}, policyTypes: ['Ingress'] })]);
    assert.deepEqual(reachable(inp, 80).filter((r) => r.includes('>default/')), []);
    assert.deepEqual(reachable(inp, 80).filter((r) => r.startsWith('default/')), ['default/db>myproject/client', 'default/db>other/frontend', 'default/frontend>myproject/client', 'default/frontend>other/frontend', 'default/web>myproject/client', 'default/web>other/frontend']);
  });

  it('allow all ingress: a selected Pod takes everything, tenancy or not (its policies decide)', () => {
    const inp = input([np('default', 'allow-all-ingress', { podSelector: {}, ingress: [{}], policyTypes: ['Ingress'] })], { denyAcrossNamespaces: true });
    assert.ok(reachable(inp, 80).includes('other/frontend>default/db'));
    assert.ok(!reachable(inp, 80).includes('default/db>other/frontend'));
    assert.ok(allowed(inp, client.ip, web.ip, 1, 'ICMP'));
  });

  it('default deny egress and allow all egress', () => {
    const deny = input([np('default', 'default-deny-egress', { podSelector: {}, policyTypes: ['Egress'] })]);
    assert.deepEqual(reachable(deny, 80).filter((r) => r.startsWith('default/')), []);
    assert.equal(allowed(deny, db.ip, '8.8.8.8', 53, 'UDP'), false);
    assert.ok(reachable(deny, 80).includes('other/frontend>default/db'));
    // the host's ports stay reachable: the input hook is not a policy's to close
    assert.equal(allowed(deny, db.ip, node, 8443), true);
    const allow = input([...deny.policies, np('default', 'allow-all-egress', { podSelector: {}, egress: [{}], policyTypes: ['Egress'] })]);
    assert.deepEqual(reachable(allow, 80), everyPair(pods));
    assert.equal(allowed(allow, db.ip, '8.8.8.8', 53, 'UDP'), true);
  });

  it('test-network-policy: ipBlock, namespaceSelector and podSelector as three peers, one port, and egress to a block', () => {
    const inp = input([testNetworkPolicy]);
    const into = (s: PolicyPod, port: number): boolean => allowed(inp, s.ip, db.ip, port);
    assert.deepEqual([into(frontend, 6379), into(client, 6379), into(stranger, 6379), into(web, 6379), into(frontend, 6380)], [true, true, false, false, false]);
    assert.equal(allowed(inp, frontend.ip, db.ip, 6379, 'UDP'), false);
    assert.equal(allowed(inp, db.ip, '10.0.0.7', 5978), true);
    assert.equal(allowed(inp, db.ip, '10.0.0.7', 80), false);
    assert.equal(allowed(inp, db.ip, '10.0.1.7', 5978), false);
    assert.equal(allowed(inp, db.ip, web.ip, 5978), false);
  });

  it('ipBlock peers hold Pods by address, except what except cuts out', () => {
    const inp = input([np('default', 'by-block', { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ ipBlock: { cidr: '10.89.0.0/22', except: ['10.89.0.2/32', '10.89.1.0/24'] } }] }] })]);
    assert.deepEqual(reachable(inp, 80).filter((r) => r.endsWith('>default/web')), ['default/frontend>default/web', 'other/frontend>default/web']);
  });

  it('namespaceSelector with podSelector in one peer means both; as two peers, either', () => {
    const alice = [pod('alice', 'client', '10.89.3.2', { role: 'client' }), pod('alice', 'other', '10.89.3.3')];
    const cast = [db, pod('default', 'client', '10.89.0.9', { role: 'client' }), ...alice];
    const namespaces: PolicyNamespace[] = [{ name: 'default', labels: {} }, { name: 'alice', labels: { user: 'alice' } }];
    const both = input([np('default', 'both', { podSelector: { matchLabels: { role: 'db' } }, ingress: [{ from: [{ namespaceSelector: { matchLabels: { user: 'alice' } }, podSelector: { matchLabels: { role: 'client' } } }] }] })], { pods: cast, namespaces });
    assert.deepEqual(reachable(both, 80).filter((r) => r.endsWith('>default/db')), ['alice/client>default/db']);
    const either = input([np('default', 'either', { podSelector: { matchLabels: { role: 'db' } }, ingress: [{ from: [{ namespaceSelector: { matchLabels: { user: 'alice' } } }, { podSelector: { matchLabels: { role: 'client' } } }] }] })], { pods: cast, namespaces });
    assert.deepEqual(reachable(either, 80).filter((r) => r.endsWith('>default/db')), ['default/client>default/db', 'alice/client>default/db', 'alice/other>default/db']);
  });

  it('every Namespace carries kubernetes.io/metadata.name, as kube-apiserver labels it', () => {
    const inp = input([np('default', 'from-myproject', { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['myproject'] }] } }] }] })]);
    assert.deepEqual(reachable(inp, 80).filter((r) => r.endsWith('>default/db')), ['myproject/client>default/db']);
  });

  it('named ports are the destination Pod\'s container ports, protocol included', () => {
    const ingress = input([np('default', 'web-http', { podSelector: {}, ingress: [{ ports: [{ port: 'http' }, { port: 'dns', protocol: 'UDP' }] }] })]);
    assert.deepEqual([allowed(ingress, client.ip, web.ip, 8080), allowed(ingress, client.ip, web.ip, 80), allowed(ingress, client.ip, web.ip, 53, 'UDP'), allowed(ingress, client.ip, web.ip, 53)], [true, false, true, false]);
    // db has no port named http: the rule lets nothing in
    assert.equal(allowed(ingress, client.ip, db.ip, 8080), false);
    const egress = input([np('default', 'to-named', { podSelector: { matchLabels: { role: 'frontend' } }, policyTypes: ['Egress'], egress: [{ to: [{ podSelector: {} }], ports: [{ port: 'http' }, { port: 'redis' }] }] })]);
    assert.deepEqual([allowed(egress, frontend.ip, web.ip, 8080), allowed(egress, frontend.ip, db.ip, 6379), allowed(egress, frontend.ip, db.ip, 8080), allowed(egress, frontend.ip, web.ip, 6379)], [true, true, false, false]);
  });

  it('endPort makes a range; a port entry names one protocol; a rule with ports lets no ICMP through', () => {
    const inp = input([np('default', 'multi-port-egress', { podSelector: { matchLabels: { role: 'db' } }, policyTypes: ['Egress'], egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/24' } }], ports: [{ protocol: 'TCP', port: 32000, endPort: 32768 }, { protocol: 'SCTP', port: 9 }] }] })]);
    assert.deepEqual([31999, 32000, 32768, 32769].map((p) => allowed(inp, db.ip, '10.0.0.1', p)), [false, true, true, false]);
    assert.deepEqual([allowed(inp, db.ip, '10.0.0.1', 32000, 'UDP'), allowed(inp, db.ip, '10.0.0.1', 9, 'SCTP'), allowed(inp, db.ip, '10.0.0.1', 0, 'ICMP')], [false, true, false]);
  });

  it('a policy with egress rules and no policyTypes isolates ingress too, as kube defaults it', () => {
    const inp = input([np('default', 'egress-only-by-mistake', { podSelector: { matchLabels: { role: 'db' } }, egress: [{}] })]);
    assert.equal(allowed(inp, frontend.ip, db.ip, 6379), false);
    assert.equal(allowed(inp, db.ip, frontend.ip, 80), true);
  });

  it('policies add up; a selector kube would refuse selects nothing', () => {
    const inp = input([
      np('default', 'a', { podSelector: { matchLabels: { role: 'db' } }, ingress: [{ from: [{ podSelector: { matchLabels: { role: 'frontend' } } }] }] }),
      np('default', 'b', { podSelector: { matchLabels: { role: 'db' } }, ingress: [{ from: [{ namespaceSelector: {} }], ports: [{ port: 6379 }] }] }),
      np('default', 'broken', { podSelector: {}, ingress: [{ from: [{ podSelector: { matchExpressions: [{ key: 'app', operator: 'Like' }] } }] }] }),
    ]);
    assert.deepEqual([allowed(inp, frontend.ip, db.ip, 22), allowed(inp, stranger.ip, db.ip, 6379), allowed(inp, stranger.ip, db.ip, 22)], [true, true, false]);
    assert.equal(allowed(inp, db.ip, web.ip, 80), false);
  });
});

describe('the nftables ruleset', () => {
  const full = (): RulesetInput => input([
    testNetworkPolicy,
    np('default', 'web-http', { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ ports: [{ port: 'http' }, { protocol: 'UDP', port: 53 }, { port: 9000, endPort: 9100 }] }] }),
    np('default', 'frontend-out', { podSelector: { matchLabels: { role: 'frontend' } }, policyTypes: ['Egress'], egress: [{ to: [{ podSelector: {} }], ports: [{ port: 'http' }, { port: 'redis' }] }] }),
  ], { denyAcrossNamespaces: true });

  it('replaces its table whole, in one transaction, and reads the same whatever order its input came in', () => {
    const inp = full();
    const text = networkPolicyRuleset(inp);
    assert.ok(text.startsWith('table inet skiff\ndelete table inet skiff\ntable inet skiff {\n'));
    const shuffled = { ...inp, pods: [...inp.pods].reverse(), policies: [...inp.policies].reverse(), nodePorts: [8443, 6443] };
    assert.equal(networkPolicyRuleset(shuffled), text);
  });

  it('guards against forged sources, lets replies through, and opens only nodePorts on the host', () => {
    const text = networkPolicyRuleset(full());
    assert.match(text, /elements = \{ "sk0x2" \. 10\.89\.0\.2, "sk0x3" \. 10\.89\.0\.3, "sk0x4" \. 10\.89\.0\.4, "sk1x2" \. 10\.89\.1\.2, "sk2x2" \. 10\.89\.2\.2 \}/);
    for (const chain of ['input', 'forward']) {
      const body = text.slice(text.indexOf(`chain ${chain} {`));
      const at = (rule: string): number => body.indexOf(rule);
      assert.ok(at('iifname @pod_ifs iifname . ip saddr != @pod_sources drop') < at('ct state established,related accept'), chain);
      assert.ok(at('ct state established,related accept') < at('ct state invalid drop'), chain);
    }
    assert.match(text, /ip daddr 10\.89\.0\.1 tcp dport \{ 6443, 8443 \} accept\n\t\tgoto deny/);
    assert.match(text, /chain deny \{\n\t\tmeta l4proto tcp counter reject with tcp reset\n\t\tcounter reject with icmpx admin-prohibited/);
  });

  it('writes each policy\'s rules once, with sets of addresses and ports, and a comment naming it', () => {
    const text = networkPolicyRuleset(full());
    assert.match(text, /chain np-in_default_test-network-policy \{\n\t\tip saddr \{ 10\.89\.0\.3, 10\.89\.1\.2, 172\.17\.0\.0\/24, 172\.17\.2\.0-172\.17\.255\.255 \} tcp dport 6379 accept comment "default\/test-network-policy"\n\t\}/);
    assert.match(text, /chain np-out_default_test-network-policy \{\n\t\tip daddr 10\.0\.0\.0\/24 tcp dport 5978 goto to-pod comment "default\/test-network-policy"/);
    // named ports resolved on each destination Pod
    assert.match(text, /ip daddr \. meta l4proto \. th dport \{ 10\.89\.0\.2 \. tcp \. 6379, 10\.89\.0\.4 \. tcp \. 8080 \} goto to-pod comment "default\/frontend-out"/);
    assert.match(text, /meta l4proto \. th dport \{ tcp \. 9000-9100, udp \. 53 \} accept comment "default\/web-http"/);
    assert.match(text, /ip saddr vmap \{ 10\.89\.0\.2 : goto out_default_db, 10\.89\.0\.3 : goto out_default_frontend \}/);
    assert.match(text, /ip daddr vmap \{ 10\.89\.0\.2 : goto in_default_db, 10\.89\.0\.3 : goto ns_default, 10\.89\.0\.4 : goto in_default_web, 10\.89\.1\.2 : goto ns_myproject, 10\.89\.2\.2 : goto ns_other \}/);
    assert.match(text, /chain ns_default \{\n\t\tip saddr 10\.89\.0\.1-10\.89\.0\.4 accept/);
  });

  it('an empty cluster is a table that only guards the host', () => {
    const text = networkPolicyRuleset({ ...input([]), pods: [] });
    assert.ok(!text.includes('elements'));
    assert.match(text, /chain to-pod \{\n\t\taccept\n\t\}/);
  });

  it('refuses input it cannot write safely', () => {
    assert.throws(() => networkPolicyRuleset({ ...input([]), table: 'skiff; flush ruleset' }), /not an nft table name/);
    assert.throws(() => networkPolicyRuleset({ ...input([]), pods: [{ ...db, hostIf: 'eth0" accept' }] }), /not an interface name/);
    assert.throws(() => networkPolicyRuleset({ ...input([]), pods: [{ ...db, ip: '10.90.0.2' }] }), /outside podCidr/);
    assert.throws(() => networkPolicyRuleset({ ...input([]), pods: [db, { ...frontend, ip: db.ip }] }), /another Pod's address/);
    assert.throws(() => networkPolicyRuleset({ ...input([]), podCidr: 'fd00::/64' }), /not an IPv4 CIDR/);
  });
});

// ---------------------------------------------------------------- in the kernel

/** why the kernel test cannot run here, or undefined when it can */
function kernelUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root to make network namespaces';
  for (const [bin, args] of [['nft', ['--version']], ['ip', ['-V']], ['python3', ['-c', '']]] as const) {
    if (spawnSync(bin, args).status !== 0) return `${bin} is not on PATH`;
  }
  const probe = `skiffnp${process.pid}probe`;
  if (spawnSync('ip', ['netns', 'add', probe]).status !== 0) return 'ip netns add failed';
  spawnSync('ip', ['netns', 'del', probe]);
  return undefined;
}

const run = (args: string[], input?: string): string => execFileSync(args[0] as string, args.slice(1), { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });

const listener = `
import selectors, socket, sys
sel = selectors.DefaultSelector()
for port in sys.argv[2:]:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((sys.argv[1], int(port)))
    s.listen(64)
    sel.register(s, selectors.EVENT_READ)
print('ready', flush=True)
while True:
    for key, _ in sel.select():
        conn, _ = key.fileobj.accept()
        conn.close()
`;

const prober = `
import json, socket, sys
from concurrent.futures import ThreadPoolExecutor
def probe(t):
    dst, port, src = t
    try:
        socket.create_connection((dst, port), timeout=1.5, source_address=(src, 0) if src else None).close()
        return 'open'
    except ConnectionRefusedError:
        return 'refused'
    except socket.timeout:
        return 'timeout'
    except OSError as e:
        return 'error %d' % e.errno
targets = json.loads(sys.argv[1])
with ThreadPoolExecutor(32) as ex:
    print(json.dumps(list(ex.map(probe, targets))))
`;

describe('the ruleset in the kernel', () => {
  const skip = kernelUnavailable();
  it('nft accepts it, loads it twice, and every connection matches the reference evaluator', { skip, timeout: 120_000 }, async () => {
    const ns = (i: number | string): string => `skiffnp${process.pid}${i}`;
    const host = ns('h');
    // a machine outside the Pods, in the block test-network-policy lets the database reach
    const outside = { ip: '10.0.0.7', hostIf: 'skext' };
    const procs: ChildProcess[] = [];
    const made: string[] = [];
    const listen = async (netns: string, addr: string, ports: number[]): Promise<void> => {
      const p = spawn('ip', ['netns', 'exec', netns, 'python3', '-c', listener, addr, ...ports.map(String)], { stdio: ['ignore', 'pipe', 'inherit'] });
      procs.push(p);
      await new Promise<void>((resolve, reject) => {
        p.stdout?.once('data', () => resolve());
        p.once('exit', (code) => reject(new Error(`listener in ${netns} exited with ${code}`)));
      });
    };
    const probe = async (netns: string, targets: [string, number, string?][]): Promise<string[]> => {
      const p = spawn('ip', ['netns', 'exec', netns, 'python3', '-c', prober, JSON.stringify(targets.map(([d, port, src]) => [d, port, src ?? '']))], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      p.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      await new Promise((resolve) => p.once('exit', resolve));
      return JSON.parse(out) as string[];
    };
    const ports = [53, 5978, 6379, 8080, 9050];
    try {
      run(['ip', 'netns', 'add', host]);
      made.push(host);
      run(['ip', '-n', host, 'link', 'set', 'lo', 'up']);
      // the host's address on the Pod network: local to it, answered on every veth
      run(['ip', '-n', host, 'addr', 'add', `${node}/32`, 'dev', 'lo']);
      run(['ip', 'netns', 'exec', host, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
      const machines = [...pods.map((p) => ({ ip: p.ip, hostIf: p.hostIf })), outside];
      for (const [i, m] of machines.entries()) {
        const netns = ns(i);
        run(['ip', 'netns', 'add', netns]);
        made.push(netns);
        run(['ip', '-n', netns, 'link', 'set', 'lo', 'up']);
        run(['ip', '-n', host, 'link', 'add', m.hostIf, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
        run(['ip', '-n', host, 'link', 'set', m.hostIf, 'up']);
        run(['ip', '-n', host, 'route', 'add', `${m.ip}/32`, 'dev', m.hostIf]);
        run(['ip', '-n', netns, 'addr', 'add', `${m.ip}/32`, 'dev', 'eth0']);
        run(['ip', '-n', netns, 'link', 'set', 'eth0', 'up']);
        run(['ip', '-n', netns, 'route', 'add', node, 'dev', 'eth0']);
        run(['ip', '-n', netns, 'route', 'add', 'default', 'via', node, 'dev', 'eth0']);
        await listen(netns, '0.0.0.0', ports);
      }
      await listen(host, node, [6443, 22]);

      const policies = [
        testNetworkPolicy,
        np('default', 'web-http', { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ ports: [{ port: 'http' }, { protocol: 'UDP', port: 53 }, { port: 9000, endPort: 9100 }] }] }),
        np('default', 'frontend-out', { podSelector: { matchLabels: { role: 'frontend' } }, policyTypes: ['Egress'], egress: [{ to: [{ podSelector: {} }], ports: [{ port: 'http' }, { port: 'redis' }] }] }),
        np('other', 'default-deny-ingress', { podSelector: {}, policyTypes: ['Ingress'] }),
      ];
      for (const denyAcrossNamespaces of [false, true]) {
        const inp = input(policies, { denyAcrossNamespaces, nodePorts: [6443] });
        const text = networkPolicyRuleset(inp);
        run(['ip', 'netns', 'exec', host, 'nft', '-c', '-f', '-'], text);
        // twice: a table already there is replaced, not added to
        run(['ip', 'netns', 'exec', host, 'nft', '-f', '-'], text);
        run(['ip', 'netns', 'exec', host, 'nft', '-f', '-'], text);
        assert.equal((run(['ip', 'netns', 'exec', host, 'nft', 'list', 'tables']).match(/table inet skiff/g) ?? []).length, 1);

        const mismatches: string[] = [];
        const seen = new Map<string, number>();
        for (const [i, m] of machines.entries()) {
          const targets: [string, number][] = [];
          for (const d of machines) if (d !== m) for (const port of ports) targets.push([d.ip, port]);
          if (m !== outside) targets.push([node, 6443], [node, 22]);
          const got = await probe(ns(i), targets);
          targets.forEach(([dst, port], j) => {
            const want = allowed(inp, m.ip, dst, port) ? 'open' : 'refused';
            seen.set(want, (seen.get(want) ?? 0) + 1);
            if (got[j] !== want) mismatches.push(`${m.ip} -> ${dst}:${port}: ${got[j]}, evaluator says ${want}`);
          });
        }
        assert.deepEqual(mismatches, [], `denyAcrossNamespaces=${denyAcrossNamespaces}`);
        // the cast is chosen so that both answers are common
        assert.ok((seen.get('open') ?? 0) > 40 && (seen.get('refused') ?? 0) > 40, JSON.stringify([...seen]));
      }

      // the host reaches every Pod, whatever isolates it (kubelet's probes, Skiff's proxies)
      assert.deepEqual(await probe(host, pods.map((p): [string, number] => [p.ip, 8080])), pods.map(() => 'open'));

      // names at their limits: a chain name nft reads as one identifier, cut and hashed when long
      const long = (n: string): string => n.repeat(Math.ceil(253 / n.length)).slice(0, 253).replace(/[.-]$/, 'x');
      const odd = [pod('0-digits-first', 'web.v2', '10.89.9.2', { app: 'x' }), pod('a'.repeat(63), long('pod.name-'), '10.89.9.3', { app: 'x' })];
      const oddInput = input([np('0-digits-first', long('policy.'), { podSelector: {}, ingress: [{ from: [{ podSelector: {} }] }], egress: [{}] }), np('a'.repeat(63), 'deny', { podSelector: {}, policyTypes: ['Ingress', 'Egress'] })], { pods: odd, namespaces: [], denyAcrossNamespaces: true });
      run(['ip', 'netns', 'exec', host, 'nft', '-c', '-f', '-'], networkPolicyRuleset(oddInput));

      // a Pod that sends with another Pod's address is dropped without an answer
      run(['ip', '-n', ns(1), 'addr', 'add', `${client.ip}/32`, 'dev', 'eth0']);
      assert.deepEqual(await probe(ns(1), [[web.ip, 8080, client.ip], [web.ip, 8080]]), ['timeout', 'open']);
    } finally {
      for (const p of procs) p.kill();
      for (const n of made.reverse()) spawnSync('ip', ['netns', 'del', n]);
    }
  });
});
