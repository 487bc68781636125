// What an artifact's renderer draws, as plain data built from the artifact's metadata or content.
// Every builder validates first and answers an error in words instead of throwing, so a malformed
// artifact shows a message inside its panel and never breaks the page around it.
import type { Run, RunArtifact, RunTask, TaskStatus } from '../api/types';

export type Result<T> = { ok: true; value: T } | { ok: false; error: string };
const ok = <T>(value: T): Result<T> => ({ ok: true, value });
const fail = <T>(error: string): Result<T> => ({ ok: false, error });

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const show = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v));

export function schemaOf(a: RunArtifact): string {
  const t = a.type?.schemaTitle;
  return typeof t === 'string' ? t : '';
}

/** the read-back endpoint of one artifact's content; `limit` caps the bytes the server sends */
export function contentUrl(run: string, task: string, output: string, index = 0, limit?: number): string {
  const q = new URLSearchParams({ index: String(index) });
  if (limit !== undefined) q.set('limit', String(limit));
  return `/apis/v2beta1/runs/${encodeURIComponent(run)}/nodes/${encodeURIComponent(task)}/artifacts/${encodeURIComponent(output)}:read?${q}`;
}

// ---- system.Metrics ----

export interface ScalarMetric {
  name: string;
  value: number;
}

/** the scalars a system.Metrics artifact logged; values that are not numbers are named in `errors` */
export function scalarMetrics(metadata: unknown): { metrics: ScalarMetric[]; errors: string[] } {
  if (metadata === undefined || metadata === null) return { metrics: [], errors: [] };
  if (!isRecord(metadata)) return { metrics: [], errors: [`metadata is ${show(metadata)}, not an object of metric names and values`] };
  const metrics: ScalarMetric[] = [];
  const errors: string[] = [];
  for (const [name, value] of Object.entries(metadata)) {
    // the kfp SDK adds display_name when the component sets one; it is a label, not a metric
    if (name === 'display_name' && typeof value === 'string') continue;
    if (isNum(value)) metrics.push({ name, value });
    else errors.push(`metric ${name}: ${show(value)} is not a number`);
  }
  return { metrics, errors };
}

// ---- system.ClassificationMetrics ----

export interface ConfusionCell {
  row: number;
  col: number;
  count: number;
  /** count / the largest count, 0..1, for the heat colour */
  heat: number;
  /** count / its row's total (recall for the diagonal), 0..1 */
  ofRow: number;
}

export interface ConfusionMatrix {
  labels: string[];
  cells: ConfusionCell[][];
  max: number;
  rowTotals: number[];
}

/** metadata.confusionMatrix {annotationSpecs: [{displayName}], rows: [{row: number[]}]} as the kfp SDK writes it */
export function confusionMatrix(metadata: unknown): Result<ConfusionMatrix> | undefined {
  if (!isRecord(metadata) || metadata.confusionMatrix === undefined) return undefined;
  const cm = metadata.confusionMatrix;
  if (!isRecord(cm)) return fail(`confusionMatrix is ${show(cm)}, not an object`);
  if (!Array.isArray(cm.annotationSpecs)) return fail('confusionMatrix.annotationSpecs is not a list');
  if (!Array.isArray(cm.rows)) return fail('confusionMatrix.rows is not a list');
  const labels: string[] = [];
  for (const [i, s] of cm.annotationSpecs.entries()) {
    if (!isRecord(s) || typeof s.displayName !== 'string') return fail(`confusionMatrix.annotationSpecs[${i}] has no displayName`);
    labels.push(s.displayName);
  }
  const n = labels.length;
  if (cm.rows.length !== n) return fail(`confusionMatrix has ${cm.rows.length} rows for ${n} labels`);
  const counts: number[][] = [];
  for (const [i, r] of cm.rows.entries()) {
    const row = isRecord(r) ? r.row : undefined;
    if (!Array.isArray(row)) return fail(`confusionMatrix.rows[${i}].row is not a list`);
    if (row.length !== n) return fail(`confusionMatrix.rows[${i}] has ${row.length} values for ${n} labels`);
    const bad = row.findIndex((v) => !isNum(v) || v < 0);
    if (bad >= 0) return fail(`confusionMatrix.rows[${i}].row[${bad}]: ${show(row[bad])} is not a count`);
    counts.push(row as number[]);
  }
  const max = Math.max(0, ...counts.flat());
  const rowTotals = counts.map((r) => r.reduce((a, b) => a + b, 0));
  const cells = counts.map((r, i) =>
    r.map((count, j) => ({ row: i, col: j, count, heat: max ? count / max : 0, ofRow: rowTotals[i] ? count / (rowTotals[i] as number) : 0 })),
  );
  return ok({ labels, cells, max, rowTotals });
}

export interface RocPoint {
  fpr: number;
  tpr: number;
  threshold: number;
}

export interface RocCurve {
  points: RocPoint[];
  /** area under the curve by the trapezoid rule */
  auc: number;
}

