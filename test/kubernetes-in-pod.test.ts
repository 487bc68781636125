// Skiff's Deployment (deploy/kubernetes) running in Pods: `kubectl apply -k deploy/kubernetes` on a
// real control plane the harness starts on loopback, whose one node is a `skiff node` agent. There is
// no container engine here to build the image, so the agent maps the image `skiff:*` to what the
// Dockerfile would put in it: this repository at /opt/skiff (built) and the image's entrypoint
// (`node /opt/skiff/bin/skiff.js up --in-cluster`). The rest is the manifests' own: two replicas as
// the skiff ServiceAccount with its mounted token and the ClusterRole's RBAC, the Service the
// webhooks are reached through (at its endpoints, the Pods' addresses from a routable range the agent
// makes local to this machine), leader election on the Lease. Skipped, saying why, without the
// control plane, kubectl or root.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { StoredObject } from '../src/api/meta.js';
import { KubeCluster, kubeClusterSkipReason } from '../src/testing/kube-cluster.js';
import { removeLocalRange } from '../src/substrate/local/network.js';
import { kubectlBin, repoRoot } from './harness.js';
import { type Daemon, eventually, removeDataDir, skiffDaemon, stopDaemon } from './kube-daemons.js';

// the Pods' range: a routable one (a Service's endpoints may not be loopback addresses), which the
// agent makes local to this machine with a route, as root can
const podRange = '10.250.0.0/16';
const skip = kubeClusterSkipReason() ?? (existsSync(kubectlBin) ? undefined : `no kubectl at ${kubectlBin}`)
  ?? (process.getuid?.() === 0 ? undefined : 'the node agent makes the Pods\' routable range local with `ip route`, which needs root');
const run = promisify(execFile);
const ns = 'skiff-system';

