// Sets of completion indexes as Kubernetes writes them in `status.completedIndexes` and
// `status.failedIndexes`: ordered intervals, printed "0-2,4,6,7" (a run of two is "6,7", not "6-7").
// Pure functions; nothing here reads the store.

export interface Interval {
  first: number;
  last: number;
}

export type IndexSet = readonly Interval[];

/** Parses "0-2,4"; drops what is corrupt or not below `completions`, as Kubernetes does. */
export function parseIndexes(s: string | undefined, completions: number): Interval[] {
  const out: Interval[] = [];
  if (!s) return out;
  for (const part of s.split(',')) {
    const bounds = part.split('-');
    const first = toInt(bounds[0]);
    if (first === undefined) continue;
    if (first >= completions) break;
    let last = first;
    if (bounds.length > 1) {
      const l = toInt(bounds[1]);
      if (l === undefined) continue;
      last = Math.min(l, completions - 1);
    }
    if (last < first) continue;
    const prev = out[out.length - 1];
    if (prev && prev.last === first - 1) prev.last = last;
    else out.push({ first, last });
  }
  return out;
}

function toInt(s: string | undefined): number | undefined {
  if (s === undefined || !/^\d+$/.test(s.trim())) return undefined;
  return Number(s.trim());
}

export function formatIndexes(set: IndexSet): string {
  return set
    .map((iv) => (iv.last === iv.first ? `${iv.first}` : iv.last === iv.first + 1 ? `${iv.first},${iv.last}` : `${iv.first}-${iv.last}`))
    .join(',');
}

/** The union of two sets. */
export function mergeIndexes(a: IndexSet, b: IndexSet): Interval[] {
  const all = [...a, ...b].map((iv) => ({ ...iv })).sort((x, y) => x.first - y.first);
  const out: Interval[] = [];
  for (const iv of all) {
    const prev = out[out.length - 1];
    if (prev && iv.first <= prev.last + 1) prev.last = Math.max(prev.last, iv.last);
    else out.push(iv);
  }
  return out;
}

/** The set with these indexes added. */
export function withIndexes(set: IndexSet, indexes: Iterable<number>): Interval[] {
  return mergeIndexes(set, [...indexes].map((i) => ({ first: i, last: i })));
}

export function hasIndex(set: IndexSet, ix: number): boolean {
  let lo = 0;
  let hi = set.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((set[mid] as Interval).last >= ix) hi = mid;
    else lo = mid + 1;
  }
  const iv = set[hi];
  return iv !== undefined && iv.first <= ix;
}

export function countIndexes(set: IndexSet): number {
  return set.reduce((n, iv) => n + iv.last - iv.first + 1, 0);
}

/** The lowest `count` indexes below `completions` that are not in `taken`. */
export function firstPendingIndexes(taken: IndexSet, count: number, completions: number): number[] {
  const out: number[] = [];
  let candidate = 0;
  for (const iv of taken) {
    for (; candidate < completions && out.length < count && candidate < iv.first; candidate++) out.push(candidate);
    candidate = Math.max(candidate, iv.last + 1);
  }
  for (; candidate < completions && out.length < count; candidate++) out.push(candidate);
  return out;
}
