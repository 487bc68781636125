import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultRegistry, Kinds } from '../../api/index.js';
import { ApiError } from '../../api/errors.js';
import { JsonPath } from '../../util/jsonpath.js';
import { eventView, includeObjectOf, negotiateView, tableColumns, toTable, viewOf, type ResponseView } from './table.js';

const now = Date.parse('2026-01-01T12:00:00Z');
const ago = (s: number): string => new Date(now - s * 1000).toISOString();
const v1: ResponseView = { as: 'Table', apiVersion: 'meta.k8s.io/v1', mediaType: 'application/json' };
const kubectlAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

/** the cells of one object's row, by column name */
function row(def: (typeof Kinds)[keyof typeof Kinds], obj: unknown): Record<string, unknown> {
  const t = toTable(def, obj, v1, { includeObject: 'None', now });
  const cells = t.rows[0]?.cells ?? [];
  return Object.fromEntries((t.columnDefinitions ?? []).map((c, i) => [c.name, cells[i]]));
}

function pod(status: Record<string, unknown>, spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): unknown {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', creationTimestamp: ago(300), resourceVersion: '7', ...meta },
    spec: { containers: [{ name: 'main', image: 'python' }], nodeName: 'skiff', ...spec },
    status,
  };
}

const running = { running: { startedAt: ago(60) } };

describe('Table negotiation', () => {
  it('answers a Table for kubectl’s Accept, v1 or v1beta1, and the objects otherwise', () => {
    assert.deepEqual(negotiateView(kubectlAccept), v1);
    assert.equal(negotiateView('application/json;as=Table;v=v1beta1;g=meta.k8s.io')?.apiVersion, 'meta.k8s.io/v1beta1');
    assert.equal(negotiateView('application/yaml;as=Table;v=v1;g=meta.k8s.io')?.mediaType, 'application/yaml');
    assert.equal(negotiateView('application/json'), undefined);
    assert.equal(negotiateView(undefined), undefined);
    assert.equal(negotiateView('*/*'), undefined);
    // the plain JSON asked first wins; a higher q wins over order
    assert.equal(negotiateView('application/json,application/json;as=Table;v=v1;g=meta.k8s.io'), undefined);
    assert.deepEqual(negotiateView('application/json;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io'), v1);
    // an unknown version of Table is passed over for the next range
    assert.equal(negotiateView('application/json;as=Table;v=v2;g=meta.k8s.io,application/json'), undefined);
    assert.equal(negotiateView('application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io')?.as, 'Table');
  });

  it('refuses with 406 when every range asks for a shape Skiff cannot give', () => {
    assert.throws(() => negotiateView('application/json;as=Table;v=v2;g=meta.k8s.io'), (e: ApiError) => e.code === 406 && e.reason === 'NotAcceptable' && /only the following media types are accepted: application\/json, application\/yaml/.test(e.message));
  });

  it('reads includeObject and refuses other values as kube-apiserver does', () => {
    assert.equal(includeObjectOf(new URL('http://x/api/v1/pods')), 'Metadata');
    assert.equal(includeObjectOf(new URL('http://x/api/v1/pods?includeObject=Object')), 'Object');
    assert.throws(() => includeObjectOf(new URL('http://x/api/v1/pods?includeObject=All')), (e: ApiError) => e.code === 400 && e.message === `Unable to convert to Table as requested: includeObject: Invalid value: "All": must be 'Metadata', 'Object', 'None', or empty`);
  });
});

