// Skiff on Kubernetes, against a real control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler) the harness starts on loopback: the store's promises on the cluster's API server,
// `skiff up --kubeconfig`, kubectl writing Kubeflow's objects to the cluster and Skiff's controllers
// acting on them, and the start-up errors of a cluster Skiff cannot use. Skipped, saying why, where
// scripts/kubernetes.sh has not built the control plane.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ApiError } from '../src/api/errors.js';
import { Kinds, defaultRegistry } from '../src/api/index.js';
import type { StoredObject } from '../src/api/meta.js';
import { conformanceDir } from '../src/conformance-path.js';
import { Client } from '../src/store/client.js';
import { openCluster } from '../src/store/kube/index.js';
import type { OpenedCluster } from '../src/store/kube/index.js';
import { KubeHttp } from '../src/store/kube/http.js';
import { loadKubeconfig } from '../src/store/kube/kubeconfig.js';
import type { StoreChange, WatchEvent } from '../src/store/store.js';
import { KubeCluster, freePort, kubeClusterSkipReason, writeKubeconfigFile } from '../src/testing/kube-cluster.js';
import { repoRoot, skiffBin } from './harness.js';
import { eventually } from './kube-daemons.js';

const skip = kubeClusterSkipReason();
const kubectlBin = join(repoRoot, '.venv-clients', 'bin', 'kubectl');
const run = promisify(execFile);

const cm = (name: string, extra: Partial<StoredObject['metadata']> = {}, data: Record<string, string> = {}): StoredObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', ...extra }, data }) as unknown as StoredObject;

/** `skiff up` in its own process; resolves with its output once it is ready or has exited */
function skiffUp(args: string[]): { proc: ChildProcess; output: () => string; ready: Promise<string>; exited: Promise<number | null> } {
  let out = '';
  const proc = spawn(process.execPath, [skiffBin, 'up', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`skiff up did not start:\n${out}`)), 120_000);
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /ready at (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`skiff up exited with ${code}:\n${out}`));
    });
  });
  void ready.catch(() => undefined);
  return { proc, output: () => out, ready, exited };
}

