import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '../api/core-types.js';
import { Kinds, defaultRegistry } from '../api/index.js';
import type { Notebook } from '../api/notebooks.js';
import { Client } from '../store/client.js';
import { SqliteStore } from '../store/sqlite/store.js';
import { NotebookReconciler } from '../workloads/notebooks/controller.js';
import { makeNotebook, runningPod } from '../workloads/notebooks/testing.js';
import { NotebookProxy, matchNotebook, sessionCookie, upstreamHeaders, upstreamPath, withoutCookie } from './notebook-proxy.js';

it('notebook proxy: routes /notebook/<ns>/<name>/… and keeps the prefix, as Jupyter serves under NB_PREFIX', () => {
  const r = matchNotebook('/notebook/team-a/nb/api/kernels?x=1');
  assert.deepEqual(r, { namespace: 'team-a', name: 'nb', rest: '/api/kernels?x=1' });
  assert.equal(upstreamPath(r, undefined), '/notebook/team-a/nb/api/kernels?x=1');
  assert.deepEqual(matchNotebook('/notebook/team-a/nb'), { namespace: 'team-a', name: 'nb', rest: '' });
  assert.equal(matchNotebook('/notebook/team-a'), undefined);
  assert.equal(matchNotebook('/api/v1/pods'), undefined);
});

it('notebook proxy: http-rewrite-uri replaces the prefix as Istio\'s rewrite does', () => {
  const r = matchNotebook('/notebook/team-a/code/static/app.js');
  assert.ok(r);
  assert.equal(upstreamPath(r, '/'), '/static/app.js');
  assert.equal(upstreamPath({ ...r, rest: '/' }, '/'), '/');
  assert.equal(upstreamPath({ ...r, rest: '/?folder=/home' }, '/'), '/?folder=/home');
  assert.equal(upstreamPath(r, '/base'), '/base/static/app.js');
});

it('notebook proxy: Skiff\'s credentials stay behind; the annotation\'s headers are set', () => {
  const h = upstreamHeaders({ headers: { authorization: 'Bearer secret', host: 'skiff:8080', connection: 'keep-alive', 'x-rstudio-root-path': 'old', cookie: '_xsrf=1' }, socket: { remoteAddress: '127.0.0.1' } }, { 'X-RStudio-Root-Path': '/notebook/team-a/rs/' });
  assert.deepEqual(h, { host: 'skiff:8080', 'x-rstudio-root-path': '/notebook/team-a/rs/', cookie: '_xsrf=1', 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'http' });
});

it('notebook proxy: the notebook cookie stays behind too, Jupyter\'s own cookies pass', () => {
  const h = upstreamHeaders({ headers: { cookie: '_xsrf=1; skiff-notebook-token=alice-token; username-x=2' } }, {});
  assert.equal(h.cookie, '_xsrf=1; username-x=2');
  assert.equal(upstreamHeaders({ headers: { cookie: 'skiff-notebook-token=alice-token' } }, {}).cookie, undefined);
  assert.equal(withoutCookie('a=1;skiff-notebook-token=t;b', 'skiff-notebook-token'), 'a=1; b');
});

it('notebook proxy: the session cookie is HttpOnly, SameSite=Strict and scoped to /notebook/; clearing it expires it', () => {
  assert.equal(sessionCookie('tok,1', false), 'skiff-notebook-token=tok%2C1; Path=/notebook/; HttpOnly; SameSite=Strict');
  assert.equal(sessionCookie(undefined, true), 'skiff-notebook-token=; Max-Age=0; Path=/notebook/; HttpOnly; SameSite=Strict; Secure');
});

it('notebook proxy: the server\'s token replaces whatever Authorization the client or the annotation sent', () => {
  const h = upstreamHeaders({ headers: { authorization: 'Bearer alice-token', host: 'skiff' } }, { Authorization: 'token from-annotation' }, 'abc');
  assert.deepEqual(h, { host: 'skiff', authorization: 'token abc', 'x-forwarded-proto': 'http' });
  assert.equal(upstreamHeaders({ headers: { authorization: 'token guessed' } }, {}).authorization, undefined, 'without a token the client\'s is still taken off');
});

