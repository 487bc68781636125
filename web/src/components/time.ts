// Ages and durations as kubectl prints them (5s, 3m12s, 2h5m, 4d).

export function shortDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  const s = Math.floor(ms / 1000);
  if (s < 60) return ms < 10_000 && ms % 1000 !== 0 && s < 10 ? `${(ms / 1000).toFixed(1)}s` : `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 && d < 7 ? `${d}d${h % 24}h` : `${d}d`;
}

export function age(ts: string | undefined, now = Date.now()): string {
  if (!ts) return '—';
  const t = Date.parse(ts);
  return Number.isNaN(t) ? '—' : shortDuration(Math.max(0, now - t));
}

export function between(start: string | undefined, end: string | undefined, now = Date.now()): string {
  if (!start) return '—';
  const a = Date.parse(start);
  const b = end ? Date.parse(end) : now;
  return Number.isNaN(a) || Number.isNaN(b) ? '—' : shortDuration(Math.max(0, b - a));
}
