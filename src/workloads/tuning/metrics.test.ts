import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MetricLog } from '../../api/tuning-types.js';
import { MetricsParseError, ZeroTime, compileFormats, earlyStopped, epochToRfc3339, metricStrategies, observationAvailable, parseJsonMetrics, parseTextMetrics, summarise } from './metrics.js';

const names = ['loss', 'accuracy'];

describe('TEXT metrics (StdOut and File)', () => {
  it("reads Katib's default format: names, signs, exponents, leading dots", () => {
    const text = [
      'epoch 1: loss=0.3 accuracy = .98',
      'Score=-7.53e-05 loss=+1E0',
      'val-loss=2 loss=0.25',
      'nothing here',
      'accuracy=0.5 accuracy=0.75',
    ].join('\n');
    const logs = parseTextMetrics(text, names);
    assert.deepEqual(logs.map((l) => `${l.name}=${l.value}`), ['loss=0.3', 'accuracy=.98', 'loss=+1E0', 'loss=0.25', 'accuracy=0.5', 'accuracy=0.75']);
    assert.ok(logs.every((l) => l.timeStamp === ZeroTime));
  });
  it('stamps values with a leading RFC 3339 token, else zero time', () => {
    const text = '2024-03-01T10:00:00.123456789Z loss=0.5\n2024-03-01 loss=0.4\n2024-03-01T10:00:01+02:00 loss=0.3';
    assert.deepEqual(parseTextMetrics(text, ['loss']).map((l) => l.timeStamp), ['2024-03-01T10:00:00.123456789Z', ZeroTime, '2024-03-01T10:00:01+02:00']);
  });
  it('only lines containing a requested name are scanned, names must match exactly', () => {
    // "loss" is in the line, but the only key is "val_loss": nothing
    assert.deepEqual(parseTextMetrics('val_loss=0.1', ['loss']), []);
    assert.deepEqual(parseTextMetrics('lr=0.1 acc=0.3', ['loss']), []);
  });
  it('a value that is no number (a diverged `loss=nan`) is no value: the log stays valid', () => {
    const logs = parseTextMetrics('Train Epoch: 3 loss=nan\n{metricName: accuracy, metricValue: 0.0778};{metricName: loss, metricValue: nan}\nloss=0.5\n', ['loss']);
    assert.deepEqual(logs.map((l) => l.value), ['0.5']);
    assert.deepEqual(parseJsonMetrics('{"loss": ""}\n{"loss": " 0.25 "}\n', ['loss']).map((l) => l.value), ['0.25']);
  });

  it('custom metricsFormat with two groups, RE2 named groups accepted', () => {
    const f = compileFormats(['"([a-z]+)": ([\\d.]+)', '(?P<name>\\w+)\\s+is\\s+(?P<value>[\\d.]+)']);
    const logs = parseTextMetrics('{"loss": 0.42}\nloss is 0.41', ['loss'], f);
    assert.deepEqual(logs.map((l) => l.value), ['0.42', '0.41']);
    assert.throws(() => compileFormats(['loss=([\\d.]+)']), (e: unknown) => e instanceof MetricsParseError && /metricsFormat\[0\].*two groups/.test(e.message));
    assert.throws(() => compileFormats(['ok=(\\d)(x)', '([']), (e: unknown) => e instanceof MetricsParseError && /metricsFormat\[1\]/.test(e.message));
  });
});

describe('JSON metrics (File)', () => {
  it("takes Katib's strings and numbers too, with RFC 3339 or epoch timestamps", () => {
    const text = [
      '{"loss": "0.5", "timestamp": "2024-01-01T00:00:01Z"}',
      '',
      '{"loss": 0.25, "accuracy": 0.9, "timestamp": 1704067202.5}',
      '{"accuracy": true, "other": "1"}',
    ].join('\n');
    assert.deepEqual(parseJsonMetrics(text, names), [
      { timeStamp: '2024-01-01T00:00:01Z', name: 'loss', value: '0.5' },
      { timeStamp: '2024-01-01T00:00:02.5Z', name: 'loss', value: '0.25' },
      { timeStamp: '2024-01-01T00:00:02.5Z', name: 'accuracy', value: '0.9' },
    ]);
  });
  it('a line that is not a JSON object is an error naming the line', () => {
    assert.throws(() => parseJsonMetrics('{"loss": "1"}\n{"loss": ', ['loss']), (e: unknown) => e instanceof MetricsParseError && /line 2/.test(e.message));
    assert.throws(() => parseJsonMetrics('[1]', ['loss']), /line 1 is not a JSON object/);
  });
  it('epoch seconds keep their fraction', () => {
    assert.equal(epochToRfc3339(0), '1970-01-01T00:00:00Z');
    assert.equal(epochToRfc3339(1.25), '1970-01-01T00:00:01.25Z');
  });
});