describe('Table shape', () => {
  const p = pod({ phase: 'Running', podIP: '10.0.0.5', containerStatuses: [{ name: 'main', ready: true, restartCount: 0, state: running }] });

  it('holds column definitions, rows with cells, and each object as asked', () => {
    const meta = toTable(Kinds.Pod, p, v1, { includeObject: 'Metadata', now });
    assert.equal(meta.kind, 'Table');
    assert.equal(meta.apiVersion, 'meta.k8s.io/v1');
    assert.deepEqual(meta.metadata, { resourceVersion: '7' });
    assert.deepEqual(meta.columnDefinitions?.map((c) => [c.name, c.priority]), [['Name', 0], ['Ready', 0], ['Status', 0], ['Restarts', 0], ['Age', 0], ['IP', 1], ['Node', 1], ['Nominated Node', 1], ['Readiness Gates', 1]]);
    assert.deepEqual(Object.keys(meta.columnDefinitions?.[0] ?? {}), ['name', 'type', 'format', 'description', 'priority']);
    assert.equal(meta.columnDefinitions?.[0]?.format, 'name');
    assert.match(meta.columnDefinitions?.[0]?.description ?? '', /^Name must be unique within a namespace/);
    assert.deepEqual(meta.rows[0]?.object, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: (p as any).metadata });
    assert.equal(toTable(Kinds.Pod, p, v1, { includeObject: 'None', now }).rows[0]?.object, null);
    assert.equal(toTable(Kinds.Pod, p, v1, { includeObject: 'Object', now }).rows[0]?.object, p);
    const beta = toTable(Kinds.Pod, p, { ...v1, apiVersion: 'meta.k8s.io/v1beta1' }, { includeObject: 'Metadata', now });
    assert.equal((beta.rows[0]?.object as any).apiVersion, 'meta.k8s.io/v1beta1');
  });

  it('a list gives one row per item and the list’s resourceVersion and continue token', () => {
    const t = toTable(Kinds.Pod, { metadata: { resourceVersion: '42', continue: 'abc', remainingItemCount: 3 }, items: [p, p] }, v1, { includeObject: 'None', now });
    assert.equal(t.rows.length, 2);
    assert.deepEqual(t.metadata, { resourceVersion: '42', continue: 'abc', remainingItemCount: 3 });
    assert.deepEqual(toTable(Kinds.Pod, { metadata: {}, items: [] }, v1, { includeObject: 'None', now }).rows, []);
  });

  it('a watch sends the column definitions with its first event only, and passes errors through', () => {
    const view = eventView(Kinds.Pod, v1, new URL('http://x/api/v1/pods?watch=true')) as NonNullable<ReturnType<typeof eventView>>;
    const first = view({ type: 'ADDED', object: p }) as any;
    const second = view({ type: 'MODIFIED', object: p }) as any;
    assert.equal(first.type, 'ADDED');
    assert.equal(first.object.kind, 'Table');
    assert.equal(first.object.columnDefinitions.length, 9);
    assert.equal(first.object.rows.length, 1);
    assert.equal(second.object.columnDefinitions, null);
    assert.equal(second.object.rows[0].cells[0], 'p');
    // the bookmark ending a watch's initial events keeps its metadata (and annotation) whatever was asked
    const none = eventView(Kinds.Pod, v1, new URL('http://x/api/v1/pods?includeObject=None')) as NonNullable<ReturnType<typeof eventView>>;
    const bookmark = { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '12', annotations: { 'k8s.io/initial-events-end': 'true' } } };
    const marked = none({ type: 'BOOKMARK', object: bookmark }) as any;
    assert.deepEqual([marked.type, marked.object.metadata, marked.object.rows[0].object], ['BOOKMARK', { resourceVersion: '12' }, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: bookmark.metadata }]);
    assert.equal((none({ type: 'ADDED', object: p }) as any).object.rows[0].object, null);
    const status = { kind: 'Status', apiVersion: 'v1', code: 410 };
    assert.deepEqual(view({ type: 'ERROR', object: status }), { type: 'ERROR', object: status });
  });
});

