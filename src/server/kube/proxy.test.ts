import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '../../api/core-types.js';
import { Kinds, defaultRegistry } from '../../api/index.js';
import type { KObject } from '../../api/meta.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { requestChecks } from '../auth/request-info.js';
import { RbacAuthorizer, staticPolicy } from '../auth/rbac.js';
import { binding, policy } from '../auth/testing.js';
import type { UserInfo } from '../auth/types.js';
import { KubeProxy, matchProxy, podPort, servicePort, splitSchemeNamePort } from './proxy.js';

it('kube proxy: reads services/{[scheme:]name[:port]}/proxy/{path} and pods/.../proxy as kube-apiserver does', () => {
  assert.deepEqual(matchProxy('/api/v1/namespaces/team-a/services/web:8080/proxy/predict?x=1'), { resource: 'services', namespace: 'team-a', name: 'web', scheme: '', port: '8080', rest: '/predict?x=1' });
  assert.deepEqual(matchProxy('/api/v1/namespaces/default/services/http:web:http/proxy/'), { resource: 'services', namespace: 'default', name: 'web', scheme: 'http', port: 'http', rest: '/' });
  assert.deepEqual(matchProxy('/api/v1/namespaces/default/pods/p-0/proxy'), { resource: 'pods', namespace: 'default', name: 'p-0', scheme: '', port: '', rest: '' });
  assert.deepEqual(matchProxy('/api/v1/namespaces/default/pods/p-0:80/proxy?a=b'), { resource: 'pods', namespace: 'default', name: 'p-0', scheme: '', port: '80', rest: '?a=b' });
  assert.equal(matchProxy('/api/v1/namespaces/default/pods/p-0/proxy/a/b/c')?.rest, '/a/b/c');
  // the percent-encoded colon of a client that escapes the name
  assert.equal(matchProxy('/api/v1/namespaces/default/services/web%3A8080/proxy/')?.port, '8080');
  for (const other of ['/api/v1/namespaces/default/services/web', '/api/v1/namespaces/default/services/web/status', '/api/v1/namespaces/default/pods/p/log', '/api/v1/namespaces/default/services/web/proxyx', '/apis/apps/v1/namespaces/a/services/web/proxy/', '/api/v1/services/web/proxy/']) {
    assert.equal(matchProxy(other), undefined, other);
  }
  assert.deepEqual(splitSchemeNamePort('https:web:443'), { scheme: 'https', name: 'web', port: '443' });
  assert.equal(splitSchemeNamePort('ftp:web:21'), undefined);
  assert.equal(splitSchemeNamePort('a:b:c:d'), undefined);
  assert.equal(splitSchemeNamePort(':80'), undefined);
});

it('kube proxy: a Service port by number or name (none: the first), a target port by number or a container port\'s name', () => {
  const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80, targetPort: 'web' }, { name: 'admin', port: 9000, targetPort: 9001 }] } };
  assert.equal(servicePort(svc, '')?.name, 'http');
  assert.equal(servicePort(svc, '9000')?.name, 'admin');
  assert.equal(servicePort(svc, 'admin')?.port, 9000);
  assert.equal(servicePort(svc, '81'), undefined);
  const pod = { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', ports: [{ name: 'web', containerPort: 8080 }] }] } } as unknown as Pod;
  assert.equal(podPort(pod, 'web', 80), 8080);
  assert.equal(podPort(pod, 9001, 80), 9001);
  assert.equal(podPort(pod, '7000', 80), 7000);
  assert.equal(podPort(pod, undefined, 80), 80);
  assert.equal(podPort(pod, 'nope', 80), undefined);
});

