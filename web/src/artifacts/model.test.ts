import { describe, expect, it } from 'vitest';
import type { Run } from '../api/types';
import run from '../fixtures/run-metrics-visualization-pipeline.json';
import { auc, confusionMatrix, looksLikeText, rocCurve, scalars } from './model';

const tasks = (run as unknown as Run).status!.tasks!;
const meta = (task: string) => tasks[task]!.outputs!.artifacts.metrics![0]!.metadata;

describe('artifact models from what the kfp SDK wrote', () => {
  it('reads scalar metrics', () => {
    expect(scalars(meta('digit-classification'))).toEqual({ ok: true, value: [{ name: 'accuracy', value: 92 }] });
    expect(scalars({ a: { nested: 1 } }).ok).toBe(false);
  });
  it('reads a confusion matrix', () => {
    const m = confusionMatrix(meta('iris-sgdclassifier'));
    expect(m?.ok).toBe(true);
    if (m?.ok) {
      expect(m.value.labels).toEqual(['Setosa', 'Versicolour', 'Virginica']);
      expect(m.value.rows[1]).toEqual([0, 26, 13]);
      expect(m.value.max).toBe(32);
    }
  });
  it('refuses a ragged or non-numeric matrix with a reason', () => {
    const r = confusionMatrix({ confusionMatrix: { annotationSpecs: [{ displayName: 'a' }, { displayName: 'b' }], rows: [{ row: [1, 2] }, { row: [3] }] } });
    expect(r).toEqual({ ok: false, error: 'confusionMatrix row 1 has 1 cells for 2 labels' });
    expect(confusionMatrix({ confusionMatrix: { annotationSpecs: [{}], rows: [{ row: ['x'] }] } })?.ok).toBe(false);
    expect(confusionMatrix({})).toBeUndefined();
  });
  it('reads a ROC curve sorted by false positive rate, with its area', () => {
    const r = rocCurve(meta('wine-classification'));
    expect(r?.ok).toBe(true);
    if (r?.ok) {
      const fprs = r.value.map((p) => p.fpr);
      expect(fprs).toEqual([...fprs].sort((a, b) => a - b));
      const a = auc(r.value);
      expect(a).toBeGreaterThan(0.5);
      expect(a).toBeLessThanOrEqual(1);
    }
    expect(rocCurve({ confidenceMetrics: [{ falsePositiveRate: 2, recall: 0 }] })?.ok).toBe(false);
    expect(auc([])).toBe(0.5);
  });
  it('tells text from binary', () => {
    expect(looksLikeText(new TextEncoder().encode('hello,world\n1,2\n'))).toBe(true);
    expect(looksLikeText(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13]))).toBe(false);
  });
});
