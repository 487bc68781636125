// The tuning pages in real Chromium against a real server: a Katib Experiment with its Suggestion,
// Trials and an ObservationLog written as Katib's controllers write them (objects, then their status
// through the status subresource); the list with the best objective, the experiment's trials
// best-first with the early-stopped one marked, a point per trial in the objective chart, parallel
// coordinates and the Pareto front, why the Suggestion is stuck, a trial's metric curve, job and log,
// and "New experiment" showing the server's refusal on the field's line.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openUi, type Ui } from './browser.js';
import { TestServer } from './harness.js';

const API = '/apis/kubeflow.org/v1beta1/namespaces/default';
const EXP = 'mnist-random';
const LABEL = 'katib.kubeflow.org/experiment';

const objective = {
  type: 'minimize',
  goal: 0.01,
  objectiveMetricName: 'loss',
  additionalMetricNames: ['accuracy'],
  metricStrategies: [
    { name: 'loss', value: 'min' },
    { name: 'accuracy', value: 'max' },
  ],
  additionalObjectives: [{ name: 'accuracy', type: 'maximize' }],
};

const experiment = {
  apiVersion: 'kubeflow.org/v1beta1',
  kind: 'Experiment',
  metadata: { name: EXP, namespace: 'default' },
  spec: {
    objective,
    algorithm: { algorithmName: 'random', algorithmSettings: [{ name: 'random_state', value: '7' }] },
    earlyStopping: { algorithmName: 'medianstop', algorithmSettings: [{ name: 'min_trials_required', value: '2' }] },
    parallelTrialCount: 2,
    // a to d finished and e running fill it: the controller asks for no sixth trial
    maxTrialCount: 5,
    maxFailedTrialCount: 3,
    parameters: [
      { name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.001', max: '0.1', distribution: 'logUniform' } },
      { name: 'momentum', parameterType: 'double', feasibleSpace: { min: '0.5', max: '0.9' } },
      { name: 'optimizer', parameterType: 'categorical', feasibleSpace: { list: ['sgd', 'adam'] } },
    ],
    trialTemplate: {
      primaryContainerName: 'training-container',
      trialParameters: [
        { name: 'lr', reference: 'lr' },
        { name: 'momentum', reference: 'momentum' },
        { name: 'optimizer', reference: 'optimizer' },
      ],
      trialSpec: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'training-container', image: 'python:3.11', command: ['python3', '-c', 'print("lr=${trialParameters.lr} momentum=${trialParameters.momentum} optimizer=${trialParameters.optimizer}")'] }] } } },
      },
    },
  },
};

// the trials ran in the few minutes before the test, so durations and ages read as they would live
const base = Math.floor(Date.now() / 1000) - 300;
const at = (s: number): string => new Date((base + s) * 1000).toISOString().replace('.000', '');
const cond = (type: string, status: string, reason: string, message = '', t = 0) => ({ type, status, reason, message, lastTransitionTime: at(t), lastUpdateTime: at(t) });
const metric = (name: string, min: string, max: string, latest: string) => ({ name, min, max, latest });

interface TrialCase {
  suffix: string;
  lr: string;
  optimizer: string;
  conditions: ReturnType<typeof cond>[];
  metrics?: ReturnType<typeof metric>[];
  start: number;
  end?: number;
}

