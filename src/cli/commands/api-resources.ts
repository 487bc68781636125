import { UsageError } from '../errors.js';
import { parseBool } from '../args.js';
import { parseOutput } from '../output.js';
import { renderTable } from '../printers.js';
import type { Command } from './common.js';

export const command: Command = {
  name: 'api-resources',
  summary: 'List the resource types the server serves',
  usage: 'skiff api-resources [--api-group G] [--namespaced=true|false] [-o wide|name]',
  flags: [
    { name: 'api-group', type: 'string', valueName: 'GROUP', description: 'only this API group ("" for core)' },
    { name: 'namespaced', type: 'string', valueName: 'BOOL', description: 'only namespaced (true) or cluster-scoped (false) types' },
    { name: 'output', short: 'o', type: 'string', valueName: 'FORMAT', description: 'wide (adds VERBS) or name' },
    { name: 'no-headers', type: 'boolean', description: 'do not print the table headers' },
  ],

  async run(ctx) {
    const a = ctx.args;
    if (a.positionals.length > 0) throw new UsageError(`unexpected argument "${a.positionals[0]}"`);
    const format = parseOutput(a.string('output'), ['table', 'wide', 'name']);
    const namespacedRaw = a.string('namespaced');
    const namespaced = namespacedRaw === undefined ? undefined : parseBool('--namespaced', namespacedRaw);
    const group = a.isSet('api-group') ? a.string('api-group') ?? '' : undefined;
    const discovery = await ctx.client.discovery();
    const seen = new Set<string>();
    const resources = discovery.resources
      .filter((r) => r.preferred)
      .filter((r) => (group === undefined ? true : r.group === group))
      .filter((r) => (namespaced === undefined ? true : r.namespaced === namespaced))
      .filter((r) => {
        const key = `${r.group}/${r.plural}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      })
      .sort((x, y) => (x.group === y.group ? x.plural.localeCompare(y.plural) : x.group.localeCompare(y.group)));
    if (format === 'name') {
      for (const r of resources) await ctx.out(`${r.group ? `${r.plural}.${r.group}` : r.plural}\n`);
      return 0;
    }
    const headers = ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND'];
    if (format === 'wide') headers.push('VERBS');
    const rows = resources.map((r) => {
      const row = [r.plural, r.shortNames.join(','), r.groupVersion, String(r.namespaced), r.kind];
      if (format === 'wide') row.push(r.verbs.join(','));
      return row;
    });
    await ctx.out(renderTable({ headers, rows }, { noHeaders: a.boolean('no-headers') }));
    return 0;
  },
};