describe('Skiff\'s Deployment in Pods on a cluster (deploy/kubernetes on a node agent)', { skip }, () => {
  let cluster: KubeCluster;
  let agent: Daemon | undefined;
  const dirs: string[] = [];
  const madeLocal: string[] = [];
  const node = 'in-pod-agent';
  const kubectl = async (...args: string[]): Promise<string> => (await run(kubectlBin, ['--kubeconfig', cluster.kubeconfig, ...args], { timeout: 120_000 })).stdout;
  const getJson = async <T = StoredObject>(...args: string[]): Promise<T> => JSON.parse(await kubectl('get', ...args, '-o', 'json')) as T;
  const skiffPods = async (): Promise<StoredObject[]> => (await getJson<{ items: StoredObject[] }>('pods', '-n', ns, '-l', 'app.kubernetes.io/name=skiff')).items;
  const holder = async (): Promise<string | undefined> => (await getJson('lease', 'skiff-controllers', '-n', ns).catch(() => undefined))?.spec?.holderIdentity as string | undefined;
  const podLogs = async (): Promise<string> => {
    const out: string[] = [];
    for (const p of await skiffPods().catch(() => [])) out.push(`--- ${p.metadata.name}\n${(await kubectl('logs', '-n', ns, p.metadata.name).catch((e: Error) => e.message)).slice(-2000)}`);
    const pods = (await skiffPods().catch(() => [])).map((p) => `${p.metadata.name} ${p.status?.podIP} ${JSON.stringify(p.status?.conditions)}`).join('\n');
    const slices = await kubectl('get', 'endpointslices', '-n', ns, '-o', 'yaml').catch((e: Error) => e.message);
    return `${out.join('\n')}\n--- pods\n${pods}\n--- endpointslices\n${slices}\n--- agent\n${agent?.output().slice(-2000) ?? ''}`;
  };

  before(async () => {
    cluster = await KubeCluster.start({ clusterCidr: podRange });
    const dir = mkdtempSync(join(tmpdir(), 'skiff-kube-in-pod-'));
    dirs.push(dir);
    // the image: the repository where the Dockerfile puts it, and its entrypoint
    const config = join(dir, 'agent.yaml');
    writeFileSync(config, JSON.stringify({
      environments: [{ image: 'skiff:*', environment: { files: [{ path: '/opt/skiff', source: repoRoot }], entrypoint: ['node', '/opt/skiff/bin/skiff.js', 'up', '--in-cluster'], workingDir: '/opt/skiff' } }],
    }));
    agent = skiffDaemon(['node', '--kubeconfig', cluster.kubeconfig, '--name', node, '--data-dir', join(dir, 'agent'), '--client-ca-file', cluster.caFile, '--config', config], new RegExp(`Node ${node} is ready`));
    await agent.ready;
    const range = (await getJson('node', node)).spec?.podCIDR as string;
    madeLocal.push(range);
    assert.match(agent.output(), new RegExp(`Pods get addresses from ${range.replace(/\./g, '\\.')}, made local to this machine`));
  }, { timeout: 240_000 });

  after(async () => {
    // the Pods go before their node: nothing of Skiff's is left running
    if (cluster) {
      await kubectl('delete', 'deployment', 'skiff', '-n', ns, '--ignore-not-found', '--wait=false').catch(() => undefined);
      await eventually('the skiff Pods gone', async () => (await skiffPods()).length === 0, 60_000).catch(() => undefined);
    }
    await stopDaemon(agent);
    await cluster?.stop();
    for (const d of dirs) removeDataDir(d);
    // the route the agent made for its Node's range stays after it, as its Pods would
    for (const cidr of madeLocal) removeLocalRange(cidr);
  });

  it('installs with kubectl apply -k; both replicas run as the skiff ServiceAccount, one leads', { timeout: 300_000 }, async () => {
    await kubectl('apply', '-k', join(repoRoot, 'deploy', 'kubernetes'));
    const pods = await eventually('two skiff Pods running', async () => {
      const list = await skiffPods();
      return list.length === 2 && list.every((p) => p.status?.phase === 'Running') ? list : undefined;
    }, 120_000, 500).catch(async (e: Error) => assert.fail(`${e.message}\n${await podLogs()}`));
    for (const p of pods) {
      assert.equal(p.spec?.nodeName, node);
      assert.equal(p.spec?.serviceAccountName, 'skiff');
    }
    // each replica started from its mounted token and passed its RBAC check; one holds the Lease
    await eventually('both replicas ready and a leader', async () => {
      const logs = await Promise.all(pods.map((p) => kubectl('logs', '-n', ns, p.metadata.name)));
      return logs.every((l) => /Skiff is ready at/.test(l)) && (await holder()) !== undefined;
    }, 180_000, 1000).catch(async (e: Error) => assert.fail(`${e.message}\n${await podLogs()}`));
    const leader = await holder();
    // client-go's identity: the Pod's name and a uuid
    const leaderPod = pods.find((p) => leader?.startsWith(`${p.metadata.name}_`));
    assert.ok(leaderPod, `the Lease's holder ${leader} is one of ${pods.map((p) => p.metadata.name).join(', ')}`);
    const logs = await kubectl('logs', '-n', ns, leaderPod.metadata.name);
    assert.match(logs, /Objects are kept in the Kubernetes cluster at https:\/\//);
    assert.match(logs, /CRDs installed or upgraded: \d+/);
  });

  it('refuses an invalid Katib Experiment through its validating webhook, reached at the skiff Service', { timeout: 180_000 }, async () => {
    // the tuning example asking for more trials at once than in all: a cross-field rule the CRD's
    // schema cannot state, which only Skiff's webhook (as Katib's) refuses
    const bad = join(dirs[0] as string, 'too-parallel.yaml');
    const example = readFileSync(join(repoRoot, 'examples', 'tuning', 'random-quadratic.yaml'), 'utf8');
    writeFileSync(bad, example.replace('name: random-quadratic', 'name: too-parallel').replace('parallelTrialCount: 3', 'parallelTrialCount: 20'));
    // the webhook configuration names the Service; the API server reaches a replica at its endpoints
    const hooks = await getJson<{ webhooks: { clientConfig: { service?: { name: string; namespace: string }; url?: string } }[] }>('validatingwebhookconfiguration', 'skiff');
    assert.deepEqual(hooks.webhooks[0]?.clientConfig.service && { name: hooks.webhooks[0].clientConfig.service.name, namespace: hooks.webhooks[0].clientConfig.service.namespace }, { name: 'skiff', namespace: ns });
    let last = '';
    const refused = await eventually('the webhook answering', async () => {
      last = await run(kubectlBin, ['--kubeconfig', cluster.kubeconfig, 'apply', '-f', bad], { timeout: 60_000 }).then((r) => `accepted: ${r.stdout}`, (e: { stderr?: string }) => e.stderr ?? '');
      return /spec\.parallelTrialCount/.test(last) ? last : undefined;
    }, 120_000, 2000).catch(async (e: Error) => assert.fail(`${e.message}\nkubectl: ${last}\n${await podLogs()}`));
    // the webhook's answer, a Status naming the field, as the API server passes it on
    assert.match(refused, /The Experiment "too-parallel" is invalid: spec\.parallelTrialCount: Invalid value: 20: should be less than or equal to spec\.maxTrialCount/);
  });

  it('reconciles through the cluster: a valid Experiment gets its conditions from the leader', { timeout: 180_000 }, async () => {
    await kubectl('apply', '-f', join(repoRoot, 'examples', 'tuning', 'random-quadratic.yaml'));
    await eventually('the Experiment Created', async () => {
      const e = await getJson('experiment', 'random-quadratic');
      return (e.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Created' && c.status === 'True');
    }, 120_000, 1000).catch(async (e: Error) => assert.fail(`${e.message}\n${await podLogs()}`));
  });

  it('hands the Lease to the other replica when the leader\'s Pod is deleted', { timeout: 240_000 }, async () => {
    const leader = await holder();
    assert.ok(leader);
    await kubectl('delete', 'pod', leader.replace(/_.*$/, ''), '-n', ns, '--grace-period=0', '--force', '--wait=false');
    const next = await eventually('another replica holding the Lease', async () => {
      const h = await holder();
      return h && h !== leader ? h : undefined;
    }, 180_000, 1000).catch(async (e: Error) => assert.fail(`${e.message}\n${await podLogs()}`));
    assert.notEqual(next, leader);
  });
});