// what the trials did: c is best (loss min 0.12), b was stopped early, d failed before reporting, e still runs
const cases: TrialCase[] = [
  { suffix: 'a', lr: '0.01', optimizer: 'sgd', start: 10, end: 70, conditions: [cond('Created', 'True', 'TrialCreated', '', 5), cond('Running', 'False', 'TrialSucceeded', '', 70), cond('Succeeded', 'True', 'TrialSucceeded', 'Trial has succeeded', 70)], metrics: [metric('loss', '0.30', '0.90', '0.30'), metric('accuracy', '0.70', '0.88', '0.88')] },
  { suffix: 'b', lr: '0.09', optimizer: 'adam', start: 12, end: 40, conditions: [cond('Created', 'True', 'TrialCreated', '', 6), cond('Running', 'False', 'TrialEarlyStopped', '', 40), cond('EarlyStopped', 'True', 'TrialEarlyStopped', 'Trial is early stopped: loss did not beat the median', 40)], metrics: [metric('loss', '0.50', '0.95', '0.50'), metric('accuracy', '0.60', '0.80', '0.80')] },
  { suffix: 'c', lr: '0.03', optimizer: 'adam', start: 72, end: 130, conditions: [cond('Created', 'True', 'TrialCreated', '', 71), cond('Running', 'False', 'TrialSucceeded', '', 130), cond('Succeeded', 'True', 'TrialSucceeded', 'Trial has succeeded', 130)], metrics: [metric('loss', '0.12', '0.80', '0.12'), metric('accuracy', '0.75', '0.85', '0.85')] },
  { suffix: 'd', lr: '0.002', optimizer: 'sgd', start: 74, end: 80, conditions: [cond('Created', 'True', 'TrialCreated', '', 73), cond('Running', 'False', 'TrialFailed', '', 80), cond('Failed', 'True', 'TrialFailed', 'Trial has failed. Job reason: BackoffLimitExceeded', 80)] },
  { suffix: 'e', lr: '0.02', optimizer: 'sgd', start: 132, conditions: [cond('Created', 'True', 'TrialCreated', '', 131), cond('Running', 'True', 'TrialRunning', 'Trial is running', 132)], metrics: [metric('loss', '0.40', '0.70', '0.40'), metric('accuracy', '0.50', '0.95', '0.95')] },
];
const trialName = (c: TrialCase): string => `${EXP}-${c.suffix}`;
const assignments = (c: TrialCase) => [
  { name: 'lr', value: c.lr },
  { name: 'momentum', value: '0.7' },
  { name: 'optimizer', value: c.optimizer },
];
const STUCK_NS = 'tuning-stuck';
const STUCK_WHY = 'random: the search space has no more distinct assignments to give';