it('kube proxy: authorized as services/proxy and pods/proxy with the HTTP method\'s verb, the name as written', () => {
  const getOnly: KObject = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'open-web', namespace: 'team-a' }, rules: [{ apiGroups: [''], resources: ['services/proxy'], resourceNames: ['web:8080'], verbs: ['get'] }] } as KObject;
  const bindRole: KObject = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'erin-open-web', namespace: 'team-a' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'open-web' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'erin' }] } as KObject;
  const authz = new RbacAuthorizer(staticPolicy(policy([binding('team-a', 'edit', 'carol'), binding('team-a', 'view', 'dave'), getOnly, bindRole])));
  const user = (name: string): UserInfo => ({ username: name, groups: ['system:authenticated'] });
  const allowed = (who: string, method: string, url: string): boolean => requestChecks(method, url, false).every((c) => c.resource !== undefined && authz.authorize({ user: user(who), resource: c.resource }).allowed);
  const web = '/api/v1/namespaces/team-a/services/web:8080/proxy/';
  const [check] = requestChecks('POST', `${web}predict`, false);
  assert.deepEqual(check?.resource, { verb: 'create', apiGroup: '', resource: 'services', subresource: 'proxy', namespace: 'team-a', name: 'web:8080' });
  assert.equal(requestChecks('DELETE', '/api/v1/namespaces/team-a/pods/p/proxy/x', false)[0]?.resource?.verb, 'delete');
  // Kubernetes' edit role reaches Services' and Pods' servers; view does not (they may run anything)
  assert.ok(allowed('carol', 'GET', web));
  assert.ok(allowed('carol', 'POST', `${web}upload`));
  assert.ok(allowed('carol', 'PUT', '/api/v1/namespaces/team-a/pods/p-0/proxy/x'));
  assert.ok(!allowed('dave', 'GET', web));
  assert.ok(!allowed('dave', 'GET', '/api/v1/namespaces/team-a/pods/p-0/proxy/'));
  // a rule for `get` lets a page be read, not a form be sent; resourceNames match the name as written
  assert.ok(allowed('erin', 'GET', web));
  assert.ok(allowed('erin', 'HEAD', `${web}index.html`));
  assert.ok(!allowed('erin', 'POST', `${web}upload`));
  assert.ok(!allowed('erin', 'GET', '/api/v1/namespaces/team-a/services/web/proxy/'));
  assert.ok(!allowed('carol', 'GET', '/api/v1/namespaces/team-b/services/web:8080/proxy/'));
});