describe('Pod columns (kubectl’s READY, STATUS, RESTARTS)', () => {
  it('a running Pod', () => {
    const r = row(Kinds.Pod, pod({ phase: 'Running', podIP: '10.0.0.5', containerStatuses: [{ name: 'main', ready: true, restartCount: 0, state: running }] }));
    assert.deepEqual(r, { Name: 'p', Ready: '1/1', Status: 'Running', Restarts: '0', Age: '5m', IP: '10.0.0.5', Node: 'skiff', 'Nominated Node': '<none>', 'Readiness Gates': '<none>' });
  });

  it('a Pod not yet scheduled or started', () => {
    const r = row(Kinds.Pod, pod({ phase: 'Pending' }, { nodeName: undefined }));
    assert.equal(r.Status, 'Pending');
    assert.equal(r.Ready, '0/1');
    assert.equal(r.Node, '<none>');
    assert.equal(r.IP, '<none>');
    assert.equal(row(Kinds.Pod, pod({ phase: 'Pending', containerStatuses: [{ name: 'main', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }] })).Status, 'ContainerCreating');
  });

  it('completed and failed Pods, with the Completed row condition', () => {
    const done = toTable(Kinds.Pod, pod({ phase: 'Succeeded', containerStatuses: [{ name: 'main', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed', finishedAt: ago(10) } } }] }), v1, { includeObject: 'None', now }).rows[0];
    assert.equal(done?.cells[2], 'Completed');
    assert.equal(done?.cells[1], '0/1');
    assert.deepEqual(done?.conditions, [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }]);
    const failed = toTable(Kinds.Pod, pod({ phase: 'Failed', containerStatuses: [{ name: 'main', ready: false, restartCount: 0, state: { terminated: { exitCode: 3, reason: 'Error' } } }] }), v1, { includeObject: 'None', now }).rows[0];
    assert.equal(failed?.cells[2], 'Error');
    assert.equal(failed?.conditions?.[0]?.reason, 'Failed');
    assert.equal(row(Kinds.Pod, pod({ phase: 'Failed', containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 137 } } }] })).Status, 'ExitCode:137');
    assert.equal(row(Kinds.Pod, pod({ phase: 'Failed', containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 0, signal: 9 } } }] })).Status, 'Signal:9');
    assert.equal(row(Kinds.Pod, pod({ phase: 'Failed', reason: 'DeadlineExceeded' })).Status, 'DeadlineExceeded');
  });

  it('a crash-looping Pod shows its restarts and when the last one was', () => {
    const r = row(Kinds.Pod, pod({
      phase: 'Running',
      containerStatuses: [{ name: 'main', ready: false, restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: ago(5) } } }],
    }));
    assert.equal(r.Status, 'CrashLoopBackOff');
    assert.equal(r.Restarts, '4 (5s ago)');
  });

  it('init containers: Init:x/y, a failing init, and sidecars counted as containers', () => {
    const spec = { initContainers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'x' }] };
    assert.equal(row(Kinds.Pod, pod({ phase: 'Pending', initContainerStatuses: [{ name: 'a', state: { terminated: { exitCode: 0 } } }, { name: 'b', state: { running: {} } }] }, spec)).Status, 'Init:1/2');
    assert.equal(row(Kinds.Pod, pod({ phase: 'Pending', initContainerStatuses: [{ name: 'a', restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } } }] }, spec)).Status, 'Init:CrashLoopBackOff');
    assert.equal(row(Kinds.Pod, pod({ phase: 'Failed', initContainerStatuses: [{ name: 'a', state: { terminated: { exitCode: 2 } } }] }, spec)).Status, 'Init:ExitCode:2');
    const sidecar = { initContainers: [{ name: 'proxy', image: 'x', restartPolicy: 'Always' }] };
    const r = row(Kinds.Pod, pod({
      phase: 'Running', conditions: [{ type: 'Initialized', status: 'True' }],
      initContainerStatuses: [{ name: 'proxy', ready: true, started: true, restartCount: 1, state: running }],
      containerStatuses: [{ name: 'main', ready: true, restartCount: 0, state: running }],
    }, sidecar));
    assert.equal(r.Ready, '2/2');
    assert.equal(r.Status, 'Running');
    assert.equal(r.Restarts, '1');
  });

  it('a deleted Pod still running is Terminating; one of two containers completed is NotReady until Ready', () => {
    assert.equal(row(Kinds.Pod, pod({ phase: 'Running', containerStatuses: [{ name: 'main', ready: true, state: running }] }, {}, { deletionTimestamp: ago(1) })).Status, 'Terminating');
    assert.equal(row(Kinds.Pod, pod({ phase: 'Succeeded' }, {}, { deletionTimestamp: ago(1) })).Status, 'Succeeded');
    const two = { containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'x' }] };
    const statuses = [{ name: 'a', ready: true, state: running }, { name: 'b', state: { terminated: { exitCode: 0, reason: 'Completed' } } }];
    assert.equal(row(Kinds.Pod, pod({ phase: 'Running', containerStatuses: statuses }, two)).Status, 'NotReady');
    assert.equal(row(Kinds.Pod, pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: statuses }, two)).Status, 'Running');
  });

  it('readiness gates count their true conditions', () => {
    const r = row(Kinds.Pod, pod({ phase: 'Running', conditions: [{ type: 'x/one', status: 'True' }, { type: 'x/two', status: 'False' }] }, { readinessGates: [{ conditionType: 'x/one' }, { conditionType: 'x/two' }] }));
    assert.equal(r['Readiness Gates'], '1/2');
  });
});

