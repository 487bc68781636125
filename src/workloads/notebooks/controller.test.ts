import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../../api/core-types.js';
import { Kinds, defaultRegistry } from '../../api/index.js';
import type { StoredObject } from '../../api/meta.js';
import type { Notebook } from '../../api/notebooks.js';
import { NotebookKind, NotebookNames } from '../../api/notebooks.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import type { Recorder } from '../../control/events.js';
import { NotebookReconciler } from './controller.js';
import { notebooksWorkload } from './index.js';
import { notebookStatus, renderPod, templateRevision } from './render.js';
import { makeNotebook, runningPod, waitingPod } from './testing.js';

async function setup(opts: { tenancy?: boolean } = {}): Promise<{ client: Client; events: string[]; settle(ns: string, name: string): Promise<void> }> {
  const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
  const events: string[] = [];
  const recorder: Recorder = { event: (_o, type, reason, message) => void events.push(`${type} ${reason}: ${message}`) };
  const r = new NotebookReconciler(client, recorder, opts);
  const settle = async (namespace: string, name: string): Promise<void> => {
    for (let i = 0; i < 4; i++) await r.reconcile({ namespace, name });
  };
  return { client, events, settle };
}

const tokenRef = { name: 'JUPYTER_TOKEN', valueFrom: { secretKeyRef: { name: 'nb-notebook-token', key: 'token' } } };

