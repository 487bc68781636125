// PaddleJobs with real PaddlePaddle (the CPU paddlepaddle from PyPI in .venv-paddle, which Paddle's
// images map to): examples/training/paddlejob.yaml, applied through the real server as it is (only the
// name, epochs and model path changed), trains on scikit-learn's digits with two workers in Paddle's
// collective mode, meeting through the PADDLE_* variables alone; the training operator's own example
// (`python -m paddle.distributed.launch run_check`) runs unchanged; a program that raises ends the job
// with its own error in the job's conditions.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import YAML from 'yaml';
import { repoRoot } from './harness.js';
import { conformanceDir } from '../src/conformance-path.js';
import { serverWithWorkdir } from './workdir.js';

const python = join(repoRoot, '.venv-paddle', 'bin', 'python');
const upstreamExample = join(conformanceDir(), 'training', 'paddlepaddle', 'simple-cpu.yaml');

/** why the test cannot run here, if it cannot: Paddle's environment (python/requirements-paddle.txt) */
function missing(): string | false {
  if (!existsSync(python)) return 'no .venv-paddle (scripts/setup.sh makes it)';
  const r = spawnSync(python, ['-c', 'import paddle, sklearn'], { encoding: 'utf8' });
  return r.status === 0 ? false : `paddle cannot be imported in .venv-paddle (scripts/setup.sh installs python/requirements-paddle.txt): ${r.stderr.trim().split('\n').at(-1) ?? ''}`;
}

interface Condition { type: string; status: string; reason?: string; message?: string }

