// The Experiment and Suggestion controllers together on a real store: trials are made from the
// suggestion's assignments, never more active than parallelTrialCount and never more than
// maxTrialCount; the experiment ends by goal, failures, budget or an exhausted search, stopping what
// still runs; a failing algorithm says why; a restart of the controllers mid-experiment repeats
// nothing. The trials' own controller is tested in trial-controller.test.ts: here the test plays it,
// finishing each Trial with a loss computed from its assignment.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import YAML from 'yaml';
import type { Condition } from '../../api/conditions.js';
import { Kinds } from '../../api/index.js';
import type { StoredObject } from '../../api/meta.js';
import type { Experiment, Suggestion, Trial } from '../../api/tuning.js';
import { Manager } from '../../control/controller.js';
import { TestEnv } from '../../testing/fake-agent.js';
import type { Algorithm, SuggestRequest } from './algorithms/types.js';
import { addExperimentController } from './experiment-controller.js';
import { addSuggestionController } from './suggestion-controller.js';

/** walks lr = 0.01, 0.02, … in order (never repeating an assigned value); `limit` values in all */
function walker(limit = Infinity): Algorithm & { calls: SuggestRequest[] } {
  const calls: SuggestRequest[] = [];
  return {
    name: 'random', calls,
    validate: () => [],
    suggest(req) {
      calls.push(req);
      const used = new Set(req.trials.map((t) => t.assignments['lr']));
      const out = [];
      for (let i = 1; out.length < req.count && i <= limit; i++) {
        const lr = (i / 100).toFixed(2);
        if (!used.has(lr)) out.push({ assignments: { lr } });
      }
      return { assignments: out, done: out.length < req.count };
    },
  };
}

const experiment = (name: string, spec: Record<string, unknown> = {}): Experiment => {
  const e = YAML.parse(`
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: ${name}, namespace: default}
spec:
  maxTrialCount: 6
  parallelTrialCount: 2
  objective: {type: minimize, objectiveMetricName: loss}
  algorithm: {algorithmName: random}
  parameters:
    - {name: lr, parameterType: double, feasibleSpace: {min: "0.01", max: "0.99"}}
  trialTemplate:
    primaryContainerName: main
    trialParameters: [{name: learningRate, reference: lr}]
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: main, image: python, command: [python, train.py, "--lr=\${trialParameters.learningRate}"]}]
`) as Experiment;
  Object.assign(e.spec, spec);
  return e;
};

const isTrue = (conds: Condition[] | undefined, type: string) => conds?.some((c) => c.type === type && c.status === 'True') ?? false;

