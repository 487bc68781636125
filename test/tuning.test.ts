// Katib Experiments on the real server, driven by the tools Katib users have: kubectl and the
// kubeflow-katib SDK's KatibClient. Trials run as batch Jobs, PyTorchJobs and pipeline Runs; metrics
// come from the trial's log, a JSON file or report_metrics (Push) with no sidecar; medianstop stops
// trials that lag; the server killed with -9 mid-experiment loses and repeats nothing; bad
// experiments are refused naming the field.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { conformanceDir } from '../src/conformance-path.js';
import { TestServer, clientsPython, repoRoot, runProgram, sleep } from './harness.js';

const experiments = '/apis/kubeflow.org/v1beta1/namespaces/default/experiments';
const trialsPath = '/apis/kubeflow.org/v1beta1/namespaces/default/trials';

/** a python payload as a batch Job trial template; `script` sees lr (and momentum) as floats */
function jobExperiment(name: string, script: string, spec: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name },
    spec: {
      objective: { type: 'minimize', objectiveMetricName: 'loss' },
      algorithm: { algorithmName: 'random' },
      parallelTrialCount: 2, maxTrialCount: 4, maxFailedTrialCount: 2,
      parameters: [{ name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.01', max: '0.5' } }],
      trialTemplate: {
        primaryContainerName: 'training',
        trialParameters: [{ name: 'learningRate', reference: 'lr' }],
        trialSpec: {
          apiVersion: 'batch/v1', kind: 'Job',
          spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'training', image: 'python:3.11', command: ['python3', '-c', `import sys, time, json, os\nlr = float(sys.argv[1])\n${script}`, '${trialParameters.learningRate}'] }] } } },
        },
      },
      ...spec,
    },
  };
}

const cond = (o: any, type: string) => o?.status?.conditions?.find((c: any) => c.type === type && c.status === 'True');

