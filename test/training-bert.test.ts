// A BERT masked-language-model PyTorchJob end to end: examples/training/pytorchjob-bert-mlm.yaml,
// applied through the real server as it is (only the model directory changed), trains a tiny BERT
// with transformers' Trainer over torch DDP on gloo, a Master and a Worker as Pods on the local
// substrate; the model the master saved is then loaded and compared with an untrained one.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { TestServer, repoRoot } from './harness.js';

const python = join(repoRoot, '.venv', 'bin', 'python');
const program = join(repoRoot, 'examples', 'training', 'bert_mlm.py');

/** why the test cannot run here, if it cannot: the environment's transformers (python/requirements-bert.txt) */
function missing(): string | false {
  if (!existsSync(python)) return 'no .venv (scripts/setup.sh makes it)';
  const r = spawnSync(python, ['-c', 'import transformers, accelerate, tokenizers'], { encoding: 'utf8' });
  return r.status === 0 ? false : `transformers cannot be imported in .venv (scripts/setup.sh installs python/requirements-bert.txt): ${r.stderr.trim().split('\n').at(-1) ?? ''}`;
}

describe('BERT masked-LM PyTorchJob (transformers Trainer, DDP)', { skip: missing() }, () => {
  let s: TestServer;
  let work: string;
  before(async () => {
    s = await TestServer.start();
    work = mkdtempSync(join(tmpdir(), 'skiff-bert-'));
  });
  after(async () => {
    await s.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  it('a Master and a Worker train together, the master saves a model that beats an untrained one on held-out text', async () => {
    const job = YAML.parse(readFileSync(join(repoRoot, 'examples', 'training', 'pytorchjob-bert-mlm.yaml'), 'utf8'));
    const name: string = job.metadata.name;
    const model = join(work, 'model');
    const master = job.spec.pytorchReplicaSpecs.Master.template.spec.containers[0];
    master.env = [...master.env.filter((e: any) => e.name !== 'MODEL_DIR'), { name: 'MODEL_DIR', value: model }];
    const file = join(work, 'job.yaml');
    writeFileSync(file, YAML.stringify(job));
    const applied = await s.cli(['apply', '-f', file]);
    assert.equal(applied.code, 0, applied.stderr);

    const path = `/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/${name}`;
    const j = await s.until(`PyTorchJob ${name} finished`, async () => {
      const o = await s.get(path);
      return (o.status?.conditions ?? []).some((c: any) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True') ? o : undefined;
    }, 150_000);
    const logs = async (pod: string): Promise<string> => (await s.cli(['logs', pod])).stdout;
    const masterLog = await logs(`${name}-master-0`);
    const workerLog = await logs(`${name}-worker-0`);
    const succeeded = (j.status.conditions as any[]).some((c) => c.type === 'Succeeded' && c.status === 'True');
    assert.ok(succeeded, `${JSON.stringify(j.status.conditions)}\n--- master\n${masterLog}\n--- worker\n${workerLog}`);

    // both replicas ran one process group of two, on gloo, through the master's Service name
    assert.match(masterLog, new RegExp(`^rank 0/2 joined via ${name}-master-0:\\d+ \\(gloo\\)$`, 'm'));
    assert.match(workerLog, new RegExp(`^rank 1/2 joined via ${name}-master-0:\\d+ \\(gloo\\)$`, 'm'));
    assert.match(masterLog, /weights identical on all 2 ranks: True/);
    // Trainer's log, once per epoch
    const losses = [...masterLog.matchAll(/^\{'loss': ([\d.]+),.*'epoch': [\d.]+\}$/gm)].map((m) => Number(m[1]));
    assert.equal(losses.length, 10, masterLog);
    assert.ok((losses.at(-1) ?? Infinity) < (losses[0] ?? 0), `the training loss did not fall: ${losses.join(' ')}`);
    const held = /^held-out loss ([\d.]+) -> ([\d.]+)/m.exec(masterLog);
    assert.ok(held && Number(held[2]) < Number(held[1]), masterLog);
    assert.match(masterLog, new RegExp(`model saved to ${model}`));
    assert.doesNotMatch(workerLog, /model saved/);

    // the saved model and tokenizer load, and beat an untrained model of the same config on held-out lines
    const r = await promisify(execFile)(python, [program, '--check', model], { env: { ...process.env, OMP_NUM_THREADS: '1', HF_HUB_OFFLINE: '1' } });
    const check = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}');
    for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.txt']) {
      assert.ok(check.files.includes(f), `${f} was not saved: ${check.files.join(', ')}`);
    }
    assert.ok(Number.isFinite(check.held_out_loss), r.stdout);
    assert.ok(check.held_out_loss < check.untrained_loss, r.stdout);
    assert.equal(check.ok, true);
  });
});
