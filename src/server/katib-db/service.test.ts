// The DBManager over a real store and a real HTTP/2 connection, as grpc clients reach it.
import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { connect as tcpConnect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { defaultRegistry } from '../../api/index.js';
import type { StoredObject } from '../../api/meta.js';
import type { ObservationLog } from '../../api/tuning-types.js';
import { ObservationLogKind } from '../../api/tuning.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { frame, GrpcStatus, grpcServer } from './grpc.js';
import {
  decodeGetObservationLogReply, encodeDeleteObservationLogRequest, encodeGetObservationLogRequest, encodeReportObservationLogRequest, type MetricLog,
} from './messages.js';
import { DBManagerService, dbManagerMethods } from './service.js';
import { allowAll, type UserInfo } from '../auth/types.js';

const store = new SqliteStore({ file: ':memory:' });
const client = new Client(store, defaultRegistry());
const server = grpcServer(dbManagerMethods(client));
let port = 0;

before(async () => {
  for (const name of ['default', 'team-a', 'team-b']) await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
after(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await store.close();
});

interface Answer {
  httpStatus: number;
  grpcStatus: number;
  grpcMessage: string;
  body: Buffer;
}

/** one unary call, as a grpc client makes it (headers, one framed message, then trailers) */
function call(method: string, message: Buffer, opts: { raw?: Buffer; contentType?: string; from?: string; token?: string; port?: number } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const from = opts.from;
    const to = opts.port ?? port;
    const session = connect(`http://127.0.0.1:${to}`, from ? { createConnection: () => tcpConnect({ host: '127.0.0.1', port: to, localAddress: from }) } : {});
    session.on('error', reject);
    const req = session.request({ ':method': 'POST', ':path': method.startsWith('/') ? method : `/${DBManagerService}/${method}`, 'content-type': opts.contentType ?? 'application/grpc', te: 'trailers', ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) });
    let httpStatus = 0;
    let headerStatus: string | undefined;
    let headerMessage: string | undefined;
    const chunks: Buffer[] = [];
    let trailers: Record<string, unknown> = {};
    req.on('response', (h) => {
      httpStatus = Number(h[':status']);
      headerStatus = h['grpc-status'] as string | undefined;
      headerMessage = h['grpc-message'] as string | undefined;
    });
    req.on('trailers', (t) => (trailers = t));
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      session.close();
      const body = Buffer.concat(chunks);
      const status = (trailers['grpc-status'] as string | undefined) ?? headerStatus ?? '-1';
      const msg = (trailers['grpc-message'] as string | undefined) ?? headerMessage ?? '';
      resolve({ httpStatus, grpcStatus: Number(status), grpcMessage: decodeURIComponent(msg), body: body.length >= 5 ? body.subarray(5, 5 + body.readUInt32BE(1)) : body });
    });
    req.on('error', reject);
    req.end(opts.raw ?? frame(message));
  });
}

async function trial(name: string, namespace = 'default', labels: Record<string, string> = {}): Promise<StoredObject> {
  return client.create({ apiVersion: 'kubeflow.org/v1beta1', kind: 'Trial', metadata: { name, namespace, labels }, spec: { objective: { type: 'minimize', objectiveMetricName: 'loss' } } });
}

const log = (timeStamp: string, name: string, value: string): MetricLog => ({ timeStamp, metric: { name, value } });
const report = (trialName: string, logs: MetricLog[]): Promise<Answer> => call('ReportObservationLog', encodeReportObservationLogRequest({ trialName, observationLog: { metricLogs: logs } }));

async function stored(name: string, namespace = 'default'): Promise<ObservationLog | undefined> {
  return client.find<ObservationLog>(ObservationLogKind, { namespace, name });
}

