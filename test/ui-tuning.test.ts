// The tuning pages in real Chromium against a real server and its tuning controllers: an Experiment
// whose Suggestion holds five known assignments, so its trials (real Jobs printing their metrics) end
// as planned: two succeed, one is stopped early by its rule, one fails, one keeps running. The list
// with the best objective, the trials best-first with the early-stopped one marked, a point per
// trial in the objective chart, parallel coordinates and the Pareto front, a failed search saying
// why, a trial's metric curve, job and log, and "New experiment" showing the server's refusal on the
// field's line.
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

// each trial's course, by its learning rate: the losses it prints (one a second for the one stopped
// early), its accuracy; 0.002 diverges and exits 3; 0.02 keeps running after its last value
const payload = `import sys, time
lr, m, opt = "\${trialParameters.lr}", "\${trialParameters.momentum}", "\${trialParameters.optimizer}"
plans = {"0.01": ([0.9, 0.5, 0.3], 0.88), "0.09": ([0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6], 0.6), "0.03": ([0.8, 0.5, 0.3, 0.2, 0.12], 0.85), "0.02": ([0.7, 0.4], 0.95)}
if lr not in plans:
    print("diverged", flush=True)
    sys.exit(3)
losses, acc = plans[lr]
for i, v in enumerate(losses):
    print(f"epoch {i + 1}: loss={v} accuracy={acc - 0.1 + 0.1 * (i + 1) / len(losses):.3f}", flush=True)
    time.sleep(1.0 if lr == "0.09" else 0.05)
if lr == "0.02":
    time.sleep(600)
`;

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
      // the jobs stay, so a trial's page shows its Pod's log
      retain: true,
      primaryContainerName: 'training-container',
      trialParameters: [
        { name: 'lr', reference: 'lr' },
        { name: 'momentum', reference: 'momentum' },
        { name: 'optimizer', reference: 'optimizer' },
      ],
      trialSpec: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'training-container', image: 'python:3.11', command: ['python3', '-u', '-c', payload] }] } } },
      },
    },
  },
};

interface TrialCase {
  suffix: string;
  lr: string;
  optimizer: string;
  rules?: { name: string; value: string; comparison: string; startStep?: number }[];
}

