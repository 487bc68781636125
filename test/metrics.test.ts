// `GET /metrics` of a running server: Prometheus' text format (parsed and checked here: one HELP and
// one TYPE per family, every sample in a declared family, no series twice, histograms cumulative),
// the inference gateway's metrics declared under their names (their series appear with the first
// request, see serving.test.ts), the process's own, the API server's requests under kube-apiserver's
// names, the controllers' reconciles and work queues under controller-runtime's, and Pods' use. With
// tenancy on, /metrics is for system:monitoring and cluster admins, as on a cluster.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startSkiff, type Skiff } from '../src/server/main.js';
import { podManifest, TestServer } from './harness.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

/** the suffixes a histogram's or summary's samples add to the family's name */
const suffixes: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count'] };

function parseLabels(s: string, line: string): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < s.length) {
    const m = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(s.slice(i));
    if (!m) throw new Error(`bad label at ${i}: ${line}`);
    i += m[0].length;
    let v = '';
    for (;;) {
      const c = s[i++];
      if (c === undefined) throw new Error(`unterminated label value: ${line}`);
      if (c === '"') break;
      if (c === '\\') {
        const e = s[i++];
        if (e === 'n') v += '\n';
        else if (e === '\\' || e === '"') v += e;
        else throw new Error(`bad escape \\${e}: ${line}`);
      } else v += c;
    }
    if ((m[1] as string) in out) throw new Error(`label ${m[1]} twice: ${line}`);
    out[m[1] as string] = v;
    if (s[i] === ',') i++;
    else if (i < s.length) throw new Error(`expected , at ${i}: ${line}`);
  }
  return out;
}