describe('notebook proxy: a server with a token', () => {
  let upstream: Server;
  let proxyServer: Server;
  let client: Client;
  const seen: { method: string; headers: IncomingHttpHeaders }[] = [];
  before(async () => {
    // the notebook's server: records what it is sent, accepts every WebSocket
    upstream = createServer((req, res) => {
      seen.push({ method: req.method ?? '', headers: req.headers });
      res.end('ok');
    });
    upstream.on('upgrade', (req, socket) => {
      seen.push({ method: 'upgrade', headers: req.headers });
      socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const port = (upstream.address() as AddressInfo).port;
    client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
    // one notebook made with tenancy on, one without
    for (const [name, tenancy] of [['nb', true], ['open', false]] as const) {
      await client.create<Notebook>(makeNotebook(name, 'team-a').port(port).obj());
      const r = new NotebookReconciler(client, undefined, { tenancy });
      for (let i = 0; i < 3; i++) await r.reconcile({ namespace: 'team-a', name });
      const pod = await client.get<Pod>(Kinds.Pod, { namespace: 'team-a', name: `${name}-0` });
      await client.updateStatus({ ...pod, status: { ...runningPod(pod).status, podIP: '127.0.0.1' } });
    }
    const proxy = new NotebookProxy(client);
    proxyServer = createServer((req, res) => {
      const route = matchNotebook(req.url ?? '/');
      if (route) proxy.handle(req, res, route);
    });
    proxyServer.on('upgrade', (req, socket, head) => proxy.upgrade(req, socket, head));
    await new Promise<void>((r) => proxyServer.listen(0, '127.0.0.1', r));
  });
  after(() => {
    upstream.close();
    proxyServer.closeAllConnections();
    proxyServer.close();
  });

  /** a request through the proxy: its status (101 for a WebSocket taken) and body */
  const send = (path: string, method: string, upgrade = false): Promise<{ status: number; body: string }> => new Promise((resolve, reject) => {
    const headers = { authorization: 'Bearer alice-token', ...(upgrade ? { connection: 'Upgrade', upgrade: 'websocket' } : {}) };
    const req = request({ host: '127.0.0.1', port: (proxyServer.address() as AddressInfo).port, path, method, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += String(c)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.on('error', reject);
    req.end();
  });

  it('is sent its token over HTTP and WebSocket, in place of the user\'s credentials', async () => {
    const secret = await client.get(Kinds.Secret, { namespace: 'team-a', name: 'nb-notebook-token' });
    const token = Buffer.from((secret.data as { token: string }).token, 'base64').toString();
    seen.length = 0;
    assert.deepEqual(await send('/notebook/team-a/nb/api/kernels', 'POST'), { status: 200, body: 'ok' });
    assert.equal((await send('/notebook/team-a/nb/api/kernels/k/channels', 'GET', true)).status, 101);
    assert.deepEqual(seen.map((s) => `${s.method} ${s.headers.authorization ?? ''}`), [`POST token ${token}`, `upgrade token ${token}`]);
  });

  it('a server without one is sent none, as before', async () => {
    seen.length = 0;
    await send('/notebook/team-a/open/api/kernels', 'GET');
    assert.equal((await send('/notebook/team-a/open/api/kernels/k/channels', 'GET', true)).status, 101);
    assert.deepEqual(seen.map((s) => s.headers.authorization), [undefined, undefined]);
  });

  it('answers 503 and says why when the token\'s Secret is gone, without asking the server', async () => {
    const secret = await client.get(Kinds.Secret, { namespace: 'team-a', name: 'nb-notebook-token' });
    await client.delete(Kinds.Secret, { namespace: 'team-a', name: 'nb-notebook-token' });
    try {
      seen.length = 0;
      const r = await send('/notebook/team-a/nb/api/kernels', 'GET');
      assert.equal(r.status, 503);
      assert.match(r.body, /notebook team-a\/nb: the server's token is in Secret \\"nb-notebook-token\\", which is missing/);
      const ws = await send('/notebook/team-a/nb/api/kernels/k/channels', 'GET', true);
      assert.equal(ws.status, 503);
      assert.deepEqual(seen, []);
    } finally {
      await client.create({ ...secret, metadata: { name: secret.metadata.name, namespace: secret.metadata.namespace, ownerReferences: secret.metadata.ownerReferences } });
    }
  });
});