test('reports append to the ObservationLog named as the Trial, in its namespace, owned by it', async () => {
  const t = await trial('exp-a1', 'team-a', { 'katib.kubeflow.org/experiment': 'exp' });
  const first = await report('exp-a1', [log('2026-11-25T10:00:00Z', 'loss', '0.5'), log('2026-11-25T10:00:00Z', 'accuracy', '0.7')]);
  assert.equal(first.grpcStatus, GrpcStatus.OK, first.grpcMessage);
  assert.equal(first.httpStatus, 200);
  assert.equal(first.body.length, 0);
  assert.equal((await report('exp-a1', [log('2026-11-25T10:00:01+00:00', 'loss', '0.25')])).grpcStatus, GrpcStatus.OK);
  const obj = await stored('exp-a1', 'team-a');
  assert.ok(obj);
  assert.deepEqual(obj.spec, {
    trialName: 'exp-a1',
    metricLogs: [
      { timeStamp: '2026-11-25T10:00:00Z', name: 'loss', value: '0.5' },
      { timeStamp: '2026-11-25T10:00:00Z', name: 'accuracy', value: '0.7' },
      { timeStamp: '2026-11-25T10:00:01Z', name: 'loss', value: '0.25' },
    ],
  });
  assert.deepEqual(obj.metadata.ownerReferences, [{ apiVersion: 'kubeflow.org/v1beta1', kind: 'Trial', name: 'exp-a1', uid: t.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  assert.deepEqual(obj.metadata.labels, { 'katib.kubeflow.org/trial': 'exp-a1', 'katib.kubeflow.org/experiment': 'exp' });
});

test('reports racing each other all land', async () => {
  await trial('exp-race');
  const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => report('exp-race', [log('2026-11-25T10:00:00Z', 'loss', String(i))])));
  assert.deepEqual(answers.map((a) => a.grpcStatus), Array(8).fill(GrpcStatus.OK));
  const values = (await stored('exp-race'))?.spec.metricLogs.map((l) => l.value).sort();
  assert.deepEqual(values, ['0', '1', '2', '3', '4', '5', '6', '7']);
});

test('GetObservationLog filters as Katib\'s DB manager does; DeleteObservationLog empties it', async () => {
  await trial('exp-g1');
  await report('exp-g1', [log('2026-11-25T10:00:02Z', 'loss', '3'), log('2026-11-25T10:00:00Z', 'loss', '1'), log('2026-11-25T10:00:01Z', 'accuracy', '0.5')]);
  const get = async (q: { metricName?: string; startTime?: string; endTime?: string }): Promise<string[]> => {
    const a = await call('GetObservationLog', encodeGetObservationLogRequest({ trialName: 'exp-g1', metricName: '', startTime: '', endTime: '', ...q }));
    assert.equal(a.grpcStatus, GrpcStatus.OK, a.grpcMessage);
    return decodeGetObservationLogReply(a.body).observationLog.metricLogs.map((l) => `${l.metric?.name}=${l.metric?.value}@${l.timeStamp}`);
  };
  assert.deepEqual(await get({}), ['loss=1@2026-11-25T10:00:00Z', 'accuracy=0.5@2026-11-25T10:00:01Z', 'loss=3@2026-11-25T10:00:02Z']);
  assert.deepEqual(await get({ metricName: 'loss', startTime: '2026-11-25T10:00:01Z' }), ['loss=3@2026-11-25T10:00:02Z']);
  assert.deepEqual(await get({ endTime: '2026-11-25T10:00:01Z' }), ['loss=1@2026-11-25T10:00:00Z', 'accuracy=0.5@2026-11-25T10:00:01Z']);
  const badTime = await call('GetObservationLog', encodeGetObservationLogRequest({ trialName: 'exp-g1', metricName: '', startTime: 'noon', endTime: '' }));
  assert.deepEqual([badTime.grpcStatus, badTime.grpcMessage], [GrpcStatus.INVALID_ARGUMENT, 'start_time: "noon" is not an RFC 3339 time']);

  const del = await call('DeleteObservationLog', encodeDeleteObservationLogRequest({ trialName: 'exp-g1' }));
  assert.equal(del.grpcStatus, GrpcStatus.OK, del.grpcMessage);
  assert.equal(await stored('exp-g1'), undefined);
  assert.deepEqual(await get({}), []);
  // deleting what is already gone is no error, as in Katib
  assert.equal((await call('DeleteObservationLog', encodeDeleteObservationLogRequest({ trialName: 'exp-g1' }))).grpcStatus, GrpcStatus.OK);
});

test('a trial with no reports answers an empty log', async () => {
  await trial('exp-quiet');
  const a = await call('GetObservationLog', encodeGetObservationLogRequest({ trialName: 'exp-quiet', metricName: '', startTime: '', endTime: '' }));
  assert.equal(a.grpcStatus, GrpcStatus.OK);
  assert.deepEqual(decodeGetObservationLogReply(a.body), { observationLog: { metricLogs: [] } });
});

test('bad requests get the gRPC status that says why, and nothing is written', async () => {
  await trial('exp-bad');
  const cases: [Promise<Answer>, number, string][] = [
    [report('no-such-trial', [log('2026-11-25T10:00:00Z', 'loss', '1')]), GrpcStatus.NOT_FOUND, 'trial "no-such-trial" not found in any namespace'],
    [call('GetObservationLog', encodeGetObservationLogRequest({ trialName: 'no-such-trial', metricName: '', startTime: '', endTime: '' })), GrpcStatus.NOT_FOUND, 'trial "no-such-trial" not found in any namespace'],
    [call('DeleteObservationLog', encodeDeleteObservationLogRequest({ trialName: 'no-such-trial' })), GrpcStatus.NOT_FOUND, 'trial "no-such-trial" not found in any namespace'],
    [report('', [log('2026-11-25T10:00:00Z', 'loss', '1')]), GrpcStatus.INVALID_ARGUMENT, 'trial_name: required'],
    [report('exp-bad', [log('2026-11-25T10:00:00Z', 'loss', '1'), log('2026-11-25T10:00:00Z', 'loss', 'high')]), GrpcStatus.INVALID_ARGUMENT, 'observation_log.metric_logs[1].metric.value: "high" for metric "loss" is not a number'],
    [call('ReportObservationLog', Buffer.from([0x0a, 0x09, 0x61])), GrpcStatus.INVALID_ARGUMENT, 'ReportObservationLogRequest: field 1 is truncated'],
    [call('Nope', Buffer.alloc(0)), GrpcStatus.UNIMPLEMENTED, `unknown method /${DBManagerService}/Nope`],
    [call('ReportObservationLog', Buffer.alloc(0), { raw: Buffer.from([1, 0, 0, 0, 0]) }), GrpcStatus.UNIMPLEMENTED, 'compressed requests are not supported; send without grpc-encoding'],
    [call('ReportObservationLog', Buffer.alloc(0), { raw: Buffer.from([0, 0, 0, 0, 9, 1]) }), GrpcStatus.INTERNAL, 'request body has 1 message bytes, its frame says 9; a unary call carries exactly one message'],
  ];
  for (const [p, code, message] of cases) {
    const a = await p;
    assert.deepEqual([a.grpcStatus, a.grpcMessage], [code, message]);
    assert.equal(a.httpStatus, 200);
  }
  assert.equal(await stored('exp-bad'), undefined);
});

test('a trial name in two namespaces is refused as ambiguous, naming both', async () => {
  await trial('exp-twin', 'team-a');
  await trial('exp-twin', 'team-b');
  const a = await report('exp-twin', [log('2026-11-25T10:00:00Z', 'loss', '1')]);
  assert.equal(a.grpcStatus, GrpcStatus.FAILED_PRECONDITION);
  assert.match(a.grpcMessage, /^trial name "exp-twin" is ambiguous: Trials of that name exist in namespaces team-a, team-b;/);
});

test('a trial Pod\'s call means the Trial of that name in the Pod\'s own namespace', { skip: process.platform !== 'linux' && 'Pods have addresses of their own only where all of 127/8 is loopback' }, async () => {
  await trial('exp-pair', 'team-a');
  await trial('exp-pair', 'team-b');
  const pod = await client.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'exp-pair-worker', namespace: 'team-b' }, spec: { containers: [{ name: 'main', image: 'python' }] } });
  await client.updateStatus({ ...pod, status: { phase: 'Running', podIP: '127.1.77.7' } });
  const fromPod = await call('ReportObservationLog', encodeReportObservationLogRequest({ trialName: 'exp-pair', observationLog: { metricLogs: [log('2026-11-25T10:00:00Z', 'loss', '1')] } }), { from: '127.1.77.7' });
  assert.equal(fromPod.grpcStatus, GrpcStatus.OK, fromPod.grpcMessage);
  assert.equal((await stored('exp-pair', 'team-b'))?.spec.metricLogs.length, 1);
  assert.equal(await stored('exp-pair', 'team-a'), undefined);
  // from an address no Pod has, still ambiguous
  const fromElsewhere = await call('ReportObservationLog', encodeReportObservationLogRequest({ trialName: 'exp-pair', observationLog: { metricLogs: [log('2026-11-25T10:00:00Z', 'loss', '1')] } }), { from: '127.1.77.8' });
  assert.equal(fromElsewhere.grpcStatus, GrpcStatus.FAILED_PRECONDITION);
});

