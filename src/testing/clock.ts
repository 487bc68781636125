// A clock tests move by hand. Controllers take `now: () => Date` (the Job and training controllers'
// `now` option); a FakeClock's `now` is that function, and `advance`/`set` move time without
// waiting, so deadlines, TTLs and back-offs are tested at the instant they fall due.
export class FakeClock {
  private t: number;

  constructor(start: Date | number = Date.now()) {
    this.t = typeof start === 'number' ? start : start.getTime();
  }

  /** the time, as a controller reads it */
  readonly now = (): Date => new Date(this.t);

  /** milliseconds since the epoch */
  ms(): number {
    return this.t;
  }

  advance(ms: number): this {
    if (ms < 0) throw new Error(`a clock moves forward: advance(${ms})`);
    this.t += ms;
    return this;
  }

  set(at: Date | number): this {
    this.t = typeof at === 'number' ? at : at.getTime();
    return this;
  }
}
