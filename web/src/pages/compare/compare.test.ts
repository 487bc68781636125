import { describe, expect, it } from 'vitest';
import type { Run, TaskStatus } from '../../api/types';
import run1 from '../../fixtures/metrics-report-run-1.json';
import run2 from '../../fixtures/metrics-report-run-2.json';
import { buildComparison, lowerIsBetter, parseRunList } from './compare';

// two runs of examples/pipelines/metrics_report.py: (learning_rate 0.1, epochs 5) and (0.3, 9)
const a = run1 as unknown as Run;
const b = run2 as unknown as Run;
const A = a.metadata.name as string;
const B = b.metadata.name as string;
const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

describe('buildComparison', () => {
  const c = buildComparison([A, B, 'gone'], [b, a]);

  it('keeps the asked order and marks a run that is not there', () => {
    expect(c.runs.map((r) => [r.name, r.missing, r.state, r.pipeline])).toEqual([
      [A, false, 'SUCCEEDED', 'metrics-report'],
      [B, false, 'SUCCEEDED', 'metrics-report'],
      ['gone', true, undefined, undefined],
    ]);
  });

  it('lines parameters up by name and marks the differing ones', () => {
    expect(c.params).toEqual([
      { name: 'epochs', values: ['5', '9', undefined], differs: true },
      { name: 'learning_rate', values: ['0.1', '0.3', undefined], differs: true },
      { name: 'rows', values: ['40', '40', undefined], differs: true },
    ]);
    const two = buildComparison([A, B], [a, b]);
    expect(two.params.map((p) => [p.name, p.differs])).toEqual([
      ['epochs', true],
      ['learning_rate', true],
      ['rows', false],
    ]);
  });

  it('makes one row per task/output/metric with the best value marked, lower for a loss', () => {
    const two = buildComparison([A, B], [a, b]);
    expect(two.metrics).toEqual([
      { key: 'train/metrics/accuracy', values: [0.65, 0.71], best: [1], lowerIsBetter: false, differs: true },
      { key: 'train/metrics/epochs', values: [5, 9], best: [1], lowerIsBetter: false, differs: true },
      { key: 'train/metrics/loss', values: [0.36, 0.32], best: [1], lowerIsBetter: true, differs: true },
    ]);
    expect(two.metricErrors).toEqual([]);
  });

  it('marks every run on a tie, and none when all agree', () => {
    const x = clone(a);
    const y = clone(a);
    const z = clone(b);
    x.metadata.name = 'x';
    y.metadata.name = 'y';
    const m = buildComparison(['x', 'y', B], [x, y, z]).metrics;
    expect(m.find((r) => r.key === 'train/metrics/loss')?.best).toEqual([2]);
    expect(m.find((r) => r.key === 'train/metrics/accuracy')?.best).toEqual([2]);
    const same = buildComparison(['x', 'y'], [x, y]).metrics;
    expect(same.every((r) => r.best.length === 0 && !r.differs)).toBe(true);
    const tie = clone(b);
    tie.metadata.name = 'tie';
    expect(buildComparison(['x', B, 'tie'], [x, z, tie]).metrics.find((r) => r.key === 'train/metrics/loss')?.best).toEqual([1, 2]);
  });

  it('has no limit on how many metrics it compares', () => {
    const many = clone(a);
    const metadata: Record<string, number> = {};
    for (let i = 0; i < 500; i++) metadata[`m${String(i).padStart(3, '0')}`] = i;
    (many.status?.tasks?.train?.outputs?.artifacts.metrics?.[0] as { metadata: unknown }).metadata = metadata;
    const m = buildComparison([A], [many]);
    expect(m.metrics.length).toBe(500);
    expect(m.metrics[499]).toEqual({ key: 'train/metrics/m499', values: [499], best: [], lowerIsBetter: false, differs: false });
  });

  it('reports a metric that is not a number instead of dropping it silently', () => {
    const bad = clone(b);
    (bad.status?.tasks?.train?.outputs?.artifacts.metrics?.[0] as { metadata: unknown }).metadata = { accuracy: 'great' };
    expect(buildComparison([B], [bad]).metricErrors).toEqual([`${B}: train/metrics: metric accuracy: "great" is not a number`]);
  });

  it('pairs the ClassificationMetrics, HTML and Markdown artifacts of each run', () => {
    expect(c.panels.map((p) => [p.type, p.key, p.refs.map((r) => (r ? `${r.task}/${r.output}` : '-'))])).toEqual([
      ['system.ClassificationMetrics', 'train/classification', ['train/classification', 'train/classification', '-']],
      ['system.HTML', 'train/report', ['train/report', 'train/report', '-']],
      ['system.Markdown', 'train/summary', ['train/summary', 'train/summary', '-']],
    ]);
  });

  it('reads a running run’s artifacts from its RunTask records', () => {
    const running = clone(a);
    delete running.status?.tasks;
    const train = clone(a.status?.tasks?.train) as TaskStatus;
    const r = buildComparison([A], [running], { [A]: { train } });
    expect(r.metrics.map((m) => m.key)).toEqual(['train/metrics/accuracy', 'train/metrics/epochs', 'train/metrics/loss']);
  });
});

describe('helpers', () => {
  it('parses the runs= list', () => {
    expect(parseRunList(' a, b,,a ,c')).toEqual(['a', 'b', 'c']);
    expect(parseRunList(undefined)).toEqual([]);
  });
  it('knows which metrics are better low', () => {
    expect(lowerIsBetter('val_loss')).toBe(true);
    expect(lowerIsBetter('accuracy')).toBe(false);
  });
});
