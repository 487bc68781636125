import { describe, expect, it } from 'vitest';
import type { Condition, Trial, TuningExperiment as Experiment } from '../../api/types';
import {
  bestSoFar,
  bestValue,
  experimentState,
  fmt,
  lastCondition,
  metricValue,
  objectiveChart,
  parallelLines,
  parameterAxes,
  paretoData,
  rankTrials,
  spaceText,
  strategyOf,
  trialObjective,
  trialPods,
  trialState,
  metricCurves,
} from './view';

const cond = (type: string, status = 'True', at = '2026-01-01T00:00:00Z'): Condition => ({ type, status, reason: `Trial${type}`, message: '', lastTransitionTime: at, lastUpdateTime: at }) as Condition;

// hp-tuning/random.yaml from Katib's examples, with a categorical and a log-uniform parameter added
function experiment(over: Partial<Experiment['spec']> = {}, status: Experiment['status'] = {}): Experiment {
  return {
    apiVersion: 'kubeflow.org/v1beta1',
    kind: 'Experiment',
    metadata: { name: 'random', namespace: 'kubeflow' },
    spec: {
      objective: { type: 'minimize', goal: 0.001, objectiveMetricName: 'loss', additionalMetricNames: ['accuracy'] },
      algorithm: { algorithmName: 'random' },
      parameters: [
        { name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.001', max: '0.1', distribution: 'logUniform' } },
        { name: 'momentum', parameterType: 'double', feasibleSpace: { min: '0.5', max: '0.9' } },
        { name: 'optimizer', parameterType: 'categorical', feasibleSpace: { list: ['sgd', 'adam', 'ftrl'] } },
        { name: 'layers', parameterType: 'discrete', feasibleSpace: { list: ['4', '1', '2'] } },
      ],
      ...over,
    },
    status,
  };
}

let seq = 0;
function trial(name: string, opts: { loss?: Partial<Record<'min' | 'max' | 'latest', string>>; acc?: string; conds?: string[]; start?: string; end?: string; lr?: string; opt?: string } = {}): Trial {
  seq++;
  const metrics = [
    ...(opts.loss ? [{ name: 'loss', min: opts.loss.min ?? opts.loss.latest ?? 'unavailable', max: opts.loss.max ?? opts.loss.latest ?? 'unavailable', latest: opts.loss.latest ?? 'unavailable' }] : []),
    ...(opts.acc ? [{ name: 'accuracy', min: opts.acc, max: opts.acc, latest: opts.acc }] : []),
  ];
  return {
    apiVersion: 'kubeflow.org/v1beta1',
    kind: 'Trial',
    metadata: { name, namespace: 'kubeflow', creationTimestamp: `2026-01-01T00:00:${String(seq).padStart(2, '0')}Z` },
    spec: {
      parameterAssignments: [
        { name: 'lr', value: opts.lr ?? '0.01' },
        { name: 'momentum', value: '0.7' },
        { name: 'optimizer', value: opts.opt ?? 'adam' },
        { name: 'layers', value: '2' },
      ],
    },
    status: {
      conditions: (opts.conds ?? ['Created', 'Running']).map((c) => cond(c)),
      ...(metrics.length ? { observation: { metrics } } : {}),
      ...(opts.start ? { startTime: opts.start } : {}),
      ...(opts.end ? { completionTime: opts.end } : {}),
    },
  };
}

describe('tuning view: states', () => {
  it('an experiment shows its strongest true condition; Katib columns its last one', () => {
    const e = experiment({}, { conditions: [cond('Created'), cond('Running', 'False'), cond('Succeeded')] });
    expect(experimentState(e)).toBe('Succeeded');
    expect(lastCondition(e)?.type).toBe('Succeeded');
    expect(experimentState(experiment({}, { conditions: [cond('Created'), cond('Running')] }))).toBe('Running');
    expect(experimentState(experiment({}, {}))).toBe('Pending');
  });

  it('an early-stopped trial is EarlyStopped even with Succeeded true; a trial without conditions is Pending', () => {
    expect(trialState(trial('a', { conds: ['Created', 'Succeeded', 'EarlyStopped'] }))).toBe('EarlyStopped');
    expect(trialState(trial('b', { conds: ['Created', 'Running', 'Failed'] }))).toBe('Failed');
    expect(trialState(trial('c', { conds: ['Created', 'Succeeded'] }))).toBe('Succeeded');
    expect(trialState(trial('d', { conds: [] }))).toBe('Pending');
  });
});

describe('tuning view: metric strategies', () => {
  it('defaults by the objective type, as Katib defaults them; an explicit strategy wins', () => {
    const e = experiment();
    expect(strategyOf(e, 'loss')).toBe('min');
    expect(strategyOf(e, 'accuracy')).toBe('min');
    const m = experiment({ objective: { type: 'maximize', objectiveMetricName: 'accuracy', metricStrategies: [{ name: 'accuracy', value: 'latest' }] } });
    expect(strategyOf(m, 'accuracy')).toBe('latest');
    expect(strategyOf(m, 'loss')).toBe('max');
  });

  it('reads the value of the strategy and falls back to latest when it is unavailable', () => {
    expect(metricValue({ name: 'loss', min: '0.1', max: '0.9', latest: '0.3' }, 'min')).toBe(0.1);
    expect(metricValue({ name: 'loss', min: '0.1', max: '0.9', latest: '0.3' }, 'max')).toBe(0.9);
    expect(metricValue({ name: 'loss', min: 'unavailable', max: 'unavailable', latest: '0.3' }, 'min')).toBe(0.3);
    expect(metricValue({ name: 'loss', min: 'unavailable', max: 'unavailable', latest: 'unavailable' }, 'min')).toBeUndefined();
  });
});

describe('tuning view: trials best-first', () => {
  it('minimize: lowest first by the min strategy, trials without a value last in creation order', () => {
    seq = 0;
    const trials = [
      trial('t-run', { conds: ['Created', 'Running'] }),
      trial('t-a', { loss: { min: '0.30', latest: '0.50' }, conds: ['Created', 'Succeeded'], start: '2026-01-01T00:01:00Z', end: '2026-01-01T00:03:30Z' }),
      trial('t-b', { loss: { min: '0.20', latest: '0.90' }, conds: ['Created', 'Succeeded', 'EarlyStopped'] }),
      trial('t-fail', { conds: ['Created', 'Failed'] }),
      trial('t-c', { loss: { min: '0.25', latest: '0.25' }, conds: ['Created', 'Succeeded'] }),
    ];
    const rows = rankTrials(experiment(), trials);
    expect(rows.map((r) => r.name)).toEqual(['t-b', 't-c', 't-a', 't-run', 't-fail']);
    expect(rows.map((r) => r.index)).toEqual([3, 5, 2, 1, 4]);
    expect(rows[0]?.best).toBe(true);
    expect(rows.filter((r) => r.best)).toHaveLength(1);
    expect(rows[0]?.state).toBe('EarlyStopped');
    expect(rows.find((r) => r.name === 't-a')?.durationMs).toBe(150_000);
    expect(rows.find((r) => r.name === 't-a')?.params).toEqual({ lr: '0.01', momentum: '0.7', optimizer: 'adam', layers: '2' });
  });

  it('maximize by latest puts the highest latest first', () => {
    seq = 0;
    const e = experiment({ objective: { type: 'maximize', objectiveMetricName: 'loss', metricStrategies: [{ name: 'loss', value: 'latest' }] } });
    const rows = rankTrials(e, [trial('x', { loss: { min: '0.1', max: '0.99', latest: '0.5' } }), trial('y', { loss: { min: '0.1', max: '0.6', latest: '0.6' } })]);
    expect(rows.map((r) => [r.name, r.value])).toEqual([
      ['y', 0.6],
      ['x', 0.5],
    ]);
  });

  it('the experiment\'s currentOptimalTrial leads when it names a trial', () => {
    seq = 0;
    const e = experiment({}, { currentOptimalTrial: { bestTrialName: 'q' } });
    const rows = rankTrials(e, [trial('p', { loss: { latest: '0.2' } }), trial('q', { loss: { latest: '0.2' } })]);
    expect(rows.map((r) => [r.name, r.best])).toEqual([
      ['q', true],
      ['p', false],
    ]);
  });
});

describe('tuning view: objective over trials', () => {
  it('running best follows the direction', () => {
    expect(bestSoFar([0.5, undefined, 0.7, 0.3, 0.4], 'minimize')).toEqual([0.5, 0.5, 0.5, 0.3, 0.3]);
    expect(bestSoFar([undefined, 2, 1, 3], 'maximize')).toEqual([undefined, 2, 2, 3]);
  });

  it('a point per trial with a value, at its index, grouped by state, with the best-so-far line', () => {
    seq = 0;
    const rows = rankTrials(experiment(), [
      trial('a', { loss: { latest: '0.5' }, conds: ['Created', 'Succeeded'] }),
      trial('b', { conds: ['Created', 'Failed'] }),
      trial('c', { loss: { latest: '0.3' }, conds: ['Created', 'Succeeded', 'EarlyStopped'] }),
      trial('d', { loss: { latest: '0.4' }, conds: ['Created', 'Succeeded'] }),
    ]);
    const c = objectiveChart(rows, 'minimize', 'index');
    expect(c.points).toBe(3);
    expect(c.x).toEqual([1, 3, 4]);
    expect(c.bestLine).toEqual([0.5, 0.3, 0.3]);
    expect(c.groups.map((g) => [g.state, g.values])).toEqual([
      ['Succeeded', [0.5, null, 0.4]],
      ['EarlyStopped', [null, 0.3, null]],
    ]);
    expect(c.groups.find((g) => g.state === 'EarlyStopped')?.color).toBe('--wait');
  });

  it('by completion time: trials in the order their values became final', () => {
    seq = 0;
    const rows = rankTrials(experiment(), [
      trial('a', { loss: { latest: '0.5' }, conds: ['Created', 'Succeeded'], end: '2026-01-01T00:10:00Z' }),
      trial('b', { loss: { latest: '0.2' }, conds: ['Created', 'Succeeded'], end: '2026-01-01T00:05:00Z' }),
    ]);
    const c = objectiveChart(rows, 'minimize', 'time');
    expect(c.x).toEqual([Date.parse('2026-01-01T00:05:00Z') / 1000, Date.parse('2026-01-01T00:10:00Z') / 1000]);
    expect(c.bestLine).toEqual([0.2, 0.2]);
  });
});

describe('tuning view: parallel coordinates', () => {
  it('an axis per parameter (log, linear, categorical, discrete sorted) and the objective last', () => {
    seq = 0;
    const e = experiment();
    const rows = rankTrials(e, [trial('a', { loss: { latest: '0.5' }, lr: '0.002', opt: 'sgd' }), trial('b', { loss: { latest: '0.25' }, lr: '0.05' })]);
    const axes = parameterAxes(e, rows);
    expect(axes).toEqual([
      { name: 'lr', kind: 'log', min: 0.001, max: 0.1 },
      { name: 'momentum', kind: 'value', min: 0.5, max: 0.9 },
      { name: 'optimizer', kind: 'category', categories: ['sgd', 'adam', 'ftrl'] },
      { name: 'layers', kind: 'category', categories: ['1', '2', '4'] },
      { name: 'loss', kind: 'value', objective: true, min: 0.25, max: 0.5 },
    ]);
    const lines = parallelLines(axes, rows);
    expect(lines.map((l) => [l.name, l.best, l.values])).toEqual([
      ['b', true, [0.05, 0.7, 'adam', '2', 0.25]],
      ['a', false, [0.002, 0.7, 'sgd', '2', 0.5]],
    ]);
  });

  it('a log distribution over a space reaching zero draws linear', () => {
    const e = experiment({ parameters: [{ name: 'w', parameterType: 'double', feasibleSpace: { min: '0', max: '1', distribution: 'logUniform' } }], objective: {} });
    expect(parameterAxes(e)).toEqual([{ name: 'w', kind: 'value', min: 0, max: 1 }]);
  });
});

describe('tuning view: multi-objective', () => {
  it('the two first objectives against each other, the status front marked and in x order', () => {
    seq = 0;
    const e = experiment(
      { objective: { type: 'minimize', objectiveMetricName: 'loss', additionalMetricNames: ['accuracy'], additionalObjectives: [{ name: 'accuracy', type: 'maximize' }] } },
      { paretoFront: [{ bestTrialName: 'c' }, { bestTrialName: 'a' }] },
    );
    const rows = rankTrials(e, [trial('a', { loss: { latest: '0.5' }, acc: '0.9' }), trial('b', { loss: { latest: '0.6' }, acc: '0.8' }), trial('c', { loss: { latest: '0.2' }, acc: '0.7' }), trial('d', { acc: '0.99' })]);
    expect(strategyOf(e, 'accuracy')).toBe('max');
    const p = paretoData(e, rows);
    expect(p?.x).toEqual({ name: 'loss', type: 'minimize' });
    expect(p?.y).toEqual({ name: 'accuracy', type: 'maximize' });
    expect(p?.points.map((q) => [q.name, q.front]).sort()).toEqual([
      ['a', true],
      ['b', false],
      ['c', true],
    ]);
    expect(p?.front.map((q) => q.name)).toEqual(['c', 'a']);
    expect(paretoData(experiment(), rows)).toBeUndefined();
  });
});

describe('tuning view: words', () => {
  it('feasible spaces, best values and numbers', () => {
    const e = experiment({}, { currentOptimalTrial: { bestTrialName: 'x', observation: { metrics: [{ name: 'loss', min: '0.125', max: '0.9', latest: '0.3' }] } } });
    expect(bestValue(e)).toBe(0.125);
    expect(spaceText(e.spec.parameters![0]!)).toBe('double in [0.001, 0.1], logUniform');
    expect(spaceText(e.spec.parameters![2]!)).toBe('categorical, one of sgd, adam, ftrl');
    expect(fmt(0.1234567)).toBe('0.123457');
    expect(fmt(0.00001)).toBe('1.000e-5');
    expect(fmt(undefined)).toBe('—');
  });
});

describe('tuning view: a trial\'s pods and metric log', () => {
  it('the Pods of the job named as the trial, the primary one first', () => {
    const t = trial('exp-abc');
    t.spec.primaryPodLabels = { 'training.kubeflow.org/job-role': 'master' };
    type P = { metadata: { name: string; labels: Record<string, string> } };
    const pods: P[] = [
      { metadata: { name: 'exp-abc-worker-0', labels: { 'training.kubeflow.org/job-name': 'exp-abc', 'training.kubeflow.org/job-role': 'worker' } } },
      { metadata: { name: 'exp-abc-master-0', labels: { 'training.kubeflow.org/job-name': 'exp-abc', 'training.kubeflow.org/job-role': 'master' } } },
      { metadata: { name: 'other-xyz', labels: { 'job-name': 'exp-abcd' } } },
    ];
    expect(trialPods<P>(t, pods).map((p) => p.metadata.name)).toEqual(['exp-abc-master-0', 'exp-abc-worker-0']);
    const j = trial('exp-j');
    expect(trialPods<P>(j, [{ metadata: { name: 'exp-j-7x', labels: { 'batch.kubernetes.io/job-name': 'exp-j' } } }, ...pods]).map((p) => p.metadata.name)).toEqual(['exp-j-7x']);
  });

  it('metric curves per name over time, non-numbers left out, the objective first', () => {
    const c = metricCurves(
      [
        { timeStamp: '2026-01-01T00:00:02Z', name: 'accuracy', value: '0.5' },
        { timeStamp: '2026-01-01T00:00:01Z', name: 'loss', value: '0.9' },
        { timeStamp: '2026-01-01T00:00:03Z', name: 'loss', value: 'unavailable' },
        { timeStamp: '2026-01-01T00:00:04Z', name: 'loss', value: '0.4' },
      ],
      ['loss'],
    );
    const t0 = Date.parse('2026-01-01T00:00:00Z') / 1000;
    expect(c.by).toBe('time');
    expect(c.x).toEqual([t0 + 1, t0 + 2, t0 + 4]);
    expect(c.series).toEqual([
      { name: 'loss', values: [0.9, null, 0.4] },
      { name: 'accuracy', values: [null, 0.5, null] },
    ]);
    expect(c.points).toBe(3);
  });

  it('by step when a metric\'s values share a timestamp (a log read at once)', () => {
    const at = '2026-01-01T00:00:05Z';
    const c = metricCurves([
      { timeStamp: at, name: 'loss', value: '0.9' },
      { timeStamp: at, name: 'accuracy', value: '0.5' },
      { timeStamp: at, name: 'loss', value: '0.6' },
      { timeStamp: at, name: 'loss', value: '0.3' },
      { timeStamp: at, name: 'accuracy', value: '0.7' },
    ]);
    expect(c.by).toBe('step');
    expect(c.x).toEqual([1, 2, 3]);
    expect(c.series).toEqual([
      { name: 'loss', values: [0.9, 0.6, 0.3] },
      { name: 'accuracy', values: [0.5, 0.7, null] },
    ]);
    expect(c.points).toBe(5);
  });

  it('a trial\'s objective by the strategy its own spec carries', () => {
    const t = trial('t', { loss: { min: '0.1', max: '0.8', latest: '0.3' } });
    t.spec.objective = { type: 'maximize', objectiveMetricName: 'loss' };
    expect(trialObjective(t)).toEqual({ name: 'loss', value: 0.8 });
    expect(trialObjective(trial('u'))).toEqual({});
  });
});
