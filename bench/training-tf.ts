// TFJob training speed under Skiff against the same three processes started by hand, in one run:
// examples/training/tfjob-mwms.yaml (a Chief and two Workers, MultiWorkerMirroredStrategy, real
// TensorFlow from .venv-tensorflow) applied to the server, and tf_digits.py started three times in
// TensorFlow's environment with the TF_CONFIG a TFJob gives its replicas (loopback addresses in place
// of the Pods' names). Both print the chief's steps/s over the same epochs; each pair runs one after
// the other, so a pair sees the same machine, and the median of the pairs' ratios is the result.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { TestServer, repoRoot } from '../test/harness.js';
import { freePort } from '../src/testing/kube-cluster.js';
import { fmtMs, median, nowMs } from './stats.js';

type Row = (label: string, value: string, note?: string) => void;

const script = join(repoRoot, 'examples', 'training', 'tf_digits.py');
const python = join(repoRoot, '.venv-tensorflow', 'bin', 'python');

/** the chief's training rate, from the line tf_digits.py prints once it has trained */
const stepsPerSecond = (log: string): number => Number(/\(([\d.]+) steps\/s\)/.exec(log)?.[1] ?? NaN);

interface Done { code: number; out: string }

function runPython(env: Record<string, string>): Promise<Done> {
  return new Promise((resolve) => {
    let out = '';
    const p = spawn(python, [script], { env: { ...process.env, TF_CPP_MIN_LOG_LEVEL: '1', PYTHONUNBUFFERED: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    p.once('close', (code) => resolve({ code: code ?? -1, out }));
  });
}

/** the three tasks by hand: the TF_CONFIG a TFJob writes, with loopback ports for the Pods' addresses */
async function byHand(env: Record<string, string>): Promise<{ wallMs: number; chief: string }> {
  const ports = [await freePort(), await freePort(), await freePort()];
  const cluster = { chief: [`127.0.0.1:${ports[0]}`], worker: [`127.0.0.1:${ports[1]}`, `127.0.0.1:${ports[2]}`] };
  const tasks: [string, number][] = [['chief', 0], ['worker', 0], ['worker', 1]];
  const t0 = nowMs();
  const done = await Promise.all(tasks.map(([type, index]) => runPython({ ...env, TF_CONFIG: JSON.stringify({ cluster, task: { type, index } }) })));
  const wallMs = nowMs() - t0;
  const failed = done.find((d) => d.code !== 0);
  if (failed) throw new Error(`a task started by hand failed:\n${done.map((d) => d.out).join('\n---\n')}`);
  return { wallMs, chief: done[0]?.out ?? '' };
}

export async function tfTrainingBench(row: Row, pairs = 3): Promise<void> {
  console.log(`\n7c. TFJob (Chief + 2 Workers, MultiWorkerMirroredStrategy, real TensorFlow) vs the same 3 processes by hand with the same TF_CONFIG (${pairs} alternating pairs)`);
  if (!existsSync(python)) {
    console.log('  skipped: no .venv-tensorflow (scripts/setup.sh makes it unless SKIFF_TENSORFLOW=0)');
    return;
  }
  const job = YAML.parse(readFileSync(join(repoRoot, 'examples', 'training', 'tfjob-mwms.yaml'), 'utf8'));
  const vars: Record<string, string> = { EPOCHS: '6' };
  for (const r of Object.values(job.spec.tfReplicaSpecs as Record<string, any>)) {
    for (const c of r.template.spec.containers) c.env = [...(c.env ?? []).filter((e: any) => !(e.name in vars) && e.name !== 'MODEL_DIR'), ...Object.entries(vars).map(([name, value]) => ({ name, value }))];
  }
  const path = '/apis/kubeflow.org/v1/namespaces/default/tfjobs';
  const s = await TestServer.start();
  try {
    const skiffRun = async (name: string): Promise<{ wallMs: number; chief: string }> => {
      job.metadata.name = name;
      const t0 = nowMs();
      await s.create(path, job);
      const j = await s.until(`${name} finished`, async () => {
        const o = await s.get(`${path}/${name}`);
        return (o.status?.conditions ?? []).some((c: any) => (c.type === 'Succeeded' || c.type === 'Failed') && c.status === 'True') ? o : undefined;
      }, 300_000);
      const wallMs = nowMs() - t0;
      const chief = (await s.cli(['logs', `${name}-chief-0`])).stdout;
      if (!(j.status?.conditions ?? []).some((c: any) => c.type === 'Succeeded' && c.status === 'True')) throw new Error(`${name} failed: ${JSON.stringify(j.status?.conditions)}\n${chief}`);
      await s.req('DELETE', `${path}/${name}`);
      return { wallMs, chief };
    };
    await skiffRun('bench-tf-warm'); // TensorFlow's files into the page cache
    const skiff: { wallMs: number; sps: number }[] = [];
    const hand: { wallMs: number; sps: number }[] = [];
    for (let i = 0; i < pairs; i++) {
      // alternate which goes first, so neither always follows the other's exit
      const one = async (): Promise<void> => {
        const r = await skiffRun(`bench-tf-${i}`);
        skiff.push({ wallMs: r.wallMs, sps: stepsPerSecond(r.chief) });
      };
      const two = async (): Promise<void> => {
        const r = await byHand(vars);
        hand.push({ wallMs: r.wallMs, sps: stepsPerSecond(r.chief) });
      };
      if (i % 2 === 0) { await one(); await two(); } else { await two(); await one(); }
    }
    const sps = (xs: { sps: number }[]): string => xs.map((x) => x.sps.toFixed(1)).join(', ');
    const a = median(skiff.map((x) => x.sps));
    const b = median(hand.map((x) => x.sps));
    const ratio = median(skiff.map((x, i) => x.sps / (hand[i]?.sps ?? NaN)));
    row('TFJob chief steps/s under Skiff, median', a.toFixed(1), `(every run: ${sps(skiff)})`);
    row('the same 3 processes by hand, median', b.toFixed(1), `(every run: ${sps(hand)}); Skiff/by hand ${(a / b).toFixed(2)}x, median of pairs ${ratio.toFixed(2)}x; aim 1.0x`);
    const wa = median(skiff.map((x) => x.wallMs));
    const wb = median(hand.map((x) => x.wallMs));
    row('TFJob apply to Succeeded, median', fmtMs(wa), `by hand, start to all exited: ${fmtMs(wb)}; ${(wa / wb).toFixed(2)}x (TensorFlow's import is most of both)`);
  } finally {
    await s.cleanup();
  }
}
