// A whole Katib Experiment on a real cluster the harness starts on loopback: `skiff up --kubeconfig` as
// the control plane's Skiff and one `skiff node` agent. The Experiment is the tuning example, applied
// with kubectl to the cluster's API server; its trials' Jobs are the cluster's, their Pods are placed by
// the cluster's scheduler and run on the agent, and Katib's StdOut collector reads `loss=` from their
// logs through the cluster. The Experiment succeeds with every trial and an optimal one, as Katib
// reports it. Then an Experiment with Katib's File collector: its trials write their metrics to a
// file, which Skiff reads from the agent through the API server's node proxy after they end.
// Skipped, saying why, where scripts/kubernetes.sh has not built the control plane.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { StoredObject } from '../src/api/meta.js';
import { KubeCluster, kubeClusterSkipReason } from '../src/testing/kube-cluster.js';
import { kubectlBin, repoRoot } from './harness.js';
import { eventually, removeDataDir, skiffDaemon, stopDaemon } from './kube-daemons.js';

const skip = kubeClusterSkipReason() ?? (existsSync(kubectlBin) ? undefined : `no kubectl at ${kubectlBin}`);
const run = promisify(execFile);

type Condition = { type: string; status: string; reason?: string; message?: string };
interface Experiment extends StoredObject {
  status?: {
    conditions?: Condition[];
    trials?: number;
    trialsSucceeded?: number;
    currentOptimalTrial?: { bestTrialName?: string; parameterAssignments?: { name: string; value: string }[]; observation?: { metrics?: { name: string; latest: string; min: string; max: string }[] } };
  };
}

