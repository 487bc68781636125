import { describe, expect, it } from 'vitest';
import type { Run } from '../api/types';
import run1 from '../fixtures/metrics-report-run-1.json';
import summary from '../fixtures/metrics-report-summary.md?raw';
import report from '../fixtures/metrics-report-report.html?raw';
import { confusionMatrix, contentUrl, metadataRows, nearestPoint, rocCurve, runArtifacts, scalarMetrics, schemaOf, sizeFromHeaders, textPreview } from './model';
import { htmlSrcdoc, markdownSrcdoc } from './srcdoc';

// artifacts as the kfp SDK wrote them, recorded from a run of examples/pipelines/metrics_report.py
const run = run1 as unknown as Run;
const train = run.status?.tasks?.train?.outputs?.artifacts ?? {};
const metadataOf = (output: string): unknown => train[output]?.[0]?.metadata;

describe('scalarMetrics', () => {
  it('reads what Metrics.log_metric wrote', () => {
    expect(scalarMetrics(metadataOf('metrics'))).toEqual({
      metrics: [
        { name: 'accuracy', value: 0.65 },
        { name: 'loss', value: 0.36 },
        { name: 'epochs', value: 5 },
      ],
      errors: [],
    });
  });
  it('names a value that is not a number and keeps the rest', () => {
    expect(scalarMetrics({ a: 1, b: 'high', c: null, display_name: 'm' })).toEqual({
      metrics: [{ name: 'a', value: 1 }],
      errors: ['metric b: "high" is not a number', 'metric c: null is not a number'],
    });
    expect(scalarMetrics([1, 2]).errors).toEqual(['metadata is [1,2], not an object of metric names and values']);
  });
});

describe('confusionMatrix', () => {
  it('builds labelled cells with heat and row share from log_confusion_matrix', () => {
    const r = confusionMatrix(metadataOf('classification'));
    if (!r?.ok) throw new Error(`expected a matrix: ${JSON.stringify(r)}`);
    expect(r.value.labels).toEqual(['cat', 'dog', 'bird']);
    expect(r.value.max).toBe(96);
    expect(r.value.rowTotals).toEqual([100, 100, 100]);
    expect(r.value.cells.map((row) => row.map((c) => c.count))).toEqual([
      [65, 33, 2],
      [5, 65, 30],
      [1, 3, 96],
    ]);
    expect(r.value.cells[2]?.[2]).toEqual({ row: 2, col: 2, count: 96, heat: 1, ofRow: 0.96 });
    expect(r.value.cells[0]?.[1]?.heat).toBeCloseTo(33 / 96);
  });
  it('refuses ragged rows, a row count that does not match the labels, and non-counts', () => {
    const specs = [{ displayName: 'a' }, { displayName: 'b' }];
    expect(confusionMatrix({ confusionMatrix: { annotationSpecs: specs, rows: [{ row: [1, 2] }, { row: [3] }] } })).toEqual({
      ok: false,
      error: 'confusionMatrix.rows[1] has 1 values for 2 labels',
    });
    expect(confusionMatrix({ confusionMatrix: { annotationSpecs: specs, rows: [{ row: [1, 2] }] } })).toEqual({ ok: false, error: 'confusionMatrix has 1 rows for 2 labels' });
    expect(confusionMatrix({ confusionMatrix: { annotationSpecs: specs, rows: [{ row: [1, 'x'] }, { row: [3, 4] }] } })).toEqual({
      ok: false,
      error: 'confusionMatrix.rows[0].row[1]: "x" is not a count',
    });
    expect(confusionMatrix({ confusionMatrix: { annotationSpecs: [{}], rows: [] } })).toEqual({ ok: false, error: 'confusionMatrix.annotationSpecs[0] has no displayName' });
    expect(confusionMatrix({ confusionMatrix: 'nope' })).toEqual({ ok: false, error: 'confusionMatrix is "nope", not an object' });
    expect(confusionMatrix({ other: 1 })).toBeUndefined();
  });
});

