// The controllers' own health on `/metrics`, under controller-runtime's names, labels and buckets
// (v0.24: pkg/internal/controller/metrics and pkg/internal/metrics/workqueue.go), so the dashboards
// and alerts written for an operator built on it read Skiff's controllers unchanged: reconciles per
// controller by result and how long they take, its workers, and its work queue as client-go's
// workqueue metrics describe one (the queue's name is the controller's).
//
// Counters and histograms are bound once per controller, so a reconcile costs a few increments; the
// gauges (depth, workers, work in progress) are read from the controllers when collected.
//
// The registry is passed in as a MetricsSink, which src/server/metrics.ts's MetricsRegistry is: the
// control layer declares what it reports without depending on the server that serves it.

/** one counter series */
export interface CounterChild {
  inc(by?: number): void;
}

/** one histogram series */
export interface HistogramChild {
  observe(v: number): void;
}

export interface MetricsSink {
  counter(name: string, help: string, labels: readonly string[]): { child(values: readonly string[]): CounterChild };
  histogram(name: string, help: string, labels: readonly string[], buckets: readonly number[]): { child(values: readonly string[]): HistogramChild };
  collected(name: string, help: string, labels: readonly string[], type: 'counter' | 'gauge', read: () => { labels: readonly string[]; value: number }[]): unknown;
}

type SinkCounter = ReturnType<MetricsSink['counter']>;
type SinkHistogram = ReturnType<MetricsSink['histogram']>;

/** what a work queue reports as it goes (queue.ts) */
export interface QueueObserver {
  adds: CounterChild;
  retries: CounterChild;
  /** seconds from add to get */
  queueDuration: HistogramChild;
  /** seconds from get to done */
  workDuration: HistogramChild;
}

/** controller-runtime's `result` label */
export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after';

/** what a controller reports per reconcile (controller.ts) */
export interface ReconcileObserver {
  total: Record<ReconcileResult, CounterChild>;
  errors: CounterChild;
  terminalErrors: CounterChild;
  /** seconds per reconcile */
  time: HistogramChild;
}

/** the queue's side that the gauges read */
export interface ObservedQueue {
  readonly depth: number;
  inProgress(): { total: number; longest: number };
  instrument(o: QueueObserver): void;
}

/** the controller's side that the gauges read */
export interface ObservedController {
  readonly name: string;
  readonly workers: number;
  readonly activeWorkers: number;
}

/** controller_runtime_reconcile_time_seconds' buckets */
export const reconcileTimeBuckets: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
  1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** the work queue histograms' buckets: Prometheus' ExponentialBuckets(10e-9, 10, 12), 10 ns to 1000 s */
export const queueDurationBuckets: readonly number[] = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

const results: readonly ReconcileResult[] = ['error', 'requeue_after', 'requeue', 'success'];

export class ControlMetrics {
  private readonly controllers = new Map<string, ObservedController>();
  private readonly queues: { name: string; controller: string; queue: ObservedQueue }[] = [];
  private readonly reconcileTotal: SinkCounter;
  private readonly reconcileErrors: SinkCounter;
  private readonly terminalErrors: SinkCounter;
  private readonly reconcileTime: SinkHistogram;
  private readonly adds: SinkCounter;
  private readonly retries: SinkCounter;
  private readonly queueDuration: SinkHistogram;
  private readonly workDuration: SinkHistogram;

  constructor(sink: MetricsSink) {
    const c = ['controller'];
    this.reconcileTotal = sink.counter('controller_runtime_reconcile_total', 'Total number of reconciliations per controller', ['controller', 'result']);
    this.reconcileErrors = sink.counter('controller_runtime_reconcile_errors_total', 'Total number of reconciliation errors per controller', c);
    this.terminalErrors = sink.counter('controller_runtime_terminal_reconcile_errors_total', 'Total number of terminal reconciliation errors per controller', c);
    this.reconcileTime = sink.histogram('controller_runtime_reconcile_time_seconds', 'Length of time per reconciliation per controller', c, reconcileTimeBuckets);
    const controllers = (value: (o: ObservedController) => number) => () => [...this.controllers.values()].map((o) => ({ labels: [o.name], value: value(o) }));
    sink.collected('controller_runtime_max_concurrent_reconciles', 'Maximum number of concurrent reconciles per controller', c, 'gauge', controllers((o) => o.workers));
    sink.collected('controller_runtime_active_workers', 'Number of currently used workers per controller', c, 'gauge', controllers((o) => o.activeWorkers));

    const q = ['name', 'controller'];
    // a queue without priorities: controller-runtime's plain work queue reports priority ""
    sink.collected('workqueue_depth', 'Current depth of workqueue by workqueue and priority', ['name', 'controller', 'priority'], 'gauge', () => this.queues.map((e) => ({ labels: [e.name, e.controller, ''], value: e.queue.depth })));
    this.adds = sink.counter('workqueue_adds_total', 'Total number of adds handled by workqueue', q);
    this.queueDuration = sink.histogram('workqueue_queue_duration_seconds', 'How long in seconds an item stays in workqueue before being requested', q, queueDurationBuckets);
    this.workDuration = sink.histogram('workqueue_work_duration_seconds', 'How long in seconds processing an item from workqueue takes.', q, queueDurationBuckets);
    const progress = (pick: (p: { total: number; longest: number }) => number) => () => this.queues.map((e) => ({ labels: [e.name, e.controller], value: pick(e.queue.inProgress()) }));
    sink.collected('workqueue_unfinished_work_seconds',
      'How many seconds of work has been done that is in progress and hasn\'t been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
      q, 'gauge', progress((p) => p.total));
    sink.collected('workqueue_longest_running_processor_seconds', 'How many seconds has the longest running processor for workqueue been running.', q, 'gauge', progress((p) => p.longest));
    this.retries = sink.counter('workqueue_retries_total', 'Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, explicit RequeueAfter or AddAfter calls)', q);
  }

  /**
   * A controller and its queue (named after it). Names must be unique, as controller-runtime requires:
   * two controllers under one name would report into the same series.
   */
  addController(c: ObservedController, queue: ObservedQueue): ReconcileObserver {
    if (this.controllers.has(c.name)) throw new Error(`controller with name ${c.name} already exists. Controller names must be unique to avoid multiple controllers reporting to the same metric`);
    this.controllers.set(c.name, c);
    this.addQueue(c.name, c.name, queue);
    // every result's series exists from the start (0), as controller-runtime's initMetrics makes them
    const total = Object.fromEntries(results.map((r) => [r, this.reconcileTotal.child([c.name, r])])) as Record<ReconcileResult, CounterChild>;
    // the time histogram's series, from the first reconcile on (controller-runtime's too)
    let time: HistogramChild | undefined;
    const histogram = this.reconcileTime;
    return {
      total,
      errors: this.reconcileErrors.child([c.name]),
      terminalErrors: this.terminalErrors.child([c.name]),
      time: { observe: (v) => (time ??= histogram.child([c.name])).observe(v) },
    };
  }

  /** a work queue that is not a controller's (the garbage collector's): `controller` is then "" */
  addQueue(name: string, controller: string, queue: ObservedQueue): void {
    const labels = [name, controller];
    this.queues.push({ name, controller, queue });
    queue.instrument({
      adds: this.adds.child(labels),
      retries: this.retries.child(labels),
      queueDuration: this.queueDuration.child(labels),
      workDuration: this.workDuration.child(labels),
    });
  }
}
