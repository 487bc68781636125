// Server-side printing: a get, list or watch whose Accept asks for
// `application/json;as=Table;v=v1;g=meta.k8s.io` answers a meta.k8s.io Table, the columns `kubectl
// get` prints. Kubernetes' kinds print as kube-apiserver prints them (table-builtin.ts); every other
// kind as the API server prints a CRD: NAME, then the kind's printerColumns, or AGE alone. The other
// shapes an Accept may ask for, PartialObjectMetadata(List) (client-go's metadata client), are here too.
import type { ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { KindDef, PrinterColumn } from '../../api/registry.js';
import { JsonPath } from '../../util/jsonpath.js';
import { send } from '../body.js';
import { builtinPrinter, commonColumns, since, type ColumnDefinition, type PrintedRow, type RowCondition } from './table-builtin.js';

export type { ColumnDefinition } from './table-builtin.js';

/** a response in another shape than the objects themselves, as the Accept header's `as=` asks */
export interface ResponseView {
  as: 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';
  /** meta.k8s.io/v1 or meta.k8s.io/v1beta1 */
  apiVersion: string;
  /** the media type the answer is written in */
  mediaType: 'application/json' | 'application/yaml';
}

export interface TableRow {
  cells: unknown[];
  conditions?: RowCondition[];
  object: unknown;
}

export interface Table {
  kind: 'Table';
  apiVersion: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  columnDefinitions: ColumnDefinition[] | null;
  rows: TableRow[];
}

interface Clause {
  type: string;
  subType: string;
  params: Record<string, string>;
  q: number;
}

/** an Accept header's media ranges, best first: by q, then the more specific, else in their order */
function parseAccept(header: string): Clause[] {
  const out: Clause[] = [];
  for (const part of header.split(',')) {
    const [range = '', ...rawParams] = part.split(';').map((s) => s.trim());
    const [type = '', subType = ''] = range.toLowerCase().split('/');
    if (!type || !subType) continue;
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const key = p.slice(0, eq).trim();
      const value = p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
      if (key === 'q') q = Number(value) || 0;
      else params[key] = value;
    }
    out.push({ type, subType, params, q });
  }
  const rank = (c: Clause): number => (c.type === '*' ? 0 : c.subType === '*' ? 1 : 2);
  return out.map((c, i) => ({ c, i })).sort((a, b) => b.c.q - a.c.q || rank(b.c) - rank(a.c) || a.i - b.i).map((x) => x.c);
}

/** the media types Skiff writes, in the order kube-apiserver prefers them */
const served = ['application/json', 'application/yaml'] as const;

/**
 * What a get, list or watch answers, as kube-apiserver negotiates it: the first media range that
 * names a media type Skiff writes and a shape it can take. A Table or PartialObjectMetadata(List)
 * in meta.k8s.io v1 or v1beta1 is such a shape; so are the objects themselves. Undefined: the objects. A request whose every range
 * asks for a shape Skiff cannot give is refused with 406; one that names no type Skiff writes keeps
 * getting JSON, as before.
 */
export function negotiateView(accept: string | undefined): ResponseView | undefined {
  if (!accept) return undefined;
  let converting = false;
  for (const c of parseAccept(accept)) {
    for (const mediaType of served) {
      const [type, subType] = mediaType.split('/');
      if (!((c.type === type && (c.subType === subType || c.subType === '*')) || (c.type === '*' && c.subType === '*'))) continue;
      const { as, g, v } = c.params;
      if (as === undefined && g === undefined && v === undefined) return undefined;
      converting = true;
      if ((as === 'Table' || as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') && g === 'meta.k8s.io' && (v === 'v1' || v === 'v1beta1')) {
        return { as, apiVersion: `${g}/${v}`, mediaType };
      }
    }
  }
  if (converting) throw new ApiError(StatusReason.NotAcceptable, `only the following media types are accepted: ${served.join(', ')}`);
  return undefined;
}

type IncludeObject = 'None' | 'Metadata' | 'Object';

/** `?includeObject=`, checked as kube-apiserver's ValidateTableOptions checks it */
export function includeObjectOf(url: URL): IncludeObject {
  const v = url.searchParams.get('includeObject') ?? '';
  if (v === '' || v === 'Metadata') return 'Metadata';
  if (v === 'None' || v === 'Object') return v;
  throw new ApiError(StatusReason.BadRequest, `Unable to convert to Table as requested: includeObject: Invalid value: ${JSON.stringify(v)}: must be 'Metadata', 'Object', 'None', or empty`);
}

// ---------------------------------------------------------------- custom columns

const ageColumn: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: commonColumns.age.description };

