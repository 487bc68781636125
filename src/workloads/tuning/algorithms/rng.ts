// A small seeded PRNG for the search algorithms: xoshiro128** seeded through splitmix32. Every
// suggestion must be reproducible from its seed (random_state, or the one the controller derives),
// so no algorithm may call Math.random.

function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spareNormal: number | undefined;

  /** Any finite number is a seed; fractional and large seeds are folded into 32 bits. */
  constructor(seed: number) {
    if (!Number.isFinite(seed)) throw new Error(`rng: seed must be a finite number, got ${seed}`);
    const lo = Math.trunc(seed) | 0;
    const hi = Math.trunc(seed / 4294967296) | 0;
    const st = { s: lo ^ Math.imul(hi, 0x27d4eb2d) };
    this.a = splitmix32(st);
    this.b = splitmix32(st);
    this.c = splitmix32(st);
    this.d = splitmix32(st);
    if ((this.a | this.b | this.c | this.d) === 0) this.d = 1;
  }

  /** The next 32 random bits as an unsigned integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** A uniform double in [0, 1) with 53 random bits. */
  uniform(): number {
    const hi = this.nextU32() >>> 5; // 27 bits
    const lo = this.nextU32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** A uniform double in [lo, hi). */
  range(lo: number, hi: number): number {
    return lo + (hi - lo) * this.uniform();
  }

  /** A normal deviate (Box–Muller; the second deviate of each pair is kept for the next call). */
  normal(mean = 0, sd = 1): number {
    if (this.spareNormal !== undefined) {
      const z = this.spareNormal;
      this.spareNormal = undefined;
      return mean + sd * z;
    }
    let u = 0;
    while (u === 0) u = this.uniform();
    const v = this.uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spareNormal = r * Math.sin(2 * Math.PI * v);
    return mean + sd * r * Math.cos(2 * Math.PI * v);
  }

  /** A uniform integer in [lo, hi], both inclusive, without modulo bias. */
  int(lo: number, hi: number): number {
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || hi < lo) throw new Error(`rng: bad integer range [${lo}, ${hi}]`);
    const n = hi - lo + 1;
    if (n <= 4294967296) {
      const limit = 4294967296 - (4294967296 % n);
      for (;;) {
        const x = this.nextU32();
        if (x < limit) return lo + (x % n);
      }
    }
    return lo + Math.floor(this.uniform() * n);
  }

  /** A uniformly chosen element. */
  choice<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('rng: choice from an empty list');
    return items[this.int(0, items.length - 1)] as T;
  }

  /** An index drawn with probability proportional to its (non-negative) weight. */
  weighted(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w > 0 ? w : 0;
    if (!(total > 0)) return this.int(0, weights.length - 1);
    let r = this.uniform() * total;
    for (let i = 0; i < weights.length; i++) {
      const w = weights[i] as number;
      if (w <= 0) continue;
      r -= w;
      if (r < 0) return i;
    }
    for (let i = weights.length - 1; i >= 0; i--) if ((weights[i] as number) > 0) return i;
    return weights.length - 1;
  }

  /** Shuffles in place (Fisher–Yates) and returns the array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      const t = items[i] as T;
      items[i] = items[j] as T;
      items[j] = t;
    }
    return items;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** A 32-bit hash of a string (FNV-1a), to derive sub-seeds from names. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