describe('Katib on a cluster: an Experiment\'s trials run on a node agent', { skip }, () => {
  let cluster: KubeCluster;
  let up: ReturnType<typeof skiffDaemon> | undefined;
  let agent: ReturnType<typeof skiffDaemon> | undefined;
  const dirs: string[] = [];
  const node = 'agent-katib';
  const kubectl = async (...args: string[]): Promise<string> => (await run(kubectlBin, ['--kubeconfig', cluster.kubeconfig, ...args], { timeout: 300_000 })).stdout;
  const getJson = async <T = StoredObject>(...args: string[]): Promise<T> => JSON.parse(await kubectl('get', ...args, '-o', 'json')) as T;
  const logs = (): string => `--- skiff up\n${up?.output().slice(-3000) ?? ''}\n--- ${node}\n${agent?.output().slice(-3000) ?? ''}`;

  before(async () => {
    cluster = await KubeCluster.start();
    const upDir = mkdtempSync(join(tmpdir(), 'skiff-kube-katib-up-'));
    const nodeDir = mkdtempSync(join(tmpdir(), 'skiff-kube-katib-node-'));
    dirs.push(upDir, nodeDir);
    up = skiffDaemon(['up', '--port', '0', '--data-dir', upDir, '--kubeconfig', cluster.kubeconfig], /ready at http/);
    agent = skiffDaemon(['node', '--kubeconfig', cluster.kubeconfig, '--name', node, '--data-dir', nodeDir, '--node-ip', '127.0.0.3', '--client-ca-file', cluster.caFile], new RegExp(`Node ${node} is ready`));
    await Promise.all([up.ready, agent.ready]);
  }, { timeout: 240_000 });

  after(async () => {
    await stopDaemon(agent);
    await stopDaemon(up);
    await cluster?.stop();
    for (const d of dirs) removeDataDir(d);
  });

  it('runs the tuning example to Succeeded, every trial on the agent, with the optimal trial\'s loss', { timeout: 420_000 }, async () => {
    await kubectl('apply', '-f', join(repoRoot, 'examples', 'tuning', 'random-quadratic.yaml'));
    // the trials' Pods as they come and go (a trial's Job is not retained: Katib deletes it when the
    // trial ends, and its Pods with it): where each ran
    const seen = new Map<string, string | undefined>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const list = await getJson<{ items: (StoredObject & { spec: { nodeName?: string } })[] }>('pods', '-l', 'job-name').catch(() => ({ items: [] }));
        for (const pod of list.items) if (pod.spec.nodeName || !seen.has(pod.metadata.name)) seen.set(pod.metadata.name, pod.spec.nodeName);
        await new Promise((r) => setTimeout(r, 300));
      }
    })();
    let exp: Experiment;
    try {
      exp = await eventually('the Experiment to end', async () => {
        const e = await getJson<Experiment>('experiment', 'random-quadratic');
        return e.status?.conditions?.some((c) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True') ? e : undefined;
      }, 300_000, 1000);
    } finally {
      watching = false;
      await watcher;
    }
    assert.ok(exp.status?.conditions?.some((c) => c.type === 'Succeeded' && c.status === 'True'), `experiment status: ${JSON.stringify(exp.status)}\n${logs()}`);
    // kubectl wait reads the Experiment's conditions from the cluster, as against Katib's controller
    await kubectl('wait', '--for=condition=Succeeded', 'experiment/random-quadratic', '--timeout=10s');
    assert.equal(exp.status?.trialsSucceeded, 12, JSON.stringify(exp.status));
    const best = exp.status?.currentOptimalTrial;
    assert.ok(best?.bestTrialName, JSON.stringify(exp.status));
    const loss = best?.observation?.metrics?.find((m) => m.name === 'loss');
    assert.ok(loss && Number.isFinite(Number(loss.min)), JSON.stringify(best));
    // the optimum's loss is the bowl's at its parameters, at the last epoch (0.1 / 3 above the floor)
    const p = Object.fromEntries((best?.parameterAssignments ?? []).map((a) => [a.name, Number(a.value)]));
    const expected = (Math.log10(p.lr as number) - Math.log10(0.03)) ** 2 + ((p.momentum as number) - 0.8) ** 2 + 0.1 / 3;
    assert.ok(Math.abs(Number(loss?.min) - expected) < 1e-5, `loss ${loss?.min} at ${JSON.stringify(p)}, expected ${expected}`);
    // the trials are the cluster's: 12 Trials, each Succeeded; their Pods ran on the agent
    const trials = await getJson<{ items: (StoredObject & { status?: { conditions?: Condition[] } })[] }>('trials', '-l', 'katib.kubeflow.org/experiment=random-quadratic');
    assert.equal(trials.items.length, 12);
    for (const t of trials.items) assert.ok(t.status?.conditions?.some((c: Condition) => c.type === 'Succeeded' && c.status === 'True'), `${t.metadata.name}: ${JSON.stringify(t.status)}`);
    const trialPods = [...seen].filter(([name]) => trials.items.some((t) => name.startsWith(`${t.metadata.name}-`)));
    assert.ok(trialPods.length > 0, `no trial Pod seen: ${JSON.stringify([...seen])}`);
    for (const [name, where] of trialPods) assert.equal(where, node, name);
    // not retained (the example's trialTemplate sets no retain): the Jobs are gone, as Katib removes them
    await eventually('the trials\' Jobs removed', async () => {
      const jobs = await getJson<{ items: StoredObject[] }>('jobs.batch');
      return !jobs.items.some((j) => trials.items.some((t) => t.metadata.name === j.metadata.name));
    }, 60_000);
  });

  it('collects a File collector\'s metrics from the agent, through the API server, after each trial ends', { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-kube-katib-file-'));
    dirs.push(dir);
    const file = join(dir, 'file-collector.yaml');
    // Katib's File collector at its default path, the text format with Katib's default filter
    writeFileSync(file, `apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata:
  name: file-collector
spec:
  objective: {type: maximize, objectiveMetricName: accuracy, additionalMetricNames: [loss]}
  algorithm: {algorithmName: grid}
  parallelTrialCount: 3
  maxTrialCount: 3
  maxFailedTrialCount: 1
  metricsCollectorSpec:
    collector: {kind: File}
    source:
      fileSystemPath: {path: /var/log/katib/metrics.log, kind: File}
  parameters:
  - name: width
    parameterType: int
    feasibleSpace: {min: "1", max: "3"}
  trialTemplate:
    primaryContainerName: training
    retain: true
    trialParameters:
    - {name: width, reference: width}
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: training
              image: python:3.11
              command:
              - python3
              - -c
              - |
                import sys
                w = int(sys.argv[1])
                with open('/var/log/katib/metrics.log', 'w') as f:
                    for epoch in (1, 2):
                        f.write(f"epoch {epoch}: accuracy={w * 0.1 + epoch * 0.01:.2f} loss={1 / w:.3f}\\n")
                print("nothing on stdout but this")
              - "\${trialParameters.width}"
`);
    await kubectl('apply', '-f', file);
    const exp = await eventually('the File Experiment to end', async () => {
      const e = await getJson<Experiment>('experiment', 'file-collector');
      return e.status?.conditions?.some((c) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True') ? e : undefined;
    }, 240_000, 1000);
    const trialConditions = async (): Promise<string> => JSON.stringify((await getJson<{ items: StoredObject[] }>('trials', '-l', 'katib.kubeflow.org/experiment=file-collector')).items.map((t) => [t.metadata.name, t.status?.conditions?.at(-1)]));
    assert.ok(exp.status?.conditions?.some((c) => c.type === 'Succeeded' && c.status === 'True'), `experiment status: ${JSON.stringify(exp.status)}\ntrials: ${await trialConditions()}\n${logs()}`);
    assert.equal(exp.status?.trialsSucceeded, 3, JSON.stringify(exp.status));
    // the optimum is width 3: its last epoch's accuracy, and its loss, read from the file
    const best = exp.status?.currentOptimalTrial;
    assert.deepEqual(best?.parameterAssignments?.map((a) => [a.name, a.value]), [['width', '3']], JSON.stringify(best));
    const metric = (name: string) => best?.observation?.metrics?.find((m) => m.name === name);
    assert.equal(metric('accuracy')?.latest, '0.32', JSON.stringify(best));
    assert.equal(metric('accuracy')?.max, '0.32');
    assert.equal(metric('loss')?.latest, '0.333');
    // the trials' Pods ran on the agent (retained, so their Jobs and Pods are still there)
    const pods = await getJson<{ items: (StoredObject & { spec: { nodeName?: string } })[] }>('pods', '-l', 'katib.kubeflow.org/experiment=file-collector');
    assert.equal(pods.items.length, 3, JSON.stringify(pods.items.map((p) => p.metadata.name)));
    for (const p of pods.items) assert.equal(p.spec.nodeName, node);
  });
});
