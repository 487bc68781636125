/** Runs `main()` in-process against a tiny fake API server (src/cli/testing/fake-server.ts). */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { main } from './main.js';
import { setServerLoader } from './commands/up.js';
import { setAgentLoader, type StartNodeOptions } from './commands/node.js';
import type { CliIO } from './io.js';
import type { KObject } from './types.js';
import { FakeServer } from './testing/fake-server.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const ago = (s: number): string => new Date(NOW - s * 1000).toISOString();

let server: FakeServer;
let url = '';
let dir = '';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(argv: string[], io: Partial<CliIO> = {}): Promise<Result> {
  let stdout = '';
  let stderr = '';
  const code = await main([...argv, '--server', url], {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    env: {},
    cwd: dir,
    now: () => NOW,
    readStdin: async () => '',
    ...io,
  });
  return { code, stdout, stderr };
}

function piJob(conditions: { type: string; status: string; reason?: string; message?: string }[] = []): KObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'pi', namespace: 'default', uid: 'job-uid-1', creationTimestamp: ago(65), labels: { app: 'pi' } },
    spec: { parallelism: 1, completions: 1, backoffLimit: 4, template: { spec: { containers: [{ name: 'pi', image: 'perl' }], restartPolicy: 'Never' } } },
    status: { active: conditions.length ? 0 : 1, succeeded: 0, startTime: ago(60), conditions },
  };
}

function piPod(name: string, createdAgo: number): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      creationTimestamp: ago(createdAgo),
      labels: { 'batch.kubernetes.io/job-name': 'pi' },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'pi', uid: 'job-uid-1', controller: true }],
    },
    spec: { containers: [{ name: 'pi', image: 'perl' }] },
    status: { phase: 'Succeeded', containerStatuses: [{ name: 'pi', restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } }] },
  };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skiff-cli-main-'));
});

beforeEach(async () => {
  await server?.close();
  server = new FakeServer();
  url = await server.start();
  server.put(piJob());
});

