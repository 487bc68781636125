// What the artifact viewers draw, as pure functions over an artifact's metadata in the formats the kfp
// SDK writes (Metrics.log_metric, ClassificationMetrics.log_confusion_matrix / log_roc_curve). Each
// checks its input first: a malformed artifact gives an error to show, never a crash.

export type Result<T> = { ok: true; value: T } | { ok: false; error: string };

const ok = <T>(value: T): Result<T> => ({ ok: true, value });
const fail = <T>(error: string): Result<T> => ({ ok: false, error });

export interface Scalar {
  name: string;
  value: number | string;
}

/** system.Metrics: every metadata key with its value (numbers as numbers) */
export function scalars(metadata: Record<string, unknown> | undefined): Result<Scalar[]> {
  const out: Scalar[] = [];
  for (const [name, v] of Object.entries(metadata ?? {})) {
    if (name === 'display_name') continue;
    if (typeof v === 'number' || typeof v === 'string') out.push({ name, value: v });
    else if (typeof v === 'boolean') out.push({ name, value: String(v) });
    else return fail(`metric ${name} is not a number or a string: ${JSON.stringify(v)?.slice(0, 80)}`);
  }
  return ok(out);
}

export interface Matrix {
  labels: string[];
  rows: number[][];
  max: number;
}

/** system.ClassificationMetrics' confusionMatrix: square, labelled, numbers only */
export function confusionMatrix(metadata: Record<string, unknown> | undefined): Result<Matrix> | undefined {
  const cm = metadata?.confusionMatrix as { annotationSpecs?: { displayName?: string }[]; rows?: { row?: unknown[] }[] } | undefined;
  if (cm === undefined) return undefined;
  if (!cm || !Array.isArray(cm.annotationSpecs) || !Array.isArray(cm.rows)) return fail('confusionMatrix needs annotationSpecs and rows');
  const labels = cm.annotationSpecs.map((a, i) => String(a?.displayName ?? `class ${i}`));
  if (cm.rows.length !== labels.length) return fail(`confusionMatrix has ${cm.rows.length} rows for ${labels.length} labels`);
  const rows: number[][] = [];
  let max = 0;
  for (const [i, r] of cm.rows.entries()) {
    const row = r?.row;
    if (!Array.isArray(row) || row.length !== labels.length) return fail(`confusionMatrix row ${i} has ${Array.isArray(row) ? row.length : 'no'} cells for ${labels.length} labels`);
    if (!row.every((c) => typeof c === 'number' && Number.isFinite(c))) return fail(`confusionMatrix row ${i} holds something that is not a number`);
    rows.push(row as number[]);
    max = Math.max(max, ...(row as number[]));
  }
  return ok({ labels, rows, max });
}

export interface RocPoint {
  fpr: number;
  tpr: number;
  threshold: number;
}

/** system.ClassificationMetrics' confidenceMetrics → the ROC curve, by false positive rate */
export function rocCurve(metadata: Record<string, unknown> | undefined): Result<RocPoint[]> | undefined {
  const cms = metadata?.confidenceMetrics;
  if (cms === undefined) return undefined;
  if (!Array.isArray(cms)) return fail('confidenceMetrics is not a list');
  const pts: RocPoint[] = [];
  for (const [i, c] of cms.entries()) {
    const p = c as { falsePositiveRate?: unknown; recall?: unknown; confidenceThreshold?: unknown };
    const fpr = Number(p?.falsePositiveRate ?? NaN);
    const tpr = Number(p?.recall ?? NaN);
    const threshold = Number(p?.confidenceThreshold ?? NaN);
    if (![fpr, tpr].every((x) => Number.isFinite(x) && x >= 0 && x <= 1)) return fail(`confidenceMetrics[${i}]: falsePositiveRate and recall must be numbers between 0 and 1`);
    pts.push({ fpr, tpr, threshold });
  }
  pts.sort((a, b) => a.fpr - b.fpr || a.tpr - b.tpr);
  return ok(pts);
}

/** the area under a ROC curve (trapezoids), with (0,0) and (1,1) as its ends */
export function auc(points: RocPoint[]): number {
  const pts = [{ fpr: 0, tpr: 0 }, ...points, { fpr: 1, tpr: 1 }];
  let a = 0;
  for (let i = 1; i < pts.length; i++) a += (pts[i]!.fpr - pts[i - 1]!.fpr) * (pts[i]!.tpr + pts[i - 1]!.tpr) / 2;
  return a;
}

/** whether bytes read as text (no NULs, few control characters) */
export function looksLikeText(bytes: Uint8Array): boolean {
  let odd = 0;
  for (const b of bytes) {
    if (b === 0) return false;
    if (b < 9 || (b > 13 && b < 32)) odd++;
  }
  return odd <= bytes.length / 50;
}
