import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../../api/core-types.js';
import { Kinds, defaultRegistry } from '../../api/index.js';
import type { StoredObject } from '../../api/meta.js';
import type { Notebook } from '../../api/notebooks.js';
import { NotebookKind, NotebookNames } from '../../api/notebooks.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { NotebookReconciler } from './controller.js';
import { notebookStatus, renderPod } from './render.js';
import { makeNotebook, runningPod, waitingPod } from './testing.js';

async function setup(): Promise<{ client: Client; settle(ns: string, name: string): Promise<void> }> {
  const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
  const r = new NotebookReconciler(client);
  const settle = async (namespace: string, name: string): Promise<void> => {
    for (let i = 0; i < 4; i++) await r.reconcile({ namespace, name });
  };
  return { client, settle };
}

describe('Notebook rendering', () => {
  it('makes the StatefulSet\'s Pod <name>-0 with NB_PREFIX, the labels and the default port', () => {
    const nb = makeNotebook('nb', 'team-a').label('app', 'nb').annotation('notebooks.kubeflow.org/creator', 'alice').annotation('team', 'x').stored();
    const pod = renderPod(nb);
    assert.equal(pod.metadata.name, 'nb-0');
    assert.deepEqual(pod.metadata.labels, { app: 'nb', statefulset: 'nb', 'notebook-name': 'nb' });
    assert.deepEqual(pod.metadata.annotations, { team: 'x' }, 'annotations naming notebook or kubectl stay on the Notebook');
    const c = pod.spec.containers[0];
    assert.deepEqual(c?.env, [{ name: 'NB_PREFIX', value: '/notebook/team-a/nb' }]);
    assert.deepEqual(c?.ports, [{ name: 'notebook-port', containerPort: 8888, protocol: 'TCP' }]);
    assert.equal(c?.workingDir, '/home/jovyan');
    assert.equal(pod.metadata.ownerReferences?.[0]?.uid, 'uid-nb');
  });

  it('leaves a user\'s NB_PREFIX and port as they are', () => {
    const pod = renderPod(makeNotebook('nb').env('NB_PREFIX', '/mine').port(8080).stored());
    assert.deepEqual(pod.spec.containers[0]?.env, [{ name: 'NB_PREFIX', value: '/mine' }]);
    assert.deepEqual(pod.spec.containers[0]?.ports, [{ name: 'http', containerPort: 8080 }]);
  });

  it('reports readyReplicas, the server container\'s state and the Pod\'s conditions', () => {
    const nb = makeNotebook('nb').stored();
    const ready = notebookStatus(nb, runningPod(renderPod(nb)));
    assert.equal(ready.readyReplicas, 1);
    assert.ok(ready.containerState?.running?.startedAt);
    assert.deepEqual(ready.conditions?.map((c) => `${c.type}=${c.status}`), ['Initialized=True', 'Ready=True', 'ContainersReady=True', 'PodScheduled=True']);
    const waiting = notebookStatus(nb, waitingPod(renderPod(nb), 'CrashLoopBackOff', 'back-off 10s'));
    assert.equal(waiting.readyReplicas, 0);
    assert.deepEqual(waiting.containerState, { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } });
    assert.deepEqual(notebookStatus(nb, undefined), { conditions: [], readyReplicas: 0, containerState: {} });
  });
});

describe('Notebook controller', () => {
  it('makes the Service and the Pod, stops by deleting the Pod and starts again', async () => {
    const { client, settle } = await setup();
    const nb = await client.create<Notebook>(makeNotebook('nb', 'team-a').obj());
    await settle('team-a', 'nb');
    const svc = await client.get(Kinds.Service, { namespace: 'team-a', name: 'nb' });
    assert.deepEqual(svc.spec, { type: 'ClusterIP', selector: { statefulset: 'nb' }, ports: [{ name: 'http-nb', port: 80, targetPort: 8888, protocol: 'TCP' }] });
    const pod = await client.get<Pod>(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' });
    assert.equal(pod.metadata.ownerReferences?.[0]?.uid, nb.metadata.uid);
    // the kubelet reports it running
    await client.updateStatus({ ...pod, status: runningPod(pod).status });
    await settle('team-a', 'nb');
    let got = await client.get<Notebook>(NotebookKind, { namespace: 'team-a', name: 'nb' });
    assert.equal(got.status?.readyReplicas, 1);
    // stop: the Pod goes (a Pod not yet started on a node is deleted at once), status shows 0
    const withStop = { ...got, metadata: { ...got.metadata, annotations: { [NotebookNames.stopped]: '2024-01-01T00:00:00Z' } } };
    await client.update(withStop);
    await client.updateStatus({ ...(await client.get(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' })), status: {} });
    await settle('team-a', 'nb');
    got = await client.get<Notebook>(NotebookKind, { namespace: 'team-a', name: 'nb' });
    assert.equal(got.status?.readyReplicas, 0);
    const left = await client.find<StoredObject>(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' });
    assert.ok(!left || left.metadata.deletionTimestamp, 'the Pod is deleted');
    // start: once the old Pod is gone, a new one
    if (left) await client.delete(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' }, { gracePeriodSeconds: 0 });
    const { [NotebookNames.stopped]: _, ...rest } = got.metadata.annotations ?? {};
    await client.update({ ...got, metadata: { ...got.metadata, annotations: rest } });
    await settle('team-a', 'nb');
    const again = await client.get(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' });
    assert.notEqual(again.metadata.uid, pod.metadata.uid);
  });

  it('serves v1beta1 and v1alpha1 Notebooks as v1 and names the field it refuses', async () => {
    const { client } = await setup();
    const beta = makeNotebook('beta', 'team-a').obj();
    beta.apiVersion = 'kubeflow.org/v1beta1';
    const stored = await client.create(beta);
    assert.equal(stored.apiVersion, 'kubeflow.org/v1');
    const bad = makeNotebook('bad', 'team-a').obj();
    delete bad.spec.template.spec.containers[0]?.image;
    await assert.rejects(client.create(bad), /spec\.template\.spec\.containers\[0\]\.image: Required value/);
    const badHeaders = makeNotebook('bad', 'team-a').annotation(NotebookNames.headersRequestSet, '["x"]').obj();
    await assert.rejects(client.create(badHeaders), /http-headers-request-set/);
  });
});