describe('PartialObjectMetadata', () => {
  const p = pod({ phase: 'Running' }) as any;
  const url = new URL('http://x/api/v1/pods');
  const partial: ResponseView = { as: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', mediaType: 'application/json' };
  const partialList: ResponseView = { ...partial, as: 'PartialObjectMetadataList' };

  it('is negotiated from client-go’s metadata client’s Accept', () => {
    assert.deepEqual(negotiateView('application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json'), partialList);
  });

  it('answers an object’s or a list’s metadata, and 406 for the other', () => {
    assert.deepEqual(viewOf(Kinds.Pod, p, partial, url), { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: p.metadata });
    const list = { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '9', continue: 'c' }, items: [p] };
    assert.deepEqual(viewOf(Kinds.Pod, list, partialList, url), { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: '9', continue: 'c' }, items: [{ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: p.metadata }] });
    assert.equal((viewOf(Kinds.Pod, { ...list, items: [] }, partialList, url) as any).items, null);
    assert.throws(() => viewOf(Kinds.Pod, list, partial, url), (e: ApiError) => e.code === 406 && /you requested PartialObjectMetadata, but the requested object is a list/.test(e.message));
    assert.throws(() => viewOf(Kinds.Pod, p, partialList, url), (e: ApiError) => e.code === 406 && /is not a list/.test(e.message));
  });

  it('a watch sends each object’s metadata; asked for lists, the objects as they are', () => {
    const view = eventView(Kinds.Pod, partial, url);
    assert.deepEqual(view?.({ type: 'ADDED', object: p }), { type: 'ADDED', object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: p.metadata } });
    assert.equal(eventView(Kinds.Pod, partialList, url), undefined);
    assert.equal(eventView(Kinds.Pod, undefined, url), undefined);
    assert.throws(() => eventView(Kinds.Pod, v1, new URL('http://x/api/v1/pods?includeObject=x')), /includeObject/);
  });
});

