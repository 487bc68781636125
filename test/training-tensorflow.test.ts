// TFJob with real TensorFlow end to end: examples/training/tfjob-mwms.yaml, applied through the real
// server as it is (only epochs and the model directory changed), runs a Chief and two Workers in
// TensorFlow's environment (.venv-tensorflow) that train one Keras model with
// MultiWorkerMirroredStrategy, their gradients all-reduced over gRPC between the Pods' addresses from
// TF_CONFIG; the chief's SavedModel is then loaded outside the job and scored. A program that raises
// fails its job with the exception in the job's Failed condition.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { repoRoot } from './harness.js';
import { serverWithWorkdir } from './workdir.js';

const python = join(repoRoot, '.venv-tensorflow', 'bin', 'python');

/** why the tests cannot run here, if they cannot: TensorFlow's environment (python/requirements-tensorflow.txt) */
function missing(): string | false {
  if (!existsSync(python)) return 'no .venv-tensorflow (scripts/setup.sh makes it)';
  const r = spawnSync(python, ['-c', 'import tensorflow, sklearn'], { encoding: 'utf8', env: { ...process.env, TF_CPP_MIN_LOG_LEVEL: '2' } });
  return r.status === 0 ? false : `TensorFlow cannot be imported in .venv-tensorflow (scripts/setup.sh installs python/requirements-tensorflow.txt): ${r.stderr.trim().split('\n').at(-1) ?? ''}`;
}

interface Job { apiVersion?: string; kind?: string; metadata: { name: string }; spec: any; status?: any }

