// Katib trials and pipeline task Pods through Kueue's queues, against `skiff up`: a ClusterQueue whose
// quota admits one 100m workload at a time. An Experiment running two trials in parallel, its trial
// Job labelled with the queue, never has two trial Jobs admitted and still completes; a pipeline of
// three parallel tasks labelled through kfp-kubernetes' podMetadata (`kubernetes.add_pod_label`) has
// its task Pods gated, admitted one at a time, and succeeds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { shellPipeline } from '../src/workloads/pipelines/testing.js';
import { TestServer } from './harness.js';

const ns = 'default';
const queueLabel = 'kueue.x-k8s.io/queue-name';
const gate = 'kueue.x-k8s.io/admission';
const workloads = `/apis/kueue.x-k8s.io/v1beta2/namespaces/${ns}/workloads`;

const setup = [
  { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ResourceFlavor', metadata: { name: 'default-flavor' } },
  {
    apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ClusterQueue', metadata: { name: 'one-at-a-time' },
    spec: {
      namespaceSelector: {},
      resourceGroups: [{ coveredResources: ['cpu', 'memory'], flavors: [{ name: 'default-flavor', resources: [{ name: 'cpu', nominalQuota: '100m' }, { name: 'memory', nominalQuota: '1Gi' }] }] }],
    },
  },
  { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'LocalQueue', metadata: { namespace: ns, name: 'lq' }, spec: { clusterQueue: 'one-at-a-time' } },
];

const cond = (o: any, type: string): any => o?.status?.conditions?.find((c: any) => c.type === type && c.status === 'True');

describe('Katib trials and pipeline tasks through a queue', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
    for (const o of setup) {
      const plural = `${o.kind.toLowerCase()}s`;
      await s.create(o.kind === 'LocalQueue' ? `/apis/kueue.x-k8s.io/v1beta2/namespaces/${ns}/${plural}` : `/apis/kueue.x-k8s.io/v1beta2/${plural}`, o);
    }
  });
  after(async () => {
    await s?.cleanup();
  });

  it('runs an Experiment\'s trial Jobs one at a time under the quota, to completion', async () => {
    const experiments = `/apis/kubeflow.org/v1beta1/namespaces/${ns}/experiments`;
    await s.create(experiments, {
      apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name: 'queued' },
      spec: {
        objective: { type: 'minimize', objectiveMetricName: 'loss' },
        algorithm: { algorithmName: 'random' },
        parallelTrialCount: 2, maxTrialCount: 3, maxFailedTrialCount: 1,
        parameters: [{ name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.01', max: '0.5' } }],
        trialTemplate: {
          primaryContainerName: 'training',
          // keep each trial's Job (and so its Workload) after it ends, to read back
          retain: true,
          trialParameters: [{ name: 'learningRate', reference: 'lr' }],
          trialSpec: {
            apiVersion: 'batch/v1', kind: 'Job',
            // Kueue reads the queue from the Job's own labels, which Katib copies from here
            metadata: { labels: { [queueLabel]: 'lq' } },
            spec: {
              backoffLimit: 0,
              template: {
                spec: {
                  restartPolicy: 'Never',
                  containers: [{
                    name: 'training', image: 'python:3.11', resources: { requests: { cpu: '100m', memory: '64Mi' } },
                    command: ['python3', '-c', 'import sys, time; time.sleep(1); print(f"loss={float(sys.argv[1]) ** 2}")', '${trialParameters.learningRate}'],
                  }],
                },
              },
            },
          },
        },
      },
    });
    const trialJobs = `/apis/batch/v1/namespaces/${ns}/jobs?labelSelector=katib.kubeflow.org%2Fexperiment%3Dqueued`;
    const finished = (j: any): boolean => !!(cond(j, 'Complete') || cond(j, 'Failed'));
    let most = 0;
    let queuedAtOnce = 0;
    const e = await s.until('the experiment to end', async () => {
      const jobs = (await s.get(trialJobs)).items;
      const admitted = jobs.filter((j: any) => j.spec.suspend === false && !finished(j));
      most = Math.max(most, admitted.length);
      queuedAtOnce = Math.max(queuedAtOnce, jobs.filter((j: any) => j.spec.suspend === true).length);
      assert.ok(admitted.length <= 1, `two trial Jobs admitted on a quota for one: ${admitted.map((j: any) => j.metadata.name).join()}`);
      const exp = await s.get(`${experiments}/queued`);
      return cond(exp, 'Succeeded') || cond(exp, 'Failed') ? exp : undefined;
    }, 180_000);
    assert.ok(cond(e, 'Succeeded'), JSON.stringify(e.status?.conditions));
    assert.equal(e.status.trialsSucceeded, 3);
    assert.equal(most, 1);
    assert.ok(queuedAtOnce >= 1, 'the second parallel trial waited in the queue, suspended');
    const jobs = (await s.get(trialJobs)).items;
    assert.equal(jobs.length, 3);
    for (const j of jobs) {
      assert.equal(j.metadata.labels[queueLabel], 'lq');
      const w = (await s.get(workloads)).items.find((x: any) => x.metadata.ownerReferences?.[0]?.uid === j.metadata.uid);
      assert.equal(w?.spec.queueName, 'lq', `no Workload for ${j.metadata.name}`);
      assert.equal(w.status.admission.clusterQueue, 'one-at-a-time');
      assert.equal(cond(w, 'Finished')?.reason, 'Succeeded');
    }
  });

  it('gates a pipeline\'s task Pods labelled through podMetadata, admits them one at a time, and the run succeeds', async () => {
    const tasks = ['a', 'b', 'c'];
    const spec: any = shellPipeline('queued-tasks', Object.fromEntries(tasks.map((t) => [t, { script: 'sleep 1' }])));
    for (const t of tasks) spec.deploymentSpec.executors[`exec-${t}`].container.resources = { resourceCpuRequest: '100m', resourceMemoryRequest: '64Mi' };
    // what kfp-kubernetes' add_pod_label compiles to
    const platformSpec = { platforms: { kubernetes: { deploymentSpec: { executors: Object.fromEntries(tasks.map((t) => [`exec-${t}`, { podMetadata: { labels: { [queueLabel]: 'lq' } } }])) } } } };
    const runs = `/apis/pipelines.kubeflow.org/v2beta1/namespaces/${ns}/runs`;
    const run = await s.create(runs, { apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run', metadata: { name: 'queued-tasks' }, spec: { pipelineSpec: spec, platformSpec } });
    const pods = `/api/v1/namespaces/${ns}/pods?labelSelector=pipelines.kubeflow.org%2Frun%3D${run.metadata.name}`;
    const gated = (p: any): boolean => (p.spec.schedulingGates ?? []).some((g: any) => g.name === gate);
    const seenGated = new Set<string>();
    let most = 0;
    const done = await s.until('the run to end', async () => {
      const list = (await s.get(pods)).items;
      for (const p of list) if (gated(p)) seenGated.add(p.metadata.name);
      const admitted = list.filter((p: any) => !gated(p) && !['Succeeded', 'Failed'].includes(p.status?.phase));
      most = Math.max(most, admitted.length);
      assert.ok(admitted.length <= 1, `two task Pods admitted on a quota for one: ${admitted.map((p: any) => p.metadata.name).join()}`);
      const r = await s.get(`${runs}/${run.metadata.name}`);
      return ['SUCCEEDED', 'FAILED', 'CANCELED'].includes(r.status?.state) ? r : undefined;
    }, 120_000);
    assert.equal(done.status.state, 'SUCCEEDED', JSON.stringify(done.status));
    assert.equal(most, 1);
    const list = (await s.get(pods)).items;
    assert.equal(list.length, 3);
    // three parallel tasks, one admitted at a time: at least two waited behind the gate
    assert.ok(seenGated.size >= 2, `gated: ${[...seenGated].join()}`);
    for (const p of list) {
      assert.equal(p.metadata.labels[queueLabel], 'lq');
      const w = (await s.get(workloads)).items.find((x: any) => x.metadata.ownerReferences?.[0]?.uid === p.metadata.uid);
      assert.equal(w?.spec.queueName, 'lq', `no Workload for ${p.metadata.name}`);
      assert.equal(cond(w, 'Finished')?.reason, 'Succeeded');
    }
  });
});
