// Katib's Push metrics collector against `skiff up`: the kubeflow-katib SDK's report_metrics() and
// KatibClient.get_trial_metrics(), unchanged, talk to Skiff's DBManager gRPC API from this machine
// (with db_manager_address) and from inside a Pod (with the SDK's default address,
// katib-db-manager.kubeflow:6789). The Trials are made by hand: no Experiment controller is needed.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bwrapAvailable } from '../src/substrate/local/process.js';
import { TestServer, clientsPython, repoRoot } from './harness.js';

const skip = !existsSync(clientsPython) ? 'the clients\' Python environment (.venv-clients) is not set up' : false;
// a Pod resolves Service names through the hosts file bubblewrap mounts at /etc/hosts
const podSkip = !bwrapAvailable() ? 'bubblewrap cannot run here, so a Pod has no hosts file naming katib-db-manager.kubeflow' : false;

/** the last line a script printed, as JSON */
function result(r: { code: number; stdout: string; stderr: string }): any {
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '');
}

const trial = (name: string, namespace: string): Record<string, unknown> => ({
  apiVersion: 'kubeflow.org/v1beta1', kind: 'Trial',
  metadata: { name, namespace, labels: { 'katib.kubeflow.org/experiment': 'push-e2e' } },
  spec: { objective: { type: 'minimize', objectiveMetricName: 'loss', additionalMetricNames: ['accuracy'] }, metricsCollector: { collector: { kind: 'Push' } } },
});

