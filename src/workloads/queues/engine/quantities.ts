// Quota arithmetic in whole numbers, as Kueue keeps it: CPU in millicores, everything else in its
// base unit (bytes, devices, pods). Exact integers keep `request > capacity` free of floating-point
// noise, and print back in Kubernetes' canonical form, so messages read as Kueue's do.
import { parseQuantity } from '../../../api/quantity.js';
import type { Quantity } from './types.js';

/** a float that should be an integer (a parsed "0.1" times 1000) becomes one; a true fraction rounds up, as Quantity.Value() does */
function ceilInt(v: number): number {
  const r = Math.round(v);
  return Math.abs(v - r) <= 1e-9 * Math.max(1, Math.abs(v)) ? r : Math.ceil(v);
}

/** The integer amount of a quantity of `resource`; undefined when it is not a quantity. */
export function toAmount(resource: string, q: Quantity | null | undefined): number | undefined {
  const v = parseQuantity(q);
  if (v === undefined) return undefined;
  return ceilInt(resource === 'cpu' ? v * 1000 : v);
}

const decimalSuffixes: Record<number, string> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };
const binarySuffixes = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/** mantissa × 10^exponent in DecimalSI's canonical form: the largest exponent, a multiple of 3, that keeps the mantissa whole */
function decimalSI(mantissa: number, exponent: number): string {
  if (mantissa === 0) return '0';
  let m = mantissa;
  let e = exponent;
  while (e < 18 && m % 1000 === 0) {
    m /= 1000;
    e += 3;
  }
  return `${m}${decimalSuffixes[e] ?? `e${e}`}`;
}

function isBinaryFormatted(resource: string): boolean {
  return resource === 'memory' || resource === 'ephemeral-storage' || resource.startsWith('hugepages-');
}

/** Prints an amount of `resource` as Kubernetes prints the quantity: "1500m", "24", "36Gi", "2k". */
export function formatAmount(resource: string, amount: number): string {
  if (!Number.isFinite(amount)) return '<unlimited>';
  if (resource === 'cpu') return decimalSI(amount, -3);
  if (isBinaryFormatted(resource) && Math.abs(amount) >= 1024 && amount % 1024 === 0) {
    let m = amount;
    let i = 0;
    while (i < binarySuffixes.length - 1 && m % 1024 === 0) {
      m /= 1024;
      i++;
    }
    return `${m}${binarySuffixes[i]}`;
  }
  return decimalSI(amount, 0);
}
