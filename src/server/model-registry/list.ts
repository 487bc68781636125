// One page of a registry list, as upstream's list parameters ask: `filterQuery` (filter.ts),
// `orderBy` (CREATE_TIME, LAST_UPDATE_TIME, ID), `sortOrder` (ASC by default), `pageSize` (a decimal
// string) and `nextPageToken`, an opaque cursor: the sort key and id of the page's last item, so a
// page boundary stays put while entities are added. The answer is `{items, nextPageToken, pageSize, size}`.
import type { MetadataValue } from '../../api/model-registry.js';
import { isPlainObject } from '../../util/objects.js';
import { badRequest } from './errors.js';
import { FilterError, matches, parseFilter, type Filter, type FilterSubject, type Scalar, type ValueType } from './filter.js';

export type Shaped = Record<string, unknown>;

export interface ListBody {
  items: Shaped[];
  nextPageToken: string;
  pageSize: number;
  size: number;
}

const DEFAULT_PAGE_SIZE = 100;
const orderFields = { CREATE_TIME: 'createTimeSinceEpoch', LAST_UPDATE_TIME: 'lastUpdateTimeSinceEpoch', ID: 'id' } as const;

const param = (url: URL, name: string): string | undefined => {
  const v = url.searchParams.get(name);
  return v === null || v === '' ? undefined : v;
};

/** what a filter reads of an entity in upstream's JSON */
export function subjectOf(item: Shaped, own?: Set<string>): FilterSubject {
  const props = (isPlainObject(item.customProperties) ? item.customProperties : {}) as Record<string, MetadataValue>;
  return {
    own: (name) => {
      if (name === 'customProperties' || (own && !own.has(name))) return undefined;
      const v = item[name];
      return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : undefined;
    },
    custom: (name) => {
      const p = props[name];
      if (!p) return undefined;
      switch (p.metadataType) {
        case 'MetadataStringValue': return { type: 'string_value' as ValueType, value: p.string_value };
        case 'MetadataIntValue': return { type: 'int_value' as ValueType, value: Number(p.int_value) as Scalar };
        case 'MetadataDoubleValue': return { type: 'double_value' as ValueType, value: p.double_value };
        case 'MetadataBoolValue': return { type: 'bool_value' as ValueType, value: p.bool_value };
        default: return undefined;
      }
    },
  };
}

/** the request's filterQuery, parsed; a malformed one is a 400 saying what is wrong */
export function filterOf(url: URL): Filter | undefined {
  const src = param(url, 'filterQuery');
  if (src === undefined) return undefined;
  try {
    return parseFilter(src);
  } catch (e) {
    if (e instanceof FilterError) throw badRequest(`filterQuery: invalid filter query: ${e.message}`);
    throw e;
  }
}

function decodeToken(token: string): [number, number] {
  try {
    const v: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === 'number' && Number.isFinite(x))) return v as [number, number];
  } catch {
    // answered below
  }
  throw badRequest(`nextPageToken: ${JSON.stringify(token)} is not a token this server gave`);
}

/**
 * A page of `all` (already in upstream's JSON) as the request's list parameters ask; `own` says which
 * properties of an item a filter reads from the item itself (the rest are custom properties).
 */
export function listPage(all: Shaped[], url: URL, extra?: (item: Shaped) => boolean, own?: (item: Shaped) => Set<string>): ListBody {
  const sizeParam = param(url, 'pageSize');
  if (sizeParam !== undefined && !/^[1-9][0-9]{0,8}$/.test(sizeParam)) throw badRequest(`pageSize: must be a positive integer, not ${JSON.stringify(sizeParam)}`);
  const pageSize = sizeParam === undefined ? DEFAULT_PAGE_SIZE : Number(sizeParam);
  const orderBy = param(url, 'orderBy') ?? 'ID';
  if (!(orderBy in orderFields)) throw badRequest(`orderBy: must be one of CREATE_TIME, LAST_UPDATE_TIME, ID, not ${JSON.stringify(orderBy)}`);
  const sortOrder = (param(url, 'sortOrder') ?? 'ASC').toUpperCase();
  if (sortOrder !== 'ASC' && sortOrder !== 'DESC') throw badRequest(`sortOrder: must be ASC or DESC, not ${JSON.stringify(param(url, 'sortOrder'))}`);
  const filter = filterOf(url);
  const field = orderFields[orderBy as keyof typeof orderFields];
  const key = (i: Shaped): [number, number] => [Number(i[field] ?? 0), Number(i.id)];
  const dir = sortOrder === 'DESC' ? -1 : 1;
  const cmp = (a: [number, number], b: [number, number]): number => dir * (a[0] - b[0] || a[1] - b[1]);
  let items = all.filter((i) => (!filter || matches(filter, subjectOf(i, own?.(i)))) && (!extra || extra(i)));
  items.sort((a, b) => cmp(key(a), key(b)));
  const token = param(url, 'nextPageToken');
  if (token !== undefined) {
    const after = decodeToken(token);
    items = items.filter((i) => cmp(key(i), after) > 0);
  }
  const page = items.slice(0, pageSize);
  const last = page[page.length - 1];
  const nextPageToken = items.length > pageSize && last ? Buffer.from(JSON.stringify(key(last))).toString('base64url') : '';
  return { items: page, nextPageToken, pageSize, size: page.length };
}