after(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

void test('get jobs prints a kubectl-style table', async () => {
  const r = await run(['get', 'jobs']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'NAME   STATUS    COMPLETIONS   DURATION   AGE\npi     Running   0/1           60s        65s\n');
  const paths = server.requests.map((q) => q.path);
  assert.ok(paths.includes('/api') && paths.includes('/apis') && paths.includes('/apis/batch/v1'), 'uses discovery');
  assert.ok(paths.includes('/apis/batch/v1/namespaces/default/jobs'));
});

void test('get by name, -o json / yaml / name, -A, short and qualified kinds', async () => {
  const one = await run(['get', 'job.batch', 'pi', '-o', 'json']);
  assert.equal(one.code, 0, one.stderr);
  const obj = JSON.parse(one.stdout) as KObject;
  assert.equal(obj.kind, 'Job');
  assert.equal(obj.metadata?.name, 'pi');

  const list = JSON.parse((await run(['get', 'jobs', '-o', 'json'])).stdout) as { kind: string; apiVersion: string; items: KObject[] };
  assert.equal(list.kind, 'List');
  assert.equal(list.apiVersion, 'v1');
  assert.equal(list.items[0]?.kind, 'Job', 'items get their apiVersion/kind back');

  assert.match((await run(['get', 'job/pi', '-o', 'yaml'])).stdout, /^apiVersion: batch\/v1\nkind: Job\n/);
  assert.equal((await run(['get', 'Job', '-o', 'name'])).stdout, 'job.batch/pi\n');
  const all = await run(['get', 'jobs', '-A']);
  assert.match(all.stdout, /^NAMESPACE\s+NAME\s+STATUS/);
  assert.match(all.stdout, /\ndefault\s+pi\s+Running/);
  assert.ok(server.requests.some((q) => q.path === '/apis/batch/v1/jobs'));
});

void test('get: several kinds, empty namespace, selectors', async () => {
  server.put(piPod('pi-aaaaa', 50));
  const both = await run(['get', 'jobs,pods']);
  assert.match(both.stdout, /^NAME\s+STATUS\s+COMPLETIONS.*\njob\.batch\/pi\s+Running.*\n\nNAME\s+READY\s+STATUS.*\npod\/pi-aaaaa\s+0\/1\s+Completed\s+0\s+50s\n$/);

  const empty = await run(['get', 'pods', '-n', 'team-a']);
  assert.equal(empty.code, 0);
  assert.equal(empty.stdout, '');
  assert.equal(empty.stderr, 'No resources found in team-a namespace.\n');

  const sel = await run(['get', 'pods', '-l', 'batch.kubernetes.io/job-name=other', '--field-selector', 'status.phase=Succeeded']);
  assert.equal(sel.stderr, 'No resources found in default namespace.\n');
  const listReq = server.requests.filter((q) => q.path === '/api/v1/namespaces/default/pods').pop();
  assert.equal(listReq?.query.get('labelSelector'), 'batch.kubernetes.io/job-name=other');
  assert.equal(listReq?.query.get('fieldSelector'), 'status.phase=Succeeded');
});

void test('errors are one line: NotFound, unknown kind, unknown flag, missing argument', async () => {
  const nf = await run(['get', 'job', 'nope']);
  assert.equal(nf.code, 1);
  assert.equal(nf.stderr, 'Error from server (NotFound): jobs.batch "nope" not found\n');

  const kind = await run(['get', 'foo']);
  assert.equal(kind.code, 1);
  assert.equal(kind.stderr, 'error: the server doesn\'t have a resource type "foo"\n');

  const flag = await run(['get', 'jobs', '--bogus']);
  assert.equal(flag.code, 1);
  assert.equal(flag.stderr, "error: unknown flag: --bogus\nSee 'skiff get --help' for usage.\n");

  const missing = await run(['get']);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^error: you must specify the type of resource to get\nSee 'skiff get --help' for usage\.\n$/);

  const help = await run(['wait', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage:\n {2}skiff wait/m);
});

void test('server down: a clear line, no stack trace', async () => {
  const port = await new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  let stderr = '';
  const code = await main(['get', 'jobs'], {
    stdout: () => {},
    stderr: (t) => void (stderr += t),
    env: { SKIFF_SERVER: `http://127.0.0.1:${port}` },
  });
  assert.equal(code, 1);
  assert.equal(
    stderr,
    `error: cannot reach the Skiff server at http://127.0.0.1:${port} (connection refused); start it with 'skiff up' or set SKIFF_SERVER\n`,
  );
});

void test('apply: created, unchanged, configured; a failing document does not stop the others', async () => {
  const file = join(dir, 'apply.yaml');
  const doc = (name: string, parallelism: number): string =>
    `apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: ${name}\nspec:\n  parallelism: ${parallelism}\n  template:\n    spec:\n      containers:\n      - name: c\n        image: busybox\n      restartPolicy: Never\n`;
  await writeFile(file, `${doc('one', 1)}---\n${doc('two', 1)}`);
  const first = await run(['apply', '-f', file]);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stdout, 'job.batch/one created\njob.batch/two created\n');
  const created = server.get('batch/v1', 'Job', 'default', 'one');
  assert.equal(created?.metadata?.namespace, 'default');

  const again = await run(['apply', '-f', file]);
  assert.equal(again.stdout, 'job.batch/one unchanged\njob.batch/two unchanged\n');

  await writeFile(file, `${doc('one', 2)}---\n${doc('bad', -1)}---\n${doc('two', 1)}`);
  const third = await run(['apply', '-f', file]);
  assert.equal(third.code, 1);
  assert.equal(third.stdout, 'job.batch/one configured\njob.batch/two unchanged\n');
  assert.equal(
    third.stderr,
    'Error from server (Invalid): Job.batch "bad" is invalid: spec.parallelism: Invalid value: -1: must be greater than or equal to 0\n',
  );
  const put = server.requests.find((q) => q.method === 'PUT');
  assert.equal(put?.path, '/apis/batch/v1/namespaces/default/jobs/one');
  assert.equal((put?.body as KObject).metadata?.resourceVersion, created?.metadata?.resourceVersion, 'PUT carries the live resourceVersion');
  assert.equal((server.get('batch/v1', 'Job', 'default', 'one')?.spec as { parallelism: number }).parallelism, 2);
});