const log = (name: string, value: string, timeStamp = ZeroTime): MetricLog => ({ name, value, timeStamp });

describe('summary by metric strategies', () => {
  it('min, max and latest (greatest timestamp, ties to the later record), unavailable where absent', () => {
    const logs = [
      log('loss', '0.5', '2024-01-01T00:00:02Z'),
      log('loss', '0.2', '2024-01-01T00:00:03.5Z'),
      log('loss', '0.9', '2024-01-01T00:00:03.25Z'),
      log('accuracy', '0.7'),
      log('accuracy', '0.8'),
    ];
    const obs = summarise(logs, [{ name: 'loss', value: 'min' }, { name: 'accuracy', value: 'max' }, { name: 'f1', value: 'latest' }]);
    assert.deepEqual(obs.metrics, [
      { name: 'loss', min: '0.2', max: '0.9', latest: '0.2' },
      { name: 'accuracy', min: '0.7', max: '0.8', latest: '0.8' },
      { name: 'f1', min: 'unavailable', max: 'unavailable', latest: 'unavailable' },
    ]);
  });
  it('sub-millisecond timestamps order exactly; non-numeric values count only as latest', () => {
    const obs = summarise([log('loss', '2', '2024-01-01T00:00:00.0000002Z'), log('loss', '1', '2024-01-01T00:00:00.0000001Z'), log('loss', 'nan?', '2024-01-01T00:00:00Z')], [{ name: 'loss', value: 'min' }]);
    assert.deepEqual(obs.metrics, [{ name: 'loss', min: '1', max: '2', latest: '2' }]);
  });
  it('default strategies follow the objective type, for additional metrics too', () => {
    assert.deepEqual(metricStrategies({ type: 'maximize', objectiveMetricName: 'acc', additionalMetricNames: ['loss'], metricStrategies: [{ name: 'acc', value: 'latest' }] }), [
      { name: 'acc', value: 'latest' }, { name: 'loss', value: 'max' },
    ]);
    const objective = { type: 'minimize' as const, objectiveMetricName: 'loss' };
    assert.equal(observationAvailable(summarise([log('loss', 'unavailable')], metricStrategies(objective)), objective), false);
    assert.equal(observationAvailable(summarise([log('loss', '1')], metricStrategies(objective)), objective), true);
  });
});

describe('early stopping rule', () => {
  const objective = { type: 'maximize' as const, objectiveMetricName: 'accuracy' };
  const values = (...vs: string[]): MetricLog[] => vs.map((v) => log('accuracy', v));
  it('compares the best so far, once, at exactly startStep', () => {
    const rule = [{ name: 'accuracy', value: '0.6', comparison: 'less' as const, startStep: 3 }];
    // best so far at step 3 is 0.5 < 0.6: fires
    assert.equal(earlyStopped(values('0.5', '0.3', '0.4'), rule, objective), true);
    // best so far at step 3 is 0.7: does not fire, and later bad values are never looked at
    assert.equal(earlyStopped(values('0.7', '0.1', '0.1', '0.1', '0.1'), rule, objective), false);
    // not yet at startStep
    assert.equal(earlyStopped(values('0.1', '0.1'), rule, objective), false);
  });
  it('without startStep every value is compared; every rule must fire', () => {
    const rules = [
      { name: 'accuracy', value: '0.5', comparison: 'less' as const },
      { name: 'loss', value: '2', comparison: 'greater' as const },
    ];
    assert.equal(earlyStopped([...values('0.4'), log('loss', '1')], rules, objective), false);
    assert.equal(earlyStopped([...values('0.4'), log('loss', '3')], rules, objective), true);
    assert.equal(earlyStopped([log('loss', '3'), ...values('0.9')], rules, objective), false);
    assert.equal(earlyStopped(values('0.4'), [], objective), false);
  });
  it('a minimised objective keeps its minimum; equal compares exactly', () => {
    const min = { type: 'minimize' as const, objectiveMetricName: 'loss' };
    assert.equal(earlyStopped([log('loss', '1'), log('loss', '5')], [{ name: 'loss', value: '4', comparison: 'greater', startStep: 2 }], min), false);
    assert.equal(earlyStopped([log('loss', '5'), log('loss', '6')], [{ name: 'loss', value: '4', comparison: 'greater', startStep: 2 }], min), true);
    assert.equal(earlyStopped([log('loss', '4')], [{ name: 'loss', value: '4', comparison: 'equal' }], min), true);
    assert.throws(() => earlyStopped([log('loss', '4')], [{ name: 'loss', value: 'x', comparison: 'equal' }], min), /earlyStoppingRules\[0\]\.value/);
  });
});
