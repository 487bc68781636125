// The artifact transfers of runs whose root is in S3: a task's inputs downloaded into its staging
// directory before its Pod, its outputs uploaded after it (staging.ts). A transfer may take minutes,
// and the Run controller has one worker, so a reconcile never waits for one: it starts the transfer
// here, records the task as waiting on it and returns; when the transfer ends its run is queued
// again, and that pass reads the outcome. Like a kubelet's image pull, the work lives in memory only:
// after a restart a task still waiting simply starts it again, which is safe because a download
// overwrites the same staging files and an upload the same keys.
import type { ObjectKey } from '../../api/meta.js';

export type TransferKind = 'inputs' | 'outputs';

export type TransferOutcome<T> = { state: 'running' } | { state: 'succeeded'; value: T } | { state: 'failed'; error: Error };

interface Entry {
  run: ObjectKey;
  runUid: string;
  abort: AbortController;
  outcome: TransferOutcome<unknown>;
  /** settles when the work has ended (or never started, once canceled): never rejects */
  ended: Promise<void>;
  cleanup?: () => Promise<void>;
}

export interface TransferTrackerOptions {
  /** transfers running at once; the rest wait for a slot (default 4) */
  concurrency?: number;
  /** called when a transfer ends (not when a canceled one does): the run's next pass reads its outcome */
  onEnd: (run: ObjectKey) => void;
}

/** Transfers keyed by run uid, task Pod (whose name names the task, its attempt and the run's retry generation) and direction. */
export class TransferTracker {
  private readonly entries = new Map<string, Entry>();
  private readonly limit: number;
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly opts: TransferTrackerOptions) {
    this.limit = Math.max(1, opts.concurrency ?? 4);
  }

  private static key(runUid: string, podName: string, kind: TransferKind): string {
    return `${runUid}/${podName}/${kind}`;
  }

  /** the transfer of a task Pod, undefined when none was started (or it was taken or canceled) */
  get<T>(runUid: string, podName: string, kind: TransferKind): TransferOutcome<T> | undefined {
    return this.entries.get(TransferTracker.key(runUid, podName, kind))?.outcome as TransferOutcome<T> | undefined;
  }

  /**
   * Starts `work` for a task Pod unless a transfer of it is known already. `work` gets a signal that
   * aborts when the run's transfers are canceled; `cleanup` runs once a canceled transfer has ended
   * (its files are nobody's any more).
   */
  start<T>(run: ObjectKey, runUid: string, podName: string, kind: TransferKind, work: (signal: AbortSignal) => Promise<T>, cleanup?: () => Promise<void>): void {
    const key = TransferTracker.key(runUid, podName, kind);
    if (this.entries.has(key)) return;
    const abort = new AbortController();
    const entry: Entry = { run, runUid, abort, outcome: { state: 'running' }, ended: Promise.resolve(), ...(cleanup ? { cleanup } : {}) };
    entry.ended = (async () => {
      await this.acquire();
      try {
        abort.signal.throwIfAborted();
        entry.outcome = { state: 'succeeded', value: await work(abort.signal) };
      } catch (e) {
        entry.outcome = { state: 'failed', error: e instanceof Error ? e : new Error(String(e)) };
      } finally {
        this.release();
      }
      if (abort.signal.aborted) await cleanup?.().catch(() => undefined);
      else this.opts.onEnd(run);
    })();
    this.entries.set(key, entry);
  }

  /** forgets the ended transfers of a task Pod whose outcome the run has recorded */
  forget(runUid: string, podName: string): void {
    for (const kind of ['inputs', 'outputs'] as const) {
      const key = TransferTracker.key(runUid, podName, kind);
      const e = this.entries.get(key);
      if (e && e.outcome.state !== 'running') this.entries.delete(key);
    }
  }

  /**
   * Cancels every transfer of a run (ended, terminated, deleted): a running one is aborted between
   * objects and its outcome ignored, one still waiting for a slot never starts.
   */
  cancelRun(match: { uid?: string; key?: ObjectKey }): void {
    for (const [k, e] of this.entries) {
      const hit = match.uid !== undefined ? e.runUid === match.uid : e.run.namespace === match.key?.namespace && e.run.name === match.key?.name;
      if (!hit) continue;
      this.entries.delete(k);
      // a running one cleans up as it ends (start()); an ended one now
      if (e.outcome.state === 'running') e.abort.abort(new Error('the run no longer needs this transfer'));
      else void e.cleanup?.().catch(() => undefined);
    }
  }

  /** how many transfers are known (running, waiting, or ended and not yet recorded) */
  get size(): number {
    return this.entries.size;
  }

  /** waits until every transfer started so far has ended (for shutdown and tests) */
  async idle(): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => e.ended));
  }

  private async acquire(): Promise<void> {
    if (this.running < this.limit) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    // the slot passes straight to the next waiting transfer
    if (next) next();
    else this.running--;
  }
}