describe('Experiment and Suggestion controllers', () => {
  let env: TestEnv;
  let managers: Manager[];
  let algorithm: ReturnType<typeof walker>;
  /** the trials the test will finish (by name), and how */
  let finish: (t: Trial) => 'succeed' | 'fail' | 'hold';
  let lossOf: (lr: number) => number;
  let maxActive: number;
  let stopPlayer: () => void;

  const start = () => {
    const mgr = new Manager(env.client);
    addExperimentController(mgr, { client: env.client, recorder: env.recorder });
    addSuggestionController(mgr, { client: env.client, recorder: env.recorder, algorithms: (n) => (n === algorithm.name ? algorithm : undefined) });
    mgr.start();
    managers.push(mgr);
    return mgr;
  };
  const trials = async (exp: string) => (await env.client.listAll<Trial>(Kinds.Trial, { namespace: 'default', labelSelector: `katib.kubeflow.org/experiment=${exp}` }));
  const exp = async (name: string) => env.client.find<Experiment>(Kinds.KatibExperiment, { namespace: 'default', name });
  const ended = (name: string, timeoutMs = 10_000) => env.waitFor(`experiment ${name} to end`, async () => {
    const e = await exp(name);
    return isTrue(e?.status?.conditions, 'Succeeded') || isTrue(e?.status?.conditions, 'Failed') ? e : undefined;
  }, timeoutMs);

  beforeEach(async () => {
    env = await TestEnv.start();
    managers = [];
    algorithm = walker();
    finish = () => 'succeed';
    lossOf = (lr) => (lr - 0.04) ** 2;
    maxActive = 0;
    // plays the Trial controller: Running at once, then finished as `finish` says
    const sub = env.client.store.subscribe((c) => {
      if (c.resource !== 'kubeflow.org/trials' || c.type === 'DELETED') return;
      void (async () => {
        const t = c.object as unknown as Trial & StoredObject;
        const all = await trials(t.metadata.labels?.['katib.kubeflow.org/experiment'] ?? '');
        maxActive = Math.max(maxActive, all.filter((x) => !['Succeeded', 'Failed', 'Killed'].some((k) => isTrue(x.status?.conditions, k))).length);
        if (t.status?.conditions?.length) return;
        const what = finish(t);
        if (what === 'hold') {
          await env.client.updateStatus({ ...t, status: { conditions: [{ type: 'Running', status: 'True', reason: 'TrialRunning' }] } }).catch(() => undefined);
          return;
        }
        const lr = Number(t.spec.parameterAssignments?.[0]?.value);
        const loss = String(lossOf(lr));
        const status = what === 'succeed'
          ? { conditions: [{ type: 'Succeeded', status: 'True', reason: 'TrialSucceeded' }], observation: { metrics: [{ name: 'loss', min: loss, max: loss, latest: loss }] } }
          : { conditions: [{ type: 'Failed', status: 'True', reason: 'TrialFailed' }] };
        await env.client.updateStatus({ ...t, status }).catch(() => undefined);
      })();
    });
    stopPlayer = () => sub.stop();
  });
  afterEach(async () => {
    stopPlayer();
    await Promise.all(managers.map((m) => m.stop()));
    await env.close();
  });

  it('runs maxTrialCount trials, parallelTrialCount at a time, each a Job from the template, and names the best', async () => {
    start();
    await env.client.create(experiment('walk'));
    const e = await ended('walk');
    assert.equal(e.status?.conditions?.at(-1)?.reason, 'ExperimentMaxTrialsReached', JSON.stringify(e.status?.conditions));
    const ts = await trials('walk');
    assert.equal(ts.length, 6);
    assert.ok(maxActive <= 2, `at most 2 active at once, saw ${maxActive}`);
    for (const t of ts) {
      assert.match(t.metadata.name, /^walk-[bcdfghjklmnpqrstvwxz2456789]{8}$/);
      const lr = t.spec.parameterAssignments?.[0]?.value;
      assert.deepEqual(t.spec.runSpec?.spec.template.spec.containers[0].command, ['python', 'train.py', `--lr=${lr}`]);
      assert.equal(t.spec.runSpec?.metadata.name, t.metadata.name);
      assert.equal(t.spec.successCondition, 'status.conditions.#(type=="Complete")#|#(status=="True")#');
      assert.equal(t.metadata.ownerReferences?.[0]?.kind, 'Experiment');
    }
    assert.equal(new Set(ts.map((t) => t.spec.parameterAssignments?.[0]?.value)).size, 6, 'no assignment twice');
    assert.equal(e.status?.trials, 6);
    assert.equal(e.status?.trialsSucceeded, 6);
    assert.equal(e.status?.currentOptimalTrial?.parameterAssignments?.[0]?.value, '0.04');
    assert.equal(e.status?.currentOptimalTrial?.observation?.metrics?.[0]?.latest, '0');
    const sug = await env.client.find<Suggestion>(Kinds.Suggestion, { namespace: 'default', name: 'walk' });
    assert.equal(sug?.status?.suggestionCount, 6);
    assert.equal(sug?.spec.requests, 6);
    assert.deepEqual(sug?.status?.conditions?.map((c: Condition) => [c.type, c.status]).at(-1), ['Succeeded', 'True']);
    // what the algorithm saw: finished trials with their loss, assigned ones as pending
    const last = algorithm.calls.at(-1)!;
    assert.ok(last.trials.some((t) => t.state === 'succeeded' && typeof t.value === 'number'));
    assert.ok(e.status?.startTime && e.status?.completionTime);
  });

  it('ends at the goal and stops the trials still running (Killed), where Katib leaves them', async () => {
    lossOf = (lr) => (lr <= 0.01 ? 0.001 : 1);
    finish = (t) => (t.spec.parameterAssignments?.[0]?.value === '0.01' ? 'succeed' : 'hold');
    start();
    await env.client.create(experiment('goal', { objective: { type: 'minimize', objectiveMetricName: 'loss', goal: 0.01 }, maxTrialCount: 10, parallelTrialCount: 3 }));
    const e = await ended('goal');
    assert.equal(e.status?.conditions?.at(-1)?.reason, 'ExperimentGoalReached');
    await env.waitFor('the running trials killed', async () => {
      const ts = await trials('goal');
      const killed = ts.filter((t) => isTrue(t.status?.conditions, 'Killed'));
      return killed.length === 2 && ts.length === 3 ? ts : undefined;
    });
  });

  it('fails at maxFailedTrialCount', async () => {
    finish = () => 'fail';
    start();
    await env.client.create(experiment('failing', { maxFailedTrialCount: 2 }));
    const e = await ended('failing');
    assert.equal(e.status?.conditions?.at(-1)?.type, 'Failed');
    assert.equal(e.status?.conditions?.at(-1)?.reason, 'ExperimentMaxFailedTrialsReached');
    assert.equal(e.status?.trialsFailed, 2);
  });

  it('says why when the algorithm fails: on the Suggestion and the Experiment', async () => {
    algorithm.suggest = () => { throw new Error('the space has no room'); };
    start();
    await env.client.create(experiment('broken'));
    const e = await ended('broken');
    assert.equal(e.status?.conditions?.at(-1)?.type, 'Failed');
    assert.match(e.status?.conditions?.at(-1)?.message ?? '', /the space has no room/);
    const sug = await env.client.find<Suggestion>(Kinds.Suggestion, { namespace: 'default', name: 'broken' });
    const failed = sug?.status?.conditions?.find((c: Condition) => c.type === 'Failed');
    assert.equal(failed?.reason, 'AlgorithmFailed');
    assert.match(failed?.message ?? '', /the random algorithm failed: the space has no room/);
  });

  it('ends when the search has nothing more to offer', async () => {
    algorithm = walker(3);
    start();
    await env.client.create(experiment('small', { maxTrialCount: 10 }));
    const e = await ended('small');
    assert.equal(e.status?.conditions?.at(-1)?.reason, 'ExperimentSuggestionEndReached');
    assert.equal((await trials('small')).length, 3);
  });

  it('lowering parallelTrialCount removes the newest active trials', async () => {
    finish = () => 'hold';
    start();
    await env.client.create(experiment('resize', { maxTrialCount: 8, parallelTrialCount: 3 }));
    await env.waitFor('3 trials', async () => ((await trials('resize')).length === 3 ? true : undefined));
    const before = await trials('resize');
    const e = (await exp('resize'))!;
    await env.client.update({ ...e, spec: { ...e.spec, parallelTrialCount: 1 } });
    await env.waitFor('1 trial left', async () => ((await trials('resize')).length === 1 ? true : undefined));
    const left = await trials('resize');
    const oldest = [...before].sort((a, b) => a.metadata.creationTimestamp.localeCompare(b.metadata.creationTimestamp) || a.metadata.name.localeCompare(b.metadata.name))[0];
    assert.equal(left[0]?.metadata.creationTimestamp, oldest?.metadata.creationTimestamp);
  });

  it('after the controllers restart mid-experiment, makes no trial twice and no more than maxTrialCount', async () => {
    let seen = 0;
    finish = () => (++seen % 2 ? 'succeed' : 'hold');
    const first = start();
    await env.client.create(experiment('crash', { maxTrialCount: 6, parallelTrialCount: 3 }));
    await env.waitFor('some trials', async () => ((await trials('crash')).length >= 3 ? true : undefined));
    await first.stop();
    managers.splice(managers.indexOf(first), 1);
    // the held trials finish while nothing runs
    for (const t of await trials('crash')) {
      if (isTrue(t.status?.conditions, 'Running')) await env.client.updateStatus({ ...t, status: { conditions: [{ type: 'Succeeded', status: 'True', reason: 'TrialSucceeded' }], observation: { metrics: [{ name: 'loss', latest: '0.5', min: '0.5', max: '0.5' }] } } });
    }
    finish = () => 'succeed';
    start();
    const e = await ended('crash');
    const ts = await trials('crash');
    assert.equal(ts.length, 6);
    assert.equal(new Set(ts.map((t) => t.spec.parameterAssignments?.[0]?.value)).size, 6);
    const sug = await env.client.find<Suggestion>(Kinds.Suggestion, { namespace: 'default', name: 'crash' });
    assert.equal(sug?.status?.suggestions?.length, 6);
    assert.equal(e.status?.conditions?.at(-1)?.reason, 'ExperimentMaxTrialsReached');
  });

  it('reads a trial template from a ConfigMap, and waits for it when it is not there yet', async () => {
    start();
    const e = experiment('from-cm', { maxTrialCount: 2 });
    e.spec.trialTemplate = { ...e.spec.trialTemplate, trialSpec: undefined, configMap: { configMapName: 'trial-templates', configMapNamespace: 'default', templatePath: 'job.yaml' } };
    delete e.spec.trialTemplate.trialSpec;
    e.spec.trialTemplate.successCondition = 'status.conditions.#(type=="Complete")#|#(status=="True")#';
    e.spec.trialTemplate.failureCondition = 'status.conditions.#(type=="Failed")#|#(status=="True")#';
    await env.client.create(e);
    await env.waitFor('the missing template told', async () => env.recorder.reasons().includes('TrialTemplateNotFound') || undefined);
    assert.equal((await trials('from-cm')).length, 0);
    const text = 'apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: main\n          image: python\n          args: ["--lr=${trialParameters.learningRate}"]\n';
    await env.client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'trial-templates', namespace: 'default' }, data: { 'job.yaml': text } });
    const done = await ended('from-cm');
    assert.equal(done.status?.trialsSucceeded, 2);
    for (const t of await trials('from-cm')) {
      assert.deepEqual(t.spec.runSpec?.spec.template.spec.containers[0].args, [`--lr=${t.spec.parameterAssignments?.[0]?.value}`]);
    }
  });

  it('restarts a LongRunning experiment when maxTrialCount is raised', async () => {
    start();
    await env.client.create(experiment('again', { maxTrialCount: 2, resumePolicy: 'LongRunning' }));
    const done = await ended('again');
    await env.client.update({ ...done, spec: { ...done.spec, maxTrialCount: 4 } });
    await env.waitFor('4 trials and the end again', async () => {
      const e = await exp('again');
      return (await trials('again')).length === 4 && isTrue(e?.status?.conditions, 'Succeeded') && e?.status?.trialsSucceeded === 4 ? e : undefined;
    });
    const e = (await exp('again'))!;
    assert.equal(e.status?.conditions?.at(-1)?.reason, 'ExperimentMaxTrialsReached');
  });
});