/** metadata.confidenceMetrics [{confidenceThreshold, recall, falsePositiveRate}] as a curve sorted along the x axis */
export function rocCurve(metadata: unknown): Result<RocCurve> | undefined {
  if (!isRecord(metadata) || metadata.confidenceMetrics === undefined) return undefined;
  const list = metadata.confidenceMetrics;
  if (!Array.isArray(list)) return fail(`confidenceMetrics is ${show(list)}, not a list`);
  const points: RocPoint[] = [];
  for (const [i, p] of list.entries()) {
    if (!isRecord(p)) return fail(`confidenceMetrics[${i}] is not an object`);
    for (const k of ['confidenceThreshold', 'recall', 'falsePositiveRate']) {
      if (!isNum(p[k])) return fail(`confidenceMetrics[${i}].${k}: ${show(p[k])} is not a number`);
    }
    const fpr = p.falsePositiveRate as number;
    const tpr = p.recall as number;
    if (fpr < 0 || fpr > 1 || tpr < 0 || tpr > 1) return fail(`confidenceMetrics[${i}]: a rate outside 0..1 (recall ${tpr}, falsePositiveRate ${fpr})`);
    points.push({ fpr, tpr, threshold: p.confidenceThreshold as number });
  }
  if (points.length === 0) return fail('confidenceMetrics is empty');
  points.sort((a, b) => a.fpr - b.fpr || a.tpr - b.tpr);
  let auc = 0;
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1] as RocPoint;
    const b = points[i] as RocPoint;
    auc += ((b.fpr - a.fpr) * (a.tpr + b.tpr)) / 2;
  }
  return ok({ points, auc });
}

/** the point of a curve nearest to an x position (0..1), for the hover readout */
export function nearestPoint(points: RocPoint[], fpr: number): RocPoint | undefined {
  let best: RocPoint | undefined;
  for (const p of points) if (!best || Math.abs(p.fpr - fpr) < Math.abs(best.fpr - fpr)) best = p;
  return best;
}

// ---- generic artifacts ----

/** metadata as key/value rows: nested values as compact JSON */
export function metadataRows(metadata: unknown): { key: string; value: string }[] {
  if (!isRecord(metadata)) return [];
  return Object.entries(metadata).map(([key, v]) => ({ key, value: typeof v === 'string' ? v : JSON.stringify(v) }));
}

export type Preview = { kind: 'text'; text: string; truncated: boolean } | { kind: 'binary' };

/**
 * The first bytes of a file as text, or `binary` when they are not UTF-8 text (a NUL byte, or bytes
 * that do not decode). A multi-byte character cut by the cap at the very end is not a reason to call
 * the file binary.
 */
export function textPreview(bytes: Uint8Array, totalSize: number): Preview {
  const truncated = totalSize > bytes.length;
  if (bytes.includes(0)) return { kind: 'binary' };
  let body = bytes;
  if (truncated) {
    // drop a partial UTF-8 sequence at the cut: up to 3 continuation/lead bytes
    let cut = body.length;
    for (let i = body.length - 1; i >= Math.max(0, body.length - 4); i--) {
      const b = body[i] as number;
      if ((b & 0xc0) === 0x80) continue;
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      if (body.length - i < need) cut = i;
      break;
    }
    body = body.subarray(0, cut);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return { kind: 'binary' };
  }
  // control characters other than whitespace say it is not meant to be read as text
  const controls = text.match(/[\u0001-\u0008\u000e-\u001f\u007f]/g)?.length ?? 0;
  if (controls > Math.max(2, text.length / 100)) return { kind: 'binary' };
  return { kind: 'text', text, truncated };
}

/** total size from a Content-Range (`bytes 0-1023/5000`) or, without one, the bytes received */
export function sizeFromHeaders(contentRange: string | null, received: number): number {
  const m = contentRange ? /\/(\d+)$/.exec(contentRange) : null;
  return m ? Number(m[1]) : received;
}

// ---- where artifacts are in a run ----

export interface ArtifactRef {
  /** the task path (`train`, `outer.inner.train`) */
  task: string;
  output: string;
  index: number;
  artifact: RunArtifact;
}

/**
 * Every output artifact of a run's tasks. A finished run carries them in status.tasks; while it runs,
 * each task's record is its RunTask object (`taskRecords`, keyed by path), which wins when both exist.
 */
export function runArtifacts(run: Run | undefined, taskRecords: Record<string, TaskStatus> = {}): ArtifactRef[] {
  const tasks: Record<string, TaskStatus> = { ...(run?.status?.tasks ?? {}), ...taskRecords };
  const out: ArtifactRef[] = [];
  for (const task of Object.keys(tasks).sort()) {
    const arts = tasks[task]?.outputs?.artifacts ?? {};
    for (const output of Object.keys(arts).sort()) {
      const list = arts[output];
      if (!Array.isArray(list)) continue;
      list.forEach((artifact, index) => out.push({ task, output, index, artifact }));
    }
  }
  return out;
}

/** the label a run's RunTask objects carry (RunLabels.run on the server) */
export const RUN_LABEL = 'pipelines.kubeflow.org/run';

/** RunTask objects as task records by run, then by task path */
export function taskRecordsByRun(items: RunTask[]): Record<string, Record<string, TaskStatus>> {
  const out: Record<string, Record<string, TaskStatus>> = {};
  for (const t of items) {
    if (!t.spec?.run || !t.spec.path || !t.status) continue;
    (out[t.spec.run] ??= {})[t.spec.path] = t.status;
  }
  return out;
}
