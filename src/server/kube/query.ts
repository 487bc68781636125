// Query parameters as kube-apiserver reads them.
import { ApiError, StatusReason } from '../../api/errors.js';

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

export function qBool(url: URL, name: string): boolean {
  const v = url.searchParams.get(name);
  // Go's strconv.ParseBool spellings: the Python client sends follow=True
  return v === '' || (v !== null && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v));
}
