// The benchmark's own seeded PRNG (mulberry32, two draws per double), used only to build problem
// instances: BBOB's x_opt, f_opt and rotations, and the random reference points of the regret
// normalisation. It is separate from the search algorithms' Rng on purpose: a change to Skiff's
// algorithms must never change the functions they are measured on, or results from two versions
// of Skiff would not be comparable.

export class BenchRng {
  private s: number;

  constructor(seed: number) {
    if (!Number.isInteger(seed)) throw new Error(`bench rng: seed must be an integer, got ${seed}`);
    // fold the seed through one round of the output function so that nearby seeds start far apart
    this.s = seed >>> 0;
    this.next32();
  }

  /** 32 random bits as an unsigned integer */
  next32(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** a uniform double in [0, 1) with 53 random bits */
  uniform(): number {
    const hi = this.next32() >>> 5;
    const lo = this.next32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  range(lo: number, hi: number): number {
    return lo + (hi - lo) * this.uniform();
  }

  /** a standard normal deviate (Box–Muller, one of the pair) */
  normal(): number {
    let u = 0;
    while (u === 0) u = this.uniform();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.uniform());
  }

  /** +1 or -1 with equal probability */
  sign(): number {
    return this.uniform() < 0.5 ? -1 : 1;
  }

  /** a uniformly random permutation of 0..n-1 */
  permutation(n: number): number[] {
    const p = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(this.uniform() * (i + 1));
      const t = p[i] as number;
      p[i] = p[j] as number;
      p[j] = t;
    }
    return p;
  }
}

/** A 32-bit seed from a label and numbers (FNV-1a), so each problem instance has its own stream. */
export function seedOf(...parts: (string | number)[]): number {
  let h = 0x811c9dc5;
  const s = parts.join('/');
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
