// A binary heap that also finds its items by key, so a workload can leave the middle of a queue
// (deleted, moved aside as inadmissible) in O(log n), as Kueue's pending-workloads heap allows.

export class KeyedHeap<T> {
  private items: T[] = [];
  private index = new Map<string, number>();

  constructor(
    private readonly keyOf: (t: T) => string,
    private readonly less: (a: T, b: T) => boolean,
  ) {}

  get size(): number {
    return this.items.length;
  }

  has(key: string): boolean {
    return this.index.has(key);
  }

  get(key: string): T | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.items[i];
  }

  peek(): T | undefined {
    return this.items[0];
  }

  /** Adds the item, or replaces the one with its key and restores the order. */
  push(item: T): void {
    const key = this.keyOf(item);
    const at = this.index.get(key);
    if (at !== undefined) {
      this.items[at] = item;
      this.fix(at);
      return;
    }
    this.items.push(item);
    this.index.set(key, this.items.length - 1);
    this.up(this.items.length - 1);
  }

  /** Adds many items: one heapify when they are many, which is linear instead of n log n. */
  pushMany(items: T[]): void {
    if (items.length < 16 || items.length < this.items.length / 4) {
      for (const it of items) this.push(it);
      return;
    }
    for (const it of items) {
      const key = this.keyOf(it);
      const at = this.index.get(key);
      if (at !== undefined) this.items[at] = it;
      else {
        this.index.set(key, this.items.length);
        this.items.push(it);
      }
    }
    this.rebuild();
  }

  /** Removes the items with these keys; returns them. Linear when they are many. */
  removeMany(keys: Iterable<string>): T[] {
    const set = keys instanceof Set ? (keys as Set<string>) : new Set(keys);
    if (set.size < 16 || set.size < this.items.length / 8) {
      const out: T[] = [];
      for (const k of set) {
        const it = this.remove(k);
        if (it !== undefined) out.push(it);
      }
      return out;
    }
    const out: T[] = [];
    const kept: T[] = [];
    for (const it of this.items) (set.has(this.keyOf(it)) ? out : kept).push(it);
    this.items = kept;
    this.index = new Map(kept.map((it, i) => [this.keyOf(it), i]));
    this.rebuild();
    return out;
  }

  pop(): T | undefined {
    if (this.items.length === 0) return undefined;
    return this.removeAt(0);
  }

  remove(key: string): T | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.removeAt(i);
  }

  /** the items in no particular order */
  values(): T[] {
    return this.items.slice();
  }

  /** Re-establishes the order after the comparator's inputs changed for many items at once. */
  rebuild(): void {
    for (let i = (this.items.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  private removeAt(i: number): T {
    const items = this.items;
    const out = items[i] as T;
    const last = items.pop() as T;
    this.index.delete(this.keyOf(out));
    if (i < items.length) {
      items[i] = last;
      this.index.set(this.keyOf(last), i);
      this.fix(i);
    }
    return out;
  }

  private fix(i: number): void {
    if (!this.up(i)) this.down(i);
  }

  private swap(i: number, j: number): void {
    const items = this.items;
    const a = items[i] as T;
    const b = items[j] as T;
    items[i] = b;
    items[j] = a;
    this.index.set(this.keyOf(b), i);
    this.index.set(this.keyOf(a), j);
  }

  private up(i: number): boolean {
    let moved = false;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(this.items[i] as T, this.items[p] as T)) break;
      this.swap(i, p);
      i = p;
      moved = true;
    }
    return moved;
  }

  private down(i: number): void {
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const r = l + 1;
      let m = l;
      if (r < n && this.less(this.items[r] as T, this.items[l] as T)) m = r;
      if (!this.less(this.items[m] as T, this.items[i] as T)) return;
      this.swap(i, m);
      i = m;
    }
  }
}
