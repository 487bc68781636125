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
import type { Run, RunTask, TaskStatus } from '../../api/pipelines.js';
import { Manager } from '../../control/controller.js';
import type { Outcome } from '../../testing/fake-agent.js';
import { TestEnv } from '../../testing/fake-agent.js';
import type { PipelineSpec } from '../../api/kfp/ir.js';
import { LocalArtifactStore } from '../../artifacts/local.js';
import { RunAnnotations, addRunController, runsKfpExecutor } from './run-controller.js';
import { makeRun, shellPipeline } from './testing.js';

const repo = resolve(process.cwd());
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
  /** also held: task paths this says yes to */
  holdWhen?: (path: string) => boolean;
  start(): Manager;
  create(file: string, name: string, parameters?: Record<string, unknown>): Promise<Run>;
  createSpec(spec: PipelineSpec, name: string, extra?: Partial<Run['spec']>): Promise<Run>;
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
    if (hold.has(path) || h.holdWhen?.(path)) return undefined;
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
  const h: Harness = {
    env, root, runs, hold,
    start() {
      const mgr = new Manager(env.client);
      addRunController(mgr, { client: env.client, recorder: env.recorder, pipelineRoot: root, artifacts: new LocalArtifactStore(root) });
      mgr.start();
      managers.push(mgr);
      return mgr;
    },
    async create(file, name, parameters) {
      return env.client.create<Run>(makeRun(name).corpus(file).parameters(parameters).obj());
    },
    async createSpec(spec, name, extra) {
      const run = makeRun(name).pipelineSpec(spec).obj();
      return env.client.create<Run>({ ...run, spec: { ...run.spec, ...extra } });
    },
    async waitDone(name, timeoutMs = 60_000) {
      return env.waitFor(`run ${name} to finish`, async () => {
        const r = await env.client.find<Run>(Kinds.Run, { namespace: 'default', name });
        return r?.status?.state === 'SUCCEEDED' || r?.status?.state === 'FAILED' || r?.status?.state === 'CANCELED' ? r : undefined;
      }, timeoutMs);
    },
    async close() {
      await Promise.all(managers.map((m) => m.stop()));
      await env.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}

const state = (run: Run, path: string): string | undefined => run.status?.tasks?.[path]?.state;

/** a running run's task records: its RunTask objects, by task path */
async function liveTasks(env: TestEnv, name: string): Promise<Record<string, TaskStatus>> {
  const records = await env.client.listAll<RunTask>(Kinds.RunTask, { namespace: 'default', labelSelector: `pipelines.kubeflow.org/run=${name}` });
  return Object.fromEntries(records.map((o) => [o.spec.path, o.status]));
}

/** corpus pipelines that now run end to end with the fake agent */
const CORPUS_RUNS = [
  'critical/flip_coin.yaml',
  'essential/pipeline_with_condition.yaml',
  'if_elif_else_with_oneof_parameters.yaml',
  'critical/parameter_oneof.yaml',
  'if_elif_else_complex.yaml',
  'conditional_producer_and_consumers.yaml',
  'pipeline_producer_consumer.yaml',
  'pipeline_with_nested_loops.yaml',
  'pipeline_with_loops_and_conditions.yaml',
  'parallel_and_nested/pipeline_with_loops.yaml',
  'critical/parallel_for_after_dependency.yaml',
  'critical/collected_parameters.yaml',
  'pipeline_with_parallelfor_parallelism.yaml',
  'critical/pipeline_with_artifact_custom_path.yaml',
];
const PARAMS: Record<string, Record<string, unknown>> = {
  'pipeline_with_parallelfor_parallelism.yaml': { loop_parameter: ['a', 'b', 'c'] },
};
const CHECKS: Record<string, (run: Run) => void> = {
  'critical/flip_coin.yaml': (run) => {
    // exactly one of the two branches ran; the other, and everything in it, is SKIPPED
    const heads = state(run, 'condition-1');
    const tails = state(run, 'condition-4');
    assert.deepEqual([heads, tails].sort(), ['SKIPPED', 'SUCCEEDED']);
    const skipped = heads === 'SKIPPED' ? 'condition-1' : 'condition-4';
    assert.ok(!Object.keys(run.status?.tasks ?? {}).some((p) => p.startsWith(`${skipped}.`)), 'nothing inside a skipped branch ran');
  },
  'pipeline_with_loops_and_conditions.yaml': (run) => {
    const states = Object.values(run.status?.tasks ?? {}).map((t) => t.state);
    assert.ok(states.includes('SKIPPED' as typeof states[number]) && states.includes('SUCCEEDED'), 'a false condition inside a loop skips its branch');
  },
  'critical/pipeline_with_artifact_custom_path.yaml': (run) => {
    // Artifact.set_path: what the component wrote at its own path was taken in at the artifact's URI
    const out = run.status?.tasks?.['component-output-artifact']?.outputs?.artifacts['out_dataset']?.[0];
    assert.ok(out && out.uri !== '/tmp/out_dataset', JSON.stringify(out));
    assert.equal(readFileSync(out.uri, 'utf8'), 'Hello, World!');
  },
  'critical/collected_parameters.yaml': (run) => {
    const collected = Object.entries(run.status?.tasks ?? {}).find(([p]) => /(^|\.)for-loop-1$/.test(p))?.[1];
    const list = collected?.outputs?.parameters['pipelinechannel--prepend-id-Output'];
    assert.ok(Array.isArray(list) && list.length > 1, JSON.stringify(collected));
  },
};

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

  it('runs an exit handler after its guarded tasks, with their final status', async () => {
    await h.create('pipeline_with_task_final_status.yaml', 'exit');
    const run = await h.waitDone('exit');
    // the guarded task fails on purpose: the run fails, the exit task still runs and sees FAILED
    assert.equal(run.status?.state, 'FAILED', JSON.stringify(run.status?.message));
    assert.equal(state(run, 'exit-handler-1'), 'FAILED');
    assert.equal(state(run, 'exit-op'), 'SUCCEEDED');
    assert.equal(run.status?.failedTask, 'exit-handler-1.fail-op');
    const status = run.status?.tasks?.['exit-op']?.inputs?.parameters['status'] as Record<string, unknown> | undefined;
    assert.equal(status?.['state'], 'FAILED');
    assert.equal(status?.['pipelineTaskName'], 'exit-handler-1');
    assert.equal(status?.['pipelineJobResourceName'], 'exit');
    assert.match(String((status?.['error'] as Record<string, unknown> | undefined)?.['message']), /fail-op failed/);
  });

  it('runs a task with ignore_upstream_failure after its producer failed, with the input default', async () => {
    await h.create('pipeline_with_task_using_ignore_upstream_failure.yaml', 'ignore');
    const run = await h.waitDone('ignore');
    assert.equal(run.status?.state, 'FAILED');
    assert.equal(state(run, 'fail-op'), 'FAILED');
    assert.equal(state(run, 'print-op'), 'SUCCEEDED');
    assert.equal(run.status?.tasks?.['print-op']?.inputs?.parameters['message'], undefined, 'the default applies');
  });

  it('loops over a list of artifacts (artifactIterator) and collects them', async () => {
    await h.create('pipeline_with_parallelfor_list_artifacts_GH-12033.yaml', 'artloop');
    const run = await h.waitDone('artloop');
    assert.equal(run.status?.state, 'SUCCEEDED', JSON.stringify(run.status?.message));
    const iterations = Object.keys(run.status?.tasks ?? {}).filter((p) => /^for-loop-\d+\.\d+$/.test(p));
    assert.ok(iterations.length >= 2, JSON.stringify(Object.keys(run.status?.tasks ?? {})));
  });

  it('writes an iteration\'s record before its loop\'s: no watcher sees a loop done with an iteration still running', async () => {
    const seen = new Map<string, string | undefined>();
    const faults: string[] = [];
    const done = new Set(['SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELED']);
    const sub = h.env.client.store.subscribe((c) => {
      if (c.resource !== 'pipelines.kubeflow.org/runtasks' || c.object.spec?.run !== 'ordered') return;
      const rec = c.object as RunTask;
      seen.set(rec.spec.path, rec.status?.state);
      for (const [path, st] of seen) {
        if (!done.has(st ?? '')) continue;
        for (const [inner, ist] of seen) if (inner.startsWith(`${path}.`) && !done.has(ist ?? '')) faults.push(`${path} ${st} while ${inner} ${ist}`);
      }
    });
    try {
      await h.create('pipeline_with_parallelfor_parallelism.yaml', 'ordered', { loop_parameter: ['a', 'b', 'c'] });
      const run = await h.waitDone('ordered', 180_000);
      assert.equal(run.status?.state, 'SUCCEEDED', JSON.stringify(run.status?.message));
      assert.ok([...seen.keys()].some((p) => /^for-loop-\d+\.\d+$/.test(p)), 'the loop ran iterations');
      assert.deepEqual(faults, []);
    } finally {
      sub.stop();
    }
  });

  for (const file of CORPUS_RUNS) {
    it(`runs corpus pipeline ${file}`, async () => {
      const name = file.replace(/^.*\//, '').replace(/\.yaml$/, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 40).replace(/-+$/, '');
      await h.create(file, name, PARAMS[file]);
      const run = await h.waitDone(name, 180_000);
      assert.equal(run.status?.state, 'SUCCEEDED', JSON.stringify(run.status?.message));
      CHECKS[file]?.(run);
    });
  }

  it('runs at most parallelismLimit (2) loop iterations at once', async () => {
    const h2 = await harness();
    try {
      h2.holdWhen = (p) => p.startsWith('for-loop-1.');
      h2.start();
      const items = ['a', 'b', 'c', 'd', 'e'];
      await h2.create('pipeline_with_parallelfor_parallelism.yaml', 'limit', { loop_parameter: items });
      let max = 0;
      const sample = async (): Promise<number> => {
        const pods = await h2.env.client.listAll<Pod>(Kinds.Pod, { namespace: 'default' });
        const live = new Set<string>();
        for (const p of pods) {
          const m = /^for-loop-1\.(\d+)\./.exec(p.metadata.annotations?.[RunAnnotations.taskPath] ?? '');
          if (m && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed') live.add(m[1] as string);
        }
        max = Math.max(max, live.size);
        return live.size;
      };
      await h2.env.waitFor('two iterations held', async () => (await sample()) === 2, 60_000);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await sample(), 2, 'a third iteration waits');
      let done = false;
      const sampler = (async () => {
        while (!done) {
          await sample();
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      h2.holdWhen = undefined;
      for (const p of await h2.env.client.listAll<Pod>(Kinds.Pod, { namespace: 'default' })) {
        await h2.env.client.patch(Kinds.Pod, { namespace: 'default', name: p.metadata.name }, { metadata: { labels: { released: 'yes' } } }, 'merge');
      }
      const run = await h2.waitDone('limit', 180_000);
      done = true;
      await sampler;
      assert.equal(run.status?.state, 'SUCCEEDED', JSON.stringify(run.status?.message));
      assert.ok(max <= 2, `at most 2 iterations at once, saw ${max}`);
      for (const i of items.keys()) assert.equal(state(run, `for-loop-1.${i}`), 'SUCCEEDED');
      assert.equal(state(run, `for-loop-1.${items.length}`), undefined);
    } finally {
      await h2.close();
    }
  });

  it('finishes a loop whose first iteration is held while later ones end, across a restart, each iteration run once', async () => {
    const h2 = await harness();
    try {
      // iteration 1 is held: the iterations after it settle while one before them does not
      h2.holdWhen = (p) => p.startsWith('for-loop-1.1.');
      const m1 = h2.start();
      const items = ['a', 'b', 'c', 'd', 'e', 'f'];
      // no cache: every iteration's tasks run as Pods, so a second run of one would show
      await h2.env.client.create<Run>(makeRun('held-loop').corpus('pipeline_with_parallelfor_parallelism.yaml').parameters({ loop_parameter: items }).enableCaching(false).obj());
      await h2.env.waitFor('every iteration but the held one done', async () => {
        const t = await liveTasks(h2.env, 'held-loop');
        return items.every((_, i) => t[`for-loop-1.${i}`]?.state === (i === 1 ? 'RUNNING' : 'SUCCEEDED'));
      }, 120_000);
      await m1.stop();
      h2.start();
      h2.holdWhen = undefined;
      for (const p of await h2.env.client.listAll<Pod>(Kinds.Pod, { namespace: 'default' })) {
        await h2.env.client.patch(Kinds.Pod, { namespace: 'default', name: p.metadata.name }, { metadata: { labels: { released: 'yes' } } }, 'merge');
      }
      const run = await h2.waitDone('held-loop', 180_000);
      assert.equal(run.status?.state, 'SUCCEEDED', JSON.stringify(run.status?.message));
      for (const i of items.keys()) assert.equal(state(run, `for-loop-1.${i}`), 'SUCCEEDED');
      assert.equal(state(run, 'for-loop-1'), 'SUCCEEDED');
      const loopTasks = [...h2.runs].filter(([path]) => path.startsWith('for-loop-1.'));
      assert.equal(new Set(loopTasks.map(([path]) => path.split('.')[1])).size, items.length, JSON.stringify(loopTasks));
      for (const [path, n] of loopTasks) assert.equal(n, 1, `${path} ran ${n} times`);
    } finally {
      await h2.close();
    }
  });

  it('retries a failing task per its retryPolicy, each attempt a new Pod, and gives up after maxRetryCount', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-retry-'));
    try {
      const spec = shellPipeline('retries', {
        flaky: { script: `n=$(cat ${dir}/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${dir}/n; [ $n -ge 3 ]`, retry: { maxRetryCount: 3, backoffDuration: '0s', backoffFactor: 2, backoffMaxDuration: '3600s' } },
        doomed: { script: 'exit 7', retry: { maxRetryCount: 1, backoffDuration: '0.2s' } },
      });
      await h.createSpec(spec, 'retries');
      const run = await h.waitDone('retries');
      assert.equal(state(run, 'flaky'), 'SUCCEEDED', JSON.stringify(run.status?.tasks));
      assert.equal(run.status?.tasks?.['flaky']?.attempt, 2);
      assert.equal(readFileSync(join(dir, 'n'), 'utf8').trim(), '3');
      assert.equal(state(run, 'doomed'), 'FAILED');
      assert.equal(run.status?.tasks?.['doomed']?.attempt, 1);
      assert.equal(run.status?.state, 'FAILED');
      const pods = await h.env.client.listAll<Pod>(Kinds.Pod, { namespace: 'default', labelSelector: 'pipelines.kubeflow.org/run=retries' });
      assert.equal(pods.filter((p) => p.metadata.labels?.['pipelines.kubeflow.org/task'] === 'flaky').length, 3);
      assert.equal(pods.filter((p) => p.metadata.labels?.['pipelines.kubeflow.org/task'] === 'doomed').length, 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps each task\'s record as a RunTask of its own: a step writes the record that changed, not every record', async () => {
    const writes = new Map<string, number>();
    const runStatuses: (Run['status'] | undefined)[] = [];
    const sub = h.env.client.store.subscribe((c) => {
      if (c.resource === 'pipelines.kubeflow.org/runtasks' && c.object.spec?.run === 'records') writes.set(c.object.spec.path, (writes.get(c.object.spec.path) ?? 0) + 1);
      if (c.resource === 'pipelines.kubeflow.org/runs' && c.object.metadata.name === 'records') runStatuses.push((c.object as Run).status);
    });
    try {
      const steps = ['s1', 's2', 's3', 's4', 's5'];
      const spec = shellPipeline('records', Object.fromEntries(steps.map((t, i) => [t, { script: 'true', ...(i ? { deps: [steps[i - 1] as string] } : {}) }])));
      const created = await h.createSpec(spec, 'records');
      const run = await h.waitDone('records');
      assert.equal(run.status?.state, 'SUCCEEDED', JSON.stringify(run.status));
      // created when the task starts, updated once when it ends: never rewritten for another task's step
      assert.deepEqual(Object.fromEntries(writes), Object.fromEntries(steps.map((t) => [t, 2])));
      const records = await liveTasks(h.env, 'records');
      assert.deepEqual(Object.keys(records).sort(), steps);
      const owned = await h.env.client.listAll<RunTask>(Kinds.RunTask, { namespace: 'default', labelSelector: 'pipelines.kubeflow.org/run=records' });
      assert.ok(owned.every((o) => o.metadata.ownerReferences?.some((r) => r.controller && r.uid === created.metadata.uid)), 'the Run controls its records');
      // while it ran the Run carried counts, not records; the ended run carries them all
      const running = runStatuses.filter((st) => st?.state === 'RUNNING');
      assert.ok(running.length > 0 && running.every((st) => st?.tasks === undefined), 'no task records in a running Run');
      assert.ok(running.some((st) => (st?.taskCounts?.SUCCEEDED ?? 0) >= 1), JSON.stringify(running.map((st) => st?.taskCounts)));
      assert.deepEqual(Object.keys(run.status?.tasks ?? {}).sort(), steps);
      assert.equal(run.status?.taskCounts, undefined);
    } finally {
      sub.stop();
    }
  });

  it('terminates a run: its running Pods are deleted, unfinished tasks and the run end CANCELED', async () => {
    h.hold.add('sleeper');
    try {
      const spec = shellPipeline('terminate', { first: { script: 'true' }, sleeper: { script: 'true', deps: ['first'] }, never: { script: 'true', deps: ['sleeper'] } });
      await h.createSpec(spec, 'terminate');
      await h.env.waitFor('sleeper running', async () => (await liveTasks(h.env, 'terminate'))['sleeper']?.state === 'RUNNING', 60_000);
      await h.env.client.patch(Kinds.Run, { namespace: 'default', name: 'terminate' }, { spec: { terminate: true } }, 'merge');
      const run = await h.waitDone('terminate');
      assert.equal(run.status?.state, 'CANCELED');
      assert.equal(state(run, 'first'), 'SUCCEEDED');
      assert.equal(state(run, 'sleeper'), 'CANCELED');
      assert.equal(state(run, 'never'), undefined);
      await h.env.waitFor('the sleeper pod gone', async () => {
        const pods = await h.env.client.listAll<Pod>(Kinds.Pod, { namespace: 'default', labelSelector: 'pipelines.kubeflow.org/run=terminate' });
        return !pods.some((p) => p.metadata.labels?.['pipelines.kubeflow.org/task'] === 'sleeper' && !p.metadata.deletionTimestamp);
      }, 30_000);
      await assert.rejects(h.env.client.patch(Kinds.Run, { namespace: 'default', name: 'terminate' }, { spec: { terminate: false } }, 'merge'), /cannot be un-terminated/);
    } finally {
      h.hold.delete('sleeper');
    }
  });

  it('retries a failed run (spec.retryGeneration): only failed and never-run tasks run again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-rerun-'));
    try {
      const spec = shellPipeline('rerun', {
        ok: { script: `echo ran >> ${dir}/ok` },
        gate: { script: `echo ran >> ${dir}/gate; [ -e ${dir}/open ]`, deps: ['ok'] },
        after: { script: `echo ran >> ${dir}/after`, deps: ['gate'] },
      });
      await h.createSpec(spec, 'rerun');
      const failed = await h.waitDone('rerun');
      assert.equal(failed.status?.state, 'FAILED');
      assert.equal(failed.status?.failedTask, 'gate');
      writeFileSync(join(dir, 'open'), '');
      await h.env.client.patch(Kinds.Run, { namespace: 'default', name: 'rerun' }, { spec: { retryGeneration: 1 } }, 'merge');
      const run = await h.env.waitFor('the retried run to succeed', async () => {
        const r = await h.env.client.get<Run>(Kinds.Run, { namespace: 'default', name: 'rerun' });
        return r.status?.state === 'SUCCEEDED' ? r : undefined;
      }, 60_000);
      assert.equal(run.status?.retryGeneration, 1);
      assert.equal(run.status?.failedTask, undefined);
      const lines = (f: string): number => readFileSync(join(dir, f), 'utf8').trim().split('\n').length;
      assert.deepEqual([lines('ok'), lines('gate'), lines('after')], [1, 2, 1]);
      await assert.rejects(h.env.client.patch(Kinds.Run, { namespace: 'default', name: 'rerun' }, { spec: { retryGeneration: 0 } }, 'merge'), /may only grow/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('caches a task: the same inputs and command reuse its outputs without a Pod; spec.enableCaching=false runs it again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-cache-'));
    try {
      const spec = shellPipeline('cached', {
        produce: { script: `echo ran >> ${dir}/runs; printf 42 > "$1"`, cache: true, output: true },
        uncached: { script: `echo ran >> ${dir}/uncached` },
      });
      const first = await (async () => { await h.createSpec(spec, 'cache-1'); return h.waitDone('cache-1'); })();
      assert.equal(first.status?.state, 'SUCCEEDED', JSON.stringify(first.status?.message));
      assert.equal(first.status?.tasks?.['produce']?.outputs?.parameters['out'], '42');
      await h.createSpec(spec, 'cache-2');
      const second = await h.waitDone('cache-2');
      assert.equal(second.status?.state, 'SUCCEEDED');
      assert.equal(second.status?.tasks?.['produce']?.cachedFrom, 'cache-1/produce');
      assert.equal(second.status?.tasks?.['produce']?.outputs?.parameters['out'], '42');
      assert.equal(second.status?.tasks?.['produce']?.podName, undefined);
      await h.createSpec(spec, 'cache-3', { enableCaching: false });
      const third = await h.waitDone('cache-3');
      assert.equal(third.status?.tasks?.['produce']?.cachedFrom, undefined);
      const lines = (f: string): number => readFileSync(join(dir, f), 'utf8').trim().split('\n').length;
      assert.deepEqual([lines('runs'), lines('uncached')], [2, 3]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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

  it('keeps a submitted run as it was: its spec cannot be changed', async () => {
    const run = await h.create('essential/pipeline_with_outputs.yaml', 'frozen', { msg: 'a' });
    await assert.rejects(h.env.client.update({ ...run, spec: { ...run.spec, parameters: { msg: 'b' } } }), /spec of a Run is immutable/);
    // metadata stays writable (a patch retries while the controller writes status meanwhile)
    const labelled = await h.env.client.patch(Kinds.Run, { namespace: 'default', name: 'frozen' }, { metadata: { labels: { team: 'a' } } }, 'merge');
    assert.equal(labelled.metadata.labels?.team, 'a');
  });

  it('after a restart, does not re-run a task whose outputs are recorded', async () => {
    // stop the first manager; hold the second inner task so the run is caught mid-way
    const h2 = await harness();
    try {
      h2.hold.add('inner-pipeline.print-op2');
      const m1 = h2.start();
      await h2.create('essential/pipeline_with_outputs.yaml', 'restart', { msg: 'again' });
      await h2.env.waitFor('first tasks recorded', async () => {
        const t = await liveTasks(h2.env, 'restart');
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

describe('which tasks make their own output folders', () => {
  // the commands kfp 2.x compiles: a lightweight component without and with its pip bootstrap
  const lean = ['sh', '-ec', 'program_path=$(mktemp -d)\n\nprintf "%s" "$0" > "$program_path/ephemeral_component.py"\n_KFP_RUNTIME=true python3 -m kfp.dsl.executor_main                         --component_module_path                         "$program_path/ephemeral_component.py"                         "$@"\n', 'def f(): pass\n'];
  const bootstrap = ['sh', '-c', '\nif ! [ -x "$(command -v pip)" ]; then\n    python3 -m ensurepip\nfi\n\nPIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip install --quiet --no-warn-script-location \'kfp==2.17.0\' && "$0" "$@"\n', 'sh', '-ec', 'program_path=$(mktemp -d)\nprintf "%s" "$0" > "$program_path/ephemeral_component.py"\n_KFP_RUNTIME=true python3 -m kfp.dsl.executor_main --component_module_path "$program_path/ephemeral_component.py" "$@"\n'];
  it('kfp\'s executor does (its tasks skip the launcher\'s folders)', () => {
    assert.equal(runsKfpExecutor(lean), true);
    assert.equal(runsKfpExecutor(bootstrap), true);
  });
  it('a container component\'s command does not (the launcher makes them, as KFP\'s does)', () => {
    assert.equal(runsKfpExecutor(['sh', '-c', 'mkdir -p "$(dirname "$0")" && echo hi > "$0"']), false);
    assert.equal(runsKfpExecutor(['python3', '-m', 'kfp.dsl.executor_main']), false);
    assert.equal(runsKfpExecutor(['echo', 'python3 -m kfp.dsl.executor_mainly']), false);
  });
});
