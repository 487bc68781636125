// Pod addresses from a range (one machine's /16, a cluster Node's podCIDR), and hosts files that
// name Pods and Services on other nodes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../api/core-types.js';
import { PodAddresses, hostsFile, isLoopbackCidr, localRouteArgs, parseIpv4Cidr } from './network.js';

void test('a routable range is made local with a local route on lo, named by its first address', () => {
  assert.deepEqual(localRouteArgs('10.250.3.0/24', 'replace'), ['route', 'replace', 'local', '10.250.3.0/24', 'dev', 'lo', 'table', 'local']);
  assert.deepEqual(localRouteArgs('10.250.3.7/24', 'del'), ['route', 'del', 'local', '10.250.3.0/24', 'dev', 'lo', 'table', 'local']);
  assert.throws(() => localRouteArgs('10.250.3.0/33', 'replace'), /is not an IPv4 CIDR/);
});

void test('parseIpv4Cidr takes the range\'s first address; isLoopbackCidr says whether it lies in 127/8', () => {
  assert.deepEqual(parseIpv4Cidr('127.64.3.0/24'), { base: (127 * 2 ** 24) + (64 << 16) + (3 << 8), bits: 24 });
  assert.deepEqual(parseIpv4Cidr('10.1.2.3/16'), parseIpv4Cidr('10.1.0.0/16'));
  for (const bad of ['10.1.0.0', '10.1.0.0/33', '300.1.0.0/16', '10.1.0.0/31', 'fd00::/64']) assert.throws(() => parseIpv4Cidr(bad), /not an IPv4 CIDR/, bad);
  assert.equal(isLoopbackCidr('127.64.0.0/24'), true);
  assert.equal(isLoopbackCidr('10.244.1.0/24'), false);
});

void test('PodAddresses hands out each address of a Node\'s /24 once, none ending in .0 or .255', () => {
  const a = new PodAddresses('127.64.7.0/24');
  const seen = new Set<string>();
  for (let i = 0; i < 254; i++) {
    const ip = a.allocate(`pod-${i}`);
    assert.match(ip, /^127\.64\.7\.(\d+)$/);
    const last = Number(ip.split('.')[3]);
    assert.ok(last >= 1 && last <= 254, ip);
    assert.ok(!seen.has(ip), `${ip} twice`);
    seen.add(ip);
  }
  assert.throws(() => a.allocate('one-more'), /no free pod address in 127\.64\.7\.0\/24/);
  a.release('pod-3');
  assert.ok(seen.has(a.allocate('one-more')));
  // the same Pod keeps its address
  assert.equal(a.allocate('pod-5'), a.allocate('pod-5'));
});

void test('two nodes\' ranges never share an address; a /16 keeps its reserved ones out', () => {
  const x = new PodAddresses('127.64.0.0/24');
  const y = new PodAddresses('127.64.1.0/24');
  const xs = new Set(Array.from({ length: 100 }, (_, i) => x.allocate(`x${i}`)));
  for (let i = 0; i < 100; i++) assert.ok(!xs.has(y.allocate(`y${i}`)));
  const z = new PodAddresses('10.70.0.0/16', ['10.70.0.1']);
  for (let i = 0; i < 2000; i++) assert.notEqual(z.allocate(`z${i}`), '10.70.0.1');
  const small = new PodAddresses('127.65.0.8/30');
  assert.deepEqual(new Set([small.allocate('a'), small.allocate('b')]), new Set(['127.65.0.9', '127.65.0.10']));
});

void test('a hosts file names Pods on other nodes by their subdomain names and the Services they back', () => {
  const pod = (name: string, ip: string, extra: Partial<Pod['spec']> = {}): Pod => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: name },
    spec: { containers: [{ name: 'c', image: 'python:3' }], ...extra }, status: { podIP: ip },
  } as Pod);
  const self = pod('ddp-worker-0', '127.64.1.5', { nodeName: 'agent-b' });
  const master = pod('ddp-master-0', '127.64.0.9', { nodeName: 'agent-a', hostname: 'm0', subdomain: 'ddp' });
  const text = hostsFile(self, [self, master], [{ name: 'ddp-master-0', namespace: 'default', ips: ['127.64.0.9'] }]);
  assert.match(text, /^127\.64\.1\.5\tddp-worker-0$/m);
  assert.match(text, /^127\.64\.0\.9\tddp-master-0 m0 m0\.ddp m0\.ddp\.default m0\.ddp\.default\.svc m0\.ddp\.default\.svc\.cluster\.local$/m);
  assert.match(text, /^127\.64\.0\.9\tddp-master-0 ddp-master-0\.default ddp-master-0\.default\.svc ddp-master-0\.default\.svc\.cluster\.local$/m);
});
