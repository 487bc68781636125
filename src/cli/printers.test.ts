import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildDiscovery, resolveResource, type Discovery } from './discovery.js';
import { buildTable, podSummary, renderTable, type TableOptions } from './printers.js';
import { describeObject, fields, genericLines, smartLabel } from './describe.js';
import type { Job, KEvent, KObject, Pod } from './types.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const ago = (s: number): string => new Date(NOW - s * 1000).toISOString();

const d: Discovery = buildDiscovery(
  { versions: ['v1'] },
  { groups: [{ name: 'batch', versions: [{ groupVersion: 'batch/v1', version: 'v1' }] }, { name: 'kubeflow.org', versions: [{ groupVersion: 'kubeflow.org/v1', version: 'v1' }] }, { name: 'example.com', versions: [{ groupVersion: 'example.com/v1', version: 'v1' }] }] },
  [
    {
      groupVersion: 'v1',
      resources: ['Pod', 'Event', 'Namespace', 'Node', 'ConfigMap', 'Secret', 'PersistentVolumeClaim'].map((kind) => ({
        name: `${kind.toLowerCase()}s`,
        singularName: kind.toLowerCase(),
        kind,
        namespaced: kind !== 'Namespace' && kind !== 'Node',
      })),
    },
    { groupVersion: 'batch/v1', resources: [{ name: 'jobs', singularName: 'job', kind: 'Job', namespaced: true }] },
    { groupVersion: 'kubeflow.org/v1', resources: [{ name: 'pytorchjobs', singularName: 'pytorchjob', kind: 'PyTorchJob', namespaced: true }] },
    { groupVersion: 'example.com/v1', resources: [{ name: 'widgets', singularName: 'widget', kind: 'Widget', namespaced: true }] },
  ],
);
const opts: TableOptions = { now: NOW };
const table = (kind: string, items: KObject[], o: Partial<TableOptions> = {}): string =>
  renderTable(buildTable(resolveResource(d, kind), items, { ...opts, ...o }));

function pod(name: string, status: Pod['status'], extra: Partial<Pod> = {}): Pod {
  return {
    metadata: { name, namespace: 'default', creationTimestamp: ago(65) },
    spec: { containers: [{ name: 'main' }], nodeName: 'local' },
    status,
    ...extra,
  };
}

void test('pod table: READY, STATUS from container reasons, RESTARTS, AGE', () => {
  const pods: Pod[] = [
    pod('running', { phase: 'Running', podIP: '10.0.0.5', containerStatuses: [{ name: 'main', ready: true, restartCount: 0, state: { running: { startedAt: ago(60) } } }] }),
    pod('crashing', {
      phase: 'Running',
      containerStatuses: [{ name: 'main', ready: false, restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, finishedAt: ago(30) } } }],
    }),
    pod('done', { phase: 'Succeeded', containerStatuses: [{ name: 'main', restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } }] }),
    pod('failed', { phase: 'Failed', containerStatuses: [{ name: 'main', restartCount: 0, state: { terminated: { exitCode: 2, reason: 'Error' } } }] }),
    pod('pending', { phase: 'Pending' }),
    pod('going', { phase: 'Running' }, { metadata: { name: 'going', creationTimestamp: ago(65), deletionTimestamp: ago(1) } }),
  ];
  assert.equal(
    table('pods', pods),
    [
      'NAME       READY   STATUS             RESTARTS      AGE',
      'running    1/1     Running            0             65s',
      'crashing   0/1     CrashLoopBackOff   4 (30s ago)   65s',
      'done       0/1     Completed          0             65s',
      'failed     0/1     Error              0             65s',
      'pending    0/1     Pending            0             65s',
      'going      0/1     Terminating        0             65s',
      '',
    ].join('\n'),
  );
  const wide = table('pods', pods.slice(0, 1), { wide: true, allNamespaces: true });
  assert.equal(wide, 'NAMESPACE   NAME      READY   STATUS    RESTARTS   AGE   IP         NODE\ndefault     running   1/1     Running   0          65s   10.0.0.5   local\n');
});

