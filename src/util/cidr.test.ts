import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cidrContains, cidrEnd, formatIpv4, parseCidr, parseIp } from './cidr.js';

describe('IP addresses and CIDR blocks', () => {
  it('reads IPv4 as Go\'s sloppy parser does, leading zeros included', () => {
    assert.deepEqual(parseIp('10.0.0.1'), { family: 4, value: 0x0a000001n });
    assert.deepEqual(parseIp('010.000.000.001'), { family: 4, value: 0x0a000001n });
    for (const bad of ['10.0.0', '10.0.0.256', '10.0.0.1.2', '1e1.0.0.1', '', ' 10.0.0.1']) assert.equal(parseIp(bad), undefined, bad);
  });

  it('reads IPv6, with :: and an IPv4 tail', () => {
    assert.deepEqual(parseIp('::1'), { family: 6, value: 1n });
    assert.deepEqual(parseIp('2001:db8::'), { family: 6, value: 0x20010db8n << 96n });
    assert.deepEqual(parseIp('::ffff:10.0.0.1'), { family: 6, value: (0xffffn << 32n) | 0x0a000001n });
    for (const bad of ['1::2::3', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7', 'fe80::1%eth0', '12345::', ':::']) assert.equal(parseIp(bad), undefined, bad);
  });

  it('reads a CIDR block, host bits cleared, and tells what it holds', () => {
    const block = parseCidr('172.17.1.5/24');
    assert.deepEqual(block, { family: 4, base: 0xac110100n, prefix: 24 });
    assert.equal(cidrEnd(block!), 0xac1101ffn);
    assert.ok(cidrContains(block!, parseIp('172.17.1.200')!));
    assert.ok(!cidrContains(block!, parseIp('172.17.2.0')!));
    assert.ok(!cidrContains(parseCidr('::/0')!, parseIp('10.0.0.1')!));
    assert.deepEqual(parseCidr('0.0.0.0/0'), { family: 4, base: 0n, prefix: 0 });
    for (const bad of ['10.0.0.0', '10.0.0.0/33', '10.0.0.0/-1', '10.0.0.0/ 8', '::/129', 'x/8']) assert.equal(parseCidr(bad), undefined, bad);
  });

  it('writes an IPv4 number back', () => {
    assert.equal(formatIpv4(0xac110105), '172.17.1.5');
    assert.equal(formatIpv4(0xffffffff), '255.255.255.255');
  });
});
