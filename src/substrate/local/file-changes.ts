// Waiting for a log file to grow, for the readers that follow one (logs -f, attach): woken by a
// watch on the file, by the caller's signal, or after a poll interval at the latest (a watch can
// miss changes, and the file may not exist yet when the wait starts).
import fs from 'node:fs';
import { after } from '../../util/timers.js';

export class FileChanges {
  private watcher: fs.FSWatcher | undefined;
  private wake: (() => void) | undefined;
  private readonly onAbort = (): void => this.wake?.();

  constructor(private readonly pollMs: number, private readonly signal: AbortSignal) {
    signal.addEventListener('abort', this.onAbort);
  }

  /** watches `file` from now on (once it exists) */
  watch(file: string): void {
    this.watcher = fs.watch(file, () => this.wake?.());
    this.watcher.on('error', () => this.watcher?.close());
  }

  /** resolves at the next change, abort or poll */
  next(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = after(this.pollMs, () => { this.wake = undefined; resolve(); });
      this.wake = () => { timer.clear(); this.wake = undefined; resolve(); };
      if (this.signal.aborted) this.wake();
    });
  }

  close(): void {
    this.signal.removeEventListener('abort', this.onAbort);
    this.watcher?.close();
  }
}