/** Prometheus' text format 0.0.4, strictly: throws on anything a scraper would refuse or misread */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  let current: Family | undefined;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (meta) {
      const [, kind, name = '', rest = ''] = meta;
      let f = families.get(name);
      if (!f) {
        f = { name, type: '', help: '', samples: [] };
        families.set(name, f);
      } else if (f.samples.length) throw new Error(`${kind} for ${name} after its samples`);
      if (kind === 'HELP') {
        if (f.help) throw new Error(`two HELP lines for ${name}`);
        f.help = rest;
      } else {
        if (f.type) throw new Error(`two TYPE lines for ${name}`);
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest)) throw new Error(`bad type ${rest}`);
        f.type = rest;
      }
      current = f;
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: -?\d+)?$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const [, name = '', labelText = '', valueText = ''] = m;
    // Prometheus reads values with Go's ParseFloat: NaN and Inf in any case (prom-client writes `Nan`)
    const special = valueText.toLowerCase();
    const value = special === '+inf' || special === 'inf' ? Infinity : special === '-inf' ? -Infinity : special === 'nan' ? NaN : Number(valueText);
    if (Number.isNaN(value) && special !== 'nan') throw new Error(`bad value: ${line}`);
    const f = current;
    const belongs = f && (name === f.name || (suffixes[f.type] ?? []).some((s) => name === f.name + s));
    if (!f || !belongs) throw new Error(`sample outside its family (${f?.name}): ${line}`);
    if (!f.type) throw new Error(`${f.name} has no TYPE`);
    const labels = parseLabels(labelText, line);
    const key = `${name}{${Object.entries(labels).sort().map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
    if (seen.has(key)) throw new Error(`series twice: ${key}`);
    seen.add(key);
    f.samples.push({ name, labels, value });
  }
  for (const f of families.values()) {
    if (!f.type) throw new Error(`${f.name} has no TYPE`);
    if (f.type !== 'histogram') continue;
    // per series: buckets cumulative in le order, +Inf equal to _count
    const series = new Map<string, Sample[]>();
    for (const s of f.samples.filter((x) => x.name === `${f.name}_bucket`)) {
      const { le, ...rest } = s.labels;
      if (le === undefined) throw new Error(`${f.name}_bucket without le`);
      const k = JSON.stringify(rest);
      series.set(k, [...(series.get(k) ?? []), s]);
    }
    for (const [k, buckets] of series) {
      const sorted = [...buckets].sort((a, b) => Number(a.labels.le === '+Inf' ? Infinity : a.labels.le) - Number(b.labels.le === '+Inf' ? Infinity : b.labels.le));
      for (let i = 1; i < sorted.length; i++) if ((sorted[i] as Sample).value < (sorted[i - 1] as Sample).value) throw new Error(`${f.name}${k}: buckets not cumulative`);
      const inf = sorted[sorted.length - 1] as Sample;
      if (inf.labels.le !== '+Inf') throw new Error(`${f.name}${k}: no +Inf bucket`);
      const count = f.samples.find((s) => s.name === `${f.name}_count` && JSON.stringify(s.labels) === k);
      if (count?.value !== inf.value) throw new Error(`${f.name}${k}: +Inf ${inf.value} but count ${count?.value}`);
    }
  }
  return families;
}

/** the samples of a family (or of its `_count`, `_bucket`...) whose labels include these */
function find(families: Map<string, Family>, family: string, labels: Record<string, string>, sampleName = family): Sample[] {
  const f = families.get(family);
  if (!f) throw new Error(`no family ${family}`);
  return f.samples.filter((s) => s.name === sampleName && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

const total = (samples: Sample[]): number => samples.reduce((a, s) => a + s.value, 0);

describe('GET /metrics', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start({ config: { metricsResolution: '200ms' } });
  });
  after(async () => {
    await s.cleanup();
  });

  it('serves the text format with the gateway metrics and the process metrics', async () => {
    const res = await fetch(`${s.url}/metrics`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    for (const [name, type] of [
      ['skiff_serving_requests_total', 'counter'],
      ['skiff_serving_request_duration_seconds', 'histogram'],
      ['skiff_serving_queue_duration_seconds', 'histogram'],
      ['skiff_serving_batch_size', 'histogram'],
      ['process_resident_memory_bytes', 'gauge'],
      ['nodejs_eventloop_lag_seconds', 'gauge'],
    ]) assert.match(text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), text.slice(0, 3000));
    assert.ok(Number(/^process_resident_memory_bytes (\d+)$/m.exec(text)?.[1]) > 0);
    // a request to no InferenceService is not counted (no series for it)
    await fetch(`${s.url}/serving/default/nothing/v1/models/nothing:predict`, { method: 'POST', body: '{}' });
    assert.doesNotMatch(await (await fetch(`${s.url}/metrics`)).text(), /inferenceservice="nothing"/);
  });

  it('counts the API\'s requests, the controllers\' reconciles and queues, and Pods\' use, in valid exposition text', async () => {
    const ns = '/api/v1/namespaces/default';
    // a Job that finishes, and a Pod that runs while /metrics is read, in a Kueue queue by its label
    await s.create('/apis/batch/v1/namespaces/default/jobs', {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'metrics-job' },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command: ['true'] }] } } },
    });
    // the queue the Pod names exists, so Kueue admits the Pod (it would wait behind its gate otherwise)
    await s.create('/apis/kueue.x-k8s.io/v1beta2/resourceflavors', { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ResourceFlavor', metadata: { name: 'metrics-flavor' } });
    await s.create('/apis/kueue.x-k8s.io/v1beta2/clusterqueues', {
      apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ClusterQueue', metadata: { name: 'metrics-cq' },
      spec: { namespaceSelector: {}, resourceGroups: [{ coveredResources: ['cpu', 'memory'], flavors: [{ name: 'metrics-flavor', resources: [{ name: 'cpu', nominalQuota: 4 }, { name: 'memory', nominalQuota: '8Gi' }] }] }] },
    });
    await s.create(`/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues`, { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'LocalQueue', metadata: { name: 'team-queue' }, spec: { clusterQueue: 'metrics-cq' } });
    const pod = podManifest('metrics-pod', ['sleep', '60']);
    pod.metadata.labels = { 'kueue.x-k8s.io/queue-name': 'team-queue' };
    await s.create(`${ns}/pods`, pod);
    await s.until('the Job to complete', async () => (await s.get('/apis/batch/v1/namespaces/default/jobs/metrics-job')).status?.succeeded === 1);
    await s.until('the Pod to run', async () => (await s.get(`${ns}/pods/metrics-pod`)).status?.phase === 'Running');
    await s.get(`${ns}/pods`);
    await s.get(`${ns}/pods/metrics-pod`);
    assert.equal((await s.req('GET', `${ns}/pods/nothing-here`)).status, 404);
    assert.equal((await s.req('PATCH', `${ns}/configmaps/applied?fieldManager=test`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: b\n', { 'content-type': 'application/apply-patch+yaml' })).status, 201);
    assert.equal((await s.req('GET', '/apis/v2beta1/runs?namespace=default')).status, 200);
    assert.equal((await s.req('GET', '/no/such/path')).status, 404);
    // a watch that ends after a second
    assert.equal((await s.req('GET', `${ns}/pods?watch=true&timeoutSeconds=1`)).status, 200);
    await s.until('a usage sample of the Pod', async () => /^pod_cpu_usage_seconds_total\{namespace="default",pod="metrics-pod"\}/m.test((await s.req('GET', '/metrics')).text) || undefined, 20_000);

    const text = (await s.req('GET', '/metrics')).text;
    const families = parseExposition(text);
    const types = Object.fromEntries([...families.values()].map((f) => [f.name, f.type]));
    for (const [name, type] of Object.entries({
      apiserver_request_total: 'counter', apiserver_request_duration_seconds: 'histogram', apiserver_current_inflight_requests: 'gauge', apiserver_longrunning_requests: 'gauge',
      controller_runtime_reconcile_total: 'counter', controller_runtime_reconcile_errors_total: 'counter', controller_runtime_terminal_reconcile_errors_total: 'counter',
      controller_runtime_reconcile_time_seconds: 'histogram', controller_runtime_max_concurrent_reconciles: 'gauge', controller_runtime_active_workers: 'gauge',
      workqueue_depth: 'gauge', workqueue_adds_total: 'counter', workqueue_queue_duration_seconds: 'histogram', workqueue_work_duration_seconds: 'histogram',
      workqueue_retries_total: 'counter', workqueue_unfinished_work_seconds: 'gauge', workqueue_longest_running_processor_seconds: 'gauge',
      container_cpu_usage_seconds_total: 'counter', pod_cpu_usage_seconds_total: 'counter', pod_memory_working_set_bytes: 'gauge', kube_pod_labels: 'gauge',
    })) assert.equal(types[name], type, name);

    // the API server's requests, labelled as kube-apiserver labels them
    const req = (labels: Record<string, string>): Sample[] => find(families, 'apiserver_request_total', labels);
    const labelNames = Object.keys(req({})[0]?.labels ?? {});
    assert.deepEqual(labelNames, ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code']);
    assert.ok(total(req({ verb: 'LIST', group: '', version: 'v1', resource: 'pods', scope: 'namespace', component: 'apiserver', code: '200' })) >= 1);
    assert.ok(total(req({ verb: 'GET', resource: 'pods', scope: 'resource', code: '200' })) >= 2);
    assert.equal(total(req({ verb: 'GET', resource: 'pods', scope: 'resource', code: '404' })), 1);
    assert.equal(total(req({ verb: 'POST', group: 'batch', version: 'v1', resource: 'jobs', scope: 'resource', code: '201' })), 1);
    assert.equal(total(req({ verb: 'APPLY', resource: 'configmaps', scope: 'resource', code: '201' })), 1);
    assert.equal(total(req({ verb: 'WATCH', resource: 'pods', scope: 'namespace', code: '200' })), 1);
    assert.equal(total(req({ verb: 'LIST', group: 'pipelines.kubeflow.org', version: 'v2beta1', resource: 'runs', scope: 'namespace', component: 'ml-pipeline', code: '200' })), 1);
    assert.ok(total(req({ verb: 'GET', subresource: '/metrics', resource: '', code: '200' })) >= 2);
    assert.equal(total(req({ verb: 'GET', resource: '', subresource: '', scope: '', code: '404' })), 1, 'an unknown path: counted, labelled by nothing');
    const watchDuration = find(families, 'apiserver_request_duration_seconds', { verb: 'WATCH', resource: 'pods' }, 'apiserver_request_duration_seconds_sum');
    assert.ok(total(watchDuration) >= 0.9, 'a watch lasts as long as it is open');
    const listCount = total(find(families, 'apiserver_request_duration_seconds', { verb: 'LIST', resource: 'pods', scope: 'namespace' }, 'apiserver_request_duration_seconds_count'));
    assert.equal(listCount, total(req({ verb: 'LIST', resource: 'pods', scope: 'namespace' })));
    const buckets = find(families, 'apiserver_request_duration_seconds', { verb: 'LIST', resource: 'pods', scope: 'namespace' }, 'apiserver_request_duration_seconds_bucket');
    assert.equal(buckets.length, 24);
    // this very request is in flight while it is answered
    assert.ok((find(families, 'apiserver_current_inflight_requests', { request_kind: 'readOnly' })[0]?.value ?? 0) >= 1);
    assert.equal(find(families, 'apiserver_longrunning_requests', { verb: 'WATCH', resource: 'pods' })[0]?.value, 0);

    // the controllers: the Job's reconciles, every controller's queue, the kubelet's workers
    const job = find(families, 'controller_runtime_reconcile_total', { controller: 'job' });
    assert.deepEqual(job.map((x) => x.labels.result).sort(), ['error', 'requeue', 'requeue_after', 'success']);
    assert.ok(total(find(families, 'controller_runtime_reconcile_total', { controller: 'job', result: 'success' })) >= 1);
    const jobReconciles = total(job);
    assert.equal(total(find(families, 'controller_runtime_reconcile_time_seconds', { controller: 'job' }, 'controller_runtime_reconcile_time_seconds_count')), jobReconciles);
    assert.equal(find(families, 'controller_runtime_max_concurrent_reconciles', { controller: 'kubelet' })[0]?.value, 4);
    const controllers = find(families, 'controller_runtime_max_concurrent_reconciles', {}).map((x) => x.labels.controller);
    for (const c of ['job', 'kubelet', 'scheduler', 'namespace', 'pytorchjob-controller', 'run', 'notebook', 'inferenceservice-controller']) assert.ok(controllers.includes(c), `${c} in ${controllers.join(', ')}`);
    const depth = find(families, 'workqueue_depth', {});
    assert.deepEqual(depth.map((x) => x.labels.name).filter((n) => n !== 'garbage_collector_attempt_to_delete').sort(), [...controllers].sort(), 'a queue per controller');
    assert.ok(depth.every((x) => x.labels.priority === '' && x.value >= 0));
    assert.ok(find(families, 'workqueue_depth', { name: 'garbage_collector_attempt_to_delete', controller: '' }).length === 1);
    const adds = total(find(families, 'workqueue_adds_total', { name: 'job', controller: 'job' }));
    assert.ok(adds >= 1 && adds >= jobReconciles - total(find(families, 'workqueue_retries_total', { name: 'job' })), `adds ${adds}, reconciles ${jobReconciles}`);
    assert.ok(total(find(families, 'workqueue_queue_duration_seconds', { name: 'kubelet' }, 'workqueue_queue_duration_seconds_count')) >= 1);
    assert.equal(find(families, 'workqueue_queue_duration_seconds', { name: 'kubelet' }, 'workqueue_queue_duration_seconds_bucket').length, 13);
    assert.ok(find(families, 'workqueue_longest_running_processor_seconds', {}).every((x) => x.value >= 0 && x.value < 60));

    // the running Pod's use, and its queue for joining
    const cpu = find(families, 'pod_cpu_usage_seconds_total', { namespace: 'default', pod: 'metrics-pod' });
    assert.equal(cpu.length, 1);
    assert.ok((cpu[0]?.value ?? -1) >= 0);
    assert.ok((find(families, 'pod_memory_working_set_bytes', { namespace: 'default', pod: 'metrics-pod' })[0]?.value ?? 0) > 0);
    assert.equal(find(families, 'kube_pod_labels', { namespace: 'default', pod: 'metrics-pod', label_kueue_x_k8s_io_queue_name: 'team-queue' }).length, 1);
    await s.req('DELETE', `${ns}/pods/metrics-pod`);
  });
});

describe('GET /metrics with tenancy on', () => {
  let skiff: Skiff;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skiff-metrics-'));
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, 'prom-token,prometheus,2001,"system:monitoring"\nalice-token,alice@example.com,1001\n');
    skiff = await startSkiff({ dataDir: join(dir, 'data'), port: 0, tokenAuthFile: tokens, pythonZygote: false });
  });
  after(async () => {
    await skiff?.stop({ containers: 'stop' });
    rmSync(dir, { recursive: true, force: true });
  });

  it('is for system:monitoring (and cluster admins), as kube-apiserver\'s bootstrap policy has it', async () => {
    const get = (token?: string): Promise<Response> => fetch(`${skiff.url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    const prom = await get('prom-token');
    assert.equal(prom.status, 200);
    const families = parseExposition(await prom.text());
    // the refused requests below are counted too, after this scrape
    assert.ok(families.has('apiserver_request_total'));
    const alice = await get('alice-token');
    assert.equal(alice.status, 403);
    assert.match(((await alice.json()) as { message: string }).message, /User "alice@example.com" cannot get path "\/metrics"/);
    assert.equal((await get()).status, 401);
    const after = parseExposition(await (await get('prom-token')).text());
    assert.equal(total(find(after, 'apiserver_request_total', { subresource: '/metrics', code: '403' })), 1);
    assert.equal(total(find(after, 'apiserver_request_total', { subresource: '/metrics', code: '401' })), 1);
  });
});
