import { UsageError, ApiError, formatError, type Status } from '../errors.js';
import { objectRef, resourcePath, type ResourceInfo } from '../discovery.js';
import { asList, formatObject, parseOutput, type OutputFormat } from '../output.js';
import { buildTable, columnWidths, renderRow, renderTable, tableHeaders, tableRow, type TableOptions } from '../printers.js';
import type { KList, KObject } from '../types.js';
import { NAMESPACE_FLAG, resolveRequests, sleep, withTypeMeta, type Command, type Context } from './common.js';

interface Fetched {
  resource: ResourceInfo;
  items: KObject[];
  resourceVersion?: string;
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
  state: { widths?: number[]; headerPrinted: boolean; noHeaders: boolean },
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
  const row = tableRow(r, typed, tableOpts);
  const headers = tableHeaders(r, tableOpts);
  const widths = columnWidths({ headers: state.noHeaders ? headers.map(() => '') : headers, rows: [row] });
  state.widths = widths.map((w, i) => Math.max(w, state.widths?.[i] ?? 0));
  if (!state.headerPrinted && !state.noHeaders) {
    await ctx.out(`${renderRow(headers, state.widths)}\n`);
  }
  state.headerPrinted = true;
  await ctx.out(`${renderRow(row, state.widths)}\n`);
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

    let failed = false;
    const fetched: Fetched[] = [];
    for (const req of requests) {
      const r = req.resource;
      const ns = listScope(ctx, r, allNamespaces);
      if (req.names.length > 0) {
        const items: KObject[] = [];
        let rv: string | undefined;
        for (const name of req.names) {
          try {
            const obj = await ctx.client.get(resourcePath(r, { namespace: ns, name }));
            items.push(withTypeMeta(r, obj));
            rv = obj.metadata?.resourceVersion;
          } catch (err) {
            if (!(err instanceof ApiError)) throw err;
            failed = true;
            await ctx.err(`${formatError(err)}\n`);
          }
        }
        fetched.push({ resource: r, items, resourceVersion: rv });
      } else {
        const list = await ctx.client.list(resourcePath(r, { namespace: ns }), { labelSelector, fieldSelector });
        fetched.push({ resource: r, items: list.items.map((o) => withTypeMeta(r, o)), resourceVersion: list.metadata?.resourceVersion });
      }
    }

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
        const tables = fetched.filter((f) => f.items.length > 0).map((f) => renderTable(buildTable(f.resource, f.items, tableOpts), { noHeaders }));
        if (tables.length) await ctx.out(tables.join('\n'));
      }
      if (all.length === 0 && !named && format !== 'json' && format !== 'yaml') {
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
    const state: { widths?: number[]; headerPrinted: boolean; noHeaders: boolean } = {
      headerPrinted: f.items.length > 0 && !a.boolean('watch-only'),
      noHeaders,
      widths:
        f.items.length > 0 && !a.boolean('watch-only')
          ? columnWidths(buildTable(r, f.items, tableOpts), noHeaders)
          : undefined,
    };
    let rv = f.resourceVersion;
    while (!ctx.signal?.aborted) {
      let events = 0;
      for await (const ev of ctx.client.watch(path, { labelSelector, fieldSelector: fieldSel, resourceVersion: rv, allowWatchBookmarks: true }, ctx.signal)) {
        events++;
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
        await printWatchObject(ctx, format, r, ev.object, { ...tableOpts, now: ctx.io.now() }, state);
      }
      if (ctx.signal?.aborted) break;
      // The server ended the watch (timeout); reconnect, slowly if it keeps closing at once.
      if (!(await sleep(events > 0 ? 100 : 1000, ctx.signal))) break;
    }
    return 0;
  },
};