describe('Push metrics: report_metrics and get_trial_metrics through Katib\'s SDK', { skip, timeout: 300_000 }, () => {
  let s: TestServer;
  let address = '';
  before(async () => {
    // trial Pods run the clients' environment, where the Katib SDK imports (it needs kubeflow-training)
    s = await TestServer.start({ config: { environments: [{ image: 'katib-sdk', environment: { path: [join(repoRoot, '.venv-clients', 'bin')] } }] } });
    const state = JSON.parse(readFileSync(join(s.dataDir, 'katib-db-manager.json'), 'utf8')) as { host: string; port: number };
    address = `${state.host}:${state.port}`;
    await s.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tuning' } });
    await s.create('/apis/kubeflow.org/v1beta1/namespaces/default/trials', trial('push-e2e-host0001', 'default'));
    await s.create('/apis/kubeflow.org/v1beta1/namespaces/tuning/trials', trial('push-e2e-pod00001', 'tuning'));
  });
  after(async () => {
    await s?.cleanup();
  });

  it('skiff up prints the address, and listens on Katib\'s port', async () => {
    const line = await s.until('the db manager line', async () => /db_manager_address="([^"]+)"/.exec(s.output)?.[1]);
    assert.equal(line, address);
    assert.match(address, /^127\.\d+\.\d+\.\d+:6789$/);
  });

  const host = (script: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> => s.python([
    'import json, os, sys, grpc',
    'import kubeflow.katib as katib',
    'import kubeflow.katib.katib_api_pb2 as pb, kubeflow.katib.katib_api_pb2_grpc as pbg',
    'from kubeflow.katib.utils import utils',
    // outside a Pod the SDK has no service-account namespace file to read (it is only used in its
    // error messages); Pods get one, and the Pod test below runs the SDK with nothing replaced
    'utils.get_current_k8s_namespace = lambda: "default"',
    'addr = sys.argv[1]',
    script,
  ].join('\n'), [address], env);

  it('from this machine: report_metrics, then get_trial_metrics', async () => {
    const push = await host('katib.report_metrics({"loss": 0.5, "accuracy": 0.75}, db_manager_address=addr)\nkatib.report_metrics({"loss": 0.25}, db_manager_address=addr)\nprint(json.dumps("ok"))', { KATIB_TRIAL_NAME: 'push-e2e-host0001' });
    assert.equal(result(push), 'ok');
    const obj = await s.get('/apis/tuning.skiff.dev/v1/namespaces/default/observationlogs/push-e2e-host0001');
    assert.equal(obj.spec.trialName, 'push-e2e-host0001');
    assert.deepEqual(obj.spec.metricLogs.map((l: any) => `${l.name}=${l.value}`), ['loss=0.5', 'accuracy=0.75', 'loss=0.25']);
    // the SDK stamps whole seconds in UTC
    for (const l of obj.spec.metricLogs) assert.match(l.timeStamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(obj.metadata.ownerReferences[0].kind, 'Trial');
    assert.equal(obj.metadata.ownerReferences[0].name, 'push-e2e-host0001');

    const got = result(await host('logs = katib.KatibClient().get_trial_metrics("push-e2e-host0001", db_manager_address=addr)\nprint(json.dumps([[l.time_stamp, l.metric.name, l.metric.value] for l in logs]))'));
    assert.deepEqual(got.map((l: string[]) => `${l[1]}=${l[2]}`), ['loss=0.5', 'accuracy=0.75', 'loss=0.25']);
    assert.deepEqual(got.map((l: string[]) => l[0]), obj.spec.metricLogs.map((l: any) => l.timeStamp));
  });

  it('from inside a Pod: report_metrics with the SDK\'s default address, and no other change', { skip: podSkip }, async () => {
    const code = 'import kubeflow.katib as katib\nkatib.report_metrics({"loss": 0.125, "accuracy": "0.875"})\nprint("pushed")';
    await s.create('/api/v1/namespaces/tuning/pods', {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'push-e2e-pod00001-trial', namespace: 'tuning' },
      spec: { restartPolicy: 'Never', containers: [{ name: 'training', image: 'katib-sdk', command: ['python', '-W', 'ignore', '-c', code], env: [{ name: 'KATIB_TRIAL_NAME', value: 'push-e2e-pod00001' }] }] },
    });
    const pod = await s.until('the trial Pod to end', async () => {
      const p = await s.get('/api/v1/namespaces/tuning/pods/push-e2e-pod00001-trial');
      return ['Succeeded', 'Failed'].includes(p.status?.phase) ? p : undefined;
    }, 120_000);
    const log = (await s.req('GET', '/api/v1/namespaces/tuning/pods/push-e2e-pod00001-trial/log')).text;
    assert.equal(pod.status.phase, 'Succeeded', log);
    assert.match(log, /pushed/);
    const obj = await s.get('/apis/tuning.skiff.dev/v1/namespaces/tuning/observationlogs/push-e2e-pod00001');
    assert.deepEqual(obj.spec.metricLogs.map((l: any) => `${l.name}=${l.value}`), ['loss=0.125', 'accuracy=0.875']);
    const got = result(await host('logs = katib.KatibClient(namespace="tuning").get_trial_metrics("push-e2e-pod00001", db_manager_address=addr)\nprint(json.dumps([l.metric.value for l in logs]))'));
    assert.deepEqual(got, ['0.125', '0.875']);
  });

  it('bad input gets the gRPC status that says why', async () => {
    // the SDK's own error for a trial Skiff does not know
    const unknown = await host('katib.report_metrics({"loss": 1.0}, db_manager_address=addr)', { KATIB_TRIAL_NAME: 'no-such-trial' });
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /RuntimeError: Unable to push metrics to Katib DB for Trial default\/no-such-trial/);
    assert.match(unknown.stderr, /StatusCode\.NOT_FOUND/);
    assert.match(unknown.stderr, /trial "no-such-trial" not found in any namespace/);
    // the SDK refuses non-floats itself, so the server's own check is reached with a raw call
    const raw = result(await host([
      'stub = pbg.DBManagerStub(grpc.insecure_channel(addr))',
      'def status(fn, req):',
      '    try:',
      '        fn(req, timeout=30)',
      '        return ["OK", ""]',
      '    except grpc.RpcError as e:',
      '        return [e.code().name, e.details()]',
      'ml = lambda v: pb.MetricLog(time_stamp="2026-11-25T10:00:00Z", metric=pb.Metric(name="loss", value=v))',
      'print(json.dumps([',
      '    status(stub.ReportObservationLog, pb.ReportObservationLogRequest(trial_name="push-e2e-host0001", observation_log=pb.ObservationLog(metric_logs=[ml("0.1"), ml("not-a-number")]))),',
      '    status(stub.ReportObservationLog, pb.ReportObservationLogRequest(trial_name="no-such-trial", observation_log=pb.ObservationLog(metric_logs=[ml("1")]))),',
      '    status(stub.GetObservationLog, pb.GetObservationLogRequest(trial_name="push-e2e-host0001", start_time="yesterday")),',
      '    status(stub.GetObservationLog, pb.GetObservationLogRequest(trial_name="no-such-trial")),',
      ']))',
    ].join('\n')));
    assert.deepEqual(raw, [
      ['INVALID_ARGUMENT', 'observation_log.metric_logs[1].metric.value: "not-a-number" for metric "loss" is not a number'],
      ['NOT_FOUND', 'trial "no-such-trial" not found in any namespace'],
      ['INVALID_ARGUMENT', 'start_time: "yesterday" is not an RFC 3339 time'],
      ['NOT_FOUND', 'trial "no-such-trial" not found in any namespace'],
    ]);
    // the refused report left the log as it was
    const obj = await s.get('/apis/tuning.skiff.dev/v1/namespaces/default/observationlogs/push-e2e-host0001');
    assert.equal(obj.spec.metricLogs.length, 3);
  });

  it('DeleteObservationLog empties the trial\'s log', async () => {
    const r = result(await host([
      'stub = pbg.DBManagerStub(grpc.insecure_channel(addr))',
      'stub.DeleteObservationLog(pb.DeleteObservationLogRequest(trial_name="push-e2e-host0001"), timeout=30)',
      'print(json.dumps(len(katib.KatibClient().get_trial_metrics("push-e2e-host0001", db_manager_address=addr))))',
    ].join('\n')));
    assert.equal(r, 0);
    const gone = await s.req('GET', '/apis/tuning.skiff.dev/v1/namespaces/default/observationlogs/push-e2e-host0001');
    assert.equal(gone.status, 404);
  });
});