describe('Skiff on Kubernetes', { skip }, () => {
  let cluster: KubeCluster;
  let http: KubeHttp;

  before(async () => {
    cluster = await KubeCluster.start();
    http = new KubeHttp(loadKubeconfig(cluster.kubeconfig));
  }, { timeout: 180_000 });

  after(async () => {
    http?.close();
    await cluster?.stop();
  });

  describe('the store on kube-apiserver', () => {
    let opened: OpenedCluster;
    let client: Client;
    const store = (): OpenedCluster['store'] => opened.store;

    before(async () => {
      opened = await openCluster(cluster.kubeconfig, defaultRegistry().all(), () => undefined);
      client = new Client(opened.store, defaultRegistry());
    }, { timeout: 120_000 });

    after(async () => {
      await opened?.store.close();
    });

    it('installs a CRD for each of Skiff\'s and Kubeflow\'s kinds, and nothing the second time', async () => {
      assert.ok(opened.installed.includes('pytorchjobs.kubeflow.org'));
      assert.ok(opened.installed.includes('runs.pipelines.kubeflow.org'));
      const crd = await http.request<{ status: { conditions: { type: string; status: string }[] } }>('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clusterqueues.kueue.x-k8s.io');
      assert.ok(crd.status.conditions.some((c) => c.type === 'Established' && c.status === 'True'));
      const again = await openCluster(cluster.kubeconfig, defaultRegistry().all(), () => undefined);
      try {
        assert.deepEqual(again.installed, []);
      } finally {
        await again.store.close();
      }
    });

    it('creates, gets and lists with selectors and pages', async () => {
      for (let i = 0; i < 5; i++) await client.create(cm(`page-${i}`, { labels: { set: 'pages', i: String(i) } }));
      const got = await client.get(Kinds.ConfigMap, { namespace: 'default', name: 'page-3' });
      assert.equal(got.metadata.labels?.i, '3');
      assert.match(got.metadata.uid, /^[0-9a-f-]{36}$/);
      const sel = await client.list(Kinds.ConfigMap, { namespace: 'default', labelSelector: 'set=pages,i in (1,2)' });
      assert.deepEqual(sel.items.map((o) => o.metadata.name).sort(), ['page-1', 'page-2']);
      const first = await client.list(Kinds.ConfigMap, { namespace: 'default', labelSelector: 'set=pages', limit: 2 });
      assert.equal(first.items.length, 2);
      assert.ok(first.continue);
      const all = await client.listAll(Kinds.ConfigMap, { namespace: 'default', labelSelector: 'set=pages' });
      assert.equal(all.length, 5);
    });

    it('updates with compare-and-swap: a stale resourceVersion is the cluster\'s 409', async () => {
      const a = await client.create(cm('cas'));
      const b = await client.update({ ...a, data: { v: '1' } });
      assert.notEqual(b.metadata.resourceVersion, a.metadata.resourceVersion);
      await assert.rejects(client.update({ ...a, data: { v: '2' } }), (e: unknown) => e instanceof ApiError && e.code === 409 && /has been modified/.test(e.message));
    });

    it('writes status only through the status subresource', async () => {
      // a kind nothing else writes in this test: Kueue's controllers do not run here
      const cq = await client.create({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ClusterQueue', metadata: { name: 'status-cq' }, spec: { namespaceSelector: {}, resourceGroups: [] } });
      const condition = { type: 'Active', status: 'True', reason: 'Ready', message: 'Can admit new workloads', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
      const withStatus = await client.updateStatus({ ...cq, status: { conditions: [condition] } });
      assert.equal(withStatus.status?.conditions?.[0]?.reason, 'Ready');
      const spec = await client.update({ ...withStatus, metadata: { ...withStatus.metadata, labels: { x: 'y' } }, status: { conditions: [] } });
      assert.equal(spec.metadata.labels?.x, 'y');
      assert.equal(spec.status?.conditions?.[0]?.reason, 'Ready', 'a spec write leaves status alone');
    });

    it('resumes a watch from a resourceVersion, and answers one the cluster no longer has with 410', async () => {
      const a = await client.create(cm('resume'));
      await client.update({ ...a, data: { step: '1' } });
      const seen: WatchEvent[] = [];
      const w = store().watch(Kinds.ConfigMap, { namespace: 'default', resourceVersion: a.metadata.resourceVersion, fieldSelector: 'metadata.name=resume' }, (e) => seen.push(e));
      try {
        await eventually('the replayed update', async () => seen.some((e) => e.type === 'MODIFIED' && (e.object.data as Record<string, string> | undefined)?.step === '1'));
        const live = await client.get(Kinds.ConfigMap, { namespace: 'default', name: 'resume' });
        await client.update({ ...live, data: { step: '2' } });
        await eventually('the live update', async () => seen.some((e) => e.type === 'MODIFIED' && (e.object.data as Record<string, string> | undefined)?.step === '2'));
      } finally {
        w.stop();
      }
      // a CRD's watch cache starts when the CRD does: version 1 is older than anything it keeps
      const gone: WatchEvent[] = [];
      const g = store().watch(Kinds.PyTorchJob, { resourceVersion: '1' }, (e) => gone.push(e));
      try {
        const err = await eventually('a 410', async () => gone.find((e) => e.type === 'ERROR'));
        assert.equal((err.object as unknown as { code: number }).code, 410);
      } finally {
        g.stop();
      }
    });

    it('holds a deleted object while finalizers remain, and checks delete preconditions', async () => {
      const f = await client.create(cm('fin', { finalizers: ['skiff.dev/test'] }));
      await assert.rejects(client.delete(Kinds.ConfigMap, { namespace: 'default', name: 'fin' }, { uid: 'not-its-uid' }), (e: unknown) => e instanceof ApiError && e.code === 409 && /the UID in the precondition \(not-its-uid\) does not match/.test(e.message));
      const marked = await client.delete(Kinds.ConfigMap, { namespace: 'default', name: 'fin' }, { uid: f.metadata.uid });
      assert.ok(marked.metadata.deletionTimestamp);
      const live = await client.get(Kinds.ConfigMap, { namespace: 'default', name: 'fin' });
      await client.update({ ...live, metadata: { ...live.metadata, finalizers: [] } });
      await assert.rejects(client.get(Kinds.ConfigMap, { namespace: 'default', name: 'fin' }), (e: unknown) => e instanceof ApiError && e.code === 404);
    });

    it('feeds subscribers from one watch per kind, and the cluster\'s garbage collector follows ownerReferences', async () => {
      const changes: StoreChange[] = [];
      const sub = store().subscribe((c) => changes.push(c));
      try {
        const owner = await client.create(cm('owner'));
        await client.create(cm('dependent', { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }] }));
        await eventually('both ADDED', async () => changes.filter((c) => c.resource === '/configmaps' && c.type === 'ADDED' && ['owner', 'dependent'].includes(c.object.metadata.name)).length === 2);
        assert.deepEqual((await store().dependents(owner.metadata.uid)).map((d) => d.name), ['dependent']);
        await client.delete(Kinds.ConfigMap, { namespace: 'default', name: 'owner' }, { propagationPolicy: 'Background' });
        await eventually('the dependent collected by kube-controller-manager', async () => changes.some((c) => c.type === 'DELETED' && c.object.metadata.name === 'dependent'), 60_000);
      } finally {
        sub.stop();
      }
    });

    it('serves an informer\'s watch from the mirror: full when it returns', async () => {
      await client.create(cm('mirrored'));
      const seen: WatchEvent[] = [];
      await eventually('the object in a new watch\'s first events', async () => {
        seen.length = 0;
        store().watch(Kinds.ConfigMap, {}, (e) => seen.push(e)).stop();
        return seen.some((e) => e.object.metadata.name === 'mirrored');
      });
    });
  });

  describe('skiff up --kubeconfig', () => {
    let up: ReturnType<typeof skiffUp> | undefined;
    let dataDir: string;
    const kubectl = async (...args: string[]): Promise<string> => (await run(kubectlBin, ['--kubeconfig', cluster.kubeconfig, ...args], { timeout: 60_000 })).stdout;

    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'skiff-kube-up-'));
      up = skiffUp(['--port', '0', '--data-dir', dataDir, '--kubeconfig', cluster.kubeconfig]);
      await up.ready;
    }, { timeout: 180_000 });

    after(async () => {
      if (up && up.proc.exitCode === null) {
        up.proc.kill('SIGTERM');
        await up.exited;
      }
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it('says where its objects are and how Pods run', async () => {
      await eventually('the banner', async () => /placed by its scheduler on its nodes/.test(up?.output() ?? ''), 10_000);
      assert.match(up?.output() ?? '', new RegExp(`Objects are kept in the Kubernetes cluster at ${cluster.server.replace(/[.]/g, '\\.')} \\(v1\\.35`));
      assert.match(up?.output() ?? '', /join with 'skiff node --kubeconfig FILE --name NAME'/);
    });

    it('acts on a PyTorchJob kubectl applies to the cluster: its conditions and its Pods, Pending without nodes', { skip: existsSync(kubectlBin) ? undefined : `no kubectl at ${kubectlBin}` }, async () => {
      await kubectl('create', 'namespace', 'kubeflow');
      await kubectl('apply', '-f', join(conformanceDir(), 'training', 'pytorch', 'simple.yaml'));
      const job = await eventually('the PyTorchJob\'s Created condition', async () => {
        const j = JSON.parse(await kubectl('get', 'pytorchjob', 'pytorch-simple', '-n', 'kubeflow', '-o', 'json')) as StoredObject;
        return (j.status?.conditions ?? []).some((c: { type: string }) => c.type === 'Created') ? j : undefined;
      }, 90_000);
      assert.equal(job.apiVersion, 'kubeflow.org/v1');
      const pods = await eventually('its Pods in the cluster', async () => {
        const list = JSON.parse(await kubectl('get', 'pods', '-n', 'kubeflow', '-l', 'training.kubeflow.org/job-name=pytorch-simple', '-o', 'json')) as { items: StoredObject[] };
        return list.items.length === 2 ? list.items : undefined;
      }, 60_000);
      for (const p of pods) {
        assert.equal(p.status?.phase, 'Pending');
        assert.equal(p.metadata.ownerReferences?.[0]?.kind, 'PyTorchJob');
      }
    });

    it('leaves batch/v1 Jobs to the cluster\'s own job controller: one set of Pods', { skip: existsSync(kubectlBin) ? undefined : `no kubectl at ${kubectlBin}` }, async () => {
      await kubectl('create', 'job', 'once', '--image=busybox', '--', 'echo', 'hi');
      await eventually('the cluster\'s job controller to count its Pod', async () => (JSON.parse(await kubectl('get', 'job', 'once', '-o', 'json')) as StoredObject).status?.active === 1);
      // long enough for a second controller to have made its own
      await new Promise((r) => setTimeout(r, 3000));
      const pods = JSON.parse(await kubectl('get', 'pods', '-l', 'job-name=once', '-o', 'json')) as { items: StoredObject[] };
      assert.equal(pods.items.length, 1);
    });

    it('runs Kueue\'s queues the admin applies to the cluster', { skip: existsSync(kubectlBin) ? undefined : `no kubectl at ${kubectlBin}` }, async () => {
      await kubectl('apply', '-f', join(conformanceDir(), 'kueue', 'examples', 'admin', 'single-clusterqueue-setup.yaml'));
      const cq = await eventually('the ClusterQueue\'s Active condition', async () => {
        const q = JSON.parse(await kubectl('get', 'clusterqueues.kueue.x-k8s.io', 'cluster-queue', '-o', 'json')) as StoredObject;
        return (q.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Active');
      }, 60_000);
      assert.equal(cq.status, 'True');
    });
  });

  describe('a cluster Skiff cannot use', () => {
    it('names the server a kubeconfig reaches nothing at, and writes nothing', { timeout: 60_000 }, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'skiff-kube-bad-'));
      try {
        const port = await freePort();
        const file = join(dir, 'kubeconfig');
        writeKubeconfigFile(file, `https://127.0.0.1:${port}`, join(cluster.dir, 'pki', 'ca.crt'), cluster.token);
        const bad = skiffUp(['--port', '0', '--data-dir', join(dir, 'data'), '--kubeconfig', file]);
        const code = await bad.exited;
        assert.notEqual(code, 0);
        assert.match(bad.output(), new RegExp(`cannot reach the Kubernetes API server at https://127\\.0\\.0\\.1:${port} \\(kubeconfig ${file.replace(/[.]/g, '\\.')} \\(context test\\)\\): ECONNREFUSED`));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('upgrades its own CRDs in place, and refuses one someone else installed without its version, writing nothing', { timeout: 120_000 }, async () => {
      const crds = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
      const log = (): void => undefined;
      // an older Skiff's CRD: another spec hash
      await http.request('PATCH', `${crds}/runs.pipelines.kubeflow.org`, { body: { metadata: { annotations: { 'skiff.dev/crd-spec-hash': 'older' } } }, contentType: 'application/merge-patch+json' });
      const upgraded = await openCluster(cluster.kubeconfig, defaultRegistry().all(), log);
      await upgraded.store.close();
      // (Kueue's CRDs too, where `skiff up` above served their v1beta1 through its conversion webhook:
      // openCluster without webhooks serves v1beta2 only)
      assert.deepEqual(upgraded.installed.filter((n) => !n.endsWith('.kueue.x-k8s.io')), ['runs.pipelines.kubeflow.org']);
      // another operator's Suggestion CRD, at a version Skiff does not serve; and one of Skiff's missing
      for (const name of ['suggestions.kubeflow.org', 'taskcaches.pipelines.kubeflow.org']) await http.request('DELETE', `${crds}/${name}`);
      await eventually('the CRDs gone', async () => {
        for (const name of ['suggestions.kubeflow.org', 'taskcaches.pipelines.kubeflow.org']) {
          try {
            await http.request('GET', `${crds}/${name}`);
            return false;
          } catch (e) {
            if (!(e instanceof ApiError && e.code === 404)) throw e;
          }
        }
        return true;
      }, 60_000);
      await http.request('POST', crds, {
        body: {
          apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'suggestions.kubeflow.org' },
          spec: { group: 'kubeflow.org', scope: 'Namespaced', names: { kind: 'Suggestion', plural: 'suggestions', singular: 'suggestion', listKind: 'SuggestionList' }, versions: [{ name: 'v1alpha3', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
        },
      });
      await assert.rejects(openCluster(cluster.kubeconfig, defaultRegistry().all(), log), /CRD suggestions\.kubeflow\.org is already installed by someone else and does not serve v1beta1 \(it serves v1alpha3\)/);
      await assert.rejects(http.request('GET', `${crds}/taskcaches.pipelines.kubeflow.org`), (e: unknown) => e instanceof ApiError && e.code === 404, 'nothing was installed');
    });

    it('names what RBAC refuses before installing anything', { timeout: 60_000 }, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'skiff-kube-rbac-'));
      try {
        const bad = skiffUp(['--port', '0', '--data-dir', join(dir, 'data'), '--kubeconfig', cluster.nobodyKubeconfig]);
        const code = await bad.exited;
        assert.notEqual(code, 0);
        assert.match(bad.output(), /RBAC on https:\/\/127\.0\.0\.1:\d+ refuses what Skiff needs .*: get customresourcedefinitions\.apiextensions\.k8s\.io, list customresourcedefinitions/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('refuses to start when RBAC lets it do everything but register its validating webhook, registering nothing', { timeout: 120_000 }, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'skiff-kube-rbac-webhook-'));
      const vwc = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/skiff';
      const rbac = '/apis/rbac.authorization.k8s.io/v1';
      // every group Skiff uses, with every verb: all but admissionregistration.k8s.io
      const groups = [...new Set(['', 'apiextensions.k8s.io', 'coordination.k8s.io', ...defaultRegistry().all().map((d) => d.group)])].filter((g) => g !== 'admissionregistration.k8s.io');
      try {
        try {
          await http.request('DELETE', vwc);
        } catch (e) {
          if (!(e instanceof ApiError && e.code === 404)) throw e;
        }
        await http.request('POST', `${rbac}/clusterroles`, { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'all-but-webhooks' }, rules: [{ apiGroups: groups, resources: ['*'], verbs: ['*'] }] } });
        await http.request('POST', `${rbac}/clusterrolebindings`, { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'all-but-webhooks' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'all-but-webhooks' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'nobody' }] } });
        const bad = skiffUp(['--port', '0', '--data-dir', join(dir, 'data'), '--kubeconfig', cluster.nobodyKubeconfig]);
        assert.notEqual(await bad.exited, 0);
        assert.match(bad.output(), /RBAC on https:\/\/127\.0\.0\.1:\d+ refuses what Skiff needs \(kubeconfig \S+ \(context test\)\): get validatingwebhookconfigurations\.admissionregistration\.k8s\.io, create validatingwebhookconfigurations\.admissionregistration\.k8s\.io, update validatingwebhookconfigurations\.admissionregistration\.k8s\.io; bind/);
        await assert.rejects(http.request('GET', vwc), (e: unknown) => e instanceof ApiError && e.code === 404, 'no webhook was registered');
      } finally {
        for (const path of [`${rbac}/clusterrolebindings/all-but-webhooks`, `${rbac}/clusterroles/all-but-webhooks`]) await http.request('DELETE', path).catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
