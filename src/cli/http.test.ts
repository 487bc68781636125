import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { httpFetch } from './http.js';

describe('the CLI HTTP client', () => {
  let server: Server;
  let url = '';
  before(async () => {
    server = createServer((req, res) => {
      if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"type":"ADDED"}\n');
        return; // never ends: the reader aborts
      }
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, body, type: req.headers['content-type'] ?? null }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('sends the method, headers and body, and reads the answer', async () => {
    const res = await httpFetch(`${url}/x`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    assert.equal(res.ok, true);
    assert.deepEqual(JSON.parse(await res.text()), { method: 'POST', body: '{"a":1}', type: 'application/json' });
    const missing = await httpFetch(`${url}/missing`);
    assert.equal(missing.ok, false);
    assert.equal(missing.status, 404);
  });

  it('an abort ends a stream being read with an AbortError', async () => {
    const ac = new AbortController();
    const res = await httpFetch(`${url}/stream`, { signal: ac.signal });
    const seen: string[] = [];
    await assert.rejects(async () => {
      for await (const chunk of res.body ?? []) {
        seen.push(Buffer.from(chunk).toString());
        ac.abort();
      }
    }, (e: Error) => e.name === 'AbortError');
    assert.deepEqual(seen, ['{"type":"ADDED"}\n']);
  });

  it('a server that is not there is an error with its errno code', async () => {
    const port = (server.address() as AddressInfo).port;
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const dead = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    assert.notEqual(dead, port);
    await assert.rejects(httpFetch(`http://127.0.0.1:${dead}/`), (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED');
  });
});
