// The Run controller on an in-memory store, with a node agent that really runs each Pod's command
// (so compiled kfp components execute with the project's Python) and ends the Pod by exit code.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '../../api/core-types.js';
import { ApiError } from '../../api/errors.js';
import { Kinds } from '../../api/index.js';
import type { Run } from '../../api/pipelines.js';
import { Manager } from '../../control/controller.js';
import type { Outcome } from '../jobs/fake-agent.js';
import { TestEnv } from '../jobs/fake-agent.js';
import { parsePipelineFile } from './ir.js';
import { RunAnnotations, addRunController } from './run-controller.js';

const repo = resolve(process.cwd());
const corpus = resolve(repo, '../shared/conformance/kfp/pipelines/valid');
const python = join(repo, '.venv/bin/python');

/**
 * The "image" environment a local node would give these Pods: the project's Python as python3,
 * `pip install` a no-op (kfp is already installed; the tests pick components with no other
 * packages), and `sh` as bash because busybox's sh (the images' shell) understands `[[`.
 */
function makeShims(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const py = `#!/bin/sh\nif [ "$1" = "-m" ] && [ "$2" = "pip" ]; then exit 0; fi\nexec ${python} "$@"\n`;
  for (const [name, text] of [['python3', py], ['python', py], ['sh', '#!/bin/sh\nexec bash "$@"\n']] as const) {
    writeFileSync(join(bin, name), text);
    chmodSync(join(bin, name), 0o755);
  }
  return bin;
}

interface Harness {
  env: TestEnv;
  root: string;
  /** task path → how many times its command ran */
  runs: Map<string, number>;
  /** task paths whose Pods stay Running until released */
  hold: Set<string>;
  start(): Manager;
  create(file: string, name: string, parameters?: Record<string, unknown>): Promise<Run>;
  waitDone(name: string, timeoutMs?: number): Promise<Run>;
  close(): Promise<void>;
}