void test('pod status: init containers and exit codes without reasons', () => {
  const p = pod('init', {
    phase: 'Pending',
    initContainerStatuses: [{ name: 'setup', state: { running: {} } }],
  }, { spec: { initContainers: [{ name: 'setup' }], containers: [{ name: 'main' }] } });
  assert.equal(podSummary(p, NOW).status, 'Init:0/1');
  const sig = pod('sig', { phase: 'Failed', containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 137, signal: 9 } } }] });
  assert.equal(podSummary(sig, NOW).status, 'Signal:9');
  const code = pod('code', { phase: 'Failed', containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 3 } } }] });
  assert.equal(podSummary(code, NOW).status, 'ExitCode:3');
});

function job(name: string, spec: Job['spec'], status: Job['status']): Job {
  return { metadata: { name, namespace: 'default', creationTimestamp: ago(3 * 60 + 2) }, spec, status };
}

void test('job table: STATUS, COMPLETIONS, DURATION', () => {
  const jobs = [
    job('done', { completions: 1 }, { succeeded: 1, startTime: ago(180), completionTime: ago(168), conditions: [{ type: 'Complete', status: 'True' }] }),
    job('broken', { completions: 3 }, { failed: 2, startTime: ago(100), conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] }),
    job('paused', { suspend: true, completions: 1 }, { conditions: [{ type: 'Suspended', status: 'True' }] }),
    job('busy', { parallelism: 4, completions: null }, { active: 4, startTime: ago(90) }),
  ];
  assert.equal(
    table('jobs', jobs),
    [
      'NAME     STATUS      COMPLETIONS   DURATION   AGE',
      'done     Complete    1/1           12s        3m2s',
      'broken   Failed      0/3           100s       3m2s',
      'paused   Suspended   0/1                      3m2s',
      'busy     Running     0/1 of 4      90s        3m2s',
      '',
    ].join('\n'),
  );
});

void test('several kinds: names are prefixed with their type', () => {
  const t = table('jobs', [job('pi', { completions: 1 }, {})], { withKind: true });
  assert.match(t, /^job\.batch\/pi\s+Running/m);
});

void test('event, namespace, node, configmap, secret, pvc and generic tables', () => {
  const ev: KEvent = {
    metadata: { name: 'e1', namespace: 'default', creationTimestamp: ago(10) },
    involvedObject: { kind: 'Job', name: 'pi' },
    type: 'Normal',
    reason: 'SuccessfulCreate',
    message: 'Created pod: pi-abc',
    count: 3,
    firstTimestamp: ago(120),
    lastTimestamp: ago(10),
  };
  assert.equal(
    table('events', [ev]),
    'LAST SEEN          TYPE     REASON             OBJECT   MESSAGE\n10s (x3 over 2m)   Normal   SuccessfulCreate   job/pi   Created pod: pi-abc\n',
  );
  assert.equal(table('namespaces', [{ metadata: { name: 'default', creationTimestamp: ago(5) }, status: { phase: 'Active' } }]), 'NAME      STATUS   AGE\ndefault   Active   5s\n');
  const node: KObject = {
    metadata: { name: 'local', creationTimestamp: ago(2 * 86400 + 4 * 3600) },
    status: { conditions: [{ type: 'Ready', status: 'True' }], capacity: { cpu: '16', memory: '128Gi', 'nvidia.com/gpu': '1' } },
  };
  assert.equal(table('nodes', [node]), 'NAME    STATUS   AGE\nlocal   Ready    2d4h\n');
  assert.equal(table('nodes', [node], { wide: true }), 'NAME    STATUS   AGE    CPU   MEMORY   GPU\nlocal   Ready    2d4h   16    128Gi    1\n');
  assert.equal(table('configmaps', [{ metadata: { name: 'cm', creationTimestamp: ago(5) }, data: { a: '1', b: '2' } }]), 'NAME   DATA   AGE\ncm     2      5s\n');
  assert.equal(table('secrets', [{ metadata: { name: 's', creationTimestamp: ago(5) }, type: 'Opaque', data: { a: 'MQ==' } }]), 'NAME   TYPE     DATA   AGE\ns      Opaque   1      5s\n');
  assert.equal(table('persistentvolumeclaims', [{ metadata: { name: 'data', creationTimestamp: ago(5) }, status: { phase: 'Bound' } }]), 'NAME   STATUS   AGE\ndata   Bound    5s\n');
  assert.equal(table('widgets', [{ metadata: { name: 'w', creationTimestamp: ago(5) } }], { showLabels: true }), 'NAME   AGE   LABELS\nw      5s    <none>\n');
  assert.equal(
    table('pytorchjobs', [{ metadata: { name: 'mnist', creationTimestamp: ago(5) }, status: { conditions: [{ type: 'Created', status: 'True' }, { type: 'Running', status: 'True' }] } }]),
    'NAME    STATE     AGE\nmnist   Running   5s\n',
  );
});