describe('TFJob with real TensorFlow', { skip: missing() }, () => {
  const env = serverWithWorkdir('skiff-tf-');
  /** applies the job with the CLI, as a user would */
  const apply = env.apply;
  const finished = (name: string, timeoutMs = 150_000): Promise<Job> => env.s.until(`TFJob ${name} finished`, async () => {
    const j = await env.s.get(`/apis/kubeflow.org/v1/namespaces/default/tfjobs/${name}`);
    return (j.status?.conditions ?? []).some((c: any) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True') ? j : undefined;
  }, timeoutMs);
  const trueConditions = (j: Job): string[] => (j.status?.conditions ?? []).filter((c: any) => c.status === 'True').map((c: any) => c.type);
  const logsOf = async (pod: string): Promise<string> => (await env.s.cli(['logs', pod])).stdout;
  const containers = (job: Job): any[] => Object.values(job.spec.tfReplicaSpecs).flatMap((r: any) => r.template.spec.containers);
  const setEnv = (job: Job, name: string, value: string): void => {
    for (const c of containers(job)) c.env = [...(c.env ?? []).filter((e: any) => e.name !== name), { name, value }];
  };

  it('Chief + 2 Workers with MultiWorkerMirroredStrategy: the loss falls, all end with the same weights, the chief exports a SavedModel that scores', async () => {
    const job = YAML.parse(readFileSync(join(repoRoot, 'examples', 'training', 'tfjob-mwms.yaml'), 'utf8')) as Job;
    const name = job.metadata.name;
    const modelDir = join(env.work, 'model');
    setEnv(job, 'EPOCHS', '4');
    setEnv(job, 'MODEL_DIR', modelDir);
    const t0 = Date.now();
    await apply(job);
    const j = await finished(name);
    const pods = [`${name}-chief-0`, `${name}-worker-0`, `${name}-worker-1`];
    const logs = await Promise.all(pods.map(logsOf));
    const all = pods.map((p, i) => `--- ${p}\n${logs[i]}`).join('\n');
    assert.ok(trueConditions(j).includes('Succeeded'), `${JSON.stringify(j.status?.conditions)}\n${all}`);
    console.log(`# TFJob ${name} (3 replicas, 4 epochs) succeeded ${((Date.now() - t0) / 1000).toFixed(1)}s after apply`);

    const [chief = '', w0 = '', w1 = ''] = logs;
    console.log(`# ${/trained \d+ steps .*/.exec(chief)?.[0] ?? 'no training time in the chief\'s log'}`);
    // one cluster of three tasks, named as TF_CONFIG names them: the Pods' Service names, resolved in each sandbox
    const cluster = `{"chief": ["${name}-chief-0.default.svc:2222"], "worker": ["${name}-worker-0.default.svc:2222", "${name}-worker-1.default.svc:2222"]}`;
    for (const [i, [task, log]] of ([['chief:0', chief], ['worker:0', w0], ['worker:1', w1]] as const).entries()) {
      assert.ok(log.includes(`${task}: joined the cluster ${cluster} as ${task}, 3 replicas in sync`), `${pods[i]}:\n${log}`);
      // TensorFlow's own gRPC server, at the Pod's address from TF_CONFIG
      assert.match(log, new RegExp(`Started server with target: grpc://${pods[i]}\\.default\\.svc:2222`), log);
    }
    const lossesOf = (log: string): number[] => [...log.matchAll(/^\S+: epoch \d+ loss ([\d.]+)$/gm)].map((m) => Number(m[1]));
    const losses = lossesOf(chief);
    assert.equal(losses.length, 4, chief);
    assert.ok((losses.at(-1) ?? Infinity) < (losses[0] ?? 0) / 2, `the loss did not fall: ${losses.join(' ')}`);
    // the loss is reduced across the replicas: every task reports the same numbers
    assert.deepEqual(lossesOf(w0), losses, w0);
    assert.deepEqual(lossesOf(w1), losses, w1);
    // each task trained on its own shard, yet the all-reduced gradients leave one set of weights
    const digests = logs.map((l) => /weights digest ([0-9a-f]+)/.exec(l)?.[1]);
    assert.ok(digests[0] && digests.every((d) => d === digests[0]), `weights differ across replicas: ${digests.join(' ')}`);
    assert.ok(Number(/test accuracy ([\d.]+)/.exec(chief)?.[1]) > 0.85, chief);
    assert.ok(chief.includes(`SavedModel exported to ${join(modelDir, '1')}, it answers as the trained model: True`), chief);
    assert.doesNotMatch(w0 + w1, /SavedModel exported/);

    // the SavedModel, in TF Serving's layout (MODEL_DIR/<version>), loaded outside the job: its serving signature scores the digits
    assert.ok(existsSync(join(modelDir, '1', 'saved_model.pb')), 'no saved_model.pb in MODEL_DIR/1');
    const check = [
      'import sys, numpy as np, tensorflow as tf',
      'from sklearn.datasets import load_digits',
      'm = tf.saved_model.load(sys.argv[1])',
      'f = m.signatures["serving_default"]',
      'x, y = load_digits(return_X_y=True)',
      'out = list(f(tf.constant((x / 16.0).astype("float32"))).values())[0].numpy()',
      'print("accuracy", float(np.mean(out.argmax(axis=1) == y)))',
    ].join('\n');
    const { stdout } = await promisify(execFile)(python, ['-c', check, join(modelDir, '1')], { env: { ...process.env, TF_CPP_MIN_LOG_LEVEL: '2' } });
    assert.ok(Number(/accuracy ([\d.]+)/.exec(stdout)?.[1]) > 0.85, stdout);
  });

  it('PS, Chief, Workers and Evaluator with ParameterServerStrategy: variables on the PS, steps on both workers, the evaluator scores each checkpoint, the chief\'s success ends the job and stops the PS', async () => {
    const job = YAML.parse(readFileSync(join(repoRoot, 'examples', 'training', 'tfjob-ps.yaml'), 'utf8')) as Job;
    const name = job.metadata.name;
    const ckpt = join(env.work, 'ps-checkpoints');
    const modelDir = join(env.work, 'ps-model');
    setEnv(job, 'EPOCHS', '3');
    setEnv(job, 'CHECKPOINT_DIR', ckpt);
    setEnv(job, 'MODEL_DIR', modelDir);
    const t0 = Date.now();
    await apply(job);
    const j = await finished(name);
    const chief = await logsOf(`${name}-chief-0`);
    assert.ok(trueConditions(j).includes('Succeeded'), `${JSON.stringify(j.status?.conditions)}\n--- chief\n${chief}`);
    console.log(`# TFJob ${name} (5 replicas, 3 epochs) succeeded ${((Date.now() - t0) / 1000).toFixed(1)}s after apply`);

    assert.match(chief, /chief:0: coordinating 2 workers and 1 parameter servers/);
    assert.match(chief, /chief:0: variables on \['\/job:ps\/replica:0\/task:0\/device:CPU:0'\]/);
    const losses = [...chief.matchAll(/^chief:0: epoch \d+ loss ([\d.]+) after/gm)].map((m) => Number(m[1]));
    assert.equal(losses.length, 3, chief);
    assert.ok((losses.at(-1) ?? Infinity) < (losses[0] ?? 0), `the loss did not fall: ${losses.join(' ')}`);
    const perWorker = JSON.parse(/steps run per worker: (\{.*\})/.exec(chief)?.[1] ?? '{}') as Record<string, number>;
    assert.deepEqual(Object.keys(perWorker).sort(), ['worker:0', 'worker:1'], chief);
    assert.equal(Object.values(perWorker).reduce((a, b) => a + b, 0), 120);
    assert.ok(existsSync(join(modelDir, '1', 'saved_model.pb')), chief);
    // the evaluator read the chief's checkpoints from the shared directory, the last one included, and
    // wrote its scores there (its Pod may be gone already: it is stopped with the PS if still running
    // when the chief is done)
    const evals = readFileSync(join(ckpt, 'eval.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { checkpoint: string; step: number; accuracy: number });
    const last = evals.find((e) => e.checkpoint.endsWith('ckpt-3'));
    assert.ok(last && last.step === 120 && last.accuracy > 0.8, JSON.stringify(evals));
    assert.match(chief, new RegExp(`chief:0: the evaluator scored ckpt-3: accuracy ${last.accuracy.toFixed(3)}`));

    // the job is over with its chief: the PS and the Workers, which would serve for ever, are stopped (cleanPodPolicy Running)
    const pods = await env.s.until('the PS and Workers stopped', async () => {
      const list = (await env.s.get(`/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent(`training.kubeflow.org/job-name=${name}`)}`)).items as any[];
      return list.some((p) => /-(ps|worker)-\d+$/.test(p.metadata.name) && !p.metadata.deletionTimestamp) ? undefined : list;
    }, 30_000);
    const left = pods.filter((p) => !p.metadata.deletionTimestamp).map((p) => `${p.metadata.name}=${p.status?.phase}`).sort();
    assert.equal(left[0], `${name}-chief-0=Succeeded`);
    assert.ok(left.length === 1 || left[1] === `${name}-evaluator-0=Succeeded`, left.join(' '));
  });

  it('a program that raises fails its TFJob under its restartPolicy (Never: at once; OnFailure: at backoffLimit) with the exception in the Failed condition', async () => {
    const program = [
      'import tensorflow as tf',
      'rate = -0.5',
      'if rate <= 0: raise ValueError(f"the learning rate must be positive, not {rate} (TensorFlow {tf.__version__})")',
    ].join('\n');
    const error = 'ValueError: the learning rate must be positive, not -0.5 (TensorFlow 2.20.0)';
    const container = { name: 'tensorflow', image: 'tensorflow/tensorflow:2.20.0', command: ['python', '-c', program], terminationMessagePolicy: 'FallbackToLogsOnError' };
    const jobOf = (name: string, restartPolicy: string, runPolicy: object): Job => ({
      apiVersion: 'kubeflow.org/v1', kind: 'TFJob', metadata: { name },
      spec: { runPolicy, tfReplicaSpecs: { Chief: { replicas: 1, restartPolicy, template: { spec: { containers: [container] } } } } },
    });
    await apply(jobOf('tf-raises', 'Never', {}));
    await apply(jobOf('tf-raises-again', 'OnFailure', { backoffLimit: 1 }));
    const [never, onFailure] = await Promise.all([finished('tf-raises', 60_000), finished('tf-raises-again', 90_000)]);
    const failedOf = (j: Job): any => (j.status?.conditions ?? []).find((c: any) => c.type === 'Failed' && c.status === 'True');
    assert.equal(failedOf(never)?.message, `TFJob default/tf-raises has failed because 1 Chief replica(s) failed. tf-raises-chief-0: ${error}`,
      JSON.stringify(never.status?.conditions));
    const pod = await env.s.get('/api/v1/namespaces/default/pods/tf-raises-chief-0');
    const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
    assert.equal(terminated?.exitCode, 1);
    assert.match(terminated?.message ?? '', /Traceback \(most recent call last\):[\s\S]*ValueError: the learning rate must be positive/);
    // OnFailure: the container restarts in place until the backoff limit, then the job fails with its last words
    assert.equal(failedOf(onFailure)?.message, `Job tf-raises-again has failed because it has reached the specified backoff limit. tf-raises-again-chief-0: ${error}`,
      JSON.stringify(onFailure.status?.conditions));
  });
});