/**
 * A JSON number as Go prints it (%v): an integer as an int64; any other as a float64, in the
 * shortest digits, with an exponent below 1e-4 and from 1e6 (`1.2345675e+06`).
 */
function goNumber(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : x > 0 ? '+Inf' : '-Inf';
  if (Number.isInteger(x) && Math.abs(x) < 2 ** 63) return BigInt(x).toString();
  const [mant = '', expText = '0'] = x.toExponential().split('e');
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(x);
}

/** encoding/json's text: keys sorted, <, > and & escaped */
function goJson(v: unknown): string {
  const sorted = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(sorted);
    if (x && typeof x === 'object') return Object.fromEntries(Object.keys(x).sort().map((k) => [k, sorted((x as Record<string, unknown>)[k])]));
    return x;
  };
  return JSON.stringify(sorted(v)).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** a value as a string column prints it: text as is, maps and lists as JSON, null as `<no value>` */
function columnText(v: unknown): string {
  if (v === null || v === undefined) return '<no value>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'object') return goJson(v);
  return String(v);
}

function strictTime(v: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v)) return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

/** a cell of a typed column, as the API server fills a CRD's: the wrong type is an empty cell */
function columnCell(type: string, v: unknown, now: number): unknown {
  if (type === 'string') return columnText(v);
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'integer':
      return typeof v === 'number' ? Math.trunc(v) : null;
    case 'number':
      return typeof v === 'number' ? v : null;
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    case 'date': {
      if (typeof v !== 'string') return null;
      if (v === '' || v === 'null') return '<unknown>';
      const t = strictTime(v);
      return t === undefined ? '<invalid>' : since(v, now);
    }
  }
  return null;
}

interface Printer {
  columns: ColumnDefinition[];
  row(obj: any, now: number): PrintedRow;
}

function customPrinter(def: KindDef): Printer {
  const declared = def.printerColumns?.length ? def.printerColumns : [ageColumn];
  const paths = declared.map((c) => {
    try {
      return JsonPath.parsePath(c.jsonPath);
    } catch {
      return undefined;
    }
  });
  return {
    columns: [
      commonColumns.name,
      ...declared.map((c) => ({
        name: c.name, type: c.type, format: c.format ?? '',
        description: c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
        priority: c.priority ?? 0,
      })),
    ],
    row(obj, now) {
      const cells: unknown[] = [typeof obj?.metadata?.name === 'string' ? obj.metadata.name : ''];
      declared.forEach((c, i) => {
        let found: unknown[] | undefined;
        try {
          found = paths[i]?.find(obj, true)[0];
        } catch {
          found = undefined;
        }
        // a path finds a list of values; the column shows the first
        cells.push(found && found.length ? columnCell(c.type, found[0], now) : null);
      });
      return { cells };
    },
  };
}

const printers = new WeakMap<KindDef, Printer>();

function printerFor(def: KindDef): Printer {
  let p = printers.get(def);
  if (!p) {
    p = builtinPrinter(def.group, def.kind) ?? customPrinter(def);
    printers.set(def, p);
  }
  return p;
}

/** the columns a kind's Table has */
export function tableColumns(def: KindDef): ColumnDefinition[] {
  return printerFor(def).columns;
}

// ---------------------------------------------------------------- tables

function rowObject(obj: any, view: ResponseView, include: IncludeObject): unknown {
  // the bookmark that ends a watch's initial events keeps its annotation whatever was asked
  const endOfInitialEvents = obj?.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true';
  if (include === 'Object') return obj;
  if (include === 'Metadata' || endOfInitialEvents) return partial(obj, view);
  return null;
}

export interface TableOptions {
  includeObject: IncludeObject;
  /** leaves the column definitions out, as every watch event after the first does */
  noHeaders?: boolean;
  now?: number;
}

