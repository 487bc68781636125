import { UsageError, ApiError, formatError, type Status } from '../errors.js';
import { objectRef, resourcePath, type ResourceInfo } from '../discovery.js';
import { asList, formatObject, parseOutput, type OutputFormat } from '../output.js';
import { buildTable, columnWidths, renderRow, renderTable, tableHeaders, tableRow, type Table, type TableOptions } from '../printers.js';
import { isKueueWorkloads, readPositions, withPositions, workloadRefs, type QueuePosition } from '../queue-positions.js';
import { TABLE_ACCEPT, fromServerTable, isServerTable, type ServerColumn, type ServerTable } from '../server-table.js';
import type { KList, KObject } from '../types.js';
import { NAMESPACE_FLAG, resolveRequests, sleep, withTypeMeta, type Command, type Context } from './common.js';

interface Fetched {
  resource: ResourceInfo;
  items: KObject[];
  /** the server's Table of the objects, for table output; absent when the server does not print */
  table?: ServerTable;
  resourceVersion?: string;
}

const count = (f: Fetched): number => (f.table ? f.table.rows.length : f.items.length);

/**
 * A server Table as printed: its columns, and for Kueue's Workloads each pending one's position in
 * its queue from the visibility API (src/cli/queue-positions.ts). Positions that cannot be read
 * leave the column blank, with a warning: the listing itself still prints.
 */
async function printServerTable(ctx: Context, r: ResourceInfo, t: ServerTable, columns: ServerColumn[], opts: TableOptions): Promise<Table> {
  const table = fromServerTable(r, t, columns, opts);
  if (!isKueueWorkloads(r)) return table;
  const refs = workloadRefs(t, columns);
  let positions = new Map<string, QueuePosition>();
  try {
    positions = await readPositions(ctx.client, r.version, refs, ctx.signal);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    await ctx.err(`Warning: queue positions unavailable: ${formatError(err)}\n`);
  }
  return withPositions(table, refs, positions, opts.wide === true);
}

/** the table of what was fetched: the server's columns when it printed them, Skiff's own otherwise */
async function tableOf(ctx: Context, f: Fetched, opts: TableOptions): Promise<Table> {
  if (f.table) return printServerTable(ctx, f.resource, f.table, f.table.columnDefinitions ?? [], opts);
  return buildTable(f.resource, f.items, opts);
}

interface WatchState {
  widths?: number[];
  headerPrinted: boolean;
  noHeaders: boolean;
  /** the server's columns, from the first Table of the list or the watch; later events leave them out */
  columns?: ServerColumn[];
}

/** prints watched rows under one header, widening columns as wider cells come */
async function printWatchRows(ctx: Context, t: Table, state: WatchState): Promise<void> {
  for (const row of t.rows) {
    const widths = columnWidths({ headers: state.noHeaders ? t.headers.map(() => '') : t.headers, rows: [row] });
    state.widths = widths.map((w, i) => Math.max(w, state.widths?.[i] ?? 0));
    if (!state.headerPrinted && !state.noHeaders) await ctx.out(`${renderRow(t.headers, state.widths)}\n`);
    state.headerPrinted = true;
    await ctx.out(`${renderRow(row, state.widths)}\n`);
  }
}

function listScope(ctx: Context, r: ResourceInfo, allNamespaces: boolean): string | undefined {
  if (!r.namespaced || allNamespaces) return undefined;
  return ctx.namespace;
}

function noResourcesMessage(ctx: Context, requests: ResourceInfo[], allNamespaces: boolean): string {
  if (allNamespaces || requests.every((r) => !r.namespaced)) return 'No resources found\n';
  return `No resources found in ${ctx.namespace} namespace.\n`;
}

async function printWatchObject(
  ctx: Context,
  format: OutputFormat,
  r: ResourceInfo,
  obj: KObject,
  tableOpts: TableOptions,
  state: WatchState,
): Promise<void> {
  const typed = withTypeMeta(r, obj);
  if (format === 'json' || format === 'yaml') {
    const text = await formatObject(typed, format);
    await ctx.out(format === 'yaml' ? `---\n${text}` : text);
    return;
  }
  if (format === 'name') {
    await ctx.out(`${objectRef(r, obj.metadata?.name ?? '')}\n`);
    return;
  }
  await printWatchRows(ctx, { headers: tableHeaders(r, tableOpts), rows: [tableRow(r, typed, tableOpts)] }, state);
}

