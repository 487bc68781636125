// Dense linear algebra for the Gaussian process and CMA-ES: row-major n×n Float64Arrays, sizes up
// to about a thousand. Plain loops keep it free of dependencies and fast enough in V8 at those sizes.

/**
 * Cholesky factor L (lower, row-major) of a symmetric positive-definite A, in a new array. Returns
 * undefined when A is not numerically positive definite so the caller can add jitter and retry.
 */
export function cholesky(a: Float64Array, n: number): Float64Array | undefined {
  const l = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    const ri = i * n;
    for (let j = 0; j <= i; j++) {
      const rj = j * n;
      let s = a[ri + j]!;
      for (let k = 0; k < j; k++) s -= l[ri + k]! * l[rj + k]!;
      if (i === j) {
        if (!(s > 0)) return undefined;
        l[ri + i] = Math.sqrt(s);
      } else {
        l[ri + j] = s / l[rj + j]!;
      }
    }
  }
  return l;
}

/**
 * Extends the Cholesky factor of an n×n matrix by one row and column (the new column `col`, length
 * n, and diagonal `diag`), in O(n²) instead of refactoring in O(n³). Undefined when not positive definite.
 */
export function choleskyAppend(l: Float64Array, n: number, col: Float64Array, diag: number): Float64Array | undefined {
  const m = n + 1;
  const out = new Float64Array(m * m);
  for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) out[i * m + j] = l[i * n + j]!;
  const v = solveLower(l, n, col);
  let s = diag;
  for (let k = 0; k < n; k++) {
    out[n * m + k] = v[k]!;
    s -= v[k]! * v[k]!;
  }
  if (!(s > 0)) return undefined;
  out[n * m + n] = Math.sqrt(s);
  return out;
}

/** Solves L x = b for lower-triangular L. */
export function solveLower(l: Float64Array, n: number, b: ArrayLike<number>): Float64Array {
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const ri = i * n;
    let s = b[i]!;
    for (let k = 0; k < i; k++) s -= l[ri + k]! * x[k]!;
    x[i] = s / l[ri + i]!;
  }
  return x;
}

/** Solves Lᵀ x = b for lower-triangular L. */
export function solveUpperT(l: Float64Array, n: number, b: ArrayLike<number>): Float64Array {
  const x = new Float64Array(n);
  for (let i = n - 1; i >= 0; i--) {
    let s = b[i]!;
    for (let k = i + 1; k < n; k++) s -= l[k * n + i]! * x[k]!;
    x[i] = s / l[i * n + i]!;
  }
  return x;
}

/** A⁻¹ from A's Cholesky factor (symmetric, full storage). */
export function choleskyInverse(l: Float64Array, n: number): Float64Array {
  // Row j of t holds column j of L⁻¹ (t = L⁻ᵀ), so both passes below read memory in order.
  const t = new Float64Array(n * n);
  for (let j = 0; j < n; j++) {
    const rj = j * n;
    t[rj + j] = 1 / l[j * n + j]!;
    for (let i = j + 1; i < n; i++) {
      const ri = i * n;
      let s = 0;
      for (let k = j; k < i; k++) s -= l[ri + k]! * t[rj + k]!;
      t[rj + i] = s / l[ri + i]!;
    }
  }
  // A⁻¹[i][j] = Σ_k L⁻¹[k][i]·L⁻¹[k][j] = Σ_{k ≥ max(i,j)} t[i][k]·t[j][k]
  const inv = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    const ri = i * n;
    for (let j = 0; j <= i; j++) {
      const rj = j * n;
      let s = 0;
      for (let k = i; k < n; k++) s += t[ri + k]! * t[rj + k]!;
      inv[ri + j] = s;
      inv[rj + i] = s;
    }
  }
  return inv;
}

/**
 * Eigen decomposition of a symmetric n×n matrix by cyclic Jacobi rotations: eigenvalues and the
 * eigenvectors as columns of B (row-major). Exact enough and simple at CMA-ES's dimensions.
 */
export function symmetricEigen(a: ArrayLike<number>, n: number): { values: Float64Array; vectors: Float64Array } {
  const m = Float64Array.from(a as ArrayLike<number>);
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) off += m[i * n + j]! * m[i * n + j]!;
    if (off < 1e-30) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = m[p * n + q]!;
        if (Math.abs(apq) < 1e-300) continue;
        const app = m[p * n + p]!;
        const aqq = m[q * n + q]!;
        const theta = (aqq - app) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const mkp = m[k * n + p]!;
          const mkq = m[k * n + q]!;
          m[k * n + p] = c * mkp - s * mkq;
          m[k * n + q] = s * mkp + c * mkq;
        }
        for (let k = 0; k < n; k++) {
          const mpk = m[p * n + k]!;
          const mqk = m[q * n + k]!;
          m[p * n + k] = c * mpk - s * mqk;
          m[q * n + k] = s * mpk + c * mqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p]!;
          const vkq = v[k * n + q]!;
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) values[i] = m[i * n + i]!;
  return { values, vectors: v };
}