test('a message that is not ASCII comes back percent-encoded and decodes to itself', async () => {
  const a = await report('trial-λ', [log('2026-11-25T10:00:00Z', 'loss', '1')]);
  assert.deepEqual([a.grpcStatus, a.grpcMessage], [GrpcStatus.NOT_FOUND, 'trial "trial-λ" not found in any namespace']);
});

test('what is not a gRPC call is told what the port serves; the health check answers SERVING', async () => {
  const plain = await call('ReportObservationLog', Buffer.alloc(0), { contentType: 'application/json' });
  assert.equal(plain.httpStatus, 415);
  assert.match(plain.body.toString(), /serves gRPC \(Katib DBManager/);
  const health = await call('/grpc.health.v1.Health/Check', Buffer.alloc(0));
  assert.equal(health.grpcStatus, GrpcStatus.OK);
  assert.deepEqual([...health.body], [0x08, 0x01]);
});

test('with tenancy on, a trial Pod reaches its own namespace\'s Trials, a token holder what RBAC allows, anyone else nothing', { skip: process.platform !== 'linux' && 'Pods have addresses of their own only where all of 127/8 is loopback' }, async () => {
  const users: Record<string, UserInfo> = { 'alice-token': { username: 'alice', groups: ['system:authenticated'] } };
  const tenant = grpcServer(dbManagerMethods(client, {
    authenticate: async (t) => {
      const u = users[t];
      if (!u) throw new Error('invalid bearer token');
      return u;
    },
    // alice may read and report team-a's trials, nothing else
    authorizer: { ...allowAll, authorize: (a) => ({ allowed: a.user.username === 'alice' && a.resource?.namespace === 'team-a' && a.resource.verb !== 'delete' }) },
  }));
  await new Promise<void>((r) => tenant.listen(0, '127.0.0.1', r));
  const tport = (tenant.address() as AddressInfo).port;
  try {
    await trial('tenant-a', 'team-a');
    await trial('tenant-b', 'team-b');
    const pod = await client.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'tenant-b-worker', namespace: 'team-b' }, spec: { containers: [{ name: 'main', image: 'python' }] } });
    await client.updateStatus({ ...pod, status: { phase: 'Running', podIP: '127.1.78.7' } });
    const report = (trialName: string, opts: { from?: string; token?: string }): Promise<Answer> =>
      call('ReportObservationLog', encodeReportObservationLogRequest({ trialName, observationLog: { metricLogs: [log('2026-11-25T10:00:00Z', 'loss', '1')] } }), { ...opts, port: tport });
    assert.equal((await report('tenant-b', { from: '127.1.78.7' })).grpcStatus, GrpcStatus.OK);
    const across = await report('tenant-a', { from: '127.1.78.7' });
    assert.equal(across.grpcStatus, GrpcStatus.NOT_FOUND);
    assert.equal(across.grpcMessage, 'trial "tenant-a" not found in namespace "team-b"');
    const anonymous = await report('tenant-a', { from: '127.1.78.8' });
    assert.equal(anonymous.grpcStatus, GrpcStatus.UNAUTHENTICATED);
    assert.equal((await report('tenant-a', { token: 'forged' })).grpcStatus, GrpcStatus.UNAUTHENTICATED);
    assert.equal((await report('tenant-a', { token: 'alice-token' })).grpcStatus, GrpcStatus.OK);
    const theirs = await report('tenant-b', { token: 'alice-token' });
    assert.equal(theirs.grpcStatus, GrpcStatus.PERMISSION_DENIED);
    assert.equal(theirs.grpcMessage, 'User "alice" cannot update resource "trials" in API group "kubeflow.org" in the namespace "team-b"');
    assert.equal((await stored('tenant-a', 'team-a'))?.spec.metricLogs.length, 1);
    assert.equal((await stored('tenant-b', 'team-b'))?.spec.metricLogs.length, 1);
  } finally {
    await new Promise<void>((r) => tenant.close(() => r()));
  }
});
