// Distributed training end to end: the jobs in examples/training, applied through the real server
// as they are (only names, epochs and the model path changed), run real torch DDP, torchrun's
// elastic rendezvous, XGBoost's collective, MPI through the exec agent, jax.distributed's
// collectives on CPU, and the TF_CONFIG check, as Pods on the local substrate (PaddleJob, with real
// Paddle, is training-paddle.test.ts).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import YAML from 'yaml';
import { repoRoot, sleep } from './harness.js';
import { serverWithWorkdir } from './workdir.js';

interface Job { apiVersion: string; kind: string; metadata: { name: string }; spec: any; status?: any }

const plural: Record<string, string> = { PyTorchJob: 'pytorchjobs', TFJob: 'tfjobs', XGBoostJob: 'xgboostjobs', JAXJob: 'jaxjobs', MPIJob: 'mpijobs' };
const pathOf = (j: { apiVersion: string; kind: string; metadata: { name: string } }): string =>
  `/apis/${j.apiVersion}/namespaces/default/${plural[j.kind]}/${j.metadata.name}`;

function example(file: string): Job {
  return YAML.parse(readFileSync(join(repoRoot, 'examples', 'training', file), 'utf8')) as Job;
}

/** every container of every replica */
function containers(job: Job): any[] {
  const specs = Object.values(job.spec[Object.keys(job.spec).find((k) => k.endsWith('ReplicaSpecs')) ?? ''] ?? {}) as any[];
  return specs.flatMap((r) => r.template.spec.containers);
}

function setEnv(job: Job, name: string, value: string): void {
  for (const c of containers(job)) c.env = [...(c.env ?? []).filter((e: any) => e.name !== name), { name, value }];
}

