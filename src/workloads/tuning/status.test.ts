// An Experiment's status from its trials: buckets by condition, the best numeric objective by its
// strategy, the Pareto front of several objectives, Katib's decision order; medianstop's rule.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ExperimentSpec, Trial } from '../../api/tuning.js';
import { medianStopRules } from './early-stopping.js';
import { bucketOf, metricValue, paretoFront, setKatibCondition, summarise, verdict } from './status.js';

const trial = (name: string, cond: string, metrics: Record<string, [string, string, string]> = {}): Trial => ({
  apiVersion: 'kubeflow.org/v1beta1', kind: 'Trial', metadata: { name, creationTimestamp: `2026-01-01T00:00:0${name.length % 10}Z` },
  spec: { parameterAssignments: [{ name: 'x', value: name }] },
  status: {
    conditions: [{ type: 'Created', status: 'True' }, ...(cond ? [{ type: cond, status: 'True' as const }] : [])],
    observation: { metrics: Object.entries(metrics).map(([n, [min, max, latest]]) => ({ name: n, min, max, latest })) },
  },
});

const spec: ExperimentSpec = {
  objective: { type: 'maximize', objectiveMetricName: 'acc', goal: 0.95, metricStrategies: [{ name: 'acc', value: 'max' }, { name: 'loss', value: 'latest' }], additionalMetricNames: ['loss'] },
  maxTrialCount: 5, maxFailedTrialCount: 2,
};

describe('experiment status', () => {
  it('sorts trials into Katib\'s buckets, a finished condition over Running', () => {
    assert.equal(bucketOf(trial('a', '')), 'pending');
    assert.equal(bucketOf(trial('a', 'Running')), 'running');
    const t = trial('a', 'Succeeded');
    t.status!.conditions!.push({ type: 'Running', status: 'True' });
    assert.equal(bucketOf(t), 'succeeded');
    assert.equal(bucketOf(trial('a', 'EarlyStopped')), 'earlyStopped');
    assert.equal(bucketOf(trial('a', 'MetricsUnavailable')), 'metricsUnavailable');
  });

  it('reads a metric by its strategy and skips what is not a number', () => {
    assert.equal(metricValue(spec, trial('a', '', { acc: ['0.1', '0.9', '0.5'] }).status?.observation?.metrics, 'acc'), 0.9);
    assert.equal(metricValue(spec, trial('a', '', { loss: ['0.1', '0.9', '0.5'] }).status?.observation?.metrics, 'loss'), 0.5);
    assert.equal(metricValue(spec, trial('a', '', { acc: ['unavailable', 'unavailable', 'unavailable'] }).status?.observation?.metrics, 'acc'), undefined);
  });

  it('names the best numeric trial, counts each bucket, and decides as Katib: goal, failures, budget', () => {
    const ts = [trial('a', 'Succeeded', { acc: ['0', '0.7', '0.7'] }), trial('bb', 'Succeeded', { acc: ['0', '0.8', '0.8'] }), trial('ccc', 'Failed'), trial('dddd', 'Running', { acc: ['x', 'x', 'x'] })];
    const s = summarise(spec, ts);
    assert.equal(s.status.currentOptimalTrial?.bestTrialName, 'bb');
    assert.equal(s.best, 0.8);
    assert.deepEqual([s.status.trialsSucceeded, s.status.trialsFailed, s.status.trialsRunning, s.status.trialsPending], [2, 1, 1, undefined]);
    assert.deepEqual(s.status.succeededTrialList, ['a', 'bb']);
    assert.deepEqual(verdict(spec, s), { done: false });
    ts.push(trial('eeeee', 'Succeeded', { acc: ['0', '0.96', '0.96'] }));
    assert.equal((verdict(spec, summarise(spec, ts)) as { reason: string }).reason, 'ExperimentGoalReached');
    const failing = [trial('a', 'Failed'), trial('b', 'MetricsUnavailable')];
    assert.equal((verdict(spec, summarise(spec, failing)) as { reason: string }).reason, 'ExperimentMaxFailedTrialsReached');
    const budget = ['a', 'b', 'c', 'd', 'e'].map((n) => trial(n, 'Succeeded', { acc: ['0', '0.5', '0.5'] }));
    assert.equal((verdict(spec, summarise(spec, budget)) as { reason: string }).reason, 'ExperimentMaxTrialsReached');
  });

  it('keeps the Pareto front of several objectives', () => {
    const multi: ExperimentSpec = { objective: { type: 'maximize', objectiveMetricName: 'acc', additionalMetricNames: ['latency'], additionalObjectives: [{ name: 'latency', type: 'minimize' }] } };
    const m = (n: string, acc: number, lat: number) => trial(n, 'Succeeded', { acc: [String(acc), String(acc), String(acc)], latency: [String(lat), String(lat), String(lat)] });
    const front = paretoFront(multi, [m('fast', 0.8, 10), m('good', 0.9, 50), m('worse', 0.7, 60), m('best', 0.95, 80), m('dominated', 0.85, 55)]);
    assert.deepEqual(front.map((t) => t.metadata.name), ['best', 'good', 'fast']);
    assert.equal(summarise(multi, [m('fast', 0.8, 10), m('good', 0.9, 50)]).status.paretoFront?.length, 2);
  });

  it('moves a changed condition to the end, as Katib\'s Type column reads the last one', () => {
    const st = { conditions: [{ type: 'Created', status: 'True' as const }, { type: 'Running', status: 'True' as const, reason: 'R' }] };
    setKatibCondition(st, { type: 'Created', status: 'True', reason: 'again' }, 't');
    assert.deepEqual(st.conditions.map((c) => c.type), ['Running', 'Created']);
    assert.equal(setKatibCondition(st, { type: 'Created', status: 'True', reason: 'again' }, 't'), false);
  });
});

describe('medianstop', () => {
  it('makes no rule before min_trials_required finished, then the median of their best-so-far at start_step', () => {
    const obj = { name: 'acc', type: 'maximize' as const };
    const settings = [{ name: 'min_trials_required', value: '3' }, { name: 'start_step', value: '2' }];
    assert.deepEqual(medianStopRules(obj, settings, [[0.1, 0.5], [0.2, 0.3]]), []);
    const rules = medianStopRules(obj, settings, [[0.1, 0.5, 0.9], [0.2, 0.3], [0.7, 0.1], [0.05]]);
    assert.deepEqual(rules, [{ name: 'acc', value: '0.5', comparison: 'less', startStep: 2 }]);
    const min = medianStopRules({ name: 'loss', type: 'minimize' }, [{ name: 'min_trials_required', value: '1' }], [[5, 4, 3, 2, 1]]);
    assert.deepEqual(min, [{ name: 'loss', value: '2', comparison: 'greater', startStep: 4 }]);
  });
});
