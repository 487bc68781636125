// The resource metrics API (metrics.k8s.io) with the real kubectl: `kubectl top` of a Pod that burns
// a core and of one that holds 100 MB, measured by the local substrate, and the same numbers on
// GET /metrics under cAdvisor's names.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestServer, podManifest } from './harness.js';

/** the rows of kubectl's table output, by their first cell (or the first two with -A) */
function rows(out: string, key = 1): Map<string, string[]> {
  const lines = out.trim().split('\n').slice(1);
  return new Map(lines.map((l) => l.trim().split(/\s+/)).map((cells) => [cells.slice(0, key).join('/'), cells.slice(key)]));
}

const millicores = (s: string | undefined): number => (s?.endsWith('m') ? Number(s.slice(0, -1)) : Number(s) * 1000);
const mebibytes = (s: string | undefined): number => (s?.endsWith('Mi') ? Number(s.slice(0, -2)) : NaN);

describe('metrics API and kubectl top', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start({ config: { metricsResolution: '1s' } });
    await s.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
    const burner = podManifest('burner', ['python3', '-c', 'while True: pass']);
    burner.metadata.labels = { app: 'burner' };
    await s.create('/api/v1/namespaces/default/pods', burner);
    const holder = podManifest('holder', ['python3', '-c', 'import time\nheld = b"x" * (100 * 2**20)\nprint("holding", flush=True)\ntime.sleep(600)']);
    holder.spec.containers.push({ name: 'sidecar', image: 'python', command: ['sleep', '600'] });
    await s.create('/api/v1/namespaces/team/pods', holder);
    await s.until('the holder holds its memory', async () => (await s.req('GET', '/api/v1/namespaces/team/pods/holder/log?container=main')).text.includes('holding'));
  });
  after(async () => {
    await s?.cleanup();
  });

  it('is listed in discovery, read-only', async () => {
    const groups = await s.get('/apis');
    assert.ok(groups.groups.some((g: any) => g.name === 'metrics.k8s.io' && g.preferredVersion.version === 'v1beta1'));
    const list = await s.get('/apis/metrics.k8s.io/v1beta1');
    assert.deepEqual(list.resources.map((r: any) => [r.name, r.kind, r.namespaced, r.verbs]), [['nodes', 'NodeMetrics', false, ['get', 'list']], ['pods', 'PodMetrics', true, ['get', 'list']]]);
    const post = await s.req('POST', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', { metadata: { name: 'x' } });
    assert.equal(post.status, 405);
    assert.equal(post.body.reason, 'MethodNotAllowed');
    const del = await s.req('DELETE', '/apis/metrics.k8s.io/v1beta1/nodes/local');
    assert.equal(del.status, 405);
  });

  it('kubectl top pods shows the burner near a core and the holder over 90Mi', async () => {
    // the burner gets what the machine's other work leaves it (a busy CI machine may give it a third of
    // a core for a while): the window is read again until it shows more than 300m
    let last = '';
    const out = await s.until('kubectl top to show both pods, the burner over 300m', async () => {
      const r = await s.kubectl(['top', 'pods', '-A']);
      const t = rows(r.stdout, 2);
      last = r.stdout;
      return r.code === 0 && t.has('team/holder') && millicores(t.get('default/burner')?.[0]) > 300 ? t : undefined;
    }).catch((e: Error) => assert.fail(`${e.message.split('\n')[0]}; kubectl top printed:\n${last}`));
    const burner = out.get('default/burner') ?? [];
    const holder = out.get('team/holder') ?? [];
    assert.ok(mebibytes(holder[1]) > 90, `holder: ${holder.join(' ')}`);
    assert.ok(millicores(holder[0]) < millicores(burner[0]), `holder ${holder.join(' ')} against burner ${burner.join(' ')}`);

    const team = await s.kubectl(['top', 'pods', '-n', 'team', '--containers']);
    assert.equal(team.code, 0, team.stderr);
    const containers = rows(team.stdout, 2);
    assert.deepEqual([...containers.keys()].sort(), ['holder/main', 'holder/sidecar']);
    assert.ok(mebibytes(containers.get('holder/main')?.[1]) > 90, team.stdout);
    assert.ok(mebibytes(containers.get('holder/sidecar')?.[1]) < 20, team.stdout);

    const selected = await s.kubectl(['top', 'pods', '-l', 'app=burner']);
    assert.equal(selected.code, 0, selected.stderr);
    assert.deepEqual([...rows(selected.stdout).keys()], ['burner']);
    const one = await s.kubectl(['top', 'pod', 'holder', '-n', 'team']);
    assert.equal(one.code, 0, one.stderr);
    assert.deepEqual([...rows(one.stdout).keys()], ['holder']);
  });

  it('kubectl top nodes shows the machine', async () => {
    const r = await s.kubectl(['top', 'nodes']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^NAME\s+CPU\(cores\)\s+CPU\(%\)\s+MEMORY\(bytes\)\s+MEMORY\(%\)/);
    const node = rows(r.stdout).get('local') ?? [];
    // the burner alone keeps the machine busier than a third of a core
    assert.ok(millicores(node[0]) > 300, r.stdout);
    assert.ok(mebibytes(node[2]) > 100, r.stdout);
  });

  it('answers PodMetrics and NodeMetrics as metrics-server writes them', async () => {
    const r = await s.kubectl(['get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/team/pods/holder']);
    assert.equal(r.code, 0, r.stderr);
    const m = JSON.parse(r.stdout);
    assert.equal(m.kind, 'PodMetrics');
    assert.equal(m.apiVersion, 'metrics.k8s.io/v1beta1');
    assert.equal(m.metadata.namespace, 'team');
    assert.match(m.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.match(m.window, /^\d+(\.\d+)?m?s$/);
    assert.deepEqual(m.containers.map((c: any) => c.name), ['main', 'sidecar']);
    for (const c of m.containers) {
      assert.match(c.usage.cpu, /^(0|\d+[num]?)$/);
      assert.match(c.usage.memory, /^\d+(Ki|Mi)?$/);
    }
    const list = await s.get('/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Dburner');
    assert.equal(list.kind, 'PodMetricsList');
    assert.deepEqual(list.items.map((i: any) => [i.metadata.namespace, i.metadata.name, i.metadata.labels]), [['default', 'burner', { app: 'burner' }]]);
    const bad = await s.req('GET', '/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=spec.nodeName%3Dlocal');
    assert.equal(bad.status, 400);
    const nodes = await s.get('/apis/metrics.k8s.io/v1beta1/nodes');
    assert.deepEqual(nodes.items.map((n: any) => n.metadata.name), ['local']);
    assert.match(nodes.items[0].usage.cpu, /^\d+[num]?$/);
    const table = await s.kubectl(['get', 'podmetrics', '-n', 'team']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^NAME\s+CPU\s+MEMORY\s+WINDOW\s*$/m);
    assert.match(table.stdout, /^holder\s+\S+\s+\d+(Ki|Mi)\s+\S+s\s*$/m);
  });

  it('answers the Python client as it reads metrics-server', async () => {
    const r = await s.python([
      'from kubernetes import client, config',
      'config.load_kube_config()',
      'api = client.CustomObjectsApi()',
      'm = api.get_namespaced_custom_object("metrics.k8s.io", "v1beta1", "team", "pods", "holder")',
      'print(m["kind"], *[c["name"] + "=" + c["usage"]["memory"] for c in m["containers"]])',
      'nodes = api.list_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes")',
      'print(nodes["kind"], *[n["metadata"]["name"] for n in nodes["items"]])',
    ].join('\n'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^PodMetrics main=\d+(Ki|Mi) sidecar=\d+(Ki|Mi)$/m);
    assert.match(r.stdout, /^NodeMetricsList local$/m);
  });

  it('feeds the same numbers to Prometheus', async () => {
    const text = await (await fetch(`${s.url}/metrics`)).text();
    assert.match(text, /^# TYPE container_cpu_usage_seconds_total counter$/m);
    assert.match(text, /^# TYPE container_memory_working_set_bytes gauge$/m);
    const value = (name: string, labels: string): number => Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(text)?.[1]);
    assert.ok(value('container_cpu_usage_seconds_total', 'container="main",namespace="default",pod="burner"') > 0.3, text.slice(0, 2000));
    assert.ok(value('container_memory_working_set_bytes', 'container="main",namespace="team",pod="holder"') > 90 * 2 ** 20);
    assert.ok(value('container_memory_working_set_bytes', 'container="sidecar",namespace="team",pod="holder"') > 0);
    assert.ok(Number(/^node_memory_working_set_bytes (\S+)$/m.exec(text)?.[1]) > 100 * 2 ** 20);
    assert.ok(Number(/^node_cpu_usage_seconds_total (\S+)$/m.exec(text)?.[1]) > 0);
  });

  it('forgets a deleted Pod', async () => {
    // --wait would watch with watch-list, which another part of issue 10 brings
    const del = await s.kubectl(['delete', 'pod', 'burner', '--wait=false']);
    assert.equal(del.code, 0, del.stderr);
    await s.until('the burner to be gone', async () => (await s.req('GET', '/api/v1/namespaces/default/pods/burner')).status === 404);
    const r = await s.req('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/burner');
    assert.equal(r.status, 404);
    assert.equal(r.body.reason, 'NotFound');
    const top = await s.kubectl(['top', 'pod', 'burner']);
    assert.notEqual(top.code, 0);
    assert.match(top.stderr, /NotFound.*"burner" not found/);
    await s.until('the burner to leave /metrics', async () => !(await (await fetch(`${s.url}/metrics`)).text()).includes('pod="burner"'));
    const still = await s.kubectl(['top', 'pods', '-A']);
    assert.deepEqual([...rows(still.stdout, 2).keys()], ['team/holder']);
  });

  it('measures the containers a restarted server adopts', async () => {
    await s.crash();
    await s.launch();
    const out = await s.until('kubectl top after the restart', async () => {
      const r = await s.kubectl(['top', 'pods', '-n', 'team']);
      return r.code === 0 && rows(r.stdout).has('holder') ? rows(r.stdout) : undefined;
    });
    assert.ok(mebibytes(out.get('holder')?.[1]) > 90, JSON.stringify([...out]));
  });
});
