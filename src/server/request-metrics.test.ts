// kube-apiserver's request metrics: each request's labels as MonitorRequest reports them (verb made
// canonical, scope from the route, CONNECT for the streaming subresources, non-resource paths in
// `subresource`), the KFP API's in the same terms, and the families as rendered.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { defaultRegistry } from '../api/index.js';
import { Discovery } from './kube/discovery.js';
import { MetricsRegistry } from './metrics.js';
import { RequestMetrics, requestDurationBuckets, requestLabels, servedApi, type RequestLabels } from './request-metrics.js';

const api = servedApi(new Discovery(defaultRegistry()));
const apply = 'application/apply-patch+yaml';

/** verb group version resource subresource scope component [dry_run] */
function labels(method: string, url: string, contentType?: string): string {
  const l: RequestLabels = requestLabels(method, url, contentType, api);
  return [l.verb, l.group, l.version, l.resource, l.subresource, l.scope, l.component, ...(l.dryRun ? [l.dryRun] : [])].map((v) => v || '-').join(' ');
}

describe('request labels', () => {
  it('labels Kubernetes API requests as kube-apiserver does', () => {
    const cases: [string, string, string | undefined, string][] = [
      ['GET', '/api/v1/namespaces/default/pods', undefined, 'LIST - v1 pods - namespace apiserver'],
      ['GET', '/api/v1/pods?labelSelector=a%3Db', undefined, 'LIST - v1 pods - cluster apiserver'],
      ['GET', '/api/v1/namespaces/default/pods/p', undefined, 'GET - v1 pods - resource apiserver'],
      ['HEAD', '/api/v1/namespaces/default/pods/p', undefined, 'GET - v1 pods - resource apiserver'],
      ['GET', '/api/v1/namespaces/default/pods?watch=true&resourceVersion=5', undefined, 'WATCH - v1 pods - namespace apiserver'],
      ['GET', '/api/v1/namespaces/default/pods?watch=1', undefined, 'WATCH - v1 pods - namespace apiserver'],
      ['GET', '/api/v1/namespaces/default/pods?watch=', undefined, 'WATCH - v1 pods - namespace apiserver'],
      ['GET', '/api/v1/namespaces/default/pods?watch=false', undefined, 'LIST - v1 pods - namespace apiserver'],
      ['GET', '/api/v1/namespaces/default/pods?watch=0', undefined, 'LIST - v1 pods - namespace apiserver'],
      ['GET', '/api/v1/watch/namespaces/default/pods', undefined, 'WATCH - v1 pods - namespace apiserver'],
      // a list of one object by field selector is still the collection's route
      ['GET', '/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dp', undefined, 'LIST - v1 pods - namespace apiserver'],
      ['POST', '/apis/batch/v1/namespaces/default/jobs', undefined, 'POST batch v1 jobs - resource apiserver'],
      ['POST', '/apis/batch/v1/namespaces/default/jobs?dryRun=All', undefined, 'POST batch v1 jobs - resource apiserver All'],
      ['POST', '/apis/batch/v1/namespaces/default/jobs?dryRun=All&dryRun=All', undefined, 'POST batch v1 jobs - resource apiserver All'],
      ['POST', '/apis/batch/v1/namespaces/default/jobs?dryRun=Server', undefined, 'POST batch v1 jobs - resource apiserver invalid'],
      ['PUT', '/apis/batch/v1/namespaces/default/jobs/j/status', undefined, 'PUT batch v1 jobs status resource apiserver'],
      ['PATCH', '/apis/batch/v1/namespaces/default/jobs/j', 'application/merge-patch+json', 'PATCH batch v1 jobs - resource apiserver'],
      ['PATCH', '/apis/batch/v1/namespaces/default/jobs/j?fieldManager=kubectl', apply, 'APPLY batch v1 jobs - resource apiserver'],
      ['DELETE', '/apis/batch/v1/namespaces/default/jobs/j', undefined, 'DELETE batch v1 jobs - resource apiserver'],
      ['DELETE', '/apis/batch/v1/namespaces/default/jobs', undefined, 'DELETE batch v1 jobs - namespace apiserver'],
      ['GET', '/api/v1/namespaces/default/pods/p/log?follow=true', undefined, 'CONNECT - v1 pods log resource apiserver'],
      ['POST', '/api/v1/namespaces/default/pods/p/exec?command=ls', undefined, 'CONNECT - v1 pods exec resource apiserver'],
      ['GET', '/api/v1/namespaces/default/pods/p/portforward?ports=80', undefined, 'CONNECT - v1 pods portforward resource apiserver'],
      ['POST', '/api/v1/namespaces/default/pods/p/eviction', undefined, 'POST - v1 pods eviction resource apiserver'],
      ['GET', '/api/v1/namespaces', undefined, 'LIST - v1 namespaces - cluster apiserver'],
      ['GET', '/api/v1/namespaces/team-a', undefined, 'GET - v1 namespaces - resource apiserver'],
      ['PUT', '/api/v1/namespaces/team-a/finalize', undefined, 'PUT - v1 namespaces finalize resource apiserver'],
      ['GET', '/apis/kubeflow.org/v1/namespaces/a/pytorchjobs', undefined, 'LIST kubeflow.org v1 pytorchjobs - namespace apiserver'],
      ['OPTIONS', '/api/v1/namespaces/default/pods', undefined, 'other - v1 pods - namespace apiserver'],
    ];
    for (const [method, url, ct, want] of cases) assert.equal(labels(method, url, ct), want, `${method} ${url}`);
  });

  it('labels discovery by the served group and version, and nothing it does not serve', () => {
    assert.equal(labels('GET', '/api'), 'GET - - - /api - apiserver');
    assert.equal(labels('GET', '/apis/'), 'GET - - - /apis - apiserver');
    assert.equal(labels('GET', '/apis/batch'), 'GET batch - - - - apiserver');
    assert.equal(labels('GET', '/apis/batch/v1'), 'GET batch v1 - - - apiserver');
    assert.equal(labels('GET', '/api/v1'), 'GET - v1 - - - apiserver');
    // names nobody serves stay out of the labels: the series cannot be grown by inventing paths
    for (const url of ['/apis/nope.example.com', '/apis/nope.example.com/v1/things', '/apis/batch/v9/jobs', '/api/v1/namespaces/a/things', '/api/v1/namespaces/a/pods/p/bogus', '/api/v1/namespaces/a/pods/p/log/more']) {
      assert.equal(labels('GET', url), 'GET - - - - - -', url);
    }
  });

  it('labels a non-resource path by the path, as kube-apiserver labels /healthz, and an unknown one by nothing', () => {
    assert.equal(labels('GET', '/healthz'), 'GET - - - /healthz - -');
    assert.equal(labels('GET', '/readyz/ping?verbose'), 'GET - - - /readyz - -');
    assert.equal(labels('GET', '/metrics'), 'GET - - - /metrics - -');
    assert.equal(labels('GET', '/openapi/v3/apis/batch/v1'), 'GET - - - /openapi/v3 - -');
    assert.equal(labels('GET', '/ui/assets/index-abc.js'), 'GET - - - /ui - -');
    assert.equal(labels('GET', '/'), 'GET - - - / - -');
    assert.equal(labels('POST', '/kfam/v1/bindings'), 'POST - - - /kfam - -');
    assert.equal(labels('GET', '/skiff/v1/namespaces/a/pods/p-1/usage'), 'GET - - - /skiff/v1/namespaces/{namespace}/pods/{name}/usage - -');
    assert.equal(labels('GET', '/skiff/v1/namespaces/a/inferenceservices/m/traffic'), 'GET - - - /skiff/v1/namespaces/{namespace}/inferenceservices/{name}/traffic - -');
    assert.equal(labels('DELETE', '/notebook/_session'), 'DELETE - - - /notebook/_session - -');
    assert.equal(labels('GET', '/serving/default/nothing/v1/models/x'), 'GET - - - - - -');
    assert.equal(labels('GET', '/wp-login.php'), 'GET - - - - - -');
  });

  it('labels a notebook\'s server as kube\'s service proxy: CONNECT notebooks/proxy', () => {
    const l = requestLabels('GET', '/notebook/team-a/nb/lab/tree?x=1', undefined, api);
    assert.equal(labels('GET', '/notebook/team-a/nb/lab/tree?x=1'), 'CONNECT kubeflow.org v1 notebooks proxy resource apiserver');
    assert.equal(l.longRunning, true);
  });

  it('labels the KFP API with its resources, custom methods as subresources, component ml-pipeline', () => {
    const cases: [string, string, string][] = [
      ['GET', '/apis/v2beta1/runs?namespace=team-a&page_size=10', 'LIST pipelines.kubeflow.org v2beta1 runs - namespace ml-pipeline'],
      ['GET', '/apis/v2beta1/runs', 'LIST pipelines.kubeflow.org v2beta1 runs - cluster ml-pipeline'],
      ['GET', '/apis/v2beta1/runs/0b6c', 'GET pipelines.kubeflow.org v2beta1 runs - resource ml-pipeline'],
      ['POST', '/apis/v2beta1/runs', 'POST pipelines.kubeflow.org v2beta1 runs - resource ml-pipeline'],
      ['POST', '/apis/v2beta1/runs/0b6c:terminate', 'POST pipelines.kubeflow.org v2beta1 runs terminate resource ml-pipeline'],
      ['POST', '/apis/v2beta1/experiments/e:archive', 'POST pipelines.kubeflow.org v2beta1 experiments archive resource ml-pipeline'],
      ['DELETE', '/apis/v2beta1/recurringruns/r', 'DELETE pipelines.kubeflow.org v2beta1 recurringruns - resource ml-pipeline'],
      ['POST', '/apis/v2beta1/pipelines/upload?name=x', 'POST pipelines.kubeflow.org v2beta1 pipelines - resource ml-pipeline'],
      ['POST', '/apis/v2beta1/pipelines/upload_version?pipelineid=p', 'POST pipelines.kubeflow.org v2beta1 pipelines versions resource ml-pipeline'],
      ['GET', '/apis/v2beta1/pipelines/names/hello', 'GET pipelines.kubeflow.org v2beta1 pipelines - resource ml-pipeline'],
      ['GET', '/apis/v2beta1/pipelines/p/versions', 'GET pipelines.kubeflow.org v2beta1 pipelines versions resource ml-pipeline'],
      ['PATCH', '/apis/v2beta1/pipelines/p/versions/v', 'PATCH pipelines.kubeflow.org v2beta1 pipelines versions resource ml-pipeline'],
      ['GET', '/apis/v2beta1/runs/r/nodes/n/artifacts/model:read', 'GET pipelines.kubeflow.org v2beta1 runs artifacts resource ml-pipeline'],
      ['GET', '/apis/v2beta1/artifacts/a1', 'GET pipelines.kubeflow.org v2beta1 artifacts - resource ml-pipeline'],
      ['GET', '/apis/v2beta1/healthz', 'GET - - - /apis/v2beta1/healthz - -'],
      ['GET', '/apis/v2beta1/filters', 'GET - - - - - -'],
      ['POST', '/apis/v2beta1/runs/r:bogus', 'POST - - - - - -'],
      ['GET', '/apis/v2beta1/runs/r/what/ever', 'GET - - - - - -'],
    ];
    for (const [method, url, want] of cases) assert.equal(labels(method, url), want, `${method} ${url}`);
  });
});