export const command: Command = {
  name: 'get',
  summary: 'List objects',
  usage: 'skiff get KIND[,KIND2] [NAME...] [-n NS | -A] [-l SELECTOR] [--field-selector S] [-o json|yaml|wide|name] [-w]',
  description: `
Prints a table of objects of one or more kinds. KIND is a plural, singular or short name or a
Kind (case-insensitive), optionally qualified with its API group (jobs.batch); KIND/NAME works too.`,
  examples: `
  skiff get jobs
  skiff get job pi -o yaml
  skiff get pods -A -l batch.kubernetes.io/job-name=pi
  skiff get pods -w`,
  flags: [
    NAMESPACE_FLAG,
    { name: 'all-namespaces', short: 'A', type: 'boolean', description: 'list objects in all namespaces' },
    { name: 'selector', short: 'l', type: 'string', valueName: 'SELECTOR', description: 'label selector, e.g. app=x,tier!=db' },
    { name: 'field-selector', type: 'string', valueName: 'SELECTOR', description: 'field selector, e.g. status.phase=Running' },
    { name: 'output', short: 'o', type: 'string', valueName: 'FORMAT', description: 'json, yaml, wide or name' },
    { name: 'watch', short: 'w', type: 'boolean', description: 'after listing, print a line for every change' },
    { name: 'watch-only', type: 'boolean', description: 'print only the changes, not the current list' },
    { name: 'show-labels', type: 'boolean', description: 'add a LABELS column' },
    { name: 'no-headers', type: 'boolean', description: 'do not print the table headers' },
  ],

  async run(ctx) {
    const a = ctx.args;
    const format = parseOutput(a.string('output'), ['table', 'json', 'yaml', 'wide', 'name']);
    const allNamespaces = a.boolean('all-namespaces');
    const watch = a.boolean('watch') || a.boolean('watch-only');
    const labelSelector = a.string('selector');
    const fieldSelector = a.string('field-selector');
    const requests = await resolveRequests(ctx, a.positionals, 'get');
    const named = requests.some((r) => r.names.length > 0);
    if (named && labelSelector) throw new UsageError('names cannot be given together with a label selector (-l)');
    if (named && allNamespaces) throw new UsageError('a resource cannot be retrieved by name across all namespaces');
    if (watch && requests.length > 1) throw new UsageError('you may only specify a single resource type with --watch');
    if (watch && requests[0] && requests[0].names.length > 1) throw new UsageError('watch is only supported on a single object or a list');

    const tableOpts: TableOptions = {
      wide: format === 'wide',
      allNamespaces,
      withKind: requests.length > 1,
      showLabels: a.boolean('show-labels'),
      now: ctx.io.now(),
    };
    const noHeaders = a.boolean('no-headers');
    // tables come from the server's Table, as kubectl gets them
    const accept = format === 'table' || format === 'wide' ? TABLE_ACCEPT : undefined;

    let failed = false;
    const fetched: Fetched[] = [];
    for (const req of requests) {
      const r = req.resource;
      const ns = listScope(ctx, r, allNamespaces);
      if (req.names.length > 0) {
        const items: KObject[] = [];
        let table: ServerTable | undefined;
        let rv: string | undefined;
        for (const name of req.names) {
          try {
            const obj = await ctx.client.get<KObject | ServerTable>(resourcePath(r, { namespace: ns, name }), undefined, undefined, accept);
            if (isServerTable(obj)) {
              if (table) table.rows.push(...obj.rows);
              else table = obj;
            } else {
              items.push(withTypeMeta(r, obj));
            }
            rv = obj.metadata?.resourceVersion;
          } catch (err) {
            if (!(err instanceof ApiError)) throw err;
            failed = true;
            await ctx.err(`${formatError(err)}\n`);
          }
        }
        fetched.push({ resource: r, items, table, resourceVersion: rv });
      } else {
        const list = await ctx.client.list(resourcePath(r, { namespace: ns }), { labelSelector, fieldSelector }, undefined, accept);
        fetched.push({ resource: r, items: list.items.map((o) => withTypeMeta(r, o)), table: list.table, resourceVersion: list.metadata?.resourceVersion });
      }
    }

    // each listing printed once: a Workloads table costs visibility API requests
    const printed = new Map<Fetched, Table>();
    const tableFor = async (f: Fetched): Promise<Table> => {
      const t = printed.get(f) ?? (await tableOf(ctx, f, tableOpts));
      printed.set(f, t);
      return t;
    };
    const all = fetched.flatMap((f) => f.items);
    if (!a.boolean('watch-only')) {
      if (format === 'json' || format === 'yaml') {
        const single = requests.length === 1 && requests[0]?.names.length === 1;
        if (single) {
          if (all[0]) await ctx.out(await formatObject(all[0], format));
        } else await ctx.out(await formatObject(asList(all), format));
      } else if (format === 'name') {
        for (const f of fetched) for (const o of f.items) await ctx.out(`${objectRef(f.resource, o.metadata?.name ?? '')}\n`);
      } else {
        const tables: string[] = [];
        for (const f of fetched) if (count(f) > 0) tables.push(renderTable(await tableFor(f), { noHeaders }));
        if (tables.length) await ctx.out(tables.join('\n'));
      }
      if (fetched.every((f) => count(f) === 0) && !named && format !== 'json' && format !== 'yaml') {
        await ctx.err(noResourcesMessage(ctx, requests.map((r) => r.resource), allNamespaces));
      }
    }
    if (!watch) return failed ? 1 : 0;
    if (failed) return 1;

    // ---- watch
    const req = requests[0];
    const f = fetched[0];
    if (!req || !f) return 0;
    const r = req.resource;
    const ns = listScope(ctx, r, allNamespaces);
    const path = resourcePath(r, { namespace: ns });
    const name = req.names[0];
    const fieldSel = [fieldSelector, name !== undefined ? `metadata.name=${name}` : undefined].filter(Boolean).join(',') || undefined;
    const state: WatchState = {
      headerPrinted: count(f) > 0 && !a.boolean('watch-only'),
      noHeaders,
      widths: count(f) > 0 && !a.boolean('watch-only') ? columnWidths(await tableFor(f), noHeaders) : undefined,
      columns: f.table?.columnDefinitions ?? undefined,
    };
    let rv = f.resourceVersion;
    while (!ctx.signal?.aborted) {
      let events = 0;
      for await (const ev of ctx.client.watch(path, { labelSelector, fieldSelector: fieldSel, resourceVersion: rv, allowWatchBookmarks: true }, ctx.signal, accept)) {
        events++;
        // the first event of a watch for Tables carries the columns, even a bookmark
        const t: unknown = ev.object;
        if (isServerTable(t) && t.columnDefinitions?.length) state.columns = t.columnDefinitions;
        if (ev.type === 'BOOKMARK') {
          rv = ev.object.metadata?.resourceVersion ?? rv;
          continue;
        }
        if (ev.type === 'ERROR') {
          const status = ev.object as Status;
          if (status.code === 410) {
            // Our resourceVersion is too old: start again from now.
            const list = await ctx.client.get<KList>(path, { labelSelector, fieldSelector: fieldSel, limit: 1 });
            rv = list.metadata?.resourceVersion;
            break;
          }
          throw new ApiError(status, status.code ?? 500);
        }
        rv = ev.object.metadata?.resourceVersion ?? rv;
        if (isServerTable(t)) {
          await printWatchRows(ctx, await printServerTable(ctx, r, t, state.columns ?? [], tableOpts), state);
        } else {
          await printWatchObject(ctx, format, r, ev.object, { ...tableOpts, now: ctx.io.now() }, state);
        }
      }
      if (ctx.signal?.aborted) break;
      // The server ended the watch (timeout); reconnect, slowly if it keeps closing at once.
      if (!(await sleep(events > 0 ? 100 : 1000, ctx.signal))) break;
    }
    return 0;
  },
};
