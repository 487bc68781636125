import { describe, expect, it } from 'vitest';
import type { Run } from '../../api/types';
import metricsRun from '../../fixtures/run-metrics-visualization-pipeline.json';
import { compareRuns } from './compare';

function variant(accuracy: number, params: Record<string, unknown>): Run {
  const r = structuredClone(metricsRun) as unknown as Run;
  r.spec.parameters = params;
  r.status!.tasks!['digit-classification']!.outputs!.artifacts.metrics![0]!.metadata = { accuracy };
  return r;
}

describe('compareRuns', () => {
  const c = compareRuns([variant(92, { lr: 0.1, epochs: 3 }), variant(95, { lr: 0.01, epochs: 3 })]);
  it('lines parameters up and marks the ones that differ', () => {
    expect(c.parameters).toEqual([
      { key: 'epochs', values: [3, 3], differs: false },
      { key: 'lr', values: [0.1, 0.01], differs: true },
    ]);
  });
  it('collects every scalar metric by task/output/name and marks the best', () => {
    const acc = c.metrics.find((m) => m.key === 'digit-classification/metrics/accuracy');
    expect(acc).toEqual({ key: 'digit-classification/metrics/accuracy', values: [92, 95], differs: true, best: 1 });
  });
  it('lines rich artifacts up by task and output', () => {
    expect(c.panels.map((p) => `${p.key}:${p.schema}`)).toEqual([
      'html-visualization/html_artifact:system.HTML',
      'iris-sgdclassifier/metrics:system.ClassificationMetrics',
      'markdown-visualization/markdown_artifact:system.Markdown',
      'wine-classification/metrics:system.ClassificationMetrics',
    ]);
    expect(c.panels.every((p) => p.cells.every(Boolean))).toBe(true);
  });
  it('leaves a hole where a run lacks a value', () => {
    const other = variant(90, {});
    delete other.status!.tasks!['wine-classification'];
    const d = compareRuns([variant(92, { lr: 1 }), other]);
    expect(d.parameters[0]?.values).toEqual([1, undefined]);
    expect(d.panels.find((p) => p.task === 'wine-classification')?.cells[1]).toBeUndefined();
  });
});