async function harness(): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-run-'));
  const bin = makeShims(dir);
  const root = join(dir, 'root');
  const runs = new Map<string, number>();
  const hold = new Set<string>();
  const results = new Map<string, Outcome>();
  const managers: Manager[] = [];
  const env = await TestEnv.start((pod) => {
    const known = results.get(pod.metadata.uid ?? '');
    if (known) return known;
    const path = pod.metadata.annotations?.[RunAnnotations.taskPath] ?? '';
    if (hold.has(path)) return undefined;
    const c = pod.spec.containers[0];
    if (!c?.command?.[0]) return { exitCode: 1 };
    runs.set(path, (runs.get(path) ?? 0) + 1);
    const podEnv: Record<string, string> = { ...process.env } as Record<string, string>;
    for (const e of c.env ?? []) podEnv[e.name] = e.value ?? '';
    podEnv['PATH'] = `${bin}:${podEnv['PATH'] ?? ''}`;
    const cwd = mkdtempSync(join(dir, 'pod-'));
    const r = spawnSync(c.command[0], [...c.command.slice(1), ...(c.args ?? [])], { env: podEnv, cwd, encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0 && !path.startsWith('fail')) process.stderr.write(`pod ${pod.metadata.name} exited ${r.status}: ${r.stderr}\n`);
    const outcome = { exitCode: r.status ?? 1 };
    results.set(pod.metadata.uid ?? '', outcome);
    return outcome;
  });
  return {
    env, root, runs, hold,
    start() {
      const mgr = new Manager(env.client);
      addRunController(mgr, { client: env.client, recorder: env.recorder, pipelineRoot: root, python });
      mgr.start();
      managers.push(mgr);
      return mgr;
    },
    async create(file, name, parameters) {
      const { spec, platform } = parsePipelineFile(readFileSync(join(corpus, file), 'utf8'), file);
      return env.client.create<Run>({
        apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run', metadata: { name, namespace: 'default' },
        spec: { pipelineSpec: spec, ...(platform ? { platformSpec: platform } : {}), ...(parameters ? { parameters } : {}) },
      });
    },
    async waitDone(name, timeoutMs = 60_000) {
      return env.waitFor(`run ${name} to finish`, async () => {
        const r = await env.client.find<Run>(Kinds.Run, { namespace: 'default', name });
        return r?.status?.state === 'SUCCEEDED' || r?.status?.state === 'FAILED' ? r : undefined;
      }, timeoutMs);
    },
    async close() {
      await Promise.all(managers.map((m) => m.stop()));
      await env.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('Run controller', () => {
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(async () => {
    await h.close();
  });

  it('runs a pipeline with a nested DAG: lightweight Python components, parameters, artifacts, dag outputs', async () => {
    h.start();
    const created = await h.create('essential/pipeline_with_outputs.yaml', 'nested');
    assert.deepEqual(created.spec.parameters, { msg: 'Hello' }, 'parameter defaults are filled');
    const run = await h.waitDone('nested');
    assert.equal(run.status?.state, 'SUCCEEDED', JSON.stringify(run.status, null, 1));
    const tasks = run.status?.tasks ?? {};
    assert.deepEqual(Object.keys(tasks).sort(), ['inner-pipeline', 'inner-pipeline.print-op1', 'inner-pipeline.print-op2', 'print-op1']);
    assert.equal(tasks['print-op1']?.outputs?.parameters['Output'], 'Hello');
    assert.equal(tasks['inner-pipeline.print-op1']?.outputs?.parameters['Output'], 'world');
    assert.deepEqual(tasks['inner-pipeline']?.outputs?.parameters, { msg: 'world' });
    assert.match(tasks['print-op1']?.podName ?? '', /^nested-print-op1-[0-9a-f]{8}$/);
    const art = run.status?.outputs?.artifacts['Output']?.[0];
    assert.ok(art, 'run output artifact');
    assert.ok(art.uri.startsWith(`${h.root}/pipeline-in-pipeline/${run.metadata.uid}/inner-pipeline/print-op2/`), art.uri);
    assert.ok(art.uri.endsWith('/data'));
    assert.ok(run.status?.conditions?.some((c) => c.type === 'Succeeded' && c.status === 'True'));
    const pods = await h.env.client.listAll<Pod>(Kinds.Pod, { namespace: 'default', labelSelector: 'pipelines.kubeflow.org/run=nested' });
    assert.equal(pods.length, 3);
    for (const p of pods) {
      assert.equal(p.spec.restartPolicy, 'Never');
      assert.equal(p.metadata.ownerReferences?.[0]?.uid, run.metadata.uid);
      assert.equal(p.metadata.ownerReferences?.[0]?.controller, true);
      assert.ok(p.metadata.labels?.['pipelines.kubeflow.org/task']);
    }
  });

  it('runs a container component whose args use a Concat placeholder', async () => {
    await h.create('pipeline_with_concat_placeholder.yaml', 'concat');
    const run = await h.waitDone('concat');
    assert.equal(run.status?.state, 'SUCCEEDED', JSON.stringify(run.status));
    assert.equal(run.status?.tasks?.['component-with-concat-placeholder']?.state, 'SUCCEEDED');
  });

  it('fails the run when a task fails, naming the task', async () => {
    await h.create('failing/fail_v2.yaml', 'fails');
    const run = await h.waitDone('fails');
    assert.equal(run.status?.state, 'FAILED');
    assert.equal(run.status?.failedTask, 'fail');
    assert.match(run.status?.message ?? '', /task fail failed: container exited with code 1/);
    assert.equal(run.status?.tasks?.['fail']?.state, 'FAILED');
    assert.ok(run.status?.conditions?.some((c) => c.type === 'Succeeded' && c.status === 'False'));
  });

  it('fails a ParallelFor pipeline as not supported yet, before running anything', async () => {
    await h.create('pipeline_producer_consumer.yaml', 'loops');
    const run = await h.waitDone('loops');
    assert.equal(run.status?.state, 'FAILED');
    assert.match(run.status?.message ?? '', /^task \S+ uses a loop \(dsl\.ParallelFor.*not supported yet$/);
    const pods = await h.env.client.listAll<Pod>(Kinds.Pod, { namespace: 'default', labelSelector: 'pipelines.kubeflow.org/run=loops' });
    assert.equal(pods.length, 0);
  });

  it('rejects a parameter of the wrong type with a 422 naming spec.parameters.<name>', async () => {
    await assert.rejects(h.create('essential/pipeline_with_outputs.yaml', 'bad-param', { msg: 5 }), (e: unknown) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.code, 422);
      assert.ok(JSON.stringify(e.details).includes('spec.parameters.msg'), JSON.stringify(e.details));
      return true;
    });
    await assert.rejects(h.create('essential/pipeline_with_outputs.yaml', 'bad-param', { nope: 'x' }), /spec\.parameters\.nope/);
  });

  it('after a restart, does not re-run a task whose outputs are recorded', async () => {
    // stop the first manager; hold the second inner task so the run is caught mid-way
    const h2 = await harness();
    try {
      h2.hold.add('inner-pipeline.print-op2');
      const m1 = h2.start();
      await h2.create('essential/pipeline_with_outputs.yaml', 'restart', { msg: 'again' });
      await h2.env.waitFor('first tasks recorded', async () => {
        const r = await h2.env.client.find<Run>(Kinds.Run, { namespace: 'default', name: 'restart' });
        const t = r?.status?.tasks ?? {};
        return t['print-op1']?.state === 'SUCCEEDED' && t['inner-pipeline.print-op1']?.state === 'SUCCEEDED' && t['inner-pipeline.print-op2']?.state === 'RUNNING';
      }, 60_000);
      await m1.stop();
      h2.start();
      h2.hold.clear();
      // nudge the agent: a change to the held Pod makes it look again
      const held = (await h2.env.client.listAll<Pod>(Kinds.Pod, { namespace: 'default' })).find((p) => p.metadata.annotations?.[RunAnnotations.taskPath] === 'inner-pipeline.print-op2');
      assert.ok(held);
      await h2.env.client.patch(Kinds.Pod, { namespace: 'default', name: held.metadata.name }, { metadata: { labels: { released: 'yes' } } }, 'merge');
      const run = await h2.waitDone('restart');
      assert.equal(run.status?.state, 'SUCCEEDED', JSON.stringify(run.status));
      assert.deepEqual(Object.fromEntries(h2.runs), { 'print-op1': 1, 'inner-pipeline.print-op1': 1, 'inner-pipeline.print-op2': 1 });
      assert.equal(run.status?.tasks?.['print-op1']?.outputs?.parameters['Output'], 'again');
      assert.equal((await h2.env.client.listAll<Pod>(Kinds.Pod, { namespace: 'default' })).length, 3);
    } finally {
      await h2.close();
    }
  });
});
