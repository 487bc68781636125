/**
 * `skiff get` prints the Tables the server prints (meta.k8s.io Table, the same answer `kubectl get`
 * gets), laid out as kubectl lays them out: wide columns only with `-o wide`, NAMESPACE from each
 * row's object with `-A`, `kind/name` when several kinds are listed, LABELS with `--show-labels`.
 */
import { typeName, type ResourceInfo } from './discovery.js';
import type { Table, TableOptions } from './printers.js';
import type { KObject } from './types.js';

/** what kubectl sends: a Table, else the objects themselves */
export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

export interface ServerColumn {
  name: string;
  type?: string;
  format?: string;
  priority?: number;
}

export interface ServerTable {
  kind: 'Table';
  metadata?: { resourceVersion?: string; continue?: string };
  columnDefinitions: ServerColumn[] | null;
  rows: { cells: unknown[]; object?: KObject | null }[];
}

export function isServerTable(v: unknown): v is ServerTable {
  const t = v as ServerTable | undefined;
  return t?.kind === 'Table' && Array.isArray(t.rows);
}

/** a cell as kubectl prints it: empty for none, a multi-line text cut at its first line break */
function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') {
    const cut = v.search(/[\f\n\r]/);
    return cut >= 0 ? `${v.slice(0, cut)}...` : v;
  }
  return String(v);
}

function labelsText(labels: Record<string, string> | undefined): string {
  const pairs = Object.entries(labels ?? {}).map(([k, v]) => `${k}=${v}`).sort();
  return pairs.length ? pairs.join(',') : '<none>';
}

/** The columns a Table shows with these options, and each row's cells under them. */
export function fromServerTable(r: ResourceInfo, t: ServerTable, columns: ServerColumn[], opts: TableOptions): Table {
  const shown = columns.map((c, i) => ({ c, i })).filter(({ c }) => opts.wide || !c.priority);
  const nameAt = columns.findIndex((c) => c.format === 'name');
  const headers = shown.map(({ c }) => c.name.toUpperCase());
  const withNamespace = opts.allNamespaces && r.namespaced;
  if (withNamespace) headers.unshift('NAMESPACE');
  if (opts.showLabels) headers.push('LABELS');
  const rows = t.rows.map((row) => {
    const cells = shown.map(({ i }) => {
      const text = cellText(row.cells[i]);
      return opts.withKind && i === nameAt ? `${typeName(r)}/${text}` : text;
    });
    if (withNamespace) cells.unshift(row.object?.metadata?.namespace ?? '');
    if (opts.showLabels) cells.push(labelsText(row.object?.metadata?.labels));
    return cells;
  });
  return { headers, rows };
}
