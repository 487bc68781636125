// kwok's simulated Nodes on a real control plane the harness starts on loopback, with `skiff up
// --kubeconfig`: a batch/v1 Job of 50 completions sent to a Kueue LocalQueue is admitted by Skiff's
// queue controllers, its Pods made by the cluster's Job controller, placed by its scheduler on 20 kwok
// Nodes and run to Succeeded by kwok's Stages. The cheap form of bench/kubernetes.ts's scale run.
// Skipped, saying why, where scripts/kubernetes.sh has not built the control plane and kwok.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeHttp } from '../src/store/kube/http.js';
import { loadKubeconfig } from '../src/store/kube/kubeconfig.js';
import { KubeCluster, kwokNodes, kwokSkipReason, kwokTaint } from '../src/testing/kube-cluster.js';
import { eventually, skiffDaemon, stopDaemon } from './kube-daemons.js';

const skip = kwokSkipReason();

type Condition = { type: string; status: string };
interface Obj { metadata: { name: string; uid?: string; ownerReferences?: { kind: string; name: string }[] }; spec?: Record<string, unknown>; status?: Record<string, unknown> & { conditions?: Condition[] } }

describe('kwok Nodes: a queued Job through Skiff on a cluster', { skip }, () => {
  let cluster: KubeCluster;
  let http: KubeHttp;
  let up: ReturnType<typeof skiffDaemon> | undefined;
  let dataDir = '';
  const kq = '/apis/kueue.x-k8s.io/v1beta2';

  before(async () => {
    cluster = await KubeCluster.start({ kwok: true });
    http = new KubeHttp(loadKubeconfig(cluster.kubeconfig));
    dataDir = mkdtempSync(join(tmpdir(), 'skiff-kube-kwok-'));
    up = skiffDaemon(['up', '--port', '0', '--data-dir', dataDir, '--kubeconfig', cluster.kubeconfig], /ready at http/);
    await Promise.all([up.ready, kwokNodes(http, 'kwok', 20, { timeoutMs: 120_000 })]);
  }, { timeout: 240_000 });

  after(async () => {
    await stopDaemon(up);
    http?.close();
    await cluster?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('admits a Job of 50 completions from a LocalQueue; its Pods run on the kwok Nodes to Complete', { timeout: 180_000 }, async () => {
    await http.request('POST', `${kq}/resourceflavors`, { body: { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ResourceFlavor', metadata: { name: 'kwok' }, spec: { nodeLabels: { type: 'kwok' } } } });
    await http.request('POST', `${kq}/clusterqueues`, {
      body: {
        apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ClusterQueue', metadata: { name: 'cq' },
        spec: { namespaceSelector: {}, resourceGroups: [{ coveredResources: ['cpu'], flavors: [{ name: 'kwok', resources: [{ name: 'cpu', nominalQuota: '20' }] }] }] },
      },
    });
    await http.request('POST', `${kq}/namespaces/default/localqueues`, { body: { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'LocalQueue', metadata: { name: 'lq', namespace: 'default' }, spec: { clusterQueue: 'cq' } } });
    await http.request('POST', '/apis/batch/v1/namespaces/default/jobs', {
      body: {
        apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'sim', namespace: 'default', labels: { 'kueue.x-k8s.io/queue-name': 'lq' } },
        spec: {
          completions: 50, parallelism: 10, suspend: true, backoffLimit: 0,
          template: {
            spec: {
              restartPolicy: 'Never',
              tolerations: [{ key: kwokTaint.key, operator: 'Equal', value: kwokTaint.value, effect: kwokTaint.effect }],
              containers: [{ name: 'main', image: 'python:3', command: ['true'], resources: { requests: { cpu: '1' } } }],
            },
          },
        },
      },
    });
    const job = await eventually('the Job Complete', async () => {
      const j = await http.request<Obj>('GET', '/apis/batch/v1/namespaces/default/jobs/sim');
      if (j.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True')) throw new Error(`the Job failed: ${JSON.stringify(j.status)}`);
      return j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') ? j : undefined;
    }, 150_000);
    assert.equal(job.status?.succeeded, 50);
    // admitted by Skiff, which unsuspended it with the flavor's node labels in its template
    assert.equal(job.spec?.suspend, false);
    assert.deepEqual((job.spec?.template as { spec: { nodeSelector?: Record<string, string> } }).spec.nodeSelector, { type: 'kwok' });
    const wls = await http.request<{ items: Obj[] }>('GET', `${kq}/namespaces/default/workloads`);
    const wl = wls.items.find((w) => w.metadata.ownerReferences?.some((o) => o.kind === 'Job' && o.name === 'sim'));
    assert.ok(wl, 'a Workload for the Job');
    assert.equal((wl.status?.admission as { clusterQueue?: string } | undefined)?.clusterQueue, 'cq');
    assert.ok(wl.status?.conditions?.some((c) => c.type === 'Admitted' && c.status === 'True'));
    await eventually('the Workload Finished', async () => {
      const w = await http.request<Obj>('GET', `${kq}/namespaces/default/workloads/${wl.metadata.name}`);
      return w.status?.conditions?.some((c) => c.type === 'Finished' && c.status === 'True');
    }, 30_000);
    const pods = await http.request<{ items: (Obj & { spec: { nodeName?: string } })[] }>('GET', '/api/v1/namespaces/default/pods', { query: { labelSelector: 'job-name=sim' } });
    assert.equal(pods.items.filter((p) => p.status?.phase === 'Succeeded').length, 50);
    const nodes = new Set(pods.items.map((p) => p.spec.nodeName));
    assert.ok([...nodes].every((n) => n?.startsWith('kwok-')), 'every Pod on a kwok Node');
    assert.ok(nodes.size > 1, 'spread over several Nodes');
  });
});
