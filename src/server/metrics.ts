// Prometheus metrics in the text exposition format (version 0.0.4): counters and histograms with
// labels, kept in memory and rendered on `GET /metrics`. Cheap on the hot path: a labelled series
// is found by one Map lookup on a key built from the label values.

function escape(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labelText(names: readonly string[], values: readonly string[], extra?: string): string {
  const parts = names.map((n, i) => `${n}="${escape(values[i] ?? '')}"`);
  if (extra) parts.push(extra);
  return parts.length ? `{${parts.join(',')}}` : '';
}

function fmt(n: number): string {
  if (n === Infinity) return '+Inf';
  return Number.isInteger(n) ? String(n) : n.toPrecision(6).replace(/\.?0+$/, '');
}

interface Metric {
  render(out: string[]): void;
}

export class Counter implements Metric {
  private readonly series = new Map<string, { values: string[]; n: number }>();
  constructor(readonly name: string, readonly help: string, readonly labels: readonly string[]) {}

  inc(values: readonly string[], by = 1): void {
    const key = values.join('\u0000');
    const s = this.series.get(key);
    if (s) s.n += by;
    else this.series.set(key, { values: [...values], n: by });
  }

  get(values: readonly string[]): number {
    return this.series.get(values.join('\u0000'))?.n ?? 0;
  }

  /** one series, for callers that count into it often (no label lookup per call) */
  child(values: readonly string[]): { inc(by?: number): void } {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      s = { values: [...values], n: 0 };
      this.series.set(key, s);
    }
    const series = s;
    return { inc: (by = 1) => void (series.n += by) };
  }

  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`);
    for (const s of this.series.values()) out.push(`${this.name}${labelText(this.labels, s.values)} ${fmt(s.n)}`);
  }
}

export class Histogram implements Metric {
  private readonly series = new Map<string, { values: string[]; counts: number[]; sum: number; count: number }>();
  constructor(readonly name: string, readonly help: string, readonly labels: readonly string[], readonly buckets: readonly number[]) {}

  observe(values: readonly string[], v: number): void {
    this.record(this.seriesFor(values), v);
  }

  /** one series, for callers that observe into it often (no label lookup per call) */
  child(values: readonly string[]): { observe(v: number): void } {
    const s = this.seriesFor(values);
    return { observe: (v) => this.record(s, v) };
  }

  private seriesFor(values: readonly string[]): { values: string[]; counts: number[]; sum: number; count: number } {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      s = { values: [...values], counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    return s;
  }

  private record(s: { counts: number[]; sum: number; count: number }, v: number): void {
    // counts are per bucket here and made cumulative when rendered
    let i = 0;
    while (i < this.buckets.length && v > (this.buckets[i] as number)) i++;
    if (i < this.buckets.length) s.counts[i] = (s.counts[i] ?? 0) + 1;
    s.sum += v;
    s.count++;
  }

  count(values: readonly string[]): number {
    return this.series.get(values.join('\u0000'))?.count ?? 0;
  }

  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`);
    for (const s of this.series.values()) {
      let acc = 0;
      this.buckets.forEach((b, i) => {
        acc += s.counts[i] ?? 0;
        out.push(`${this.name}_bucket${labelText(this.labels, s.values, `le="${fmt(b)}"`)} ${acc}`);
      });
      out.push(`${this.name}_bucket${labelText(this.labels, s.values, 'le="+Inf"')} ${s.count}`);
      out.push(`${this.name}_sum${labelText(this.labels, s.values)} ${fmt(s.sum)}`);
      out.push(`${this.name}_count${labelText(this.labels, s.values)} ${s.count}`);
    }
  }
}

export class Gauge implements Metric {
  private readonly series = new Map<string, { values: string[]; v: number }>();
  constructor(readonly name: string, readonly help: string, readonly labels: readonly string[]) {}

  set(values: readonly string[], v: number): void {
    const key = values.join('\u0000');
    const s = this.series.get(key);
    if (s) s.v = v;
    else this.series.set(key, { values: [...values], v });
  }

  remove(values: readonly string[]): void {
    this.series.delete(values.join('\u0000'));
  }

  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`);
    for (const s of this.series.values()) out.push(`${this.name}${labelText(this.labels, s.values)} ${fmt(s.v)}`);
  }
}

/** Latency buckets in seconds, from 0.5 ms to 60 s. */
export const latencyBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class MetricsRegistry {
  private readonly metrics: Metric[] = [];

  counter(name: string, help: string, labels: readonly string[]): Counter {
    return this.add(new Counter(name, help, labels));
  }
  histogram(name: string, help: string, labels: readonly string[], buckets: readonly number[] = latencyBuckets): Histogram {
    return this.add(new Histogram(name, help, labels, buckets));
  }
  gauge(name: string, help: string, labels: readonly string[]): Gauge {
    return this.add(new Gauge(name, help, labels));
  }

  private add<T extends Metric>(m: T): T {
    this.metrics.push(m);
    return m;
  }

  /** the exposition text, `text/plain; version=0.0.4` */
  render(): string {
    const out: string[] = [];
    for (const m of this.metrics) m.render(out);
    return `${out.join('\n')}\n`;
  }
}