describe('PaddleJob with PaddlePaddle (collective mode, gloo on CPU)', { skip: missing() }, () => {
  const env = serverWithWorkdir('skiff-paddle-');
  /** applies the job with the CLI, as a user would */
  const apply = env.apply;
  const pathOf = (ns: string, name: string): string => `/apis/kubeflow.org/v1/namespaces/${ns}/paddlejobs/${name}`;
  const finished = (ns: string, name: string, timeoutMs = 150_000): Promise<any> => env.s.until(`PaddleJob ${name} finished`, async () => {
    const j = await env.s.get(pathOf(ns, name));
    return (j.status?.conditions ?? []).some((c: Condition) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True') ? j : undefined;
  }, timeoutMs);
  const logs = async (pod: string, ns = 'default'): Promise<string> => (await env.s.cli(['logs', pod, '-n', ns])).stdout;
  const conditions = (j: any): Condition[] => j.status?.conditions ?? [];
  const succeeded = async (j: any, ns = 'default'): Promise<void> => {
    if (conditions(j).some((c) => c.type === 'Succeeded' && c.status === 'True')) return;
    const name: string = j.metadata.name;
    const out = await Promise.all([0, 1].map(async (i) => `--- ${name}-worker-${i}\n${await logs(`${name}-worker-${i}`, ns)}`));
    assert.fail(`PaddleJob ${name} did not succeed: ${JSON.stringify(conditions(j))}\n${out.join('\n')}`);
  };

  it('two workers train on the digits: the loss falls, both end with the same weights, worker-0 saves the model', async () => {
    const job = YAML.parse(readFileSync(join(repoRoot, 'examples', 'training', 'paddlejob.yaml'), 'utf8'));
    const name: string = job.metadata.name;
    const model = join(env.work, 'digits.pdparams');
    const c = job.spec.paddleReplicaSpecs.Worker.template.spec.containers[0];
    c.env = [{ name: 'EPOCHS', value: '6' }, { name: 'MODEL_PATH', value: model }];
    const started = Date.now();
    await apply(job);
    const j = await finished('default', name);
    await succeeded(j);
    const log0 = await logs(`${name}-worker-0`);
    const log1 = await logs(`${name}-worker-1`);
    // each rank learned its rank, the world and every trainer's endpoint from Paddle's launcher
    assert.match(log0 + log1, /^rank 0\/2 joined: trainer endpoints 127\.[\d.]+:\d+,127\.[\d.]+:\d+$/m);
    assert.match(log0 + log1, /^rank 1\/2 joined: trainer endpoints 127\.[\d.]+:\d+,127\.[\d.]+:\d+$/m);
    const rank0 = log0.includes('epoch 0 loss') ? log0 : log1;
    const losses = [...rank0.matchAll(/^epoch \d+ loss ([\d.]+)$/gm)].map((m) => Number(m[1]));
    assert.equal(losses.length, 6, rank0);
    assert.ok((losses.at(-1) ?? Infinity) < (losses[0] ?? 0) / 2, `the loss did not fall: ${losses.join(' ')}`);
    // the ranks start from different seeds and train on different shards: equal weights at the end
    // mean DataParallel broadcast rank 0's and all-reduced every step's gradients
    const sums = [...(log0 + log1).matchAll(/^rank (\d): [\d.]+ steps\/s, held-out accuracy ([\d.]+), weights ([0-9a-f]{16})$/gm)];
    assert.equal(sums.length, 2, log0 + log1);
    assert.equal(sums[0]?.[3], sums[1]?.[3], 'the two ranks ended with different weights');
    assert.ok(Number(sums[0]?.[2]) > 0.9, `held-out accuracy ${sums[0]?.[2]}`);
    assert.match(rank0, /^weights identical on all 2 ranks: True/m);
    assert.ok(existsSync(model), 'no model was saved');
    console.log(`the PaddleJob took ${((Date.now() - started) / 1000).toFixed(1)}s from apply to Succeeded; losses ${losses.join(' ')}`);
  });

  it("the training operator's PaddleJob example (paddle.distributed.launch run_check) runs as it is", { skip: existsSync(upstreamExample) ? false : `no ${upstreamExample}` }, async () => {
    const job = YAML.parse(readFileSync(upstreamExample, 'utf8'));
    const ns: string = job.metadata.namespace;
    await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await apply(job);
    const j = await finished(ns, job.metadata.name);
    await succeeded(j, ns);
    const log = (await logs(`${job.metadata.name}-worker-0`, ns)) + (await logs(`${job.metadata.name}-worker-1`, ns));
    assert.match(log, /Distributed training completed/);
    assert.match(log, /dp_degree: 2/);
  });

  it("a program that raises: restartPolicy Never fails the job with the program's error in its Failed condition", async () => {
    const job = YAML.parse(readFileSync(join(repoRoot, 'examples', 'training', 'paddlejob.yaml'), 'utf8'));
    job.metadata.name = 'paddle-raises';
    const w = job.spec.paddleReplicaSpecs.Worker;
    w.restartPolicy = 'Never';
    w.template.spec.containers[0].env = [{ name: 'FAIL', value: 'column "label" not found in the training data' }];
    await apply(job);
    const j = await finished('default', 'paddle-raises');
    const failed = conditions(j).find((c) => c.type === 'Failed' && c.status === 'True');
    assert.ok(failed, JSON.stringify(conditions(j)));
    console.log(`Failed: ${failed.message}`);
    assert.match(failed.message ?? '', /Worker replica\(s\) failed/);
    assert.match(failed.message ?? '', /RuntimeError: column "label" not found in the training data/);
    const pods = (await env.s.get('/api/v1/namespaces/default/pods?labelSelector=training.kubeflow.org%2Fjob-name%3Dpaddle-raises')).items;
    const failedPod = pods.find((p: any) => p.status?.phase === 'Failed');
    assert.ok(failedPod, JSON.stringify(pods.map((p: any) => p.status?.phase)));
    // the kubelet keeps the end of the failed container's log as its termination message
    assert.match(failedPod.status.containerStatuses[0].state.terminated.message, /RuntimeError: column "label" not found/);
  });

  it("a program that raises under OnFailure: the job restarts it, then fails at its backoffLimit with the program's error", async () => {
    const job = YAML.parse(readFileSync(join(repoRoot, 'examples', 'training', 'paddlejob.yaml'), 'utf8'));
    job.metadata.name = 'paddle-raises-again';
    job.spec.runPolicy = { backoffLimit: 1 };
    job.spec.paddleReplicaSpecs.Worker.template.spec.containers[0].env = [{ name: 'FAIL', value: 'the learning rate must be positive' }];
    await apply(job);
    const j = await finished('default', 'paddle-raises-again', 180_000);
    const failed = conditions(j).find((c) => c.type === 'Failed' && c.status === 'True');
    assert.ok(failed, JSON.stringify(conditions(j)));
    console.log(`Failed: ${failed.message}`);
    assert.match(failed.message ?? '', /backoff limit/);
    assert.match(failed.message ?? '', /RuntimeError: the learning rate must be positive/);
  });
});