// c is best (loss 0.12); b's rule stops it at its second value; d fails; e still runs
const cases: TrialCase[] = [
  { suffix: 'a', lr: '0.01', optimizer: 'sgd' },
  { suffix: 'b', lr: '0.09', optimizer: 'adam', rules: [{ name: 'loss', value: '0.5', comparison: 'greater', startStep: 2 }] },
  { suffix: 'c', lr: '0.03', optimizer: 'adam' },
  { suffix: 'd', lr: '0.002', optimizer: 'sgd' },
  { suffix: 'e', lr: '0.02', optimizer: 'sgd' },
];
const trialName = (c: TrialCase): string => `${EXP}-${c.suffix}`;
const assignments = (c: TrialCase) => [
  { name: 'lr', value: c.lr },
  { name: 'momentum', value: '0.7' },
  { name: 'optimizer', value: c.optimizer },
];
const STUCK_NS = 'tuning-stuck';
const STUCK_WHY = 'random: the search space has no more distinct assignments to give';
const cond = (type: string, status: string, reason: string, message = '') => ({ type, status, reason, message, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), lastUpdateTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') });

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
    // The Suggestion holds the five assignments, named as Katib names its trials (b with its
    // early-stopping rule); the Experiment controller makes a Trial of each as parallelTrialCount
    // allows, and the Trial controller runs each one's Job and reads its metrics from the log.
    await s.create(`${API}/suggestions`, {
      apiVersion: 'kubeflow.org/v1beta1',
      kind: 'Suggestion',
      metadata: { name: EXP, namespace: 'default', labels: { [LABEL]: EXP } },
      spec: { algorithm: experiment.spec.algorithm, earlyStopping: experiment.spec.earlyStopping, requests: cases.length, resumePolicy: 'Never' },
    });
    await writeStatus(`${API}/suggestions/${EXP}`, (cur) => ({
      ...cur.status,
      suggestionCount: cases.length,
      suggestions: cases.map((c) => ({ name: trialName(c), parameterAssignments: assignments(c), ...(c.rules ? { earlyStoppingRules: c.rules } : {}) })),
    }));
    await s.create(`${API}/experiments`, experiment);
    await s.until(
      'the trials to end as planned',
      async () => {
        const e = await s.get(`${API}/experiments/${EXP}`);
        const st = e.status ?? {};
        return st.trials === 5 && st.trialsSucceeded === 2 && st.trialsFailed === 1 && st.trialsEarlyStopped === 1 && st.trialsRunning === 1 && st.currentOptimalTrial?.bestTrialName === `${EXP}-c`;
      },
      120_000,
    );
    // a second experiment, in its own namespace, whose search failed: its Suggestion says why
    await s.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: STUCK_NS } });
    const idle = { ...experiment.spec.trialTemplate, retain: false, trialSpec: { ...experiment.spec.trialTemplate.trialSpec, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'training-container', image: 'python:3.11', command: ['sh', '-c', 'echo ${trialParameters.lr} ${trialParameters.momentum} ${trialParameters.optimizer}; sleep 600'] }] } } } } };
    await s.create(`/apis/kubeflow.org/v1beta1/namespaces/${STUCK_NS}/experiments`, { ...experiment, metadata: { name: 'stuck', namespace: STUCK_NS }, spec: { ...experiment.spec, trialTemplate: idle } });
    const stuck = `/apis/kubeflow.org/v1beta1/namespaces/${STUCK_NS}/suggestions/stuck`;
    await s.until('the experiment controller to make the Suggestion', async () => (await s.req('GET', stuck)).status === 200);
    await writeStatus(stuck, (cur) => ({
      ...cur.status,
      conditions: [...(cur.status?.conditions ?? []).filter((c: { type: string }) => c.type !== 'Running' && c.type !== 'Failed'), cond('Running', 'False', 'SuggestionFailed'), cond('Failed', 'True', 'AlgorithmFailed', STUCK_WHY)],
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
    // by loss's min: c 0.12, a 0.30, b (stopped at 0.9 or so), then d (failed) and e (running) without a value, in the order they were made
    assert.deepEqual(names, [`${EXP}-c`, `${EXP}-a`, `${EXP}-b`, `${EXP}-d`, `${EXP}-e`]);
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
    // a, b and c reported loss; d failed before it printed any and e has not ended
    assert.equal(await objective.getAttribute('data-points'), '3');
    // uPlot's legend: one entry per state drawn, and the best-so-far line
    const legend = await objective.locator('.u-legend').innerText();
    for (const s of ['Succeeded', 'EarlyStopped', 'best so far']) assert.match(legend, new RegExp(s));
    const parallel = ui.page.getByRole('img', { name: /parallel coordinates of lr, momentum, optimizer, loss/ });
    await parallel.locator('canvas').waitFor();
    assert.equal(await parallel.getAttribute('data-lines'), '5');
    const pareto = ui.page.getByRole('img', { name: 'loss against accuracy with the Pareto front' });
    await pareto.locator('canvas').waitFor();
    assert.equal(await pareto.getAttribute('data-points'), '3');
    // the front the experiment controller found: the trials no other beats on both loss and accuracy
    const front = (await s.get(`${API}/experiments/${EXP}`)).status.paretoFront ?? [];
    assert.ok(front.length > 0);
    assert.equal(await pareto.getAttribute('data-front'), String(front.length));
    await ui.page.getByRole('button', { name: 'Completion time' }).click();
    await ui.page.waitForURL(/x=time/);
    // the same three, by when each ended
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
    assert.match(await ui.page.getByRole('table', { name: 'observation' }).innerText(), /loss\s+0\.12\s+0\.8\s+0\.12/);
    const job = ui.page.getByRole('link', { name: `Job ${EXP}-c` });
    assert.equal(await job.getAttribute('href'), `/ui/default/jobs/${EXP}-c`);
    const curve = ui.page.getByRole('img', { name: /metrics loss, accuracy over (time|steps)/ });
    await curve.waitFor();
    assert.equal(await curve.getAttribute('data-points'), '10');
    await curve.scrollIntoViewIfNeeded();
    await ui.shot('tuning-trial-metrics');
    await dark.open(`/ui/default/trials/${EXP}-c`);
    await dark.page.getByRole('img', { name: /metrics loss, accuracy over (time|steps)/ }).scrollIntoViewIfNeeded();
    await dark.shot('tuning-trial-metrics-dark');
    await ui.page.getByRole('tab', { name: 'Logs' }).click();
    await ui.page.getByText(/epoch 5: loss=0\.12/).waitFor();
    await ui.page.getByText(/epoch 5: loss=0\.12/).scrollIntoViewIfNeeded();
    await ui.shot('tuning-trial-log');
    // the early-stopped trial is marked on its own page too
    await ui.open(`/ui/default/trials/${EXP}-b`);
    await ui.page.locator('.tn-why .tn-earlystopped', { hasText: 'EarlyStopped' }).waitFor();
    assert.match(await ui.page.locator('.tn-why').innerText(), /TrialEarlyStopped/);
    assert.match(await ui.page.locator('.tn-summary').innerText(), /stop when loss > 0\.5 from step 2/);
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
    await ui.page.getByRole('heading', { level: 1, name: /random-bowl/ }).waitFor();
    const created = await s.get(`${API}/experiments/random-bowl`);
    assert.equal(created.spec.algorithm.algorithmName, 'random');
  });

  it('logged no errors in the browser', () => {
    assert.deepEqual(ui.errors.filter((e) => !/Failed to load resource/.test(e)), []);
    assert.deepEqual(dark.errors.filter((e) => !/Failed to load resource/.test(e)), []);
  });
});
