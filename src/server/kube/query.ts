// Query parameters as kube-apiserver reads them. The options of list, watch and writes are decoded
// and validated whole in options.ts; these read the single parameters of subresources (logs, exec).
import { ApiError, StatusReason } from '../../api/errors.js';
import { kubeBool } from './options.js';

export function q(url: URL, name: string): string | undefined {
  return url.searchParams.get(name) ?? undefined;
}

export function qInt(url: URL, name: string): number | undefined {
  const v = url.searchParams.get(name);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new ApiError(StatusReason.BadRequest, `query parameter ${name}=${JSON.stringify(v)} must be a non-negative integer`);
  return n;
}

/** a boolean as kube-apiserver converts one: absent, `0` and `false` (any case) are false, the rest true */
export function qBool(url: URL, name: string): boolean {
  return kubeBool(url, name) ?? false;
}
