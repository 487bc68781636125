// Kueue from the Python `kubernetes` client against `skiff up`, as a user of a cluster running Kueue
// drives it: the queue objects through CustomObjectsApi, a Job through BatchV1Api (suspended by
// Kueue's webhook), its Workload watched until Admitted, and the visibility API's pending workloads
// read through ApiClient.call_api.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestServer } from './harness.js';

const script = `
import json
from kubernetes import client, config, watch
config.load_kube_config()
co = client.CustomObjectsApi()
batch = client.BatchV1Api()
out = {}
G, V = 'kueue.x-k8s.io', 'v1beta2'
co.create_cluster_custom_object(G, V, 'resourceflavors', {'apiVersion': f'{G}/{V}', 'kind': 'ResourceFlavor', 'metadata': {'name': 'py-flavor'}})
co.create_cluster_custom_object(G, V, 'clusterqueues', {
    'apiVersion': f'{G}/{V}', 'kind': 'ClusterQueue', 'metadata': {'name': 'py-cq'},
    'spec': {'namespaceSelector': {}, 'resourceGroups': [{'coveredResources': ['cpu', 'memory'], 'flavors': [
        {'name': 'py-flavor', 'resources': [{'name': 'cpu', 'nominalQuota': '100m'}, {'name': 'memory', 'nominalQuota': '1Gi'}]}]}]}})
co.create_namespaced_custom_object(G, V, 'default', 'localqueues', {'apiVersion': f'{G}/{V}', 'kind': 'LocalQueue', 'metadata': {'name': 'py-lq'}, 'spec': {'clusterQueue': 'py-cq'}})

def job(name, seconds):
    container = client.V1Container(name='main', image='python', command=['python3', '-c', f'import time; time.sleep({seconds})'],
                                   resources=client.V1ResourceRequirements(requests={'cpu': '100m', 'memory': '64Mi'}))
    return client.V1Job(metadata=client.V1ObjectMeta(name=name, labels={'kueue.x-k8s.io/queue-name': 'py-lq'}),
                        spec=client.V1JobSpec(template=client.V1PodTemplateSpec(spec=client.V1PodSpec(restart_policy='Never', containers=[container]))))

first = batch.create_namespaced_job('default', job('py-first', 30))
out['suspendedAtCreate'] = first.spec.suspend
second = batch.create_namespaced_job('default', job('py-second', 1))

def admitted(o):
    return any(c['type'] == 'Admitted' and c['status'] == 'True' for c in (o.get('status') or {}).get('conditions') or [])

w = watch.Watch()
seen = None
for ev in w.stream(co.list_namespaced_custom_object, G, V, 'default', 'workloads', timeout_seconds=60):
    o = ev['object']
    owner = (o['metadata'].get('ownerReferences') or [{}])[0]
    if owner.get('uid') == first.metadata.uid and admitted(o):
        seen = o
        w.stop()
out['admittedIn'] = seen['status']['admission']['clusterQueue']
out['firstSuspended'] = batch.read_namespaced_job('py-first', 'default').spec.suspend

# the visibility API is an aggregated group: its paths, not a custom resource's
api = client.ApiClient()
def pending(path, **params):
    data = api.call_api(path, 'GET', path_params=params, query_params=[('limit', 10)], header_params={'Accept': 'application/json'},
                        response_type='object', auth_settings=['BearerToken'], _return_http_data_only=True)
    return [[i['metadata']['name'], i['localQueueName'], i['positionInClusterQueue'], i['positionInLocalQueue']] for i in data['items']]
import time
for _ in range(200):
    out['cq'] = pending('/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/{name}/pendingworkloads', name='py-cq')
    if out['cq']:
        break
    time.sleep(0.1)
out['lq'] = pending('/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/{namespace}/localqueues/{name}/pendingworkloads', namespace='default', name='py-lq')
out['secondSuspended'] = batch.read_namespaced_job('py-second', 'default').spec.suspend
print(json.dumps(out))
`;

describe('Kueue through the Python kubernetes client', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
  });

  it('makes the queue objects, queues a Job, watches its Workload to Admitted, reads the pending list', async () => {
    const r = await s.python(script);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? 'null');
    assert.equal(out.suspendedAtCreate, true, 'Kueue\'s webhook creates the Job suspended');
    assert.equal(out.admittedIn, 'py-cq');
    assert.equal(out.firstSuspended, false);
    // the second Job waits behind the first, first in line in both queues
    assert.equal(out.cq.length, 1, JSON.stringify(out));
    assert.match(out.cq[0][0], /^job-py-second-\w{5}$/);
    assert.deepEqual(out.cq[0].slice(1), ['py-lq', 0, 0]);
    assert.deepEqual(out.lq, out.cq);
    assert.equal(out.secondSuspended, true);
  });
});