describe('Notebook rendering', () => {
  it('makes the StatefulSet\'s Pod <name>-0 with NB_PREFIX, the labels and the default port', () => {
    const nb = makeNotebook('nb', 'team-a').label('app', 'nb').annotation('notebooks.kubeflow.org/creator', 'alice').annotation('team', 'x').stored();
    const pod = renderPod(nb);
    assert.equal(pod.metadata.name, 'nb-0');
    assert.deepEqual(pod.metadata.labels, { app: 'nb', statefulset: 'nb', 'notebook-name': 'nb', 'controller-revision-hash': templateRevision(nb) });
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

  it('with tenancy on, gives the server its token from the Notebook\'s Secret; without it, renders as before', () => {
    const nb = makeNotebook('nb', 'team-a').stored();
    const off = renderPod(nb);
    assert.deepEqual(renderPod(nb, { tenancy: false }), off);
    assert.deepEqual(off.spec.containers[0]?.env, [{ name: 'NB_PREFIX', value: '/notebook/team-a/nb' }], 'single-user: no token, as Kubeflow\'s images run');
    const on = renderPod(nb, { tenancy: true });
    assert.deepEqual(on.spec.containers[0]?.env, [{ name: 'NB_PREFIX', value: '/notebook/team-a/nb' }, tokenRef], 'by reference: the value is in no Pod spec');
    assert.deepEqual({ ...on, spec: { ...on.spec, containers: [] } }, { ...off, spec: { ...off.spec, containers: [] } }, 'nothing else differs');
    // only the server container gets it
    const two = makeNotebook('nb', 'team-a').stored();
    two.spec.template.spec.containers.push({ name: 'sidecar', image: 'busybox' });
    assert.equal(renderPod(two, { tenancy: true }).spec.containers[1]?.env, undefined);
  });

  it('keeps a token the user set, and replaces an empty one', () => {
    const own = renderPod(makeNotebook('nb').env('JUPYTER_TOKEN', 'mine').stored(), { tenancy: true });
    assert.deepEqual(own.spec.containers[0]?.env, [{ name: 'JUPYTER_TOKEN', value: 'mine' }, { name: 'NB_PREFIX', value: '/notebook/default/nb' }]);
    const ref = { name: 'JUPYTER_TOKEN', valueFrom: { secretKeyRef: { name: 'my-token', key: 't' } } };
    const nb = makeNotebook('nb').stored();
    nb.spec.template.spec.containers[0]!.env = [ref];
    assert.deepEqual(renderPod(nb, { tenancy: true }).spec.containers[0]?.env?.[0], ref);
    const empty = renderPod(makeNotebook('nb').env('JUPYTER_TOKEN', '').stored(), { tenancy: true });
    assert.deepEqual(empty.spec.containers[0]?.env, [{ name: 'NB_PREFIX', value: '/notebook/default/nb' }, tokenRef], 'an empty token would open the server to anyone');
  });

  it('dry-renders the token\'s Secret with tenancy on, without a token in it', () => {
    const nb = makeNotebook('nb', 'team-a').stored();
    const kinds = (items: { kind: string; metadata: { name?: string } }[] | undefined): string[] => (items ?? []).map((o) => `${o.kind}/${o.metadata.name ?? ''}`);
    assert.deepEqual(kinds(notebooksWorkload.dryRender?.(nb)), ['Service/nb', 'Pod/nb-0']);
    const on = notebooksWorkload.dryRender?.(nb, { dataDir: '/d', nodeName: 'n', pipelineRoot: '/p', jobPodBackoffMs: 1, jobPodBackoffMaxMs: 1, tenancy: true });
    assert.deepEqual(kinds(on), ['Service/nb', 'Secret/nb-notebook-token', 'Pod/nb-0']);
    assert.equal(on?.[1]?.data, undefined);
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

  it('rolls the Pod when the template changes, and not when only the Notebook\'s annotations do', async () => {
    const { client, settle } = await setup();
    await client.create<Notebook>(makeNotebook('nb', 'team-a').obj());
    await settle('team-a', 'nb');
    const first = await client.get<Pod>(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' });
    assert.match(first.metadata.labels?.['controller-revision-hash'] ?? '', /^nb-[0-9a-f]{10}$/);
    // culling's annotation changes nothing
    let nb = await client.get<Notebook>(NotebookKind, { namespace: 'team-a', name: 'nb' });
    await client.update({ ...nb, metadata: { ...nb.metadata, annotations: { 'notebooks.kubeflow.org/last-activity': '2026-01-01T00:00:00Z' } } });
    await settle('team-a', 'nb');
    assert.equal((await client.get<Pod>(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' })).metadata.uid, first.metadata.uid);
    // a new image does
    nb = await client.get<Notebook>(NotebookKind, { namespace: 'team-a', name: 'nb' });
    const template = structuredClone(nb.spec.template);
    (template.spec.containers[0] as { image?: string }).image = 'kubeflownotebookswg/jupyter-pytorch:v1.9.0';
    await client.update({ ...nb, spec: { ...nb.spec, template } });
    await settle('team-a', 'nb');
    const old = await client.find<StoredObject>(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' });
    assert.ok(!old || old.metadata.uid !== first.metadata.uid || old.metadata.deletionTimestamp, 'the old Pod is deleted');
    if (old?.metadata.uid === first.metadata.uid) await client.delete(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' }, { gracePeriodSeconds: 0 });
    await settle('team-a', 'nb');
    const next = await client.get<Pod>(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' });
    assert.notEqual(next.metadata.uid, first.metadata.uid);
    assert.equal(next.spec.containers[0]?.image, 'kubeflownotebookswg/jupyter-pytorch:v1.9.0');
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

  it('with tenancy on, makes the token\'s Secret once, owned by the Notebook, and none without tenancy', async () => {
    const { client, settle } = await setup({ tenancy: true });
    const nb = await client.create<Notebook>(makeNotebook('nb', 'team-a').obj());
    await settle('team-a', 'nb');
    const secret = await client.get(Kinds.Secret, { namespace: 'team-a', name: 'nb-notebook-token' });
    assert.equal(secret.metadata.ownerReferences?.[0]?.uid, nb.metadata.uid);
    assert.equal(secret.metadata.ownerReferences?.[0]?.controller, true);
    const token = Buffer.from((secret.data as { token: string }).token, 'base64').toString();
    assert.match(token, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
    const pod = await client.get<Pod>(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' });
    assert.deepEqual(pod.spec.containers[0]?.env?.at(-1), tokenRef);
    // never rotated while it exists: a stop and a start keep it
    await client.patch(NotebookKind, { namespace: 'team-a', name: 'nb' }, { metadata: { annotations: { [NotebookNames.stopped]: 'now' } } }, 'merge');
    await settle('team-a', 'nb');
    await client.patch(NotebookKind, { namespace: 'team-a', name: 'nb' }, { metadata: { annotations: { [NotebookNames.stopped]: null } } }, 'merge');
    await settle('team-a', 'nb');
    const again = await client.get(Kinds.Secret, { namespace: 'team-a', name: 'nb-notebook-token' });
    assert.equal(again.metadata.uid, secret.metadata.uid);
    assert.deepEqual(again.data, secret.data);

    const single = await setup();
    await single.client.create<Notebook>(makeNotebook('nb', 'team-a').obj());
    await single.settle('team-a', 'nb');
    assert.equal(await single.client.find(Kinds.Secret, { namespace: 'team-a', name: 'nb-notebook-token' }), undefined);
    const open: Pod = await single.client.get<Pod>(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' });
    assert.equal(open.spec.containers[0]?.env?.some((e) => e.name === 'JUPYTER_TOKEN'), false);
  });

  it('makes no Secret for a server with a token of the user\'s own', async () => {
    const { client, settle } = await setup({ tenancy: true });
    await client.create<Notebook>(makeNotebook('nb', 'team-a').env('JUPYTER_TOKEN', 'mine').obj());
    await settle('team-a', 'nb');
    assert.equal(await client.find(Kinds.Secret, { namespace: 'team-a', name: 'nb-notebook-token' }), undefined);
    assert.ok(await client.find(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' }));
  });

  it('starts again a server without a token, and one whose Secret was made again', async () => {
    // a notebook of single-user days: its Pod has no token
    const { client } = await setup();
    await client.create<Notebook>(makeNotebook('nb', 'team-a').obj());
    const single = new NotebookReconciler(client);
    for (let i = 0; i < 3; i++) await single.reconcile({ namespace: 'team-a', name: 'nb' });
    const events: string[] = [];
    const r = new NotebookReconciler(client, { event: (_o, type, reason, message) => void events.push(`${type} ${reason}: ${message}`) }, { tenancy: true });
    const settle = async (): Promise<void> => {
      for (let i = 0; i < 4; i++) await r.reconcile({ namespace: 'team-a', name: 'nb' });
    };
    const podKey = { namespace: 'team-a', name: 'nb-0' };
    const old = await client.get<Pod>(Kinds.Pod, podKey);
    await settle();
    let pod = await client.get<Pod>(Kinds.Pod, podKey);
    assert.notEqual(pod.metadata.uid, old.metadata.uid);
    assert.deepEqual(pod.spec.containers[0]?.env?.at(-1), tokenRef);
    assert.match(events.join('\n'), /Normal Restarting: Deleted pod nb-0: its server has no token \(the Pod was made before tenancy was on\)/);
    // the Secret deleted: a new token, and the server started again with it
    const secret = await client.get(Kinds.Secret, { namespace: 'team-a', name: 'nb-notebook-token' });
    await client.delete(Kinds.Secret, { namespace: 'team-a', name: 'nb-notebook-token' });
    const before = pod.metadata.uid;
    await settle();
    const made = await client.get(Kinds.Secret, { namespace: 'team-a', name: 'nb-notebook-token' });
    assert.notDeepEqual(made.data, secret.data);
    pod = await client.get<Pod>(Kinds.Pod, podKey);
    assert.notEqual(pod.metadata.uid, before);
    assert.match(events.join('\n'), /Deleted pod nb-0: its token's Secret nb-notebook-token was made again/);
    // settled: nothing more restarts
    await settle();
    assert.equal((await client.get<Pod>(Kinds.Pod, podKey)).metadata.uid, pod.metadata.uid);
  });

  it('waits for a Secret of the token\'s name that is not the Notebook\'s, and never takes it over', async () => {
    const { client, settle, events } = await setup({ tenancy: true });
    await client.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'nb-notebook-token', namespace: 'team-a' }, data: { token: Buffer.from('known').toString('base64') } });
    await client.create<Notebook>(makeNotebook('nb', 'team-a').obj());
    await settle('team-a', 'nb');
    assert.equal(await client.find(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' }), undefined);
    assert.match(events.join('\n'), /Warning SecretExists: secret nb-notebook-token exists and is not controlled by this notebook/);
    await client.delete(Kinds.Secret, { namespace: 'team-a', name: 'nb-notebook-token' });
    await settle('team-a', 'nb');
    assert.ok(await client.find(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' }));
    const secret = await client.get(Kinds.Secret, { namespace: 'team-a', name: 'nb-notebook-token' });
    assert.notEqual(Buffer.from((secret.data as { token: string }).token, 'base64').toString(), 'known');
  });
});