describe('the tuning pages', () => {
  let s: TestServer;
  let ui: Ui;
  let dark: Ui;

  /** writes an object's status as its controller would, again on a conflict with a controller's own write */
  async function writeStatus(path: string, status: (cur: any) => unknown): Promise<void> {
    for (let i = 0; ; i++) {
      const cur = await s.get(path);
      const r = await s.req('PUT', `${path}/status`, { ...cur, status: status(cur) });
      if (r.status === 200) return;
      if (r.status !== 409 || i > 20) assert.fail(`PUT ${path}/status: ${r.status} ${r.text}`);
    }
  }

  before(async () => {
    s = await TestServer.start();
    ui = await openUi(s);
    dark = await openUi(s, { dark: true });
    // The Suggestion holds the five assignments, named as Katib names its trials; the Experiment
    // controller makes a Trial of each as parallelTrialCount allows, and the test finishes each one
    // as the Trial controller would (conditions and observation through the status subresource).
    await s.create(`${API}/suggestions`, {
      apiVersion: 'kubeflow.org/v1beta1',
      kind: 'Suggestion',
      metadata: { name: EXP, namespace: 'default', labels: { [LABEL]: EXP } },
      spec: { algorithm: experiment.spec.algorithm, earlyStopping: experiment.spec.earlyStopping, requests: cases.length, resumePolicy: 'Never' },
    });
    await writeStatus(`${API}/suggestions/${EXP}`, (cur) => ({
      ...cur.status,
      suggestionCount: cases.length,
      suggestions: cases.map((c) => ({ name: trialName(c), parameterAssignments: assignments(c) })),
    }));
    await s.create(`${API}/experiments`, experiment);
    for (const c of cases) {
      const path = `${API}/trials/${trialName(c)}`;
      await s.until(`the experiment controller to make ${trialName(c)}`, async () => (await s.req('GET', path)).status === 200);
      await writeStatus(path, () => ({
        startTime: at(c.start),
        ...(c.end ? { completionTime: at(c.end) } : {}),
        conditions: c.conditions,
        ...(c.metrics ? { observation: { metrics: c.metrics } } : {}),
      }));
    }
    await s.until('the experiment to count the five trials', async () => {
      const e = await s.get(`${API}/experiments/${EXP}`);
      return e.status?.trials === 5 && e.status?.trialsRunning === 1 && e.status?.currentOptimalTrial?.bestTrialName === `${EXP}-c`;
    });
    // the metric values trial c reported, as the collector keeps them
    const r = await s.req('POST', '/apis/tuning.skiff.dev/v1/namespaces/default/observationlogs', {
      apiVersion: 'tuning.skiff.dev/v1',
      kind: 'ObservationLog',
      metadata: { name: `${EXP}-c`, namespace: 'default' },
      spec: {
        trialName: `${EXP}-c`,
        metricLogs: [0.8, 0.5, 0.3, 0.2, 0.12].flatMap((v, i) => [
          { timeStamp: at(80 + i * 10), name: 'loss', value: String(v) },
          { timeStamp: at(80 + i * 10), name: 'accuracy', value: String(0.75 + i * 0.025) },
        ]),
      },
    });
    assert.equal(r.status, 201, r.text);
    // trial c's job, so its page links to it and shows its Pod's log
    await s.create('/apis/batch/v1/namespaces/default/jobs', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: `${EXP}-c`, namespace: 'default' },
      spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'training-container', image: 'python:3.11', command: ['python3', '-c', 'print("epoch 1 loss=0.30"); print("epoch 2 loss=0.12")'] }] } } },
    });
    // a second experiment, in its own namespace, whose search failed: its Suggestion says why
    await s.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: STUCK_NS } });
    await s.create(`/apis/kubeflow.org/v1beta1/namespaces/${STUCK_NS}/experiments`, { ...experiment, metadata: { name: 'stuck', namespace: STUCK_NS } });
    const stuck = `/apis/kubeflow.org/v1beta1/namespaces/${STUCK_NS}/suggestions/stuck`;
    await s.until('the experiment controller to make the Suggestion', async () => (await s.req('GET', stuck)).status === 200);
    await writeStatus(stuck, (cur) => ({
      ...cur.status,
      conditions: [...(cur.status?.conditions ?? []).filter((c: { type: string }) => c.type !== 'Running' && c.type !== 'Failed'), cond('Running', 'False', 'SuggestionFailed', '', 9), cond('Failed', 'True', 'AlgorithmFailed', STUCK_WHY, 9)],
    }));
  });
  after(async () => {
    await ui?.close();
    await dark?.close();
    await s?.cleanup();
  });

  it('lists Katib experiments under Tuning with their last condition, counts, best objective and algorithm', async () => {
    await ui.open('/ui/default/experiments.kubeflow.org');
    await ui.page.getByRole('heading', { name: 'Experiments' }).waitFor();
    const row = ui.page.getByRole('row').filter({ has: ui.page.getByRole('link', { name: EXP, exact: true }) });
    await row.waitFor();
    const text = await row.innerText();
    assert.match(text, /Running/);
    assert.match(text, /1 · 2 · 1/);
    assert.match(text, /loss 0\.12/);
    assert.match(text, /random/);
    // the navigation's Tuning section, and the link goes to Katib's experiment, not KFP's
    const nav = ui.page.locator('.navsection', { hasText: 'Tuning' });
    await nav.getByRole('link', { name: 'Experiments' }).waitFor();
    assert.equal(await nav.getByRole('link', { name: 'Experiments' }).getAttribute('href'), '/ui/default/experiments.kubeflow.org');
    assert.equal(await row.getByRole('link', { name: EXP, exact: true }).getAttribute('href'), `/ui/default/experiments.kubeflow.org/${EXP}`);
    await ui.shot('tuning-experiments');
    await dark.open('/ui/default/experiments.kubeflow.org');
    await dark.page.getByRole('link', { name: EXP, exact: true }).waitFor();
    await dark.shot('tuning-experiments-dark');
  });

  it('an experiment: the best trial first, trials best-first with the early-stopped one marked', async () => {
    await ui.open(`/ui/default/experiments.kubeflow.org/${EXP}`);
    const best = ui.page.getByRole('region', { name: 'best trial' });
    await best.getByRole('link', { name: `${EXP}-c` }).waitFor();
    assert.match(await best.innerText(), /lr = 0\.03/);
    assert.match(await best.innerText(), /loss = 0\.12/);
    const table = ui.page.getByRole('rowgroup', { name: 'trials' });
    await table.getByRole('link', { name: `${EXP}-e` }).waitFor();
    const names = await table.getByRole('row').evaluateAll((rows) => rows.map((r) => r.querySelector('a')?.textContent));
    // by loss's min: c 0.12, a 0.30, e 0.40 (still running), b 0.50 (stopped early), then d without a value
    assert.deepEqual(names, [`${EXP}-c`, `${EXP}-a`, `${EXP}-e`, `${EXP}-b`, `${EXP}-d`]);
    const stopped = table.getByRole('row').filter({ has: ui.page.getByRole('link', { name: `${EXP}-b` }) });
    assert.equal(await stopped.locator('.tn-earlystopped').innerText(), 'EarlyStopped');
    assert.match(await table.getByRole('row').first().innerText(), /best/);
    await ui.shot('tuning-experiment-trials');
    await dark.open(`/ui/default/experiments.kubeflow.org/${EXP}`);
    await dark.page.getByRole('rowgroup', { name: 'trials' }).getByRole('link', { name: `${EXP}-e` }).waitFor();
    await dark.shot('tuning-experiment-trials-dark');
    // a row opens its trial
    await table.getByRole('link', { name: `${EXP}-a` }).click();
    await ui.page.waitForURL(new RegExp(`/ui/default/trials/${EXP}-a$`));
  });

  it('charts: a point per trial with the best so far, parallel coordinates, the Pareto front', async () => {
    await ui.open(`/ui/default/experiments.kubeflow.org/${EXP}?tab=charts`);
    const objective = ui.page.getByRole('img', { name: 'loss of each trial and the best so far' });
    await objective.waitFor();
    assert.equal(await objective.getAttribute('data-points'), '4');
    // uPlot's legend: one entry per state drawn, and the best-so-far line
    const legend = await objective.locator('.u-legend').innerText();
    for (const s of ['Succeeded', 'EarlyStopped', 'Running', 'best so far']) assert.match(legend, new RegExp(s));
    const parallel = ui.page.getByRole('img', { name: /parallel coordinates of lr, momentum, optimizer, loss/ });
    await parallel.locator('canvas').waitFor();
    assert.equal(await parallel.getAttribute('data-lines'), '5');
    const pareto = ui.page.getByRole('img', { name: 'loss against accuracy with the Pareto front' });
    await pareto.locator('canvas').waitFor();
    assert.equal(await pareto.getAttribute('data-points'), '4');
    // the front the experiment controller found: the trials no other beats on both loss and accuracy
    const front = (await s.get(`${API}/experiments/${EXP}`)).status.paretoFront ?? [];
    assert.ok(front.length > 0);
    assert.equal(await pareto.getAttribute('data-front'), String(front.length));
    await ui.page.getByRole('button', { name: 'Completion time' }).click();
    await ui.page.waitForURL(/x=time/);
    // trial e has no completion time yet: three points by time
    assert.equal(await objective.getAttribute('data-points'), '3');
    await ui.page.getByRole('button', { name: 'Trial number' }).click();
    await ui.page.getByRole('region', { name: 'objective over trials' }).scrollIntoViewIfNeeded();
    await ui.shot('tuning-experiment-charts');
    await ui.page.getByRole('region', { name: 'parameters against the objective' }).scrollIntoViewIfNeeded();
    await ui.shot('tuning-experiment-charts-parallel');
    await pareto.scrollIntoViewIfNeeded();
    await ui.shot('tuning-experiment-charts-parallel-pareto');
    await dark.open(`/ui/default/experiments.kubeflow.org/${EXP}?tab=charts`);
    const darkPareto = dark.page.getByRole('img', { name: 'loss against accuracy with the Pareto front' });
    await darkPareto.locator('canvas').waitFor();
    await dark.page.getByRole('region', { name: 'objective over trials' }).scrollIntoViewIfNeeded();
    await dark.shot('tuning-experiment-charts-dark');
    await darkPareto.scrollIntoViewIfNeeded();
    await dark.shot('tuning-experiment-charts-parallel-pareto-dark');
  });

  it('a failed search: the experiment and its Suggestion tab say why', async () => {
    await ui.open(`/ui/${STUCK_NS}/experiments.kubeflow.org/stuck?tab=suggestion`);
    await ui.page.locator('.tabpanel .tn-why', { hasText: STUCK_WHY }).waitFor();
    assert.match(await ui.page.locator('.tabpanel').innerText(), /AlgorithmFailed/);
    // the experiment controller fails the experiment with the Suggestion's reason
    await ui.page.locator('h1 .badge', { hasText: 'Failed' }).waitFor();
    await ui.page.locator('.tn-summary .tn-why', { hasText: STUCK_WHY }).waitFor();
    await ui.shot('tuning-experiment-suggestion');
    await dark.open(`/ui/${STUCK_NS}/experiments.kubeflow.org/stuck?tab=suggestion`);
    await dark.page.locator('.tabpanel .tn-why', { hasText: STUCK_WHY }).waitFor();
    await dark.shot('tuning-experiment-suggestion-dark');
  });

  it('lists trials with their state, experiment, assignments and objective', async () => {
    await ui.open('/ui/default/trials');
    const row = ui.page.getByRole('row').filter({ has: ui.page.getByRole('link', { name: `${EXP}-c`, exact: true }) });
    await row.waitFor();
    assert.match(await row.innerText(), /Succeeded[\s\S]*mnist-random[\s\S]*lr = 0\.03 · momentum = 0\.7 · optimizer = adam[\s\S]*loss 0\.12/);
    assert.equal(await ui.page.getByRole('rowgroup', { name: 'trials' }).getByRole('row').count(), 5);
    await ui.shot('tuning-trials');
  });

  it('a trial: assignments, observation, the metric curve, its job and its Pod log', async () => {
    await ui.open(`/ui/default/trials/${EXP}-c`);
    await ui.page.getByRole('table', { name: 'observation' }).waitFor();
    assert.match(await ui.page.getByRole('table', { name: 'observation' }).innerText(), /loss\s+0\.12\s+0\.80\s+0\.12/);
    const job = ui.page.getByRole('link', { name: `Job ${EXP}-c` });
    assert.equal(await job.getAttribute('href'), `/ui/default/jobs/${EXP}-c`);
    const curve = ui.page.getByRole('img', { name: 'metrics loss, accuracy over time' });
    await curve.waitFor();
    assert.equal(await curve.getAttribute('data-points'), '10');
    await curve.scrollIntoViewIfNeeded();
    await ui.shot('tuning-trial-metrics');
    await dark.open(`/ui/default/trials/${EXP}-c`);
    await dark.page.getByRole('img', { name: 'metrics loss, accuracy over time' }).scrollIntoViewIfNeeded();
    await dark.shot('tuning-trial-metrics-dark');
    await ui.page.getByRole('tab', { name: 'Logs' }).click();
    await ui.page.getByText(/epoch 2 loss=0\.12/).waitFor();
    await ui.page.getByText(/epoch 2 loss=0\.12/).scrollIntoViewIfNeeded();
    await ui.shot('tuning-trial-log');
    // the early-stopped trial is marked on its own page too
    await ui.open(`/ui/default/trials/${EXP}-b`);
    await ui.page.locator('.tn-why .tn-earlystopped', { hasText: 'EarlyStopped' }).waitFor();
    assert.match(await ui.page.locator('.tn-why').innerText(), /loss did not beat the median/);
    await ui.shot('tuning-trial-earlystopped');
  });

  it('New experiment: the server\'s refusal on the field\'s line, then created and opened', async () => {
    await ui.open('/ui/default/experiments.kubeflow.org');
    await ui.page.getByRole('button', { name: 'New experiment' }).click();
    const form = ui.page.getByRole('region', { name: 'New experiment' });
    const area = form.getByRole('textbox', { name: 'Experiment YAML' });
    const text = await area.inputValue();
    assert.match(text, /kind: Experiment/);
    // parallelTrialCount must be positive (Katib's validation)
    const bad = text.replace('parallelTrialCount: 3', 'parallelTrialCount: 0');
    await area.fill(bad);
    await form.getByRole('button', { name: 'Create' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    const line = bad.split('\n').findIndex((l) => l.includes('parallelTrialCount')) + 1;
    assert.match(await alert.innerText(), new RegExp(`line ${line}`));
    assert.match(await alert.innerText(), /spec\.parallelTrialCount/);
    assert.equal(await form.locator(`.gutter [data-line="${line}"]`).getAttribute('class'), 'bad');
    await ui.shot('tuning-new-experiment-refused');
    await dark.open('/ui/default/experiments.kubeflow.org');
    await dark.page.getByRole('button', { name: 'New experiment' }).click();
    await dark.page.getByRole('textbox', { name: 'Experiment YAML' }).waitFor();
    await dark.shot('tuning-new-experiment-dark');
    await area.fill(text);
    await form.getByRole('button', { name: 'Create' }).click();
    await ui.page.waitForURL(/\/ui\/default\/experiments\.kubeflow\.org\/random-bowl$/);
    await ui.page.getByRole('heading', { name: /random-bowl/ }).waitFor();
    const created = await s.get(`${API}/experiments/random-bowl`);
    assert.equal(created.spec.algorithm.algorithmName, 'random');
  });

  it('logged no errors in the browser', () => {
    assert.deepEqual(ui.errors.filter((e) => !/Failed to load resource/.test(e)), []);
    assert.deepEqual(dark.errors.filter((e) => !/Failed to load resource/.test(e)), []);
  });
});
