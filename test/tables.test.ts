// Server-side printing with the real kubectl: `kubectl get` asks for meta.k8s.io Tables and prints
// the columns the server chose, so Skiff's answers must hold the columns a cluster's would, in the
// same order, computed the same way (a Pod's READY, STATUS and RESTARTS; a CRD's printer columns).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { conformanceDir } from '../src/conformance-path.js';
import { TestServer, kubectlBin, podManifest, repoRoot, skiffBin } from './harness.js';

const pods = '/api/v1/namespaces/default/pods';
const tableAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

/**
 * kubectl's table as rows of named cells: each column starts where its header starts (kubectl's
 * tabwriter pads every column to its widest cell), so cells may hold spaces or be empty.
 */
function parseTable(text: string, headers: string[]): Record<string, string>[] {
  const [head = '', ...lines] = text.split('\n').filter((l) => l.trim() !== '');
  const starts = headers.map((h) => {
    const at = new RegExp(`(^|\\s)${h.replace(/[()]/g, '\\$&')}(\\s|$)`).exec(head);
    assert.ok(at, `no ${h} column in ${JSON.stringify(head)}`);
    return at.index + at[1]!.length;
  });
  assert.deepEqual(head.trim().split(/\s{2,}/), headers, 'the header row');
  return lines.map((l) => Object.fromEntries(headers.map((h, i) => [h, l.slice(starts[i], starts[i + 1]).trim()])));
}

/** the sections kubectl prints for several kinds, split at their blank lines */
function sections(text: string): string[] {
  return text.split(/\n\s*\n/).map((s) => s.trim()).filter(Boolean);
}

const podHeaders = ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'];
/** an age as kubectl's HumanDuration writes it: 5s, 3m2s, 2h */
const age = /^(\d+[smhdy])+$/;