void test('describe a job: fields, pod statuses, conditions, events', () => {
  const j: Job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'pi', namespace: 'default', uid: 'u1', labels: { app: 'pi' }, annotations: { note: 'hello', 'kubectl.kubernetes.io/last-applied-configuration': '{}' } },
    spec: { parallelism: 1, completions: 1, backoffLimit: 4, template: { metadata: { labels: { app: 'pi' } }, spec: { containers: [{ name: 'pi', image: 'perl', command: ['perl', '-e', 'print 1'] }] } } },
    status: { succeeded: 1, startTime: ago(30), completionTime: ago(20), conditions: [{ type: 'Complete', status: 'True', reason: 'Completed', message: 'Reached expected number of succeeded pods' }] },
  };
  const events: KEvent[] = [{ type: 'Normal', reason: 'Completed', message: 'Job completed', lastTimestamp: ago(20), source: { component: 'job-controller' } }];
  const text = describeObject(resolveResource(d, 'jobs'), j, events, NOW);
  assert.match(text, /^Name:\s+pi$/m);
  assert.match(text, /^Namespace:\s+default$/m);
  assert.match(text, /^Labels:\s+app=pi$/m);
  assert.match(text, /^Annotations:\s+note: hello$/m);
  assert.doesNotMatch(text, /last-applied/);
  assert.match(text, /^Parallelism:\s+1$/m);
  assert.match(text, /^Completions:\s+1$/m);
  assert.match(text, /^Pods Statuses:\s+0 Active \(0 Ready\) \/ 1 Succeeded \/ 0 Failed$/m);
  assert.match(text, /^Duration:\s+10s$/m);
  assert.match(text, /^ {2}Complete\s+True\s+Completed\s+Reached expected number of succeeded pods$/m);
  assert.match(text, /Events:\n {2}Type\s+Reason\s+Age\s+From\s+Message\n {2}----/);
  assert.match(text, /^ {2}Normal\s+Completed\s+20s\s+job-controller\s+Job completed$/m);
  assert.equal(describeObject(resolveResource(d, 'jobs'), j, [], NOW).trimEnd().split('\n').pop(), 'Events:  <none>');
});

void test('describe a pod: container state, exit code, restarts', () => {
  const p = pod('pi-x', {
    phase: 'Running',
    containerStatuses: [{
      name: 'main', ready: false, restartCount: 3,
      state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s' } },
      lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: ago(50), finishedAt: ago(45) } },
    }],
  }, { metadata: { name: 'pi-x', namespace: 'default', ownerReferences: [{ kind: 'Job', name: 'pi', controller: true }] } });
  const text = describeObject(resolveResource(d, 'pods'), p, undefined, NOW);
  assert.match(text, /^Containers:\n {2}main:$/m);
  assert.match(text, /^ {4}State:\s+Waiting$/m);
  assert.match(text, /^ {6}Reason:\s+CrashLoopBackOff$/m);
  assert.match(text, /^ {4}Last State:\s+Terminated$/m);
  assert.match(text, /^ {6}Exit Code:\s+1$/m);
  assert.match(text, /^ {4}Restart Count:\s+3$/m);
  assert.match(text, /^Controlled By:\s+Job\/pi$/m);
  assert.match(text, /Events:\s+<none>\n$/);
});

void test('describe helpers', () => {
  assert.deepEqual(fields([['Name', 'x'], ['Labels', ['a=1', 'b=2']]]), ['Name:    x', 'Labels:  a=1', '         b=2']);
  assert.equal(smartLabel('runPolicy'), 'Run Policy');
  assert.deepEqual(genericLines({ replicas: 2, template: { image: 'x' } }, 2), ['  Replicas:  2', '  Template:', '    Image:  x']);
});