describe('rocCurve', () => {
  it('sorts the points from log_roc_curve along the false positive rate and integrates the area', () => {
    const r = rocCurve(metadataOf('classification'));
    if (!r?.ok) throw new Error(`expected a curve: ${JSON.stringify(r)}`);
    expect(r.value.points.map((p) => p.fpr)).toEqual([0, 0.05, 0.1, 0.3, 0.6, 1]);
    expect(r.value.points.map((p) => p.threshold)).toEqual([1, 0.8, 0.6, 0.4, 0.2, 0]);
    // trapezoids: (0.05*0.35 + 0.05*0.9 + 0.2*1.2 + 0.3*1.35 + 0.4*1.7) / 2
    expect(r.value.auc).toBeCloseTo((0.05 * 0.35 + 0.05 * 0.9 + 0.2 * 1.2 + 0.3 * 1.35 + 0.4 * 1.7) / 2);
    expect(nearestPoint(r.value.points, 0.28)?.threshold).toBe(0.4);
  });
  it('refuses points that are not numbers or not rates', () => {
    expect(rocCurve({ confidenceMetrics: [{ confidenceThreshold: 1, recall: 'a', falsePositiveRate: 0 }] })).toEqual({
      ok: false,
      error: 'confidenceMetrics[0].recall: "a" is not a number',
    });
    expect(rocCurve({ confidenceMetrics: [{ confidenceThreshold: 1, recall: 2, falsePositiveRate: 0 }] })).toEqual({
      ok: false,
      error: 'confidenceMetrics[0]: a rate outside 0..1 (recall 2, falsePositiveRate 0)',
    });
    expect(rocCurve({ confidenceMetrics: {} })).toEqual({ ok: false, error: 'confidenceMetrics is {}, not a list' });
    expect(rocCurve({ confidenceMetrics: [] })).toEqual({ ok: false, error: 'confidenceMetrics is empty' });
  });
});

describe('textPreview', () => {
  const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
  it('shows text, and says when it was cut', () => {
    expect(textPreview(enc('x,label\n0.0,dog\n'), 16)).toEqual({ kind: 'text', text: 'x,label\n0.0,dog\n', truncated: false });
    expect(textPreview(enc('x,label\n'), 5000)).toEqual({ kind: 'text', text: 'x,label\n', truncated: true });
  });
  it('does not call a file binary for a character cut in half by the cap', () => {
    const bytes = enc('naïve café');
    const cut = bytes.subarray(0, bytes.length - 1);
    expect(textPreview(cut, bytes.length)).toEqual({ kind: 'text', text: 'naïve caf', truncated: true });
  });
  it('detects binary content: NUL bytes, bytes that are not UTF-8, control characters', () => {
    const model = new Uint8Array(Array.from({ length: 1024 }, (_, i) => i % 256));
    expect(textPreview(model, 2048)).toEqual({ kind: 'binary' });
    expect(textPreview(new Uint8Array([0xff, 0xfe, 0x41, 0x42]), 4)).toEqual({ kind: 'binary' });
    expect(textPreview(new Uint8Array([1, 2, 3, 4, 5, 65]), 6)).toEqual({ kind: 'binary' });
  });
});

describe('where artifacts are', () => {
  it('lists every output artifact of a run by task, output and index, RunTask records first', () => {
    const refs = runArtifacts(run);
    expect(refs.map((r) => `${r.task}/${r.output}[${r.index}] ${schemaOf(r.artifact)}`)).toEqual([
      'make-data/data[0] system.Dataset',
      'train/classification[0] system.ClassificationMetrics',
      'train/metrics[0] system.Metrics',
      'train/model[0] system.Model',
      'train/report[0] system.HTML',
      'train/summary[0] system.Markdown',
    ]);
    const live = runArtifacts(run, { 'make-data': { state: 'RUNNING' } });
    expect(live.filter((r) => r.task === 'make-data')).toEqual([]);
  });
  it('builds the read-back URL with its byte cap, and the size from Content-Range', () => {
    expect(contentUrl('r 1', 'outer.train', 'model', 2, 1024)).toBe('/apis/v2beta1/runs/r%201/nodes/outer.train/artifacts/model:read?index=2&limit=1024');
    expect(sizeFromHeaders('bytes 0-1023/5000', 1024)).toBe(5000);
    expect(sizeFromHeaders(null, 12)).toBe(12);
  });
  it('shows metadata as rows', () => {
    expect(metadataRows(metadataOf('model'))).toEqual([
      { key: 'framework', value: 'none' },
      { key: 'accuracy', value: '0.65' },
    ]);
  });
});

describe('srcdoc', () => {
  const colors = { text: '#111', background: '#fff', border: '#ccc', link: '#00f' };
  it('renders the Markdown the SDK example wrote, tables included', () => {
    const doc = markdownSrcdoc(summary, colors);
    expect(doc).toContain('<h1>Summary</h1>');
    expect(doc).toContain('<strong>0.3</strong>');
    expect(doc).toMatch(/<td>accuracy<\/td>\s*<td>0.71<\/td>/);
  });
  it('puts a policy forbidding scripts before the artifact’s own HTML', () => {
    const doc = htmlSrcdoc(report);
    expect(doc.indexOf("default-src 'none'")).toBeLessThan(doc.indexOf('<script>'));
    expect(doc.startsWith('<meta http-equiv="Content-Security-Policy"')).toBe(true);
  });
});