void test('apply: -n, stdin, JSON List, bad YAML and unknown kinds', async () => {
  const list = JSON.stringify({
    apiVersion: 'v1',
    kind: 'List',
    items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { a: '1' } }],
  });
  const fromStdin = await run(['apply', '-f', '-', '-n', 'team-a'], { readStdin: async () => list });
  assert.equal(fromStdin.code, 0, fromStdin.stderr);
  assert.equal(fromStdin.stdout, 'configmap/cfg created\n');
  assert.ok(server.get('v1', 'ConfigMap', 'team-a', 'cfg'));

  const bad = join(dir, 'bad.yaml');
  await writeFile(bad, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [x\n---\napiVersion: example.com/v1\nkind: Gizmo\nmetadata:\n  name: g\n');
  const r = await run(['apply', '-f', bad]);
  assert.equal(r.code, 1);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 2);
  assert.match(lines[0] ?? '', /^error: .*bad\.yaml: invalid YAML at line 5: /);
  assert.match(lines[1] ?? '', /^error: .*bad\.yaml: no matches for kind "Gizmo" in version "example\.com\/v1"/);

  const noFile = await run(['apply']);
  assert.equal(noFile.code, 1);
  assert.match(noFile.stderr, /^error: you must specify at least one manifest with -f/);
});

void test('describe job: fields and the events about it (by uid)', async () => {
  server.put({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'pi.1', namespace: 'default', creationTimestamp: ago(30) },
    involvedObject: { kind: 'Job', name: 'pi', namespace: 'default', uid: 'job-uid-1' },
    type: 'Normal',
    reason: 'SuccessfulCreate',
    message: 'Created pod: pi-aaaaa',
    lastTimestamp: ago(30),
    source: { component: 'job-controller' },
  });
  server.put({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'other.1', namespace: 'default' },
    involvedObject: { kind: 'Job', name: 'other', uid: 'other-uid' },
    type: 'Warning',
    reason: 'Nope',
    message: 'not about pi',
  });
  const r = await run(['describe', 'job', 'pi']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Name:\s+pi\n/);
  assert.match(r.stdout, /^Pods Statuses:\s+1 Active \(0 Ready\) \/ 0 Succeeded \/ 0 Failed$/m);
  assert.match(r.stdout, /\nEvents:\n {2}Type\s+Reason\s+Age\s+From\s+Message\n/);
  assert.match(r.stdout, /^ {2}Normal\s+SuccessfulCreate\s+30s\s+job-controller\s+Created pod: pi-aaaaa$/m);
  assert.doesNotMatch(r.stdout, /not about pi/);
  const evReq = server.requests.find((q) => q.path === '/api/v1/namespaces/default/events');
  assert.equal(evReq?.query.get('fieldSelector'), 'involvedObject.uid=job-uid-1');
});

void test('delete: prints deleted and waits for the object to go', async () => {
  const r = await run(['delete', 'job', 'pi']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'job.batch "pi" deleted\n');
  const del = server.requests.find((q) => q.method === 'DELETE');
  assert.equal(del?.query.get('propagationPolicy'), 'Background');
  const lastGet = server.requests.filter((q) => q.method === 'GET' && q.path === '/apis/batch/v1/namespaces/default/jobs/pi').pop();
  assert.ok(lastGet, 'polled the object');
  const again = await run(['delete', 'job', 'pi']);
  assert.equal(again.code, 1);
  assert.equal(again.stderr, 'Error from server (NotFound): jobs.batch "pi" not found\n');
  assert.equal((await run(['delete', 'job', 'pi', '--ignore-not-found'])).code, 0);
});

