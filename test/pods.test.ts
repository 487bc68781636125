// Pods on the local substrate, end to end: real processes under the real server.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TestServer, podManifest, processesWith, sleep } from './harness.js';

const pods = '/api/v1/namespaces/default/pods';

describe('pods on the local substrate', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start({ config: { node: { cpu: 2, memory: '4Gi' } } });
  });
  after(async () => {
    await s.cleanup();
  });

  const phase = (name: string, want: string) => s.until(`${name} ${want}`, async () => {
    const p = await s.get(`${pods}/${name}`);
    return p.status?.phase === want ? p : undefined;
  });

  it('runs init containers in order, then the container, with env, $(VAR) expansion and downward API', async () => {
    await s.create('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { GREETING: 'hello', color: 'blue' } });
    await s.create('/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, stringData: { token: 's3cret' } });
    await s.create(pods, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'envy', labels: { app: 'envy' } },
      spec: {
        restartPolicy: 'Never',
        volumes: [{ name: 'shared', emptyDir: {} }],
        initContainers: [
          { name: 'first', image: 'python', command: ['sh', '-c', 'echo one > /shared/order'], volumeMounts: [{ name: 'shared', mountPath: '/shared' }] },
          { name: 'second', image: 'python', command: ['sh', '-c', 'echo two >> /shared/order'], volumeMounts: [{ name: 'shared', mountPath: '/shared' }] },
        ],
        containers: [{
          name: 'main', image: 'python',
          command: ['sh', '-c'],
          args: ['cat /shared/order; echo "$(GREETING) $NAME $POD $NS $APP $COLOR $TOKEN $LITERAL"; pwd'],
          workingDir: '/tmp',
          envFrom: [{ configMapRef: { name: 'settings' } }],
          env: [
            { name: 'NAME', value: 'world-$(GREETING)' },
            { name: 'LITERAL', value: '$$(GREETING) $(UNDEFINED)' },
            { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
            { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
            { name: 'COLOR', valueFrom: { configMapKeyRef: { name: 'settings', key: 'color' } } },
            { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'creds', key: 'token' } } },
          ],
          volumeMounts: [{ name: 'shared', mountPath: '/shared' }],
        }],
      },
    });
    const done = await phase('envy', 'Succeeded');
    assert.equal(done.status.initContainerStatuses.length, 2);
    assert.equal(done.status.containerStatuses[0].state.terminated.reason, 'Completed');
    assert.match(done.status.podIP, /^127\.1\./);
    const log = (await s.req('GET', `${pods}/envy/log`)).text;
    assert.equal(log, 'one\ntwo\nhello world-hello envy default envy blue s3cret $(GREETING) $(UNDEFINED)\n/tmp\n');
  });

  it('mounts configMap, secret, hostPath and PVC volumes at their mountPath', async (t) => {
    const host = mkdtempSync(join(tmpdir(), 'skiff-hostpath-'));
    t.after(() => rmSync(host, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));
    writeFileSync(join(host, 'from-host.txt'), 'host file');
    await s.create('/api/v1/namespaces/default/persistentvolumeclaims', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    await s.until('pvc bound', async () => (await s.get('/api/v1/namespaces/default/persistentvolumeclaims/data')).status?.phase === 'Bound');
    const write = podManifest('writer', ['sh', '-c', 'cat /etc/cfg/color /etc/creds/token /host/from-host.txt; echo; echo kept > /data/out.txt; hostname'], {
      volumes: [
        { name: 'cfg', configMap: { name: 'settings', items: [{ key: 'color', path: 'color' }] } },
        { name: 'creds', secret: { secretName: 'creds' } },
        { name: 'host', hostPath: { path: host } },
        { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
      ],
    });
    write.spec.containers[0].volumeMounts = [
      { name: 'cfg', mountPath: '/etc/cfg' }, { name: 'creds', mountPath: '/etc/creds', readOnly: true },
      { name: 'host', mountPath: '/host' }, { name: 'data', mountPath: '/data' },
    ];
    await s.create(pods, write);
    await phase('writer', 'Succeeded');
    assert.equal((await s.req('GET', `${pods}/writer/log`)).text, 'blues3crethost file\nwriter\n');
    // the claim outlives the pod
    const read = podManifest('reader', ['cat', '/data/out.txt'], { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] });
    read.spec.containers[0].volumeMounts = [{ name: 'data', mountPath: '/data' }];
    await s.create(pods, read);
    await phase('reader', 'Succeeded');
    assert.equal((await s.req('GET', `${pods}/reader/log`)).text, 'kept\n');
  });

  it('keeps a working directory when a volume is mounted over the data dir', async () => {
    // the test server's data dir lives under /tmp; a Pod that mounts an emptyDir at /tmp hides it
    const shadow = podManifest('shadow', ['sh', '-c', 'pwd; echo ok > made-here; ls'], { volumes: [{ name: 'tmp', emptyDir: {} }] });
    shadow.spec.containers[0].volumeMounts = [{ name: 'tmp', mountPath: '/tmp' }];
    shadow.spec.containers[0].workingDir = '/tmp/sub/dir';
    await s.create(pods, shadow);
    await phase('shadow', 'Succeeded');
    assert.equal((await s.req('GET', `${pods}/shadow/log`)).text, '/tmp/sub/dir\nmade-here\n');
    const plain = podManifest('shadow-default', ['pwd'], { volumes: [{ name: 'tmp', emptyDir: {} }] });
    plain.spec.containers[0].volumeMounts = [{ name: 'tmp', mountPath: '/tmp' }];
    await s.create(pods, plain);
    await phase('shadow-default', 'Succeeded');
    assert.equal((await s.req('GET', `${pods}/shadow-default/log`)).text, '/\n');
  });

  it('a missing command fails the container with a reason, not the server', async () => {
    await s.create(pods, podManifest('nocmd', ['no-such-command-xyz']));
    const p = await phase('nocmd', 'Failed');
    const t = p.status.containerStatuses[0].state.terminated;
    assert.equal(t.reason, 'StartError');
    assert.match(t.message, /no-such-command-xyz/);
    assert.equal((await s.req('GET', '/healthz')).text, 'ok');
  });

  it('a missing secret leaves the container waiting with CreateContainerConfigError until it appears', async () => {
    const m = podManifest('needs-secret', ['sh', '-c', 'echo $PASS']);
    m.spec.containers[0].env = [{ name: 'PASS', valueFrom: { secretKeyRef: { name: 'later', key: 'pass' } } }];
    await s.create(pods, m);
    await s.until('config error', async () => (await s.get(`${pods}/needs-secret`)).status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError');
    await s.create('/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'later' }, stringData: { pass: 'finally' } });
    await phase('needs-secret', 'Succeeded');
    assert.equal((await s.req('GET', `${pods}/needs-secret/log`)).text, 'finally\n');
  });

  it('restarts OnFailure with back-off and keeps the previous log', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-restart-'));
    t.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));
    // fails twice, then succeeds: the count lives in a hostPath file
    const m = podManifest('flaky', ['sh', '-c', 'n=$(cat /state/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /state/n; echo "attempt $n"; [ $n -ge 3 ]'], {
      restartPolicy: 'OnFailure', volumes: [{ name: 'state', hostPath: { path: dir } }],
    });
    m.spec.containers[0].volumeMounts = [{ name: 'state', mountPath: '/state' }];
    await s.create(pods, m);
    const p = await phase('flaky', 'Succeeded');
    assert.equal(p.status.containerStatuses[0].restartCount, 2);
    assert.equal(p.status.containerStatuses[0].lastState.terminated.exitCode, 1);
    assert.equal((await s.req('GET', `${pods}/flaky/log`)).text, 'attempt 3\n');
    assert.equal((await s.req('GET', `${pods}/flaky/log?previous=true`)).text, 'attempt 2\n');
    const ts = (await s.req('GET', `${pods}/flaky/log?timestamps=true`)).text;
    assert.match(ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z attempt 3\n$/);
  });

  it('shows CrashLoopBackOff for a container that keeps failing under restartPolicy Always', async () => {
    await s.create(pods, { ...podManifest('crasher', ['sh', '-c', 'echo boom; exit 2']), spec: { ...podManifest('x', []).spec, restartPolicy: 'Always', containers: [{ name: 'main', image: 'python', command: ['sh', '-c', 'echo boom; exit 2'] }] } });
    const p = await s.until('crash loop', async () => {
      const o = await s.get(`${pods}/crasher`);
      return o.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff' && o.status.containerStatuses[0].restartCount >= 2 ? o : undefined;
    });
    assert.equal(p.status.phase, 'Running');
    assert.equal(p.status.containerStatuses[0].lastState.terminated.exitCode, 2);
    await s.req('DELETE', `${pods}/crasher`);
    await s.until('crasher gone', async () => (await s.req('GET', `${pods}/crasher`)).status === 404);
  });

  it('deletes gracefully: SIGTERM, then SIGKILL after the grace period, leaving no process', async () => {
    const marker = `sleep 3${Math.floor(Math.random() * 1e6)}`;
    await s.create(pods, podManifest('stubborn', ['sh', '-c', `trap '' TERM; ${marker} & ${marker} & wait`], { terminationGracePeriodSeconds: 1 }));
    await phase('stubborn', 'Running');
    // the two sleeps themselves (not the shell, whose command line names them too): the trap is set by then
    await s.until('children running', async () => processesWith(marker, true).length >= 2);
    const t0 = Date.now();
    const del = await s.req('DELETE', `${pods}/stubborn`);
    assert.equal(del.status, 200);
    assert.ok(del.body.metadata.deletionTimestamp);
    await s.until('pod gone', async () => (await s.req('GET', `${pods}/stubborn`)).status === 404);
    assert.ok(Date.now() - t0 >= 900, 'waited for the grace period');
    await s.until('no stray processes', async () => processesWith(marker).length === 0);
  });

  it('waits Pending with a reason when requests do not fit, and starts when room frees', async () => {
    const big = podManifest('big', ['sleep', '0.5']);
    big.spec.containers[0].resources = { requests: { cpu: '1500m' } };
    const bigger = podManifest('bigger', ['true']);
    bigger.spec.containers[0].resources = { requests: { cpu: '1' } };
    await s.create(pods, big);
    await phase('big', 'Running');
    await s.create(pods, bigger);
    const waiting = await s.until('unschedulable', async () => {
      const p = await s.get(`${pods}/bigger`);
      return p.status?.conditions?.find((c: any) => c.type === 'PodScheduled' && c.status === 'False') ? p : undefined;
    });
    assert.equal(waiting.status.phase, 'Pending');
    assert.match(waiting.status.conditions.find((c: any) => c.type === 'PodScheduled').message, /Insufficient cpu/);
    await phase('bigger', 'Succeeded');
    const tooBig = podManifest('too-big', ['true']);
    tooBig.spec.containers[0].resources = { requests: { 'nvidia.com/gpu': '1' } };
    await s.create(pods, tooBig);
    await s.until('gpu unschedulable', async () => /nvidia.com\/gpu/.test((await s.get(`${pods}/too-big`)).status?.conditions?.[0]?.message ?? ''));
  });

  it('follows a log while the container writes it, and tails', async () => {
    await s.create(pods, podManifest('counter', ['sh', '-c', 'for i in 1 2 3 4 5; do echo line $i; sleep 0.2; done']));
    await phase('counter', 'Running');
    const r = await fetch(`${s.url}${pods}/counter/log?follow=true`);
    const text = await r.text();
    assert.equal(text, 'line 1\nline 2\nline 3\nline 4\nline 5\n');
    assert.equal((await s.req('GET', `${pods}/counter/log?tailLines=2`)).text, 'line 4\nline 5\n');
  });

  it('resolves other pods by name inside the sandbox', async () => {
    await s.create(pods, podManifest('server-pod', ['sleep', '30']));
    const srv = await phase('server-pod', 'Running');
    await s.create(pods, podManifest('client-pod', ['sh', '-c', 'sleep 0.3; getent hosts server-pod | cut -d" " -f1']));
    await phase('client-pod', 'Succeeded');
    assert.equal((await s.req('GET', `${pods}/client-pod/log`)).text.trim(), srv.status.podIP);
    await s.req('DELETE', `${pods}/server-pod?gracePeriodSeconds=0`);
  });

  it('records Events a person would want to see', async () => {
    const evs = await s.get(`/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=flaky`);
    const reasons = new Set(evs.items.map((e: any) => e.reason));
    for (const r of ['Scheduled', 'Started', 'BackOff']) assert.ok(reasons.has(r), `missing ${r} in ${[...reasons].join(',')}`);
    assert.ok(existsSync(s.dataDir));
    await sleep(0);
  });
});
