// A standby's gateway forwards inference requests to the leader: a fake leader records what it gets.
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { MetricsRegistry } from '../metrics.js';
import { forwardedHeader, LeaderForwarder, servingAddress } from './forward.js';
import { Gateway } from './gateway.js';

const listen = async (s: Server): Promise<string> => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
};

interface Sent { status: number; headers: IncomingMessage['headers']; body: string }

function send(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const u = new URL(base);
    const r = request({ host: u.hostname, port: u.port, method, path, headers }, (res) => {
      let b = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (b += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: b }));
    });
    r.on('error', reject);
    r.end(body);
  });
}

describe('a standby forwards inference requests to the leader', () => {
  const seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];
  let leaderUrl = '';
  let leading = false;
  let holder: string | undefined = 'leader-1';
  let address: string | undefined;
  let standbyUrl = '';
  const leader = createServer((req, res) => {
    if (req.url?.endsWith('/stream')) {
      // answers each request chunk as it comes, and ends when the request does: streaming both ways
      res.writeHead(200, { 'content-type': 'text/plain' });
      req.on('data', (c: Buffer) => res.write(`got ${c.toString()};`));
      req.on('end', () => res.end('done'));
      return;
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.writeHead(201, { 'content-type': 'application/json', 'x-model': 'iris', connection: 'keep-alive' });
      res.end(JSON.stringify({ predictions: [1, 2] }));
    });
  });
  const gateway = new Gateway({ metrics: new MetricsRegistry() });
  gateway.setStandby({
    leading: () => leading,
    exists: (ns, name) => ns === 'default' && name === 'iris',
    forwarder: new LeaderForwarder({ lease: 'skiff-system/skiff-controllers', identity: 'standby-1', leader: () => ({ identity: holder, address }), connectTimeoutMs: 1000 }),
  });
  const standby = createServer((req, res) => {
    const m = gateway.match(req);
    if (!m) {
      res.writeHead(404).end('not inference');
      return;
    }
    gateway.handle(req, res, m);
  });

  before(async () => {
    leaderUrl = await listen(leader);
    address = leaderUrl;
    standbyUrl = await listen(standby);
  });
  after(() => {
    gateway.stop();
    standby.close();
    leader.close();
  });

  it('passes method, path, headers and body on, less the hop-by-hop ones, and the answer back', async () => {
    const r = await send(standbyUrl, 'POST', '/serving/default/iris/v1/models/iris:predict', { 'content-type': 'application/json', authorization: 'Bearer t', connection: 'keep-alive, x-hop', 'x-hop': 'one hop', 'x-trace': 'abc' }, '{"instances":[[1,2,3,4]]}');
    assert.equal(r.status, 201);
    assert.equal(r.headers['x-model'], 'iris');
    assert.equal(r.headers.via, '1.1 standby-1');
    assert.deepEqual(JSON.parse(r.body), { predictions: [1, 2] });
    const got = seen.at(-1);
    assert.equal(got?.method, 'POST');
    assert.equal(got?.url, '/serving/default/iris/v1/models/iris:predict');
    assert.equal(got?.body, '{"instances":[[1,2,3,4]]}');
    assert.equal(got?.headers.authorization, 'Bearer t');
    assert.equal(got?.headers['x-trace'], 'abc');
    assert.equal(got?.headers['x-hop'], undefined, 'a header Connection names is hop-by-hop');
    assert.equal(got?.headers[forwardedHeader], 'standby-1');
    assert.equal(got?.headers.via, '1.1 standby-1');
    assert.equal(got?.headers['x-forwarded-for'], '127.0.0.1');
  });

  it('keeps the Host header that routes a request, and the -predictor name', async () => {
    const r = await send(standbyUrl, 'GET', '/v1/models/iris', { host: 'iris.default.example.com' });
    assert.equal(r.status, 201);
    assert.equal(seen.at(-1)?.headers.host, 'iris.default.example.com');
    assert.equal(seen.at(-1)?.url, '/v1/models/iris');
    const p = await send(standbyUrl, 'GET', '/v2/health/ready', { host: 'iris-predictor.default.svc.cluster.local' });
    assert.equal(p.status, 201);
    assert.equal(seen.at(-1)?.headers.host, 'iris-predictor.default.svc.cluster.local');
    // a service the cluster does not have is no inference request at all
    assert.equal((await send(standbyUrl, 'GET', '/v1/models/x', { host: 'other.default.example.com' })).status, 404);
    assert.equal((await send(standbyUrl, 'GET', '/serving/default/other/v1/models/other')).status, 404);
  });

  it('streams the request and the answer: each chunk is answered before the next is sent', async () => {
    const u = new URL(standbyUrl);
    const text = await new Promise<string>((resolve, reject) => {
      const r = request({ host: u.hostname, port: u.port, method: 'POST', path: '/serving/default/iris/stream' }, (res) => {
        let b = '';
        let sent = 1;
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          b += c;
          // the leader's answer to chunk n came back through the standby while the request is still open
          if (sent < 3 && b.includes(`got chunk${sent};`)) {
            sent++;
            if (sent < 3) r.write(`chunk${sent}`);
            else r.end();
          }
        });
        res.on('end', () => resolve(b));
      });
      r.on('error', reject);
      r.write('chunk1');
    });
    assert.equal(text, 'got chunk1;got chunk2;done');
  });

  it('answers 503 naming the Lease, at once, when no replica leads, the leader does not answer, or the request was forwarded already', async () => {
    holder = '';
    let t0 = Date.now();
    let r = await send(standbyUrl, 'POST', '/serving/default/iris/v1/models/iris:predict', {}, '{}');
    assert.equal(r.status, 503);
    assert.match(JSON.parse(r.body).error, /no replica holds Lease skiff-system\/skiff-controllers/);
    holder = 'leader-1';
    const closed = createServer();
    const gone = await listen(closed);
    closed.close();
    address = gone;
    t0 = Date.now();
    r = await send(standbyUrl, 'POST', '/serving/default/iris/api/v0.1/predictions', {}, '{"data":{"ndarray":[[1]]}}');
    assert.equal(r.status, 503);
    assert.ok(Date.now() - t0 < 1000, 'no hang');
    // Seldon's own error shape for a Seldon path
    assert.match(r.body, /Lease skiff-system\/skiff-controllers \(leader-1\) at http:\/\/127\.0\.0\.1:\d+ did not answer/);
    address = 'unix:/nowhere';
    r = await send(standbyUrl, 'GET', '/serving/default/iris/v1/models/iris');
    assert.equal(r.status, 503);
    assert.match(JSON.parse(r.body).error, /publishes no usable address/);
    address = leaderUrl;
    const n = seen.length;
    r = await send(standbyUrl, 'POST', '/serving/default/iris/v1/models/iris:predict', { [forwardedHeader]: 'standby-2' }, '{}');
    assert.equal(r.status, 503);
    assert.match(JSON.parse(r.body).error, /already forwarded once \(by standby-2\)/);
    assert.equal(seen.length, n, 'never forwarded twice');
  });

  it('serves itself once it leads', async () => {
    leading = true;
    const n = seen.length;
    const r = await send(standbyUrl, 'POST', '/serving/default/iris/v1/models/iris:predict', {}, '{"instances":[[1]]}');
    leading = false;
    assert.equal(seen.length, n);
    assert.equal(r.status, 503);
    assert.match(JSON.parse(r.body).error, /no route on this replica yet/);
  });

  it('publishes the Pod IP, else the address it listens on, 127.0.0.1 for a wildcard', () => {
    assert.equal(servingAddress({ address: '0.0.0.0', family: 'IPv4', port: 8080 }, '10.1.2.3'), 'http://10.1.2.3:8080');
    assert.equal(servingAddress({ address: '::', family: 'IPv6', port: 8080 }, 'fd00::5'), 'http://[fd00::5]:8080');
    assert.equal(servingAddress({ address: '0.0.0.0', family: 'IPv4', port: 8080 }, undefined), 'http://127.0.0.1:8080');
    assert.equal(servingAddress({ address: '192.168.1.4', family: 'IPv4', port: 9000 }, ''), 'http://192.168.1.4:9000');
  });
});