describe('kubectl get: server-side printing', () => {
  let s: TestServer;
  before(async () => {
    // a crash-looping Pod waits long before its next try, so its row stays CrashLoopBackOff
    s = await TestServer.start({ config: { crashLoopBackoff: '10m', crashLoopBackoffMax: '10m' } });
  });
  after(async () => {
    await s?.cleanup();
  });

  const pod = (name: string, ok: (p: any) => boolean): Promise<any> => s.until(`pod ${name}`, async () => {
    const p = await s.get(`${pods}/${name}`);
    return ok(p) ? p : undefined;
  });

  it('pods: READY, STATUS and RESTARTS for running, completed, failing and crash-looping Pods; -o wide adds IP and NODE', async () => {
    await s.create(pods, podManifest('sleeper', ['sleep', '600']));
    await s.create(pods, podManifest('done', ['true']));
    await s.create(pods, podManifest('fails', ['sh', '-c', 'exit 3']));
    await s.create(pods, { ...podManifest('crash', ['sh', '-c', 'exit 1']), spec: { restartPolicy: 'Always', containers: [{ name: 'main', image: 'python', command: ['sh', '-c', 'exit 1'] }] } });
    const sleeper = await pod('sleeper', (p) => p.status?.containerStatuses?.[0]?.ready === true);
    await pod('done', (p) => p.status?.phase === 'Succeeded');
    await pod('fails', (p) => p.status?.phase === 'Failed');
    await pod('crash', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff');

    const r = await s.kubectl(['get', 'pods']);
    assert.equal(r.code, 0, r.stderr);
    const rows = parseTable(r.stdout, podHeaders);
    const by = Object.fromEntries(rows.map((x) => [x.NAME, x]));
    assert.deepEqual(rows.map((x) => x.NAME), ['crash', 'done', 'fails', 'sleeper']);
    assert.deepEqual([by.sleeper?.READY, by.sleeper?.STATUS, by.sleeper?.RESTARTS], ['1/1', 'Running', '0']);
    assert.deepEqual([by.done?.READY, by.done?.STATUS, by.done?.RESTARTS], ['0/1', 'Completed', '0']);
    assert.deepEqual([by.fails?.READY, by.fails?.STATUS, by.fails?.RESTARTS], ['0/1', 'Error', '0']);
    assert.equal(by.crash?.STATUS, 'CrashLoopBackOff');
    assert.match(by.crash?.RESTARTS ?? '', /^1 \(\d+s ago\)$/);
    for (const x of rows) assert.match(x.AGE ?? '', age);

    const wide = await s.kubectl(['get', 'pods', '-o', 'wide']);
    assert.equal(wide.code, 0, wide.stderr);
    const wideRows = parseTable(wide.stdout, [...podHeaders, 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES']);
    const w = wideRows.find((x) => x.NAME === 'sleeper');
    assert.deepEqual([w?.IP, w?.NODE, w?.['NOMINATED NODE'], w?.['READINESS GATES']], [sleeper.status.podIP, sleeper.spec.nodeName, '<none>', '<none>']);

    // one Pod by name, and across namespaces (kubectl takes the NAMESPACE from each row's object)
    const one = await s.kubectl(['get', 'pod', 'done']);
    assert.deepEqual(parseTable(one.stdout, podHeaders).map((x) => x.STATUS), ['Completed']);
    const all = await s.kubectl(['get', 'pods', '-A', '--show-labels']);
    assert.equal(all.code, 0, all.stderr);
    const allRows = parseTable(all.stdout, ['NAMESPACE', ...podHeaders, 'LABELS']);
    assert.deepEqual(allRows.map((x) => `${x.NAMESPACE}/${x.NAME}`), ['default/crash', 'default/done', 'default/fails', 'default/sleeper']);
  });

  it('the Table over HTTP: get and list, includeObject, v1beta1, 406 and 400; plain JSON unchanged', async () => {
    const t = await s.req('GET', `${pods}/sleeper`, undefined, { accept: tableAccept });
    assert.equal(t.status, 200, t.text);
    assert.equal(t.body.kind, 'Table');
    assert.equal(t.body.apiVersion, 'meta.k8s.io/v1');
    assert.deepEqual(t.body.columnDefinitions.map((c: any) => c.name), ['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node', 'Nominated Node', 'Readiness Gates']);
    assert.equal(t.body.rows.length, 1);
    assert.equal(t.body.rows[0].object.kind, 'PartialObjectMetadata');
    assert.equal(t.body.rows[0].object.metadata.name, 'sleeper');
    assert.equal(t.body.metadata.resourceVersion, t.body.rows[0].object.metadata.resourceVersion);

    const list = await s.req('GET', `${pods}?includeObject=Object&labelSelector=nothing%3Dhere`, undefined, { accept: tableAccept });
    assert.deepEqual([list.body.kind, list.body.rows], ['Table', []]);
    const full = await s.req('GET', `${pods}?includeObject=Object`, undefined, { accept: 'application/json;as=Table;v=v1beta1;g=meta.k8s.io' });
    assert.equal(full.body.apiVersion, 'meta.k8s.io/v1beta1');
    assert.deepEqual(full.body.rows.map((r: any) => [r.object.kind, r.object.metadata.name]), [['Pod', 'crash'], ['Pod', 'done'], ['Pod', 'fails'], ['Pod', 'sleeper']]);
    assert.deepEqual(full.body.rows.find((r: any) => r.cells[0] === 'done').conditions, [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }]);
    const none = await s.req('GET', `${pods}?includeObject=None`, undefined, { accept: tableAccept });
    assert.equal(none.body.rows[0].object, null);

    const bad = await s.req('GET', `${pods}?includeObject=Everything`, undefined, { accept: tableAccept });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, `Unable to convert to Table as requested: includeObject: Invalid value: "Everything": must be 'Metadata', 'Object', 'None', or empty`);
    const unacceptable = await s.req('GET', pods, undefined, { accept: 'application/json;as=Table;v=v9;g=meta.k8s.io' });
    assert.equal(unacceptable.status, 406);
    assert.equal(unacceptable.body.reason, 'NotAcceptable');
    const missing = await s.req('GET', `${pods}/nope`, undefined, { accept: tableAccept });
    assert.equal(missing.status, 404);

    const plain = await s.req('GET', `${pods}/sleeper`, undefined, { accept: 'application/json' });
    assert.equal(plain.body.kind, 'Pod');

    // client-go's metadata client
    const meta = await s.req('GET', pods, undefined, { accept: 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json' });
    assert.equal(meta.body.kind, 'PartialObjectMetadataList');
    assert.deepEqual(meta.body.items.map((o: any) => [o.kind, o.metadata.name]), [['PartialObjectMetadata', 'crash'], ['PartialObjectMetadata', 'done'], ['PartialObjectMetadata', 'fails'], ['PartialObjectMetadata', 'sleeper']]);
  });

  it('a watch for Tables: one row per event, the column definitions in the first only', async () => {
    const list = await s.get(pods);
    const ctrl = new AbortController();
    const res = await fetch(`${s.url}${pods}?watch=true&resourceVersion=${list.metadata.resourceVersion}`, { headers: { accept: tableAccept }, signal: ctrl.signal });
    assert.equal(res.status, 200);
    const events: any[] = [];
    const reading = (async () => {
      let buf = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += Buffer.from(chunk).toString();
        for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
          events.push(JSON.parse(buf.slice(0, i)));
          buf = buf.slice(i + 1);
        }
      }
    })().catch(() => undefined);
    await s.create(pods, podManifest('watched-1', ['true']));
    await s.until('two events', async () => events.length >= 2);
    ctrl.abort();
    await reading;
    assert.deepEqual(events.slice(0, 2).map((e) => [e.type, e.object.kind, e.object.rows.length, e.object.rows[0].cells[0]]), [['ADDED', 'Table', 1, 'watched-1'], ['MODIFIED', 'Table', 1, 'watched-1']]);
    assert.equal(events[0].object.columnDefinitions.length, 9);
    assert.equal(events[1].object.columnDefinitions, null);
    assert.equal(events[1].object.rows[0].object.kind, 'PartialObjectMetadata');
    assert.equal(events[1].object.metadata.resourceVersion, events[1].object.rows[0].object.metadata.resourceVersion);
  });

  it('pods -w: the list, then a row for every change of a Pod, under one header', async () => {
    await s.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'watched' } });
    await s.create('/api/v1/namespaces/watched/pods', podManifest('first', ['sleep', '600']));
    const kubectl = spawn(kubectlBin, ['get', 'pods', '-w', '-n', 'watched'], { env: { ...process.env, KUBECONFIG: s.kubeconfig, HOME: s.dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    kubectl.stdout.on('data', (d) => (out += d));
    kubectl.stderr.on('data', (d) => (err += d));
    const exited = new Promise((r) => kubectl.once('exit', r));
    try {
      await s.until('the listed Pod', async () => /^first\s/m.test(out));
      await s.create('/api/v1/namespaces/watched/pods', podManifest('brief', ['sh', '-c', 'sleep 1']));
      await s.until(`a Completed row for the new Pod (kubectl printed:\n${out}${err})`, async () => /^brief\s+0\/1\s+Completed\s/m.test(out));
    } finally {
      kubectl.kill('SIGTERM');
      await exited;
    }
    const rows = parseTable(out, podHeaders);
    assert.equal(rows[0]?.NAME, 'first', 'the current list comes first');
    const brief = rows.filter((x) => x.NAME === 'brief');
    assert.ok(brief.length >= 2, `a row for each change of the Pod:\n${out}`);
    assert.notEqual(brief[0]?.STATUS, 'Completed', 'the first row shows the Pod before it ran');
    assert.equal(brief[brief.length - 1]?.STATUS, 'Completed');
    for (const x of brief) assert.match(x.AGE ?? '', age);
    assert.equal(out.match(/^NAME\s/gm)?.length, 1, 'one header');
  });

  it('ns, nodes, jobs, cm, secrets, svc, events in one command, each with a cluster’s columns', async () => {
    await s.create('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: '1', b: '2' } });
    await s.create('/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, stringData: { token: 's3cret' } });
    await s.create('/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } });
    await s.create('/apis/batch/v1/namespaces/default/jobs', { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'pi' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'pi', image: 'python', command: ['true'] }] } } } });
    await s.until('job pi Complete', async () => (await s.get('/apis/batch/v1/namespaces/default/jobs/pi')).status?.conditions?.some((c: any) => c.type === 'Complete' && c.status === 'True'));

    const r = await s.kubectl(['get', 'ns,nodes,jobs,cm,secrets,svc,events']);
    assert.equal(r.code, 0, r.stderr);
    const [ns = '', nodes = '', jobs = '', cms = '', secrets = '', svcs = '', events = ''] = sections(r.stdout);
    const nsRows = parseTable(ns, ['NAME', 'STATUS', 'AGE']);
    assert.deepEqual(nsRows.find((x) => x.NAME === 'namespace/default')?.STATUS, 'Active');
    const nodeRows = parseTable(nodes, ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION']);
    assert.equal(nodeRows[0]?.STATUS, 'Ready');
    assert.match(nodeRows[0]?.NAME ?? '', /^node\//);
    const jobRows = parseTable(jobs, ['NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE']);
    assert.deepEqual([jobRows[0]?.NAME, jobRows[0]?.STATUS, jobRows[0]?.COMPLETIONS], ['job.batch/pi', 'Complete', '1/1']);
    assert.match(jobRows[0]?.DURATION ?? '', age);
    assert.deepEqual(parseTable(cms, ['NAME', 'DATA', 'AGE']).map((x) => [x.NAME, x.DATA]), [['configmap/kube-root-ca.crt', '1'], ['configmap/settings', '2']]);
    assert.deepEqual(parseTable(secrets, ['NAME', 'TYPE', 'DATA', 'AGE']).map((x) => [x.NAME, x.TYPE, x.DATA]), [['secret/creds', 'Opaque', '1']]);
    const svc = parseTable(svcs, ['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE']);
    assert.deepEqual([svc[0]?.NAME, svc[0]?.TYPE, svc[0]?.['EXTERNAL-IP'], svc[0]?.['PORT(S)']], ['service/web', 'ClusterIP', '<none>', '80/TCP']);
    const ev = parseTable(events, ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
    assert.ok(ev.some((x) => x.OBJECT === 'pod/sleeper' && x.REASON === 'Started' && x.TYPE === 'Normal'), events);
    assert.ok(ev.some((x) => x.OBJECT === 'job/pi' && x.TYPE === 'Normal'), events);
  });

  it('skiff get prints the server’s Tables too, as kubectl prints them', async () => {
    const strip = (text: string): string => text.replace(/\d+(s|m\d*s?)\b/g, 'T').replace(/[ \t]+$/gm, '');
    for (const args of [['get', 'pods'], ['get', 'pods', '-o', 'wide'], ['get', 'pods', '-A', '--show-labels'], ['get', 'jobs,cm', '-n', 'default'], ['get', 'pod', 'done', 'sleeper']]) {
      // an age printed by one and not the other may cross a width (9s, 10s) and move the columns after
      // it: the two are taken again, and must agree, column widths included, in one of three tries
      let last: [string, string] = ['', ''];
      for (let attempt = 0; attempt < 3; attempt++) {
        const [k, mine] = await Promise.all([s.kubectl(args), s.cli(args)]);
        assert.equal(mine.code, 0, mine.stderr);
        last = [strip(mine.stdout), strip(k.stdout)];
        if (last[0] === last[1]) break;
      }
      assert.equal(last[0], last[1], `skiff ${args.join(' ')}`);
    }

    // skiff get -w: rows from the watch's Tables under the list's header
    await s.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'skiff-watched' } });
    const skiff = spawn(process.execPath, [skiffBin, 'get', 'pods', '-w', '-n', 'skiff-watched'], { env: { ...process.env, SKIFF_SERVER: s.url }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    skiff.stdout.on('data', (d) => (out += d));
    skiff.stderr.on('data', (d) => (err += d));
    const exited = new Promise((r) => skiff.once('exit', r));
    try {
      await s.until('the empty list', async () => /No resources found/.test(err));
      await s.create('/api/v1/namespaces/skiff-watched/pods', podManifest('brief', ['sh', '-c', 'sleep 1']));
      await s.until(`a Completed row (skiff printed:\n${out})`, async () => /^brief\s+0\/1\s+Completed\s/m.test(out));
    } finally {
      skiff.kill('SIGTERM');
      await exited;
    }
    const rows = parseTable(out, podHeaders);
    assert.ok(rows.length >= 2 && rows.every((x) => x.NAME === 'brief' && age.test(x.AGE ?? '')), out);
  });

  const corpus = conformanceDir();
  it('pytorchjobs: the upstream example shows NAME, STATE (its latest condition) and AGE', { skip: !existsSync(join(corpus, 'training')) && 'no ../shared/conformance here' }, async () => {
    const file = join(corpus, 'training', 'pytorch', 'simple.yaml');
    const job = YAML.parse(readFileSync(file, 'utf8'));
    await s.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: job.metadata.namespace } });
    const applied = await s.kubectl(['apply', '--validate=false', '-f', file]);
    assert.equal(applied.code, 0, applied.stderr);
    const path = `/apis/kubeflow.org/v1/namespaces/${job.metadata.namespace}/pytorchjobs/${job.metadata.name}`;
    // the controller moves the job on: compare with the object read before and after, unchanged
    const seen = await s.until('a table of an unchanged job with a condition', async () => {
      const before = await s.get(path);
      const r = await s.kubectl(['get', 'pytorchjobs', '-n', job.metadata.namespace]);
      const afterwards = await s.get(path);
      if (r.code !== 0 || before.metadata.resourceVersion !== afterwards.metadata.resourceVersion || !before.status?.conditions?.length) return undefined;
      return { job: before, rows: parseTable(r.stdout, ['NAME', 'STATE', 'AGE']) };
    });
    const conditions = seen.job.status.conditions;
    assert.deepEqual(seen.rows.map((x) => [x.NAME, x.STATE]), [[job.metadata.name, conditions[conditions.length - 1].type]]);
    assert.match(seen.rows[0]?.AGE ?? '', age);
    const jobs = await s.kubectl(['get', 'pytorchjob', job.metadata.name, '-n', job.metadata.namespace, '-o', 'wide']);
    assert.deepEqual(parseTable(jobs.stdout, ['NAME', 'STATE', 'AGE']).map((x) => x.NAME), [job.metadata.name]);
  });

  const python = join(repoRoot, '.venv', 'bin', 'python');
  it('isvc: URL, READY and the traffic of the latest revision', { skip: !existsSync(python) && 'the Python environment (.venv) is not set up' }, async () => {
    const echo = join(repoRoot, 'test', 'fixtures', 'serving', 'echo_server.py');
    const isvc = { apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'echo' }, spec: { predictor: { containers: [{ name: 'kserve-container', image: 'python:3.11', command: ['python', echo] }] } } };
    const applied = await s.kubectl(['apply', '--validate=false', '-f', '-'], YAML.stringify(isvc));
    assert.equal(applied.code, 0, applied.stderr);
    const headers = ['NAME', 'URL', 'READY', 'PREV', 'LATEST', 'PREVROLLEDOUTREVISION', 'LATESTREADYREVISION', 'AGE'];
    const pending = await s.kubectl(['get', 'isvc', 'echo']);
    assert.equal(parseTable(pending.stdout, headers)[0]?.NAME, 'echo');
    await s.until('echo Ready', async () => (await s.get('/apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices/echo')).status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'));
    const r = await s.kubectl(['get', 'inferenceservices']);
    assert.equal(r.code, 0, r.stderr);
    const [row] = parseTable(r.stdout, headers);
    assert.deepEqual(row && [row.NAME, row.URL, row.READY, row.PREV, row.LATEST, row.PREVROLLEDOUTREVISION, row.LATESTREADYREVISION], ['echo', 'http://echo.default.example.com', 'True', '', '100', '', 'echo-predictor-00001']);
    assert.match(row?.AGE ?? '', age);
  });
});