describe('other built-in kinds', () => {
  it('Job: status, completions, duration and the wide columns', () => {
    const job = {
      metadata: { name: 'pi', creationTimestamp: ago(3600) },
      spec: { completions: 3, parallelism: 2, selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'u1' } }, template: { spec: { containers: [{ name: 'pi', image: 'perl' }, { name: 'side', image: 'busybox' }] } } },
      status: { succeeded: 3, startTime: ago(3000), completionTime: ago(2900), conditions: [{ type: 'SuccessCriteriaMet', status: 'True' }, { type: 'Complete', status: 'True' }] },
    };
    assert.deepEqual(row(Kinds.Job, job), { Name: 'pi', Status: 'Complete', Completions: '3/3', Duration: '100s', Age: '60m', Containers: 'pi,side', Images: 'perl,busybox', Selector: 'batch.kubernetes.io/controller-uid=u1' });
    const running = row(Kinds.Job, { metadata: { name: 'j' }, spec: { parallelism: 4, selector: { matchExpressions: [{ key: 'b', operator: 'In', values: ['y', 'x'] }, { key: 'a', operator: 'Exists' }] } }, status: { startTime: ago(30) } });
    assert.deepEqual([running.Status, running.Completions, running.Duration, running.Age, running.Selector], ['Running', '0/1 of 4', '30s', '<unknown>', 'a,b in (x,y)']);
    assert.equal(row(Kinds.Job, { metadata: { name: 'j' }, spec: {}, status: { conditions: [{ type: 'Failed', status: 'True' }] } }).Status, 'Failed');
    assert.equal(row(Kinds.Job, { metadata: { name: 'j' }, spec: {}, status: { conditions: [{ type: 'Suspended', status: 'True' }] } }).Status, 'Suspended');
  });

  it('Namespace, ConfigMap and Secret', () => {
    assert.deepEqual(row(Kinds.Namespace, { metadata: { name: 'default', creationTimestamp: ago(90000) }, status: { phase: 'Active' } }), { Name: 'default', Status: 'Active', Age: '25h' });
    assert.deepEqual(row(Kinds.ConfigMap, { metadata: { name: 'c', creationTimestamp: ago(1) }, data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } }), { Name: 'c', Data: 3, Age: '1s' });
    assert.deepEqual(row(Kinds.Secret, { metadata: { name: 's', creationTimestamp: ago(1) }, type: 'Opaque', data: { a: 'MQ==' } }), { Name: 's', Type: 'Opaque', Data: 1, Age: '1s' });
  });

  it('Service: type, cluster IP, external IP and ports', () => {
    const svc = { metadata: { name: 'web', creationTimestamp: ago(10) }, spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', ports: [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP', nodePort: 30053 }], selector: { b: '2', a: '1' } } };
    assert.deepEqual(row(Kinds.Service, svc), { Name: 'web', Type: 'ClusterIP', 'Cluster-IP': '10.96.0.10', 'External-IP': '<none>', 'Port(s)': '80/TCP,53:30053/UDP', Age: '10s', Selector: 'a=1,b=2' });
    const lb = row(Kinds.Service, { metadata: { name: 'lb' }, spec: { type: 'LoadBalancer', clusterIP: 'None' } });
    assert.deepEqual([lb['Cluster-IP'], lb['External-IP'], lb['Port(s)'], lb.Selector], ['None', '<pending>', '<none>', '<none>']);
  });

  it('Node: Ready, roles, version and the wide columns', () => {
    const node = {
      metadata: { name: 'skiff', creationTimestamp: ago(60), labels: { 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/role': 'gpu' } },
      spec: { unschedulable: true },
      status: { conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], nodeInfo: { kubeletVersion: 'skiff-1.0', osImage: 'Linux', kernelVersion: '6.1' } },
    };
    assert.deepEqual(row(Kinds.Node, node), { Name: 'skiff', Status: 'Ready,SchedulingDisabled', Roles: 'control-plane,gpu', Age: '60s', Version: 'skiff-1.0', 'Internal-IP': '127.0.0.1', 'External-IP': '<none>', 'OS-Image': 'Linux', 'Kernel-Version': '6.1', 'Container-Runtime': '<unknown>', 'GPU-Shares': '<none>' });
    assert.equal(row(Kinds.Node, { metadata: { name: 'n' }, status: {} }).Status, 'Unknown');
    const shared = { ...node, metadata: { ...node.metadata, annotations: { 'skiff.dev/gpu-shares': '0: 2/10 shares, 6000/81920 MiB, 60/100 cores; 1: 1/10 shares, 81920/81920 MiB, 100/100 cores' } } };
    assert.equal(row(Kinds.Node, shared)['GPU-Shares'], '3/20');
  });

  it('Event: last seen, object and the wide columns', () => {
    const ev = {
      metadata: { name: 'p.1', creationTimestamp: ago(100) }, involvedObject: { kind: 'Pod', name: 'p', fieldPath: 'spec.containers{main}' },
      reason: 'Started', type: 'Normal', message: 'Started container main\n', source: { component: 'kubelet', host: 'skiff' },
      firstTimestamp: ago(100), lastTimestamp: ago(20), count: 3,
    };
    assert.deepEqual(row(Kinds.Event, ev), { 'Last Seen': '20s', Type: 'Normal', Reason: 'Started', Object: 'pod/p', Subobject: 'spec.containers{main}', Source: 'kubelet, skiff', Message: 'Started container main', 'First Seen': '100s', Count: 3, Name: 'p.1' });
    const series = row(Kinds.Event, { metadata: { name: 'e' }, involvedObject: { kind: 'Node' }, eventTime: ago(50), series: { count: 7, lastObservedTime: ago(2) }, reportingComponent: 'skiff-scheduler' });
    assert.deepEqual([series['Last Seen'], series['First Seen'], series.Count, series.Object, series.Source], ['2s', '50s', 7, 'node', 'skiff-scheduler']);
  });

  it('PersistentVolumeClaim: bound or pending, class and mode', () => {
    const pvc = { metadata: { name: 'data', creationTimestamp: ago(5) }, spec: { volumeName: 'pv-1', storageClassName: 'local', volumeMode: 'Filesystem' }, status: { phase: 'Bound', accessModes: ['ReadWriteMany', 'ReadWriteOnce'], capacity: { storage: '1Gi' } } };
    assert.deepEqual(row(Kinds.PersistentVolumeClaim, pvc), { Name: 'data', Status: 'Bound', Volume: 'pv-1', Capacity: '1Gi', 'Access Modes': 'RWO,RWX', StorageClass: 'local', VolumeAttributesClass: '<unset>', Age: '5s', VolumeMode: 'Filesystem' });
    const pending = row(Kinds.PersistentVolumeClaim, { metadata: { name: 'x' }, spec: {}, status: { phase: 'Pending' } });
    assert.deepEqual([pending.Status, pending.Capacity, pending['Access Modes'], pending.VolumeMode], ['Pending', '', '', '<unset>']);
  });

  it('NetworkPolicy: the pod selector as kubectl writes one, <none> for every Pod', () => {
    const np = { metadata: { name: 'db', creationTimestamp: ago(7) }, spec: { podSelector: { matchLabels: { role: 'db' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['web'] }] } } };
    assert.deepEqual(row(Kinds.NetworkPolicy, np), { Name: 'db', 'Pod-Selector': 'role=db,tier notin (web)', Age: '7s' });
    assert.equal(row(Kinds.NetworkPolicy, { metadata: { name: 'deny' }, spec: { podSelector: {} } })['Pod-Selector'], '<none>');
  });
});