/** The Table of one object, or of a list's items (`items` with the list's metadata). */
export function toTable(def: KindDef, body: any, view: ResponseView, opts: TableOptions): Table {
  const printer = printerFor(def);
  const now = opts.now ?? Date.now();
  const isList = Array.isArray(body?.items);
  const items: any[] = isList ? body.items : [body];
  const rows = items.map((obj) => {
    const printed = printer.row(obj, now);
    const row: TableRow = { cells: printed.cells, object: rowObject(obj, view, opts.includeObject) };
    if (printed.conditions) return { cells: row.cells, conditions: printed.conditions, object: row.object };
    return row;
  });
  const metadata = listMeta(body);
  return { kind: 'Table', apiVersion: view.apiVersion, metadata, columnDefinitions: opts.noHeaders ? null : printer.columns, rows };
}

/** the metadata of an object, as client-go's metadata client reads it */
function partial(obj: any, view: ResponseView): unknown {
  return { kind: 'PartialObjectMetadata', apiVersion: view.apiVersion, metadata: obj?.metadata ?? {} };
}

function listMeta(body: any): Table['metadata'] {
  const meta = body?.metadata ?? {};
  const out: Table['metadata'] = {};
  if (meta.resourceVersion) out.resourceVersion = String(meta.resourceVersion);
  if (meta.continue) out.continue = meta.continue;
  if (meta.remainingItemCount !== undefined) out.remainingItemCount = meta.remainingItemCount;
  return out;
}

/** a get's or list's answer in the negotiated shape; asking a list's shape of one object, or the reverse, is 406 */
export function viewOf(def: KindDef, body: any, view: ResponseView, url: URL): unknown {
  const isList = Array.isArray(body?.items);
  switch (view.as) {
    case 'Table':
      return toTable(def, body, view, { includeObject: includeObjectOf(url) });
    case 'PartialObjectMetadata':
      if (isList) throw new ApiError(StatusReason.NotAcceptable, `you requested PartialObjectMetadata, but the requested object is a list (${body.apiVersion}, Kind=${body.kind})`);
      return partial(body, view);
    case 'PartialObjectMetadataList':
      if (!isList) throw new ApiError(StatusReason.NotAcceptable, `you requested PartialObjectMetadataList, but the requested object is not a list (${body?.apiVersion}, Kind=${body?.kind})`);
      // Go's nil slice: an empty list's items are null
      return { kind: 'PartialObjectMetadataList', apiVersion: view.apiVersion, metadata: listMeta(body), items: body.items.length ? body.items.map((o: any) => partial(o, view)) : null };
  }
}

export type EventView = (e: { type: string; object: any }) => { type: string; object: unknown };

/**
 * A watch's events in the negotiated shape. As Tables, one row each: the first event carries the
 * column definitions and the later ones leave them out (kubectl keeps the last ones it saw). As
 * PartialObjectMetadata, each object's metadata; a list's shape cannot hold one object, so the API
 * server sends the objects as they are. An ERROR's Status always passes as is. Undefined: the
 * events themselves. A Table's includeObject is checked here, before the watch starts.
 */
export function eventView(def: KindDef, view: ResponseView | undefined, url: URL): EventView | undefined {
  if (!view || view.as === 'PartialObjectMetadataList') return undefined;
  const passes = (e: { object: any }): boolean => e.object?.kind === 'Status';
  if (view.as === 'PartialObjectMetadata') return (e) => (passes(e) ? e : { type: e.type, object: partial(e.object, view) });
  const includeObject = includeObjectOf(url);
  let headersSent = false;
  return (e) => {
    if (passes(e)) return e;
    const table = toTable(def, e.object, view, { includeObject, noHeaders: headersSent });
    headersSent = true;
    return { type: e.type, object: table };
  };
}

/** Answers a get or list 200: the body, or the shape the request negotiated. */
export function sendViewed(res: ServerResponse, def: KindDef, body: unknown, url: URL, view: ResponseView | undefined, accept: string | undefined): void {
  if (!view) return send(res, 200, body, accept);
  send(res, 200, viewOf(def, body, view, url), view.mediaType);
}
