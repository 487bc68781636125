// Timers of any length. Node fires a setTimeout longer than 2^31−1 ms (about 24.8 days) after 1 ms,
// with a TimeoutOverflowWarning: a Job's 40-day deadline, a monthly cron or a long back-off would
// spin the server. Every delay in Skiff goes through here, and long ones are chained from
// shorter timeouts until the full delay has passed.

/** the longest delay Node's setTimeout honours */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export interface Timer {
  /** stop it; calling it again or after it fired does nothing */
  clear(): void;
  /** the timer no longer keeps the process alive */
  unref(): Timer;
  ref(): Timer;
  /** whether it is still waiting */
  readonly pending: boolean;
}

class LongTimer implements Timer {
  private handle: NodeJS.Timeout | undefined;
  private refed = true;
  private readonly due: number;

  constructor(private readonly fn: () => void, delayMs: number) {
    const ms = Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 0;
    this.due = Date.now() + ms;
    this.arm(ms);
  }

  private arm(ms: number): void {
    const step = Math.min(ms, MAX_TIMEOUT_MS);
    this.handle = setTimeout(() => {
      const left = this.due - Date.now();
      // a chained link ends early only when the delay was longer than one timeout could hold
      if (ms > MAX_TIMEOUT_MS && left > 0) return this.arm(left);
      this.handle = undefined;
      this.fn();
    }, step);
    if (!this.refed) this.handle.unref();
  }

  get pending(): boolean {
    return this.handle !== undefined;
  }

  clear(): void {
    if (this.handle) clearTimeout(this.handle);
    this.handle = undefined;
  }

  unref(): Timer {
    this.refed = false;
    this.handle?.unref();
    return this;
  }

  ref(): Timer {
    this.refed = true;
    this.handle?.ref();
    return this;
  }
}

/** call fn once after delayMs (any length; negative or NaN means now) */
export function after(delayMs: number, fn: () => void): Timer {
  return new LongTimer(fn, delayMs);
}

/** call fn every periodMs until cleared; each period may be of any length */
export function every(periodMs: number, fn: () => void): Timer {
  let current: Timer;
  let refed = true;
  let stopped = false;
  const schedule = (): void => {
    current = after(periodMs, () => {
      if (stopped) return;
      schedule();
      fn();
    });
    if (!refed) current.unref();
  };
  schedule();
  return {
    clear(): void {
      stopped = true;
      current.clear();
    },
    unref(): Timer {
      refed = false;
      current.unref();
      return this;
    },
    ref(): Timer {
      refed = true;
      current.ref();
      return this;
    },
    get pending(): boolean {
      return !stopped;
    },
  };
}

/** a promise that resolves after delayMs; the signal rejects it early with the signal's reason */
export function sleep(delayMs: number, opts: { signal?: AbortSignal; unref?: boolean } = {}): Promise<void> {
  const { signal } = opts;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      t.clear();
      reject(signal?.reason);
    };
    const t = after(delayMs, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    if (opts.unref) t.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