describe('printer columns of CRD-like kinds', () => {
  it('Kubeflow training jobs show the type of their latest condition as STATE; MPIJob v1 lists AGE first', () => {
    const job = (conditions: unknown[]): unknown => ({ metadata: { name: 'mnist', creationTimestamp: ago(130) }, status: { conditions } });
    assert.deepEqual(row(Kinds.PyTorchJob, job([{ type: 'Created', status: 'True' }, { type: 'Running', status: 'True' }])), { Name: 'mnist', State: 'Running', Age: '2m10s' });
    assert.deepEqual(row(Kinds.PyTorchJob, job([])), { Name: 'mnist', State: null, Age: '2m10s' });
    // a date column of a missing field is empty, as for a CRD
    assert.deepEqual(row(Kinds.PyTorchJob, { metadata: { name: 'new' } }), { Name: 'new', State: null, Age: null });
    assert.deepEqual(tableColumns(Kinds.MPIJob).map((c) => c.name), ['Name', 'Age', 'State']);
    assert.deepEqual(tableColumns(Kinds.MPIJobV2).map((c) => [c.name, c.type]), [['Name', 'string'], ['Age', 'date']]);
    assert.equal(tableColumns(Kinds.TFJob)[1]?.description, 'Custom resource definition column (in JSONPath format): .status.conditions[-1:].type');
  });

  it('an InferenceService shows URL, READY and its traffic split', () => {
    const isvc = {
      metadata: { name: 'iris', creationTimestamp: ago(30) },
      status: {
        url: 'http://iris.default.example.com', conditions: [{ type: 'PredictorReady', status: 'True' }, { type: 'Ready', status: 'True' }],
        components: { predictor: { traffic: [{ tag: 'prev', percent: 20, revisionName: 'iris-predictor-00001' }, { latestRevision: true, percent: 80, revisionName: 'iris-predictor-00002' }] } },
      },
    };
    assert.deepEqual(row(Kinds.InferenceService, isvc), { Name: 'iris', URL: 'http://iris.default.example.com', Ready: 'True', Prev: 20, Latest: 80, PrevRolledoutRevision: 'iris-predictor-00001', LatestReadyRevision: 'iris-predictor-00002', Age: '30s' });
    assert.deepEqual(row(Kinds.InferenceService, { metadata: { name: 'new', creationTimestamp: ago(1) } }), { Name: 'new', URL: null, Ready: null, Prev: null, Latest: null, PrevRolledoutRevision: null, LatestReadyRevision: null, Age: '1s' });
  });

  it('typed cells: the first of several values, booleans, numbers as Go prints them, dates', () => {
    const rt = { metadata: { name: 'rt', creationTimestamp: 'yesterday' }, spec: { disabled: false, supportedModelFormats: [{ name: 'sklearn' }, { name: 'xgboost' }], containers: [{ name: 'kserve-container' }] } };
    assert.deepEqual(row(Kinds.ServingRuntime, rt), { Name: 'rt', Disabled: false, ModelType: 'sklearn', Containers: 'kserve-container', Age: '<invalid>' });
    assert.equal(row(Kinds.ServingRuntime, { metadata: { name: 'rt' }, spec: { disabled: 'no' } }).Disabled, null);
    // a string column shows a number as Go's fmt does, a map as JSON with sorted keys
    assert.equal(row(Kinds.ClusterServingRuntime, { metadata: { name: 'c' }, spec: { supportedModelFormats: [{ name: 1234567.5 }] } }).ModelType, '1.2345675e+06');
    assert.equal(row(Kinds.ClusterServingRuntime, { metadata: { name: 'c' }, spec: { supportedModelFormats: [{ name: { b: 1, a: '<x>' } }] } }).ModelType, '{"a":"\\u003cx\\u003e","b":1}');
    assert.equal(row(Kinds.ClusterServingRuntime, { metadata: { name: 'c' }, spec: { supportedModelFormats: [{ name: null }] } }).ModelType, '<no value>');
  });

  it('Skiff’s own kinds declare their columns, and every declared path parses', () => {
    assert.deepEqual(tableColumns(Kinds.Run).filter((c) => c.priority === 0).map((c) => c.name), ['Name', 'State', 'Started', 'Finished', 'Age']);
    const run = row(Kinds.Run, { metadata: { name: 'r', creationTimestamp: ago(70) }, status: { state: 'FAILED', startedAt: ago(65), finishedAt: ago(5), failedTask: 'train' } });
    assert.deepEqual(run, { Name: 'r', State: 'FAILED', Started: '65s', Finished: '5s', Age: '70s', 'Failed-Task': 'train' });
    for (const def of defaultRegistry().all()) {
      for (const c of def.printerColumns ?? []) assert.doesNotThrow(() => JsonPath.parsePath(c.jsonPath), `${def.kind} column ${c.name}`);
    }
  });
});