class FakeResponse extends EventEmitter {
  headersSent = false;
  statusCode = 200;
  answer(code: number): void {
    this.statusCode = code;
    this.headersSent = true;
    this.emit('close');
  }
}

const request = (method: string, url: string): IncomingMessage => ({ method, url, headers: {} }) as IncomingMessage;

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('RequestMetrics', () => {
  it('counts and times each request when it ends, with its code, and in flight meanwhile', async () => {
    const m = new MetricsRegistry({ processMetrics: false });
    const r = new RequestMetrics(m, new Discovery(defaultRegistry()));
    const list = new FakeResponse();
    const create = new FakeResponse();
    r.track(request('GET', '/api/v1/namespaces/default/pods'), list as unknown as ServerResponse);
    r.track(request('POST', '/api/v1/namespaces/default/pods'), create as unknown as ServerResponse);
    const during = await m.render();
    assert.equal(sample(during, 'apiserver_current_inflight_requests{request_kind="readOnly"}'), 1);
    assert.equal(sample(during, 'apiserver_current_inflight_requests{request_kind="mutating"}'), 1);
    list.answer(200);
    create.answer(403);
    const text = await m.render();
    assert.equal(sample(text, 'apiserver_request_total{verb="LIST",dry_run="",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver",code="200"}'), 1, text);
    assert.equal(sample(text, 'apiserver_request_total{verb="POST",dry_run="",group="",version="v1",resource="pods",subresource="",scope="resource",component="apiserver",code="403"}'), 1);
    const buckets = text.split('\n').filter((l) => l.startsWith('apiserver_request_duration_seconds_bucket{verb="LIST",'));
    assert.deepEqual(buckets.map((l) => /le="([^"]+)"/.exec(l)?.[1]), [...requestDurationBuckets.map(String), '+Inf']);
    assert.equal(sample(text, 'apiserver_request_duration_seconds_count{verb="LIST",dry_run="",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver"}'), 1);
    // the most in flight within about the last second, as kube-apiserver samples it
    assert.equal(sample(text, 'apiserver_current_inflight_requests{request_kind="readOnly"}'), 1);
    for (const [name, type] of [['apiserver_request_total', 'counter'], ['apiserver_request_duration_seconds', 'histogram'], ['apiserver_current_inflight_requests', 'gauge'], ['apiserver_longrunning_requests', 'gauge']]) {
      assert.match(text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'));
    }
  });

  it('tracks a watch as long-running, out of the in-flight count', async () => {
    const m = new MetricsRegistry({ processMetrics: false });
    const r = new RequestMetrics(m, new Discovery(defaultRegistry()));
    const watch = new FakeResponse();
    r.track(request('GET', '/apis/batch/v1/jobs?watch=1'), watch as unknown as ServerResponse);
    const series = 'apiserver_longrunning_requests{verb="WATCH",group="batch",version="v1",resource="jobs",subresource="",scope="cluster",component="apiserver"}';
    const during = await m.render();
    assert.equal(sample(during, series), 1);
    assert.equal(sample(during, 'apiserver_current_inflight_requests{request_kind="readOnly"}'), 0);
    watch.answer(200);
    const text = await m.render();
    assert.equal(sample(text, series), 0);
    assert.equal(sample(text, 'apiserver_request_total{verb="WATCH",dry_run="",group="batch",version="v1",resource="jobs",subresource="",scope="cluster",component="apiserver",code="200"}'), 1);
  });

  it('reuses a request line\'s series only where the query does not change its labels', async () => {
    const m = new MetricsRegistry({ processMetrics: false });
    const r = new RequestMetrics(m, new Discovery(defaultRegistry()));
    for (const url of ['/api/v1/pods?limit=5', '/api/v1/pods?limit=5&continue=x', '/api/v1/pods?watch=1&resourceVersion=9', '/api/v1/pods?watch=1&resourceVersion=10', '/apis/v2beta1/runs?namespace=a', '/apis/v2beta1/runs?page_size=3']) {
      const res = new FakeResponse();
      r.track(request('GET', url), res as unknown as ServerResponse);
      res.answer(200);
    }
    const text = await m.render();
    const count = (labels: string): number | undefined => sample(text, `apiserver_request_total{${labels},code="200"}`);
    assert.equal(count('verb="LIST",dry_run="",group="",version="v1",resource="pods",subresource="",scope="cluster",component="apiserver"'), 2, text);
    assert.equal(count('verb="WATCH",dry_run="",group="",version="v1",resource="pods",subresource="",scope="cluster",component="apiserver"'), 2);
    assert.equal(count('verb="LIST",dry_run="",group="pipelines.kubeflow.org",version="v2beta1",resource="runs",subresource="",scope="namespace",component="ml-pipeline"'), 1);
    assert.equal(count('verb="LIST",dry_run="",group="pipelines.kubeflow.org",version="v2beta1",resource="runs",subresource="",scope="cluster",component="ml-pipeline"'), 1);
  });

  it('counts an upgrade once, with the status its connection answered', async () => {
    const m = new MetricsRegistry({ processMetrics: false });
    const r = new RequestMetrics(m, new Discovery(defaultRegistry()));
    const req = request('GET', '/api/v1/namespaces/default/pods/p/exec?command=sh');
    const socket = new PassThrough();
    r.trackUpgrade(req, socket);
    // an upgrade that falls back to a plain answer goes through the request handler too: not counted again
    r.track(req, new FakeResponse() as unknown as ServerResponse);
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n');
    socket.write('HTTP/1.1 500 not a status line, data');
    socket.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    const text = await m.render();
    assert.equal(sample(text, 'apiserver_request_total{verb="CONNECT",dry_run="",group="",version="v1",resource="pods",subresource="exec",scope="resource",component="apiserver",code="101"}'), 1, text);
    assert.equal(text.split('\n').filter((l) => l.startsWith('apiserver_request_total{')).length, 1);
    const refused = new PassThrough();
    r.trackUpgrade(request('GET', '/api/v1/namespaces/default/pods/p/attach'), refused);
    refused.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
    refused.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(sample(await m.render(), 'apiserver_request_total{verb="CONNECT",dry_run="",group="",version="v1",resource="pods",subresource="attach",scope="resource",component="apiserver",code="403"}'), 1);
  });
});
