// Prometheus metrics on `GET /metrics`, kept in a prom-client registry, which renders the text
// exposition format and adds the process's own metrics (prom-client's defaults: CPU, resident
// memory, event-loop lag, GC).
//
// The gateway counts every inference request into four series. prom-client's labelled children
// look their series up on every call (a label hash and a validation: about 1 µs per observe and inc
// on this machine, against about 10 ns for a series bound once), so the gateway's series are bound
// per revision here and handed to the registry as prom-client metrics when it collects.
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { Metric } from 'prom-client';

interface Sample {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/** What prom-client's registry reads from a metric it renders. */
abstract class BoundMetric {
  readonly aggregator = 'sum';
  protected readonly series = new Map<string, { labels: Record<string, string> }>();

  constructor(readonly name: string, readonly help: string, readonly labelNames: readonly string[], readonly type: 'counter' | 'gauge' | 'histogram') {}

  protected labelsOf(values: readonly string[]): Record<string, string> {
    if (values.length !== this.labelNames.length) throw new Error(`metric ${this.name}: ${values.length} label values for labels ${this.labelNames.join(', ')}`);
    const out: Record<string, string> = {};
    this.labelNames.forEach((n, i) => (out[n] = values[i] as string));
    return out;
  }

  protected abstract samples(): Sample[];

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.samples() };
  }
}

interface CounterSeries {
  labels: Record<string, string>;
  n: number;
}

export class Counter extends BoundMetric {
  declare protected readonly series: Map<string, CounterSeries>;

  constructor(name: string, help: string, labelNames: readonly string[]) {
    super(name, help, labelNames, 'counter');
  }

  private seriesFor(values: readonly string[]): CounterSeries {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      s = { labels: this.labelsOf(values), n: 0 };
      this.series.set(key, s);
    }
    return s;
  }

  inc(values: readonly string[], by = 1): void {
    this.seriesFor(values).n += by;
  }

  value(values: readonly string[]): number {
    return this.series.get(values.join('\u0000'))?.n ?? 0;
  }

  /** one series, for callers that count into it often (no label lookup per call) */
  child(values: readonly string[]): { inc(by?: number): void } {
    const s = this.seriesFor(values);
    return { inc: (by = 1) => void (s.n += by) };
  }

  protected samples(): Sample[] {
    return [...this.series.values()].map((s) => ({ value: s.n, labels: s.labels }));
  }
}

interface HistogramSeries {
  labels: Record<string, string>;
  /** per bucket here, made cumulative when collected */
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram extends BoundMetric {
  declare protected readonly series: Map<string, HistogramSeries>;

  constructor(name: string, help: string, labelNames: readonly string[], readonly buckets: readonly number[]) {
    super(name, help, labelNames, 'histogram');
  }

  private seriesFor(values: readonly string[]): HistogramSeries {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      s = { labels: this.labelsOf(values), counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    return s;
  }

  observe(values: readonly string[], v: number): void {
    this.record(this.seriesFor(values), v);
  }

  /** one series, for callers that observe into it often (no label lookup per call) */
  child(values: readonly string[]): { observe(v: number): void } {
    const s = this.seriesFor(values);
    return { observe: (v) => this.record(s, v) };
  }

  private record(s: HistogramSeries, v: number): void {
    let i = 0;
    while (i < this.buckets.length && v > (this.buckets[i] as number)) i++;
    if (i < this.buckets.length) s.counts[i] = (s.counts[i] ?? 0) + 1;
    s.sum += v;
    s.count++;
  }

  count(values: readonly string[]): number {
    return this.series.get(values.join('\u0000'))?.count ?? 0;
  }

  protected samples(): Sample[] {
    const out: Sample[] = [];
    for (const s of this.series.values()) {
      let acc = 0;
      this.buckets.forEach((b, i) => {
        acc += s.counts[i] ?? 0;
        out.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: b }, value: acc });
      });
      out.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count });
      out.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      out.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return out;
  }
}

interface GaugeSeries {
  labels: Record<string, string>;
  v: number;
}

export class Gauge extends BoundMetric {
  declare protected readonly series: Map<string, GaugeSeries>;

  constructor(name: string, help: string, labelNames: readonly string[]) {
    super(name, help, labelNames, 'gauge');
  }

  private seriesFor(values: readonly string[]): GaugeSeries {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      s = { labels: this.labelsOf(values), v: 0 };
      this.series.set(key, s);
    }
    return s;
  }

  set(values: readonly string[], v: number): void {
    this.seriesFor(values).v = v;
  }

  inc(values: readonly string[], by = 1): void {
    this.seriesFor(values).v += by;
  }

  dec(values: readonly string[], by = 1): void {
    this.seriesFor(values).v -= by;
  }

  value(values: readonly string[]): number {
    return this.series.get(values.join('\u0000'))?.v ?? 0;
  }

  /** one series, for callers that change it often (no label lookup per call) */
  child(values: readonly string[]): { inc(): void; dec(): void; set(v: number): void } {
    const s = this.seriesFor(values);
    return { inc: () => void s.v++, dec: () => void s.v--, set: (v) => void (s.v = v) };
  }

  protected samples(): Sample[] {
    return [...this.series.values()].map((s) => ({ value: s.v, labels: s.labels }));
  }
}

/** A metric kept elsewhere (the substrate's CPU and memory samples), whose series are read when collected. */
export class Collected extends BoundMetric {
  constructor(name: string, help: string, labelNames: readonly string[], type: 'counter' | 'gauge', private readonly read: () => { labels: readonly string[]; value: number }[]) {
    super(name, help, labelNames, type);
  }

  protected samples(): Sample[] {
    return this.read().map((s) => ({ value: s.value, labels: this.labelsOf(s.labels) }));
  }
}

/** Latency buckets in seconds, from 0.5 ms to 60 s. */
export const latencyBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class MetricsRegistry {
  /** prom-client's registry: other metrics (prom-client's Gauge, Summary, ...) register here too */
  readonly registry = new Registry();

  constructor(opts: { processMetrics?: boolean } = {}) {
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  counter(name: string, help: string, labels: readonly string[]): Counter {
    return this.add(new Counter(name, help, labels));
  }

  gauge(name: string, help: string, labels: readonly string[]): Gauge {
    return this.add(new Gauge(name, help, labels));
  }

  histogram(name: string, help: string, labels: readonly string[], buckets: readonly number[] = latencyBuckets): Histogram {
    return this.add(new Histogram(name, help, labels, buckets));
  }

  collected(name: string, help: string, labels: readonly string[], type: 'counter' | 'gauge', read: () => { labels: readonly string[]; value: number }[]): Collected {
    return this.add(new Collected(name, help, labels, type, read));
  }

  private add<T extends BoundMetric>(m: T): T {
    // the registry reads only name, type, aggregator and get() of what it holds
    this.registry.registerMetric(m as unknown as Metric);
    return m;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** the exposition text, in `contentType` */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