void test('delete -f removes what the manifests name', async () => {
  const file = join(dir, 'del.yaml');
  await writeFile(file, 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pi\n');
  const r = await run(['delete', '-f', file, '--wait=false']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'job.batch "pi" deleted\n');
  assert.equal(server.get('batch/v1', 'Job', 'default', 'pi'), undefined);
});

void test('logs job/NAME picks the oldest pod and streams its log', async () => {
  server.put(piPod('pi-newer', 10));
  server.put(piPod('pi-older', 40));
  server.logs.set('default/pi-older', '3.14159\n');
  const r = await run(['logs', 'job/pi', '--tail', '5', '--timestamps']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '3.14159\n');
  assert.equal(r.stderr, 'Found 2 pods, using pod/pi-older\n');
  const logReq = server.requests.find((q) => q.path.endsWith('/log'));
  assert.equal(logReq?.path, '/api/v1/namespaces/default/pods/pi-older/log');
  assert.equal(logReq?.query.get('tailLines'), '5');
  assert.equal(logReq?.query.get('timestamps'), 'true');
  assert.equal(logReq?.query.get('follow'), null);
  const podsReq = server.requests.find((q) => q.path === '/api/v1/namespaces/default/pods');
  assert.equal(podsReq?.query.get('labelSelector'), 'batch.kubernetes.io/job-name=pi');

  const direct = await run(['logs', 'pi-newer']);
  assert.equal(direct.code, 1, 'no log stored for that pod: the server says NotFound');
  assert.match(direct.stderr, /^Error from server \(NotFound\)/);
});

void test('logs pytorchjob/NAME shows the master; --replica TYPE-INDEX picks another', async () => {
  server.put({ apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name: 'mnist', namespace: 'default', uid: 'ptj-uid', creationTimestamp: ago(60) }, spec: {} });
  const replica = (type: string, index: number, role?: string): KObject => ({
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name: `mnist-${type}-${index}`, namespace: 'default', creationTimestamp: ago(50 - index),
      labels: { 'training.kubeflow.org/job-name': 'mnist', 'training.kubeflow.org/replica-type': type, 'training.kubeflow.org/replica-index': String(index), ...(role ? { 'training.kubeflow.org/job-role': role } : {}) },
      ownerReferences: [{ apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', name: 'mnist', uid: 'ptj-uid', controller: true }],
    },
    spec: { containers: [{ name: 'pytorch', image: 'python' }] },
    status: { phase: 'Running' },
  });
  server.put(replica('worker', 0));
  server.put(replica('worker', 1));
  server.put(replica('master', 0, 'master'));
  server.logs.set('default/mnist-master-0', 'master log\n');
  server.logs.set('default/mnist-worker-1', 'worker 1 log\n');
  const m = await run(['logs', 'pytorchjob/mnist']);
  assert.equal(m.code, 0, m.stderr);
  assert.equal(m.stdout, 'master log\n');
  const w = await run(['logs', 'pytorchjob/mnist', '--replica', 'worker-1']);
  assert.equal(w.code, 0, w.stderr);
  assert.equal(w.stdout, 'worker 1 log\n');
  const bad = await run(['logs', 'pytorchjob/mnist', '--replica', 'worker-7', '--pod-running-timeout', '0s']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /has no replica "worker-7" \(its replicas: master-0, worker-0, worker-1\)/);
  const notTraining = await run(['logs', 'job/pi', '--replica', 'worker-1']);
  assert.equal(notTraining.code, 1);
});

void test('wait: a watch event with Complete=True meets the condition', async () => {
  server.onWatch = ({ query }) => {
    assert.equal(query.get('fieldSelector'), 'metadata.name=pi');
    assert.ok(query.get('resourceVersion'));
    setTimeout(() => server.put(piJob([{ type: 'Complete', status: 'True', reason: 'Completed' }])), 20);
  };
  const r = await run(['wait', 'job/pi', '--for=condition=Complete', '--timeout=10s']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'job.batch/pi condition met\n');
});

void test('wait: the opposite terminal condition fails at once', async () => {
  server.onWatch = () => {
    setTimeout(() => server.put(piJob([{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }])), 20);
  };
  const r = await run(['wait', 'job/pi', '--for', 'condition=Complete', '--timeout=30s']);
  assert.equal(r.code, 1);
  // the failure itself, not the timeout's message: it did not wait the 30 s out
  assert.equal(r.stderr, 'error: job.batch/pi failed: BackoffLimitExceeded: Job has reached the specified backoff limit\n');
});

void test('wait: already met, timeout, condition=false, delete', async () => {
  server.put(piJob([{ type: 'Complete', status: 'True' }]));
  assert.equal((await run(['wait', 'job', 'pi', '--for=condition=complete'])).stdout, 'job.batch/pi condition met\n');

  const t = await run(['wait', 'job/pi', '--for=condition=Ready', '--timeout=300ms']);
  assert.equal(t.code, 1);
  assert.equal(t.stderr, 'error: timed out after 300ms waiting for condition Ready on job.batch/pi\n');

  assert.equal((await run(['wait', 'job/pi', '--for=condition=Failed=false', '--timeout=300ms'])).code, 1, 'no Failed condition at all');

  server.onWatch = () => setTimeout(() => server.remove(piJob()), 20);
  const d = await run(['wait', 'job/pi', '--for=delete', '--timeout=10s']);
  assert.equal(d.code, 0, d.stderr);
  assert.equal(d.stdout, 'job.batch/pi condition met\n');

  const bad = await run(['wait', 'job/pi', '--for=ready']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^error: unrecognized condition: "ready"/);
});

void test('get -w prints the table, then a line per event', async () => {
  const ac = new AbortController();
  server.onWatch = () => {
    setTimeout(() => server.put(piJob([{ type: 'Complete', status: 'True' }])), 20);
  };
  let stdout = '';
  const done = main(['get', 'jobs', '-w', '--server', url], {
    stdout: (t) => {
      stdout += t;
      if (stdout.split('\n').length > 3) ac.abort();
    },
    stderr: () => {},
    now: () => NOW,
    signal: ac.signal,
  });
  const code = await done;
  assert.equal(code, 0);
  assert.equal(
    stdout,
    'NAME   STATUS    COMPLETIONS   DURATION   AGE\npi     Running   0/1           60s        65s\npi     Complete   0/1           60s        65s\n',
  );
});

void test('version and api-resources', async () => {
  const v = await run(['version']);
  assert.equal(v.code, 0);
  assert.match(v.stdout, /^Client Version: \d+\.\d+\.\d+\nServer Version: v0\.1\.0-test \(linux\/amd64\)\n$/);
  const ar = await run(['api-resources']);
  assert.match(ar.stdout, /^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND\n/);
  assert.match(ar.stdout, /^jobs\s+batch\/v1\s+true\s+Job$/m);
  assert.match(ar.stdout, /^pods\s+po\s+v1\s+true\s+Pod$/m);
  assert.doesNotMatch(ar.stdout, /\/status/);
});

void test('up starts the platform, prints where, and stops when signalled', async () => {
  const calls: unknown[] = [];
  let stopped = false;
  setServerLoader(async () => async (opts) => {
    calls.push(opts);
    return { url: 'http://127.0.0.1:9999', stop: async () => void (stopped = true) };
  });
  const ac = new AbortController();
  let stdout = '';
  const p = main(['up', '--data-dir', join(dir, 'data'), '--port', '9999'], {
    stdout: (t) => {
      stdout += t;
      ac.abort();
    },
    stderr: () => {},
    signal: ac.signal,
    cwd: dir,
  });
  assert.equal(await p, 0);
  assert.equal(stdout, `Skiff is ready at http://127.0.0.1:9999 (data in ${join(dir, 'data')})\n`);
  assert.deepEqual(calls, [{ dataDir: join(dir, 'data'), port: 9999 }]);
  assert.equal(stopped, true);
});

void test('up on a cluster: the --leader-elect-* flags, and an exit with status 1 when leadership is lost', async () => {
  for (const [argv, message] of [
    [['up', '--leader-elect-lease-duration', '4s'], /--leader-elect-\* flags need --kubeconfig or --in-cluster/],
    [['up', '--kubeconfig', 'kc', '--leader-elect-lease-duration', 'soon'], /invalid --leader-elect-lease-duration "soon"/],
    // the renew deadline's default (10 s) is longer than this lease
    [['up', '--kubeconfig', 'kc', '--leader-elect-lease-duration', '4s'], /the lease duration must be greater than the renew deadline/],
    [['up', '--kubeconfig', 'kc', '--leader-elect-lease-duration', '4s', '--leader-elect-renew-deadline', '3s', '--leader-elect-retry-period', '3s'], /greater than 1\.2 times the retry period/],
    [['up', '--webhook-port', '9443'], /--webhook-host and --webhook-port need --kubeconfig or --in-cluster/],
    [['up', '--kubeconfig', 'kc', '--webhook-port', '94430'], /invalid --webhook-port "94430": expected a number from 0 to 65535/],
    [['up', '--kubeconfig', 'kc', '--webhook-host', 'https://x/'], /invalid --webhook-host "https:\/\/x\/": expected a host name or an IP address/],
  ] as [string[], RegExp][]) {
    setServerLoader(async () => async () => assert.fail('not started with bad flags'));
    const r = await run(argv);
    assert.notEqual(r.code, 0, argv.join(' '));
    assert.match(r.stderr, message);
  }
  const calls: unknown[] = [];
  let stopped = false;
  let lose: (why: string) => void = () => undefined;
  setServerLoader(async () => async (opts) => {
    calls.push(opts);
    return {
      url: 'http://127.0.0.1:9999', stop: async () => void (stopped = true),
      leaderElection: { lease: 'skiff-system/skiff-controllers', identity: 'host_1', isLeader: () => true, lost: new Promise<string>((r) => (lose = r)) },
    };
  });
  let stderr = '';
  const code = await main(['up', '--data-dir', join(dir, 'data'), '--kubeconfig', 'kc', '--webhook-host', '10.0.0.7', '--webhook-port', '8443', '--leader-elect-resource-namespace', 'ml', '--leader-elect-lease-duration', '4s', '--leader-elect-renew-deadline', '3s', '--leader-elect-retry-period', '1s'], {
    stdout: () => lose('Lease ml/skiff-controllers is held by host_2'),
    stderr: (t) => void (stderr += t),
    signal: new AbortController().signal,
    cwd: dir,
  });
  assert.equal(code, 1);
  assert.deepEqual(calls, [{ dataDir: join(dir, 'data'), kubeconfig: join(dir, 'kc'), webhook: { host: '10.0.0.7', port: 8443 }, leaderElection: { namespace: 'ml', leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 1000 } }]);
  assert.match(stderr, /Leader election on Lease skiff-system\/skiff-controllers as host_1/);
  assert.match(stderr, /leader election lost: Lease ml\/skiff-controllers is held by host_2/);
  assert.equal(stopped, true);
});

void test('node checks its flags, starts the agent, and stops when signalled', async () => {
  for (const [argv, message] of [
    [['node', '--name', 'a'], /--kubeconfig is required/],
    [['node', '--kubeconfig', 'kc'], /--name is required/],
    [['node', '--kubeconfig', 'kc', '--name', 'Bad_Name'], /invalid --name "Bad_Name"/],
    [['node', '--kubeconfig', 'kc', '--name', 'a', '--node-ip', 'nowhere'], /invalid --node-ip "nowhere"/],
    [['node', '--kubeconfig', 'kc', '--name', 'a', '--kubelet-port', '70000'], /invalid --kubelet-port "70000"/],
    [['node', '--kubeconfig', 'kc', '--name', 'a', '--pod-cidr', '127.65.0.0'], /invalid --pod-cidr "127.65.0.0"/],
  ] as [string[], RegExp][]) {
    const r = await run(argv);
    assert.notEqual(r.code, 0, argv.join(' '));
    assert.match(r.stderr, message);
  }
  const calls: StartNodeOptions[] = [];
  let stopped = false;
  setAgentLoader(async () => async (opts) => {
    calls.push(opts);
    return { server: 'https://127.0.0.1:6443', kubeletUrl: 'https://127.0.0.1:10250', warnings: ['no client CA'], stop: async () => { stopped = true; return 0; } };
  });
  const ac = new AbortController();
  let stdout = '';
  let stderr = '';
  const code = await main(['node', '--kubeconfig', 'kc', '--name', 'worker-1', '--data-dir', 'd', '--node-ip', '127.0.0.1', '--pod-cidr', '127.65.0.0/24', '--kubelet-port', '10250'], {
    stdout: (t) => {
      stdout += t;
      ac.abort();
    },
    stderr: (t) => void (stderr += t),
    signal: ac.signal,
    cwd: dir,
  });
  assert.equal(code, 0);
  assert.equal(stdout, `Node worker-1 is ready in the cluster at https://127.0.0.1:6443 (kubelet API at https://127.0.0.1:10250, data in ${join(dir, 'd')})\n`);
  assert.match(stderr, /warning: no client CA/);
  assert.deepEqual(calls, [{ kubeconfig: join(dir, 'kc'), nodeName: 'worker-1', dataDir: join(dir, 'd'), nodeIp: '127.0.0.1', podCidr: '127.65.0.0/24', kubeletPort: 10250 }]);
  assert.equal(stopped, true);
});