describe('kube proxy: to the Pod behind a Service', () => {
  let upstream: Server;
  let front: Server;
  let client: Client;
  let port = 0;
  const seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];

  const call = (method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> => new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port: (front.address() as AddressInfo).port, method, path, headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    r.on('error', reject);
    r.end(body);
  });

  const pod = async (name: string, labels: Record<string, string>, ready: boolean): Promise<void> => {
    const p = await client.create<Pod>({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels }, spec: { containers: [{ name: 'app', image: 'python', ports: [{ name: 'web', containerPort: port }] }] } } as Pod);
    await client.updateStatus({ ...p, status: { phase: 'Running', podIP: '127.0.0.1', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } } as Pod);
  };

  before(async () => {
    upstream = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        if (req.url === '/go') {
          res.writeHead(302, { location: '/elsewhere' });
          return void res.end();
        }
        res.writeHead(200, { 'content-type': 'text/html', connection: 'close', 'x-app': 'yes' });
        res.end(`<a href="/abs">${req.method} ${req.url}</a>`);
      });
    });
    upstream.on('upgrade', (req, socket) => {
      seen.push({ method: 'upgrade', url: req.url ?? '', headers: req.headers, body: '' });
      socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    port = (upstream.address() as AddressInfo).port;
    client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    await client.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'web' }] } });
    await client.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'idle', namespace: 'default' }, spec: { selector: { app: 'idle' }, ports: [{ port: 80 }] } });
    await pod('web-1', { app: 'web' }, true);
    await pod('idle-1', { app: 'idle' }, false);
    const proxy = new KubeProxy(client);
    front = createServer((req, res) => {
      const route = matchProxy(req.url ?? '/');
      if (!route) return void res.writeHead(404).end();
      proxy.handle(req, res, route);
    });
    front.on('upgrade', (req, socket, head) => {
      if (!proxy.upgrade(req, socket, head)) socket.destroy();
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  });
  after(() => {
    upstream.close();
    front.close();
  });

  it('passes method, path, query and body on; credentials stay behind; Location and HTML come back as they are', async () => {
    const r = await call('POST', '/api/v1/namespaces/default/services/web:http/proxy/upload?x=1', 'abc', { authorization: 'Bearer secret', 'content-type': 'text/plain' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.text, '<a href="/abs">POST /upload?x=1</a>');
    assert.equal(r.headers['x-app'], 'yes');
    const last = seen.at(-1);
    assert.equal(last?.body, 'abc');
    assert.equal(last?.headers.authorization, undefined);
    assert.equal(last?.headers['content-type'], 'text/plain');
    const moved = await call('GET', '/api/v1/namespaces/default/services/web/proxy/go');
    assert.equal(moved.status, 302);
    assert.equal(moved.headers.location, '/elsewhere');
    const byPod = await call('GET', `/api/v1/namespaces/default/pods/web-1:${port}/proxy/p`);
    assert.equal(byPod.text, '<a href="/abs">GET /p</a>');
    const byName = await call('GET', '/api/v1/namespaces/default/pods/web-1:web/proxy/q');
    assert.equal(byName.text, '<a href="/abs">GET /q</a>');
  });

  it('splices a WebSocket upgrade to the Pod, credentials off; refuses one with 503 where no Pod is ready', async () => {
    const upgrade = (path: string): Promise<number> => new Promise((resolve, reject) => {
      const r = request({ host: '127.0.0.1', port: (front.address() as AddressInfo).port, path, headers: { connection: 'Upgrade', upgrade: 'websocket', authorization: 'Bearer secret' } });
      r.on('upgrade', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode ?? 0);
      });
      r.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      r.on('error', reject);
      r.end();
    });
    assert.equal(await upgrade('/api/v1/namespaces/default/services/web/proxy/api/kernels/1/channels?s=2'), 101);
    const last = seen.at(-1);
    assert.equal(last?.method, 'upgrade');
    assert.equal(last?.url, '/api/kernels/1/channels?s=2');
    assert.equal(last?.headers.authorization, undefined);
    assert.equal(last?.headers.upgrade, 'websocket');
    assert.equal(await upgrade('/api/v1/namespaces/default/services/idle/proxy/ws'), 503);
  });

  it('sends `.../proxy` on to `.../proxy/`', async () => {
    const r = await call('GET', '/api/v1/namespaces/default/services/web/proxy?a=1');
    assert.equal(r.status, 301);
    assert.equal(r.headers.location, '/api/v1/namespaces/default/services/web/proxy/?a=1');
  });

  it('503 naming why when no Pod is ready; 404 for no Service; 400 for https', async () => {
    const idle = await call('GET', '/api/v1/namespaces/default/services/idle/proxy/');
    assert.equal(idle.status, 503);
    assert.match(JSON.parse(idle.text).message, /no endpoints available for service "idle": none of the 1 Pod\(s\) its selector app=idle selects is ready/);
    await client.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'empty', namespace: 'default' }, spec: { selector: { app: 'none' }, ports: [{ port: 80 }] } });
    const empty = await call('GET', '/api/v1/namespaces/default/services/empty/proxy/');
    assert.equal(empty.status, 503);
    assert.match(JSON.parse(empty.text).message, /no Pod matches its selector app=none/);
    assert.equal((await call('GET', '/api/v1/namespaces/default/services/nothing/proxy/')).status, 404);
    assert.equal((await call('GET', '/api/v1/namespaces/default/services/https:web:80/proxy/')).status, 400);
    assert.equal((await call('GET', '/api/v1/namespaces/default/services/web:81/proxy/')).status, 503);
  });

  it('503 when the Pod does not answer', async () => {
    const p = await client.get<Pod>(Kinds.Pod, { namespace: 'default', name: 'web-1' });
    await client.updateStatus({ ...p, status: { ...p.status, podIP: '127.0.0.3' } } as Pod);
    const r = await call('GET', '/api/v1/namespaces/default/pods/web-1:1/proxy/');
    assert.equal(r.status, 503);
    assert.match(JSON.parse(r.text).message, /error trying to reach pod default\/web-1 at 127\.0\.0\.3:1/);
  });
});