describe('distributed training jobs', () => {
  const env = serverWithWorkdir('skiff-training-');
  /** applies the job with the CLI, as a user would */
  const apply = env.apply;

  const finished = (job: Job, timeoutMs = 120_000): Promise<Job> => env.s.until(`${job.kind} ${job.metadata.name} finished`, async () => {
    const j = await env.s.get(pathOf(job));
    const c = (j.status?.conditions ?? []).find((x: any) => (x.type === 'Succeeded' || x.type === 'Failed') && x.status === 'True');
    return c ? j : undefined;
  }, timeoutMs);

  const state = (j: Job): string => (j.status?.conditions ?? []).filter((c: any) => c.status === 'True').map((c: any) => c.type).join(',');

  const podsOf = async (name: string): Promise<any[]> =>
    (await env.s.get(`/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent(`training.kubeflow.org/job-name=${name}`)}`)).items;

  const logsOf = async (pod: string): Promise<string> => (await env.s.cli(['logs', pod])).stdout;

  const assertSucceeded = async (job: Job, j: Job): Promise<void> => {
    if (state(j).includes('Succeeded')) return;
    const logs = await Promise.all((await podsOf(job.metadata.name)).map(async (p) => `--- ${p.metadata.name} (${p.status?.phase})\n${await logsOf(p.metadata.name)}`));
    assert.fail(`${job.kind} ${job.metadata.name} ended ${state(j)}:\n${JSON.stringify(j.status?.conditions)}\n${logs.join('\n')}`);
  };

  it('PyTorchJob with DDP: the loss falls, every rank ends with the same weights, the master saves the model, `skiff logs pytorchjob/NAME` shows it', async () => {
    const job = example('pytorchjob-ddp.yaml');
    const model = join(env.work, 'ddp', 'model.pt');
    setEnv(job, 'EPOCHS', '5');
    setEnv(job, 'MODEL_PATH', model);
    await apply(job);
    await assertSucceeded(job, await finished(job));
    const log = (await env.s.cli(['logs', `pytorchjob/${job.metadata.name}`])).stdout;
    const losses = [...log.matchAll(/^epoch \d+ loss ([\d.]+)$/gm)].map((m) => Number(m[1]));
    assert.equal(losses.length, 5, log);
    assert.ok((losses.at(-1) ?? Infinity) < (losses[0] ?? 0) / 2, `the loss did not fall: ${losses.join(' ')}`);
    assert.match(log, /rank 0\/3 joined via ddp-digits-master-0:\d+/);
    assert.match(log, /weights identical on all 3 ranks: True/);
    assert.match(log, new RegExp(`model saved to ${model}`));
    assert.ok(existsSync(model), 'the master saved no model');
    const pods = await podsOf(job.metadata.name);
    assert.deepEqual(pods.map((p) => p.metadata.name).sort(), ['ddp-digits-master-0', 'ddp-digits-worker-0', 'ddp-digits-worker-1']);
  });

  it('elastic PyTorchJob (torchrun, c10d rendezvous), XGBoostJob, MPIJob v2beta1, TFJob and JAXJob all succeed, for real', async () => {
    const jobs = ['pytorchjob-elastic.yaml', 'xgboostjob.yaml', 'mpijob-v2beta1.yaml', 'tfjob.yaml', 'jaxjob.yaml'].map(example);
    for (const j of jobs) await apply(j);
    const done = await Promise.all(jobs.map((j) => finished(j, 180_000)));
    for (const [i, j] of done.entries()) await assertSucceeded(jobs[i] as Job, j);
    const [elastic, xgb, mpi, tf, jax] = jobs as [Job, Job, Job, Job, Job];

    const e0 = await logsOf(`${elastic.metadata.name}-worker-0`);
    const e1 = await logsOf(`${elastic.metadata.name}-worker-1`);
    assert.match(e0 + e1, /rank 0\/2 .*allreduce 3 expected 3 OK/s);
    assert.match(e0 + e1, /rank 1\/2 .*allreduce 3 expected 3 OK/s);

    const x = await logsOf(`${xgb.metadata.name}-master-0`);
    const m = /final test-logloss=([\d.]+) accuracy=([\d.]+)/.exec(x);
    assert.ok(m, x);
    assert.ok(Number(m[1]) < 0.3 && Number(m[2]) > 0.9, x);
    assert.match(x, /ranks agree: True/);

    const mpiPods = await podsOf(mpi.metadata.name);
    const launcher = mpiPods.find((p) => p.metadata.name.startsWith(`${mpi.metadata.name}-launcher`));
    assert.ok(launcher, JSON.stringify(mpiPods.map((p) => p.metadata.name)));
    const ml = await logsOf(launcher.metadata.name);
    assert.match(ml, /allreduce OK/);
    assert.match(ml, /hosts: mpi-allreduce-worker-0,mpi-allreduce-worker-1/);

    assert.match(await logsOf(`${tf.metadata.name}-chief-0`), /chief:0: reached every task and was reached by every task/);
    // real jax.distributed: each of the 3 processes gets every id through the gloo collectives
    for (let i = 0; i < 3; i++) {
      const jl = await logsOf(`${jax.metadata.name}-worker-${i}`);
      assert.match(jl, new RegExp(`jax process ${i}/3: 1 local of 3 devices`), jl);
      assert.match(jl, new RegExp(`jax process ${i}/3: allgather ids \\[0, 1, 2\\], psum of process ids 3 expected 3 OK`), jl);
    }
    assert.ok(done.length === 5);
  });

  it('an MXJob is refused, saying the operator removed the kind (v1.9) and which kinds are served', async () => {
    const file = join(env.work, 'mxjob.yaml');
    writeFileSync(file, YAML.stringify({ apiVersion: 'kubeflow.org/v1', kind: 'MXJob', metadata: { name: 'mx' }, spec: { jobMode: 'MXTrain', mxReplicaSpecs: {} } }));
    const r = await env.s.cli(['apply', '-f', file]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /no matches for kind "MXJob" in version "kubeflow\.org\/v1".*removed from the Kubeflow Training Operator in v1\.9.*PaddleJob/);
    const res = await fetch(`${env.s.url}/apis/kubeflow.org/v1/namespaces/default/mxjobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'kubeflow.org/v1', kind: 'MXJob', metadata: { name: 'mx' }, spec: {} }) });
    assert.equal(res.status, 404);
    assert.match(((await res.json()) as { message: string }).message, /no resource "mxjobs" in kubeflow\.org\/v1 \(MXJob was removed/);
  });

  it('a kill -9 of the server during DDP training: after the restart the job finishes, nothing is left running', async () => {
    const job = example('pytorchjob-ddp.yaml');
    job.metadata.name = 'ddp-crash';
    setEnv(job, 'EPOCHS', '40');
    setEnv(job, 'MODEL_PATH', join(env.work, 'crash', 'model.pt'));
    await apply(job);
    await env.s.until('the master training', async () => (await logsOf('ddp-crash-master-0')).includes('epoch 0 loss'), 60_000);
    await env.s.crash();
    await sleep(300);
    await env.s.launch();
    const j = await finished(job, 180_000);
    await assertSucceeded(job, j);
    const log = (await env.s.cli(['logs', 'pytorchjob/ddp-crash'])).stdout;
    assert.match(log, /weights identical on all 3 ranks: True/);
    // the job is over when its master is; the workers end with it (no Pod is left Running without a process)
    await env.s.until('every replica finished', async () => (await podsOf('ddp-crash')).every((p) => p.status?.phase === 'Succeeded'), 30_000);
    const live = await env.s.get(pathOf(job));
    assert.ok(!(live.status?.conditions ?? []).some((c: any) => c.type === 'Running' && c.status === 'True'), JSON.stringify(live.status?.conditions));
  });
});