describe('Katib Experiments', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
  });

  const ended = (name: string, timeoutMs = 120_000) => s.until(`experiment ${name} to end`, async () => {
    const e = await s.get(`${experiments}/${name}`);
    return cond(e, 'Succeeded') || cond(e, 'Failed') ? e : undefined;
  }, timeoutMs);
  const trialsOf = async (name: string): Promise<any[]> => (await s.get(`${trialsPath}?labelSelector=katib.kubeflow.org/experiment=${name}`)).items;

  it('runs a random search over a Job applied with kubectl; kubectl wait, get and skiff describe read it as Katib\'s', async () => {
    const file = join(repoRoot, 'examples', 'tuning', 'random-quadratic.yaml');
    const applied = await s.kubectl(['apply', '-f', file]);
    assert.equal(applied.code, 0, applied.stderr);
    const waited = await s.kubectl(['wait', '--for=condition=Succeeded', 'experiment/random-quadratic', '--timeout=120s']);
    assert.equal(waited.code, 0, waited.stderr + s.output.slice(-3000));
    const e = await s.get(`${experiments}/random-quadratic`);
    assert.equal(e.status.conditions.at(-1).reason, 'ExperimentMaxTrialsReached');
    assert.equal(e.status.trials, 12);
    assert.equal(e.status.trialsSucceeded, 12);
    const trials = await trialsOf('random-quadratic');
    const losses = trials.map((t) => Number(t.status.observation.metrics.find((m: any) => m.name === 'loss').min));
    assert.equal(Number(e.status.currentOptimalTrial.observation.metrics[0].min), Math.min(...losses));
    // the trial printed three losses; the objective's strategy (min) picked the smallest
    const best = trials.find((t) => t.metadata.name === e.status.currentOptimalTrial.bestTrialName);
    assert.ok(Number(best.status.observation.metrics[0].max) > Number(best.status.observation.metrics[0].min));
    const got = await s.kubectl(['get', 'experiments']);
    assert.match(got.stdout, /^NAME\s+TYPE\s+STATUS\s+AGE\n/);
    assert.match(got.stdout, /random-quadratic\s+Succeeded\s+True\s/);
    const trialRows = await s.kubectl(['get', 'trials', '--no-headers']);
    assert.equal(trialRows.stdout.trim().split('\n').length, 12);
    const described = await s.cli(['describe', 'experiment', 'random-quadratic']);
    assert.equal(described.code, 0, described.stderr);
    const rows = described.stdout.split('Trials (best first):')[1]!.split('\n').slice(3, 15).map((l) => l.trim().split(/\s+/));
    assert.equal(rows[0]![0], e.status.currentOptimalTrial.bestTrialName, described.stdout);
    const shown = rows.map((r) => Number(r.at(-1)));
    assert.deepEqual(shown, [...shown].sort((a, b) => a - b), 'best first');
  });

  it('tunes a Python function with KatibClient.tune and Push metrics (report_metrics in the trial), and reads it back through the SDK', async () => {
    // skiff up prints where the DB manager listens, just after it is ready
    const addr = await s.until('the DB manager address', async () => /db_manager_address="([^"]+)"/.exec(s.output)?.[1], 10_000);
    const script = `
import json, sys
import kubeflow.katib as katib
def objective(parameters):
    from kubeflow.katib import report_metrics
    x = float(parameters["x"]); y = int(parameters["y"])
    report_metrics({"result": 4 * x - (y - 2) ** 2})
c = katib.KatibClient(namespace="default")
c.tune(name="tune-push", objective=objective, parameters={"x": katib.search.double(min=1.0, max=5.0), "y": katib.search.int(min=0, max=4)},
       objective_metric_name="result", objective_type="maximize", algorithm_name="tpe", max_trial_count=6, parallel_trial_count=2,
       metrics_collector_config={"kind": "Push"})
c.wait_for_experiment_condition(name="tune-push", timeout=180, polling_interval=1)
best = c.get_optimal_hyperparameters("tune-push")
logs = c.get_trial_metrics(best.best_trial_name, db_manager_address=sys.argv[1])
print(json.dumps({"best": best.to_dict(), "logged": [(m.metric.name, m.metric.value) for m in logs]}))
print(json.dumps([t.metadata.name for t in c.list_trials("tune-push")]))
`;
    // the SDK ships the objective's source (inspect.getsource), so the script must be a file
    const file = join(s.dataDir, 'tune.py');
    writeFileSync(file, script);
    const r = await runProgram(clientsPython, [file, addr], { KUBECONFIG: s.kubeconfig, PYTHONWARNINGS: 'ignore' });
    assert.equal(r.code, 0, r.stderr + s.output.slice(-3000));
    const lines = r.stdout.trim().split('\n');
    const out = JSON.parse(lines.at(-2)!);
    assert.equal(JSON.parse(lines.at(-1)!).length, 6);
    const x = Number(out.best.parameter_assignments.find((a: any) => a.name === 'x').value);
    const y = Number(out.best.parameter_assignments.find((a: any) => a.name === 'y').value);
    const result = Number(out.best.observation.metrics[0].latest);
    assert.ok(Math.abs(result - (4 * x - (y - 2) ** 2)) < 1e-9, JSON.stringify(out.best));
    assert.deepEqual(out.logged.map((l: [string, string]) => l[0]), ['result']);
    assert.equal(Number(out.logged[0][1]), result);
  });

  it('runs a TPE search over a PyTorchJob, metrics from the master\'s log', async () => {
    const e = jobExperiment('tpe-pytorch', '', { algorithm: { algorithmName: 'tpe' }, maxTrialCount: 5 });
    e.spec.trialTemplate.trialSpec = {
      apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob',
      spec: { pytorchReplicaSpecs: { Master: { replicas: 1, restartPolicy: 'OnFailure', template: { spec: { containers: [{ name: 'pytorch', image: 'python:3.11', command: ['python3', '-c', 'import os, sys\nlr = float(sys.argv[1])\nprint("rank", os.environ["RANK"], "of", os.environ["WORLD_SIZE"])\nprint(f"loss={(lr - 0.2) ** 2:.6f}")', '${trialParameters.learningRate}'] }] } } } } },
    };
    e.spec.trialTemplate.primaryContainerName = 'pytorch';
    await s.create(experiments, e);
    const done = await ended('tpe-pytorch');
    assert.equal(done.status.conditions.at(-1).reason, 'ExperimentMaxTrialsReached', JSON.stringify(done.status));
    assert.equal(done.status.trialsSucceeded, 5);
    const t = (await trialsOf('tpe-pytorch'))[0];
    assert.equal(t.spec.runSpec.kind, 'PyTorchJob');
    assert.deepEqual(t.spec.primaryPodLabels, { 'training.kubeflow.org/job-role': 'master' });
    assert.equal(t.spec.successCondition, 'status.conditions.#(type=="Succeeded")#|#(status=="True")#');
  });

  it('walks a grid over a pipeline Run\'s parameter', async () => {
    const ir = {
      pipelineInfo: { name: 'tune-pipe' }, schemaVersion: '2.1.0', sdkVersion: 'kfp-2.17.0',
      components: { 'comp-train': { executorLabel: 'exec-train', inputDefinitions: { parameters: { lr: { parameterType: 'STRING' } } } } },
      deploymentSpec: { executors: { 'exec-train': { container: { image: 'python:3.11', command: ['python3', '-c', 'import sys\nlr = float(sys.argv[1])\nprint(f"loss={(lr - 0.3) ** 2:.6f}")'], args: ["{{$.inputs.parameters['lr']}}"] } } } },
      root: {
        dag: { tasks: { train: { taskInfo: { name: 'train' }, componentRef: { name: 'comp-train' }, inputs: { parameters: { lr: { componentInputParameter: 'lr' } } } } } },
        inputDefinitions: { parameters: { lr: { parameterType: 'STRING' } } },
      },
    };
    const e = jobExperiment('grid-run', '', { algorithm: { algorithmName: 'grid' }, parallelTrialCount: 2, maxTrialCount: 4, parameters: [{ name: 'lr', parameterType: 'discrete', feasibleSpace: { list: ['0.1', '0.2', '0.3', '0.4'] } }] });
    e.spec.trialTemplate.primaryContainerName = 'main';
    e.spec.trialTemplate.trialSpec = { apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run', spec: { pipelineSpec: ir, parameters: { lr: '${trialParameters.learningRate}' } } };
    await s.create(experiments, e);
    const done = await ended('grid-run');
    assert.equal(done.status.trialsSucceeded, 4, JSON.stringify(done.status) + s.output.slice(-3000));
    const seen = (await trialsOf('grid-run')).map((t) => t.spec.parameterAssignments[0].value).sort();
    assert.deepEqual(seen, ['0.1', '0.2', '0.3', '0.4']);
    assert.deepEqual(done.status.currentOptimalTrial.parameterAssignments, [{ name: 'lr', value: '0.3' }]);
  });

  it('runs Hyperband: its brackets and rungs as Katib computes them, the best of each rung promoted, ending when the last bracket is done', async () => {
    const e = jobExperiment('hyperband', 'e = int(sys.argv[2])\nprint(f"loss={(lr - 0.1) ** 2 + 1 / e:.6f}")', {
      parallelTrialCount: 9, maxTrialCount: 40,
      algorithm: { algorithmName: 'hyperband', algorithmSettings: [{ name: 'resource_name', value: 'epochs' }, { name: 'eta', value: '3' }, { name: 'r_l', value: '9' }] },
      parameters: [{ name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.01', max: '0.5' } }, { name: 'epochs', parameterType: 'int', feasibleSpace: { min: '1', max: '9' } }],
    });
    e.spec.trialTemplate.trialParameters.push({ name: 'epochs', reference: 'epochs' });
    e.spec.trialTemplate.trialSpec.spec.template.spec.containers[0].command.push('${trialParameters.epochs}');
    await s.create(experiments, e);
    const done = await ended('hyperband');
    assert.equal(done.status.conditions.at(-1).reason, 'ExperimentSuggestionEndReached', JSON.stringify(done.status));
    const trials = await trialsOf('hyperband');
    // s_max = 2: bracket 2 runs 9 configurations at 1 epoch, 3 at 3, 1 at 9; bracket 1: 5 at 3, then
    // Katib's ⌈5/3⌉ = 2 at 9; bracket 0: 3 at 9
    const byEpochs = (n: number) => trials.filter((t) => t.spec.parameterAssignments.find((a: any) => a.name === 'epochs').value === String(n));
    assert.deepEqual([byEpochs(1).length, byEpochs(3).length, byEpochs(9).length], [9, 8, 6], trials.map((t) => JSON.stringify(t.spec.parameterAssignments)).join('\n'));
    const lr = (t: any) => t.spec.parameterAssignments.find((a: any) => a.name === 'lr').value;
    const loss = (t: any) => Number(t.status.observation.metrics[0].latest);
    // the three promoted from the first rung are its three best
    const first = [...byEpochs(1)].sort((a, b) => loss(a) - loss(b)).slice(0, 3).map(lr).sort();
    const promoted = byEpochs(3).map(lr).filter((v: string) => byEpochs(1).some((t) => lr(t) === v)).sort();
    assert.deepEqual(promoted, first);
  });

  it('collects File metrics in JSON (numbers as well as Katib\'s strings)', async () => {
    const e = jobExperiment('json-file', 'os.makedirs("/katib", exist_ok=True)\nwith open("/katib/metrics.json", "w") as f:\n    for step in range(3):\n        f.write(json.dumps({"loss": (lr - 0.1) ** 2 + 1 / (step + 1), "accuracy": str(1 - lr)}) + "\\n")', {
      maxTrialCount: 2, parallelTrialCount: 2,
      objective: { type: 'minimize', objectiveMetricName: 'loss', additionalMetricNames: ['accuracy'] },
      metricsCollectorSpec: { collector: { kind: 'File' }, source: { fileSystemPath: { path: '/katib/metrics.json', kind: 'File', format: 'JSON' } } },
    });
    await s.create(experiments, e);
    const done = await ended('json-file');
    assert.equal(done.status.trialsSucceeded, 2, JSON.stringify(done.status));
    for (const t of await trialsOf('json-file')) {
      const lr = Number(t.spec.parameterAssignments[0].value);
      const loss = t.status.observation.metrics.find((m: any) => m.name === 'loss');
      assert.ok(Math.abs(Number(loss.min) - ((lr - 0.1) ** 2 + 1 / 3)) < 1e-9, JSON.stringify(loss));
      const acc = t.status.observation.metrics.find((m: any) => m.name === 'accuracy');
      assert.ok(Math.abs(Number(acc.latest) - (1 - lr)) < 1e-9);
    }
  });

  it('stops lagging trials with medianstop; they count as early stopped, not failed', async () => {
    // lr near 0.05 learns; far from it the loss stays high. Each step takes a while, so the rule can act.
    const script = 'for step in range(1, 9):\n    print(f"loss={abs(lr - 0.05) * 10 + 1 / step:.4f}", flush=True)\n    time.sleep(0.4)';
    const e = jobExperiment('median', script, {
      parallelTrialCount: 1, maxTrialCount: 6,
      parameters: [{ name: 'lr', parameterType: 'categorical', feasibleSpace: { list: ['0.05', '0.06', '0.9', '0.8', '0.7', '0.95'] } }],
      // the walk is seeded: with this seed it starts with the best (0.05 0.95 0.7 0.8 0.9 0.06), so the
      // trials after it have a median to lag behind. Seeded by the Experiment's uid, a walk can come
      // best-last, and then no rule would ever stop anyone.
      algorithm: { algorithmName: 'grid', algorithmSettings: [{ name: 'random_state', value: '4' }] },
      earlyStopping: { algorithmName: 'medianstop', algorithmSettings: [{ name: 'min_trials_required', value: '1' }, { name: 'start_step', value: '2' }] },
    });
    await s.create(experiments, e);
    const done = await ended('median', 180_000);
    assert.equal(done.status.trials, 6, JSON.stringify(done.status));
    assert.ok(done.status.trialsEarlyStopped >= 1, JSON.stringify(done.status));
    assert.equal(done.status.trialsFailed ?? 0, 0);
    // a trial with a rule stops exactly when its best loss by report 2 is above the rule's value (the
    // median of the finished trials' bests by report 2)
    const judged = (await trialsOf('median')).filter((t) => t.spec.earlyStoppingRules?.length);
    assert.ok(judged.length >= 1);
    for (const t of judged) {
      const rule = t.spec.earlyStoppingRules[0];
      assert.deepEqual([rule.name, rule.comparison, rule.startStep], ['loss', 'greater', 2]);
      const lr = Number(t.spec.parameterAssignments[0].value);
      const bestBy2 = Number((Math.abs(lr - 0.05) * 10 + 1 / 2).toFixed(4));
      assert.equal(Boolean(cond(t, 'EarlyStopped')), bestBy2 > Number(rule.value), `lr ${lr}: best ${bestBy2} against ${rule.value}`);
      if (cond(t, 'EarlyStopped')) assert.notEqual(t.status.observation.metrics.find((m: any) => m.name === 'loss')?.latest, 'unavailable');
    }
  });

  it('stops trials that lag their rung with ASHA (Skiff\'s successive halving), judged while they run', async () => {
    const script = 'for step in range(1, 6):\n    print(f"loss={lr + 1 / step:.4f}", flush=True)\n    time.sleep(0.4)';
    const e = jobExperiment('asha', script, {
      parallelTrialCount: 1, maxTrialCount: 9,
      parameters: [{ name: 'lr', parameterType: 'categorical', feasibleSpace: { list: ['0.1', '0.2', '0.3', '0.4', '0.5', '0.6', '0.7', '0.8', '0.9'] } }],
      // seeded so that the walk (0.3 0.2 0.1 0.9 0.8 0.7 0.6 0.5 0.4) fills the first rung with the best
      // three: a walk that comes best-last (the Experiment's uid seeds it otherwise) would stop nobody
      algorithm: { algorithmName: 'grid', algorithmSettings: [{ name: 'random_state', value: '10' }] },
      earlyStopping: { algorithmName: 'asha', algorithmSettings: [{ name: 'min_resource', value: '1' }, { name: 'reduction_factor', value: '3' }, { name: 'min_trials_required', value: '3' }] },
    });
    await s.create(experiments, e);
    const done = await ended('asha', 180_000);
    assert.equal(done.status.trials, 9, JSON.stringify(done.status));
    assert.equal(done.status.trialsFailed ?? 0, 0);
    const trials = await trialsOf('asha');
    const stopped = trials.filter((t) => cond(t, 'EarlyStopped'));
    assert.ok(stopped.length >= 1, JSON.stringify(done.status));
    for (const t of stopped) {
      assert.match(cond(t, 'EarlyStopped').message, /not among the top \d+ of the \d+ trials that reached that rung/);
      assert.ok(Number(t.status.observation.metrics[0].latest) > 0, 'the values reported before the stop are kept');
    }
    // the best learning rate is never stopped: it leads every rung it reaches
    const best = trials.find((t) => t.spec.parameterAssignments[0].value === '0.1');
    assert.ok(cond(best, 'Succeeded'), JSON.stringify(best.status.conditions));
  });

  it('fails a trial whose payload crashes, not the experiment, until maxFailedTrialCount', async () => {
    await s.create(experiments, jobExperiment('crashing', 'raise SystemExit(3)', { maxTrialCount: 6, maxFailedTrialCount: 2 }));
    const done = await ended('crashing');
    assert.equal(done.status.conditions.at(-1).type, 'Failed');
    assert.equal(done.status.conditions.at(-1).reason, 'ExperimentMaxFailedTrialsReached');
    assert.equal(done.status.trialsFailed, 2);
    const failed = (await trialsOf('crashing')).find((t) => cond(t, 'Failed'));
    assert.match(cond(failed, 'Failed').reason, /^TrialFailed/);
  });

  it('refuses bad experiments naming the field (kubectl shows it)', async () => {
    const cases: [string, any, string][] = [
      ['a grid maxTrialCount cannot fill', jobExperiment('g', '', { algorithm: { algorithmName: 'grid' }, maxTrialCount: 9, parallelTrialCount: 1, parameters: [{ name: 'lr', parameterType: 'discrete', feasibleSpace: { list: ['1', '2'] } }] }), 'spec.maxTrialCount'],
      ['no objective metric', jobExperiment('m', '', { objective: { type: 'minimize' } }), 'spec.objective.objectiveMetricName'],
      ['an unknown parameter in the template', (() => { const e = jobExperiment('u', ''); e.spec.trialTemplate.trialParameters[0].reference = 'learning_rate'; return e; })(), 'spec.trialTemplate.trialParameters[0].reference'],
      ['an assignment no trial parameter consumes', jobExperiment('a', '', { parameters: [{ name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.1', max: '0.2' } }, { name: 'wd', parameterType: 'double', feasibleSpace: { min: '0.1', max: '0.2' } }] }), 'spec.parameters[1].name'],
      ['an algorithm setting out of range', jobExperiment('s', '', { algorithm: { algorithmName: 'tpe', algorithmSettings: [{ name: 'gamma', value: '7' }] } }), 'spec.algorithm.algorithmSettings[0].value'],
    ];
    for (const [what, obj, field] of cases) {
      const r = await s.req('POST', experiments, obj);
      assert.equal(r.status, 422, `${what}: ${r.text}`);
      assert.ok(r.body.details.causes.some((c: any) => c.field === field), `${what}: ${r.text}`);
    }
    const k = await s.kubectl(['apply', '-f', '-'], YAML.stringify(cases[0]![1]));
    assert.notEqual(k.code, 0);
    assert.match(k.stderr, /spec\.maxTrialCount/);
    const corpus = readFileSync(join(conformanceDir(), 'katib', 'test-e2e-testdata', 'invalid-experiment.yaml'), 'utf8').replace('namespace: kubeflow', 'namespace: default');
    const inv = await s.kubectl(['apply', '-f', '-'], corpus);
    assert.match(inv.stderr, /spec\.algorithm\.algorithmName/);
  });
});

describe('Katib Experiments across kill -9', () => {
  let s: TestServer;
  after(async () => {
    await s?.cleanup();
  });

  it('loses no trial, runs none twice and suggests no assignment twice when the server is killed mid-experiment', async () => {
    s = await TestServer.start();
    const e = jobExperiment('survivor', 'with open("/record/runs", "a") as f:\n    f.write(os.environ["KATIB_TRIAL_NAME"] + "\\n")\ntime.sleep(1)\nprint(f"loss={(lr - 0.2) ** 2:.6f}")', { maxTrialCount: 8, parallelTrialCount: 2, algorithm: { algorithmName: 'tpe' } });
    const pod = e.spec.trialTemplate.trialSpec.spec.template.spec;
    pod.volumes = [{ name: 'record', hostPath: { path: s.dataDir } }];
    pod.containers[0].volumeMounts = [{ name: 'record', mountPath: '/record' }];
    await s.create(experiments, e);
    for (const pause of [1500, 2500]) {
      await sleep(pause);
      await s.crash();
      await sleep(200);
      await s.launch();
    }
    const done = await s.until('survivor to end', async () => {
      const x = await s.get(`${experiments}/survivor`);
      return cond(x, 'Succeeded') || cond(x, 'Failed') ? x : undefined;
    }, 180_000);
    assert.equal(done.status.conditions.at(-1).reason, 'ExperimentMaxTrialsReached', JSON.stringify(done.status));
    const trials = (await s.get(`${trialsPath}?labelSelector=katib.kubeflow.org/experiment=survivor`)).items;
    const told = `${JSON.stringify(done.status)}\n${trials.map((t: any) => `${t.metadata.name}: ${JSON.stringify(t.status?.conditions?.at(-1))}`).join('\n')}\n${s.output.slice(-4000)}`;
    assert.equal(done.status.trialsSucceeded, 8, told);
    assert.equal(trials.length, 8);
    assert.equal(new Set(trials.map((t: any) => t.spec.parameterAssignments[0].value)).size, 8, 'no assignment twice');
    const sug = await s.get('/apis/kubeflow.org/v1beta1/namespaces/default/suggestions/survivor');
    assert.equal(sug.status.suggestions.length, 8);
    const runs = readFileSync(join(s.dataDir, 'runs'), 'utf8').trim().split('\n');
    assert.equal(runs.length, 8, `each trial's payload ran once: ${runs.join(', ')}`);
    assert.equal(new Set(runs).size, 8);
  });
});
