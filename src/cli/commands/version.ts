import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiError, CliError, ConnectionError } from '../errors.js';
import { formatObject, parseOutput } from '../output.js';
import type { Command } from './common.js';

/** The version in the skiff package.json (looked up from this file's location). */
export function clientVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'skiff' && pkg.version) return pkg.version;
    } catch {
      // keep looking upwards
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return 'unknown';
}

interface ServerVersion {
  gitVersion?: string;
  platform?: string;
  [key: string]: unknown;
}

export const command: Command = {
  name: 'version',
  summary: 'Print the client and server versions',
  usage: 'skiff version [-o json|yaml] [--client]',
  flags: [
    { name: 'output', short: 'o', type: 'string', valueName: 'FORMAT', description: 'json or yaml' },
    { name: 'client', type: 'boolean', description: 'only the client version (no server needed)' },
  ],

  async run(ctx) {
    const format = parseOutput(ctx.args.string('output'), ['table', 'json', 'yaml']);
    const client = { gitVersion: clientVersion(), platform: `${process.platform}/${process.arch}`, nodeVersion: process.version };
    let server: ServerVersion | undefined;
    let problem: string | undefined;
    if (!ctx.args.boolean('client')) {
      try {
        server = await ctx.client.get<ServerVersion>('/version');
      } catch (err) {
        if (err instanceof ApiError) problem = `${err.reason || 'error'}: ${err.message}`;
        else if (err instanceof ConnectionError) problem = `cannot reach ${err.server}: ${err.detail}`;
        else if (err instanceof CliError) problem = err.message;
        else throw err;
      }
    }
    if (format === 'json' || format === 'yaml') {
      await ctx.out(await formatObject({ clientVersion: client, ...(server ? { serverVersion: server } : {}) }, format));
    } else {
      await ctx.out(`Client Version: ${client.gitVersion}\n`);
      if (server) {
        await ctx.out(`Server Version: ${server.gitVersion ?? 'unknown'}${server.platform ? ` (${String(server.platform)})` : ''}\n`);
      }
    }
    if (problem) {
      await (format === 'table' ? ctx.out : ctx.err)(`Server: unreachable (${problem})\n`);
      return 1;
    }
    return 0;
  },
};
