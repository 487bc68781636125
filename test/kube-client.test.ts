// The Python `kubernetes` client and kubectl against `skiff up`: CRUD, selectors, paging, watch
// (watch-list, resume, 410), kubectl wait and delete options, auth reviews, and the refusals of bad
// request options, each as a cluster answers them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { podManifest, TestServer } from './harness.js';

/** the last line of a script's stdout, as JSON */
function lastJson(r: { code: number; stdout: string; stderr: string }): any {
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  const lines = r.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] ?? 'null');
}

const prelude = `
import json, time
from kubernetes import client, config, watch
config.load_kube_config()
v1 = client.CoreV1Api()
out = {}
`;

describe('Kubernetes clients', () => {
  let s: TestServer;
  before(async () => {
    // a short change history, so a version can be made too old within a test
    s = await TestServer.start({ config: { watchHistory: 100, watchBookmarkInterval: '300ms' } });
  });
  after(async () => {
    await s?.cleanup();
  });

  it('Python client: CRUD, label and field selectors, limit/continue paging, dryRun, delete collection', async () => {
    const out = lastJson(await s.python(prelude + `
for i in range(5):
    v1.create_namespaced_config_map('default', {'metadata': {'name': f'cm{i}', 'labels': {'batch': '1' if i < 3 else '2'}}, 'data': {'i': str(i)}})
cm = v1.read_namespaced_config_map('cm0', 'default')
cm.data['i'] = 'zero'
out['replaced'] = v1.replace_namespaced_config_map('cm0', 'default', cm).data['i']
out['patched'] = v1.patch_namespaced_config_map('cm1', 'default', [{'op': 'add', 'path': '/data/extra', 'value': 'y'}]).data
out['byLabel'] = sorted(c.metadata.name for c in v1.list_namespaced_config_map('default', label_selector='batch=1').items)
out['byLabelSet'] = sorted(c.metadata.name for c in v1.list_namespaced_config_map('default', label_selector='batch in (2),batch!=1').items)
out['byField'] = [c.metadata.name for c in v1.list_namespaced_config_map('default', field_selector='metadata.name=cm4').items]
names, cont, pages = [], None, 0
while True:
    page = v1.list_namespaced_config_map('default', limit=2, _continue=cont)
    pages += 1
    names += [c.metadata.name for c in page.items]
    cont = page.metadata._continue
    if not cont:
        break
out['paged'] = names
out['pages'] = pages
dry = v1.create_namespaced_config_map('default', {'metadata': {'name': 'dry'}}, dry_run='All')
out['dryName'] = dry.metadata.name
try:
    v1.read_namespaced_config_map('dry', 'default')
    out['dryStored'] = True
except client.ApiException as e:
    out['dryStored'] = e.status
v1.delete_namespaced_config_map('cm4', 'default', dry_run='All')
v1.create_namespaced_pod('default', {'metadata': {'name': 'dry-status'}, 'spec': {'containers': [{'name': 'main', 'image': 'python', 'command': ['sleep', '600']}]}})
# once the kubelet has written its status, nothing would overwrite a dry run that was stored by mistake
for _ in range(300):
    if v1.read_namespaced_pod('dry-status', 'default').status.phase == 'Running':
        break
    time.sleep(0.1)
dry_status = v1.patch_namespaced_pod_status('dry-status', 'default', [{'op': 'add', 'path': '/status/message', 'value': 'dry'}], dry_run='All')
out['dryStatus'] = [dry_status.status.message, v1.read_namespaced_pod('dry-status', 'default').status.message]
# a status no controller rewrites: a dry run must leave it as it was
v1.create_namespace({'metadata': {'name': 'dry-ns'}})
ns_dry = v1.patch_namespace_status('dry-ns', {'status': {'conditions': [{'type': 'DryRun', 'status': 'True'}]}}, dry_run='All')
out['dryNsStatus'] = [[c.type for c in ns_dry.status.conditions or []], v1.read_namespace('dry-ns').status.conditions]
v1.delete_namespaced_pod('dry-status', 'default', grace_period_seconds=0)
out['afterDryDelete'] = v1.read_namespaced_config_map('cm4', 'default').metadata.name
v1.delete_collection_namespaced_config_map('default', label_selector='batch=1')
out['afterCollection'] = sorted(c.metadata.name for c in v1.list_namespaced_config_map('default', label_selector='batch').items)
try:
    v1.delete_namespaced_config_map('cm3', 'default', body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid='not-its-uid')))
except client.ApiException as e:
    out['precondition'] = [e.status, json.loads(e.body)['message'], v1.read_namespaced_config_map('cm3', 'default').metadata.uid]
v1.delete_namespaced_config_map('cm3', 'default', body=client.V1DeleteOptions(propagation_policy='Foreground', grace_period_seconds=0))
try:
    v1.read_namespaced_config_map('cm3', 'default')
except client.ApiException as e:
    out['deleted'] = e.status
print(json.dumps(out))
`));
    assert.equal(out.replaced, 'zero');
    assert.deepEqual(out.patched, { i: '1', extra: 'y' });
    assert.deepEqual(out.byLabel, ['cm0', 'cm1', 'cm2']);
    assert.deepEqual(out.byLabelSet, ['cm3', 'cm4']);
    assert.deepEqual(out.byField, ['cm4']);
    for (const n of ['cm0', 'cm1', 'cm2', 'cm3', 'cm4']) assert.equal(out.paged.filter((x: string) => x === n).length, 1, `${n} once in ${out.paged}`);
    assert.ok(out.pages >= 3, `pages: ${out.pages}`);
    assert.equal(out.dryName, 'dry');
    assert.equal(out.dryStored, 404);
    assert.equal(out.afterDryDelete, 'cm4');
    assert.deepEqual(out.dryStatus, ['dry', null]);
    assert.deepEqual(out.dryNsStatus, [['DryRun'], null]);
    assert.deepEqual(out.afterCollection, ['cm3', 'cm4']);
    assert.equal(out.deleted, 404);
    const [status, message, uid] = out.precondition;
    assert.equal(status, 409);
    assert.equal(message, `Operation cannot be fulfilled on configmaps "cm3": StorageError: invalid object, Code: 4, Key: /registry/configmaps/default/cm3, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: not-its-uid, UID in object meta: ${uid}`);
  });

  it('Python client: watch receives events (watch=True), sees objects leave a label selection, resumes from a resourceVersion, gets bookmarks, follows a Pod', async () => {
    const out = lastJson(await s.python(prelude + `
first = v1.create_namespaced_config_map('default', {'metadata': {'name': 'w0', 'labels': {'app': 'x'}}})
rv = first.metadata.resource_version
seen = []
w = watch.Watch()
for ev in w.stream(v1.list_namespaced_config_map, 'default', label_selector='app=x', timeout_seconds=120):
    o = ev['object']
    seen.append([ev['type'], o.metadata.name])
    if ev['type'] == 'ADDED' and o.metadata.name == 'w0':
        # the watch is running: these changes arrive as live events
        v1.create_namespaced_config_map('default', {'metadata': {'name': 'w1', 'labels': {'app': 'x'}}})
        v1.patch_namespaced_config_map('w1', 'default', [{'op': 'replace', 'path': '/metadata/labels/app', 'value': 'y'}])
        v1.delete_namespaced_config_map('w0', 'default')
    if ev['type'] == 'DELETED' and o.metadata.name == 'w0':
        w.stop()
out['live'] = seen
resumed = []
w = watch.Watch()
for ev in w.stream(v1.list_namespaced_config_map, 'default', resource_version=rv, timeout_seconds=120):
    resumed.append([ev['type'], ev['object'].metadata.name])
    if ev['type'] == 'DELETED' and ev['object'].metadata.name == 'w0':
        w.stop()
out['resumed'] = resumed
w = watch.Watch()
for ev in w.stream(v1.list_namespaced_config_map, 'default', resource_version=rv, allow_watch_bookmarks=True, timeout_seconds=120):
    if ev['type'] == 'BOOKMARK':
        out['bookmark'] = ev['raw_object']
        w.stop()
v1.create_namespaced_pod('default', {'metadata': {'name': 'watched'}, 'spec': {'restartPolicy': 'Never', 'containers': [{'name': 'main', 'image': 'python', 'command': ['true']}]}})
phases = []
w = watch.Watch()
for ev in w.stream(v1.list_namespaced_pod, 'default', field_selector='metadata.name=watched', timeout_seconds=120):
    phases.append(ev['object'].status.phase)
    if ev['object'].status.phase in ('Succeeded', 'Failed'):
        w.stop()
out['phases'] = phases
print(json.dumps(out))
`));
    assert.deepEqual(out.live, [['ADDED', 'w0'], ['ADDED', 'w1'], ['DELETED', 'w1'], ['DELETED', 'w0']]);
    assert.deepEqual(out.resumed, [['ADDED', 'w1'], ['MODIFIED', 'w1'], ['DELETED', 'w0']]);
    assert.equal(out.bookmark.kind, 'ConfigMap');
    assert.ok(Number(out.bookmark.metadata.resourceVersion) > 0);
    assert.equal(out.phases[out.phases.length - 1], 'Succeeded', String(out.phases));
  });

  it('a version older than the kept history: watch answers 410 Expired (the client raises ApiException 410), a continue token 410 with a fresh token', async () => {
    const page = await s.get('/api/v1/namespaces/default/configmaps?limit=1');
    assert.ok(page.metadata.continue, JSON.stringify(page.metadata));
    const out = lastJson(await s.python(prelude + `
first = v1.create_namespaced_config_map('default', {'metadata': {'name': 'old'}})
for i in range(250):
    v1.create_namespaced_config_map('default', {'metadata': {'name': f'filler{i}'}})
try:
    for ev in watch.Watch().stream(v1.list_namespaced_config_map, 'default', resource_version=first.metadata.resource_version, timeout_seconds=120):
        out['unexpected'] = ev['type']
        break
except client.ApiException as e:
    out['status'] = e.status
    out['reason'] = e.reason
out['firstRv'] = first.metadata.resource_version
print(json.dumps(out))
`));
    assert.equal(out.unexpected, undefined);
    assert.equal(out.status, 410);
    assert.match(out.reason, new RegExp(`^Expired: too old resource version: ${out.firstRv} \\(\\d+\\)$`));

    const raw = await s.req('GET', `/api/v1/namespaces/default/pods?watch=1&resourceVersion=${out.firstRv}`);
    assert.equal(raw.status, 200);
    const ev = JSON.parse(raw.text.trim());
    assert.equal(ev.type, 'ERROR');
    assert.equal(ev.object.code, 410);
    assert.equal(ev.object.reason, 'Expired');

    const expired = await s.req('GET', `/api/v1/namespaces/default/configmaps?limit=1&continue=${encodeURIComponent(page.metadata.continue)}`);
    assert.equal(expired.status, 410, expired.text);
    assert.equal(expired.body.reason, 'Expired');
    assert.match(expired.body.message, /^The provided continue parameter is too old to display a consistent list result\. You can start a new list without the continue parameter, or use the continue token in this response/);
    assert.ok(expired.body.metadata.continue);
    const rest = await s.req('GET', `/api/v1/namespaces/default/configmaps?limit=500&continue=${encodeURIComponent(expired.body.metadata.continue)}`);
    assert.equal(rest.status, 200, rest.text);
    assert.ok(rest.body.items.length > 200);
  });

  it('watch-list: the initial state, then the bookmark that ends it, then live changes', async () => {
    await s.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'wl', labels: { wl: 'yes' } } });
    const ctl = new AbortController();
    const res = await fetch(`${s.url}/api/v1/namespaces/default/configmaps?watch=1&labelSelector=wl&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`, { signal: ctl.signal });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const events: any[] = [];
    let buf = '';
    while (events.length < 3) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += Buffer.from(value).toString();
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const e = JSON.parse(buf.slice(0, i));
        buf = buf.slice(i + 1);
        const ends = e.type === 'BOOKMARK' && e.object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true';
        // the periodic bookmarks (every 300ms here) are not what this test is about
        if (e.type === 'BOOKMARK' && !ends) continue;
        events.push(e);
        // once the initial state has ended, a change arrives live
        if (ends) await s.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'wl2', labels: { wl: 'yes' } } });
      }
    }
    ctl.abort();
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'wl'], ['BOOKMARK', undefined], ['ADDED', 'wl2']]);
    const bm = events[1].object;
    assert.equal(bm.kind, 'ConfigMap');
    assert.deepEqual(bm.metadata.annotations, { 'k8s.io/initial-events-end': 'true' });
    assert.ok(Number(bm.metadata.resourceVersion) >= Number(events[0].object.metadata.resourceVersion));
  });

  it('kubectl wait: for a condition, for a jsonpath and for delete', async () => {
    await s.create('/api/v1/namespaces/default/pods', podManifest('sleeper', ['sleep', '300']));
    const ready = await s.kubectl(['wait', '--for=condition=Ready', 'pod/sleeper', '--timeout=120s']);
    assert.equal(ready.code, 0, ready.stderr);
    assert.equal(ready.stdout.trim(), 'pod/sleeper condition met');
    const running = await s.kubectl(['wait', '--for=jsonpath={.status.phase}=Running', 'pod/sleeper', '--timeout=120s']);
    assert.equal(running.code, 0, running.stderr);
    assert.equal(running.stdout.trim(), 'pod/sleeper condition met');
    const gone = s.kubectl(['wait', '--for=delete', 'pod/sleeper', '--timeout=120s']);
    const del = await s.kubectl(['delete', 'pod', 'sleeper', '--wait=false']);
    assert.equal(del.code, 0, del.stderr);
    const w = await gone;
    assert.equal(w.code, 0, w.stderr);
    const after = await s.kubectl(['get', 'pod', 'sleeper']);
    assert.notEqual(after.code, 0);
    assert.match(after.stderr, /Error from server \(NotFound\): pods "sleeper" not found/);
  });

  it('kubectl create configmap, secret, namespace and job: typed clients sending protobuf', async () => {
    const cm = await s.kubectl(['create', 'configmap', 'typed', '--from-literal=a=1', '--from-literal=b=two']);
    assert.equal(cm.code, 0, cm.stderr);
    assert.equal(cm.stdout.trim(), 'configmap/typed created');
    assert.deepEqual((await s.get('/api/v1/namespaces/default/configmaps/typed')).data, { a: '1', b: 'two' });
    const secret = await s.kubectl(['create', 'secret', 'generic', 'typed', '--from-literal=password=hunter2']);
    assert.equal(secret.code, 0, secret.stderr);
    assert.equal(Buffer.from((await s.get('/api/v1/namespaces/default/secrets/typed')).data.password, 'base64').toString(), 'hunter2');
    const ns = await s.kubectl(['create', 'namespace', 'typed-ns']);
    assert.equal(ns.code, 0, ns.stderr);
    assert.equal((await s.get('/api/v1/namespaces/typed-ns')).metadata.name, 'typed-ns');
    const job = await s.kubectl(['create', 'job', 'typed', '--image=python', '--', 'python3', '-c', 'print("from a typed job")']);
    assert.equal(job.code, 0, job.stderr);
    const done = await s.kubectl(['wait', '--for=condition=Complete', 'job/typed', '--timeout=120s']);
    assert.equal(done.code, 0, done.stderr);
    const logs = await s.kubectl(['logs', 'job/typed']);
    assert.equal(logs.stdout.trim(), 'from a typed job');
    const dup = await s.kubectl(['create', 'configmap', 'typed']);
    assert.notEqual(dup.code, 0);
    assert.equal(dup.stderr.trim(), 'error: failed to create configmap: configmaps "typed" already exists');
  });

  it('Python client: VersionApi reads /version (every field of version.Info present)', async () => {
    const out = lastJson(await s.python(prelude + `
v = client.VersionApi().get_code()
print(json.dumps([v.major, v.minor, v.git_version, v.platform, v.build_date]))
`));
    const [major, minor, gitVersion, platform, buildDate] = out;
    assert.equal(major, '1');
    assert.match(minor, /^\d+$/);
    assert.ok(gitVersion.startsWith(`v1.${minor}.`), gitVersion);
    assert.match(platform, /^linux\//);
    assert.match(buildDate, /^\d{4}-\d\d-\d\dT/);
  });

  it('kubectl auth can-i and whoami answer for the one local user', async () => {
    const can = await s.kubectl(['auth', 'can-i', 'create', 'pods']);
    assert.equal(can.code, 0, can.stderr);
    assert.equal(can.stdout.trim(), 'yes');
    const list = await s.kubectl(['auth', 'can-i', '--list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /\*\.\*\s+\[\]\s+\[\]\s+\[\*\]/);
    const who = await s.kubectl(['auth', 'whoami', '-o', 'json']);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(JSON.parse(who.stdout).status.userInfo.username, 'skiff-admin');
  });

  it('kubectl delete: --cascade=foreground removes the dependents first, orphan keeps them, -l and --all select, dry-run keeps', async () => {
    const job = (name: string): unknown => ({
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name },
      spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command: ['sleep', '300'] }] } } },
    });
    const podsOf = async (name: string): Promise<any[]> => (await s.get(`/api/v1/namespaces/default/pods?labelSelector=job-name%3D${name}`)).items;
    for (const name of ['fg', 'orph']) {
      await s.create('/apis/batch/v1/namespaces/default/jobs', job(name));
      await s.until(`a Pod of ${name}`, async () => (await podsOf(name)).length > 0);
    }
    const fg = await s.kubectl(['delete', 'job', 'fg', '--cascade=foreground']);
    assert.equal(fg.code, 0, fg.stderr);
    assert.match(fg.stdout, /job\.batch "fg" deleted/);
    // foreground: the Job is gone only once its Pods are
    assert.equal((await s.req('GET', '/apis/batch/v1/namespaces/default/jobs/fg')).status, 404);
    assert.deepEqual(await podsOf('fg'), []);

    const orphan = await s.kubectl(['delete', 'job', 'orph', '--cascade=orphan']);
    assert.equal(orphan.code, 0, orphan.stderr);
    assert.equal((await s.req('GET', '/apis/batch/v1/namespaces/default/jobs/orph')).status, 404);
    const left = await podsOf('orph');
    assert.equal(left.length, 1);
    assert.deepEqual(left[0].metadata.ownerReferences ?? [], []);
    const now = await s.kubectl(['delete', 'pod', left[0].metadata.name, '--now']);
    assert.equal(now.code, 0, now.stderr);

    for (const n of ['l1', 'l2', 'keep']) await s.create('/api/v1/namespaces/default/configmaps', { metadata: { name: n, labels: { sel: n === 'keep' ? 'no' : 'yes' } } });
    const dry = await s.kubectl(['delete', 'configmap', 'l1', '--dry-run=server']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.stdout.trim(), 'configmap "l1" deleted from default namespace (server dry run)');
    assert.equal((await s.req('GET', '/api/v1/namespaces/default/configmaps/l1')).status, 200);
    const bySel = await s.kubectl(['delete', 'configmaps', '-l', 'sel=yes', '--grace-period=0']);
    assert.equal(bySel.code, 0, bySel.stderr);
    assert.deepEqual(bySel.stdout.trim().split('\n').sort(), ['configmap "l1" deleted from default namespace', 'configmap "l2" deleted from default namespace']);
    assert.equal((await s.req('GET', '/api/v1/namespaces/default/configmaps/keep')).status, 200);
    await s.create('/api/v1/namespaces', { metadata: { name: 'kc-all' } });
    for (const n of ['a1', 'a2']) await s.create('/api/v1/namespaces/kc-all/configmaps', { metadata: { name: n } });
    const all = await s.kubectl(['delete', 'configmaps', '--all', '-n', 'kc-all']);
    assert.equal(all.code, 0, all.stderr);
    // as on a cluster, the root CA's ConfigMap is deleted with the rest and published again
    const remaining = await s.until('kube-root-ca.crt published again', async () => {
      const names = ((await s.get('/api/v1/namespaces/kc-all/configmaps')).items as any[]).map((c) => c.metadata.name);
      return names.includes('kube-root-ca.crt') && names;
    });
    assert.deepEqual(remaining, ['kube-root-ca.crt']);
  });

  it('list at a resourceVersion (NotOlderThan, Exact), watch timeoutSeconds, the watch of one object by its path, and a delete answered with a Status', async () => {
    const cms = '/api/v1/namespaces/default/configmaps';
    await s.create(cms, { metadata: { name: 'rv1' } });
    const list = await s.get(`${cms}?labelSelector=none`);
    const rv = list.metadata.resourceVersion;
    const exact = await s.get(`${cms}?resourceVersion=${rv}&resourceVersionMatch=Exact&labelSelector=none`);
    assert.equal(exact.metadata.resourceVersion, rv);
    const notOlder = await s.get(`${cms}?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`);
    assert.ok(Number(notOlder.metadata.resourceVersion) >= Number(rv));
    assert.ok(notOlder.items.some((o: any) => o.metadata.name === 'rv1'));

    // a watch with timeoutSeconds ends by itself, after the initial state
    const timed = await s.req('GET', `${cms}?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Drv1`);
    assert.equal(timed.status, 200);
    assert.deepEqual(timed.text.trim().split('\n').map((l) => JSON.parse(l)).map((e: any) => [e.type, e.object.metadata.name]), [['ADDED', 'rv1']]);

    const one = await s.req('GET', `${cms}/rv1?watch=1&timeoutSeconds=-1`);
    assert.equal(one.status, 200);
    assert.equal(JSON.parse(one.text.trim()).object.metadata.name, 'rv1');
    const mismatch = await s.req('GET', `${cms}/rv1?watch=1&fieldSelector=metadata.name%3Dother`);
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.body.message, "fieldSelector metadata.name doesn't match requested name");

    const del = await s.req('DELETE', `${cms}/rv1`);
    assert.equal(del.status, 200);
    assert.equal(del.body.kind, 'Status');
    assert.equal(del.body.status, 'Success');
    assert.equal(del.body.details.name, 'rv1');
    assert.equal(del.body.details.kind, 'configmaps');
  });

  it('refuses bad request options with kube-apiserver\'s code, reason and message, and kubectl prints them', async () => {
    const cases: [string, string, number, string, RegExp][] = [
      ['GET', '/api/v1/namespaces/default/pods?limit=ten', 400, 'BadRequest', /^strconv\.ParseInt: parsing "ten": invalid syntax$/],
      ['GET', '/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=soon', 400, 'BadRequest', /^strconv\.ParseInt: parsing "soon": invalid syntax$/],
      ['GET', '/api/v1/namespaces/default/pods?sendInitialEvents=true', 422, 'Invalid', /^ListOptions\.meta\.k8s\.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list$/],
      ['GET', '/api/v1/namespaces/default/pods?watch=true&sendInitialEvents=true', 422, 'Invalid', /^ListOptions\.meta\.k8s\.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan$/],
      ['GET', '/api/v1/namespaces/default/pods?resourceVersion=1&resourceVersionMatch=Latest', 422, 'Invalid', /^ListOptions\.meta\.k8s\.io "" is invalid: resourceVersionMatch: Unsupported value: "Latest": supported values: "Exact", "NotOlderThan", ""$/],
      ['GET', '/api/v1/namespaces/default/pods?resourceVersion=99999999&resourceVersionMatch=NotOlderThan', 504, 'Timeout', /^Timeout: Too large resource version: 99999999, current: \d+$/],
      ['GET', '/api/v1/namespaces/default/pods?continue=bm90LWEtdG9rZW4', 400, 'BadRequest', /^invalid continue token: continue key is not valid/],
      ['GET', '/api/v1/namespaces/default/pods?watch=1&resourceVersion=abc', 422, 'Invalid', /^pods "" is invalid: resourceVersion: Invalid value: "abc": strconv\.ParseUint: parsing "abc": invalid syntax$/],
      ['POST', '/api/v1/namespaces/default/configmaps?dryRun=true', 422, 'Invalid', /^CreateOptions\.meta\.k8s\.io "" is invalid: dryRun: Unsupported value: \["true"\]: supported values: "All"$/],
      ['POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Loose', 422, 'Invalid', /^CreateOptions\.meta\.k8s\.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"$/],
      ['POST', `/api/v1/namespaces/default/configmaps?fieldManager=${'x'.repeat(129)}`, 422, 'Invalid', /^CreateOptions\.meta\.k8s\.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes$/],
      ['PATCH', '/api/v1/namespaces/default/configmaps/keep?force=true', 422, 'Invalid', /^PatchOptions\.meta\.k8s\.io "" is invalid: force: Forbidden: may not be specified for non-apply patch$/],
      ['DELETE', '/api/v1/namespaces/default/configmaps/keep?propagationPolicy=Later', 422, 'Invalid', /^DeleteOptions\.meta\.k8s\.io "" is invalid: propagationPolicy: Unsupported value: "Later": supported values: "Foreground", "Background", "Orphan", "nil"$/],
      ['GET', '/api/v1/namespaces/default/configmaps?fieldSelector=data.x%3Dy', 400, 'BadRequest', /^"data\.x" is not a known field selector: only "metadata\.name", "metadata\.namespace"$/],
      ['GET', '/api/v1/namespaces/default/pods?watch=1&fieldSelector=spec.containers%3Dx', 400, 'BadRequest', /^field label not supported: spec\.containers$/],
      ['GET', '/apis/batch/v1/namespaces/default/jobs?fieldSelector=status.active%3D1', 400, 'BadRequest', /^field label "status\.active" not supported for Job$/],
      ['GET', '/apis/kubeflow.org/v1/namespaces/default/pytorchjobs?fieldSelector=spec.runPolicy%3Dx', 400, 'BadRequest', /^field label not supported: spec\.runPolicy$/],
      ['GET', '/api/v1/namespaces/default/pods?watch=1&labelSelector=app%20in%20(a%2Cb', 400, 'BadRequest', /^unable to parse requirement: found '', expected: ',' or '\)'$/],
      ['GET', '/api/v1/namespaces/default/pods?labelSelector=app%3D-x', 400, 'BadRequest', /^unable to parse requirement: values\[0\]\[app\]: Invalid value: "-x": a valid label must be an empty string/],
      ['DELETE', '/api/v1/namespaces/default/configmaps?dryRun=Some', 422, 'Invalid', /^DeleteOptions\.meta\.k8s\.io "" is invalid: dryRun: Unsupported value: \["Some"\]: supported values: "All"$/],
    ];
    for (const [method, path, code, reason, message] of cases) {
      const body = method === 'POST' ? { metadata: { name: 'bad' } } : method === 'PATCH' ? {} : undefined;
      const headers: Record<string, string> = method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {};
      const r = await s.req(method, path, body, headers);
      assert.equal(r.status, code, `${method} ${path}: ${r.text}`);
      assert.equal(r.body.kind, 'Status');
      assert.equal(r.body.code, code);
      assert.equal(r.body.reason, reason, `${method} ${path}`);
      assert.match(r.body.message, message, `${method} ${path}`);
    }
    const bodies: [string, string, unknown, string][] = [
      ['POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ns', namespace: 'other' } }, 'the namespace of the provided object does not match the namespace sent on the request'],
      ['PUT', '/api/v1/namespaces/default/configmaps/keep', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep', namespace: 'other' } }, 'the namespace of the object (other) does not match the namespace on the request (default)'],
      ['PUT', '/api/v1/namespaces/default/configmaps/keep', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept' } }, 'the name of the object (kept) does not match the name on the URL (keep)'],
      ['POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'batch/v1', kind: 'ConfigMap', metadata: { name: 'gv' } }, 'the API version in the data (batch/v1) does not match the expected API version (v1)'],
    ];
    await s.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'keep' } }).catch(() => undefined);
    for (const [method, path, body, message] of bodies) {
      const r = await s.req(method, path, body);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.message, message);
    }
    const invalid = await s.req('GET', '/api/v1/namespaces/default/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=Exact');
    assert.deepEqual(invalid.body.details, {
      group: 'meta.k8s.io', kind: 'ListOptions',
      causes: [
        { reason: 'FieldValueForbidden', message: 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan', field: 'resourceVersionMatch' },
        { reason: 'FieldValueNotSupported', message: 'Unsupported value: "Exact": supported values: "NotOlderThan"', field: 'resourceVersionMatch' },
      ],
    });
    // the Python client sends watch=True, and any other spelling kube-apiserver takes for true works too
    await s.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'bool-watch' } });
    for (const v of ['True', 'yes', '']) {
      const r = await s.req('GET', `/api/v1/namespaces/default/configmaps?watch=${v}&timeoutSeconds=-1&fieldSelector=metadata.name%3Dbool-watch`);
      assert.equal(r.status, 200);
      assert.match(r.text, /"type":"ADDED"/, `watch=${v}`);
    }
    const k = await s.kubectl(['get', '--raw', '/api/v1/namespaces/default/pods?limit=ten']);
    assert.notEqual(k.code, 0);
    assert.match(k.stderr, /Error from server \(BadRequest\): strconv\.ParseInt: parsing "ten": invalid syntax/);
    const kl = await s.kubectl(['get', 'pods', '-l', 'app in (a,b']);
    assert.notEqual(kl.code, 0);
    assert.equal(kl.stderr.trim(), `Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label selector "app in (a,b", field selector "": unable to parse requirement: found '', expected: ',' or ')'`);
    const kd = await s.kubectl(['get', '--raw', '/api/v1/namespaces/default/pods?resourceVersion=1&resourceVersionMatch=Latest']);
    assert.notEqual(kd.code, 0);
    assert.match(kd.stderr, /The ListOptions "" is invalid: resourceVersionMatch: Unsupported value: "Latest": supported values: "Exact", "NotOlderThan", ""/);
  });
});
