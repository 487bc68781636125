// Small statistics for benchmark reports.
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i] as number;
}

export const median = (xs: number[]): number => percentile(xs, 50);

export function fmtMs(ms: number): string {
  return ms < 10 ? `${ms.toFixed(2)} ms` : `${ms.toFixed(1)} ms`;
}

/** wall-clock time in milliseconds since the epoch, with sub-millisecond resolution */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}
