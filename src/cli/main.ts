/**
 * `skiff` entry point: finds the command, parses flags and turns every failure into one line.
 * Commands are loaded on demand so that `skiff get` stays fast to start.
 */
import { findCommandIndex, formatFlags, parseArgs, type FlagSpec } from './args.js';
import { Client, DEFAULT_SERVER, normalizeServer } from './client.js';
import { UsageError, formatError } from './errors.js';
import { resolveToken } from './credentials.js';
import { resolveIO, type CliIO } from './io.js';
import type { Command, Context } from './commands/common.js';

export const GLOBAL_FLAGS: FlagSpec[] = [
  {
    name: 'server',
    type: 'string',
    valueName: 'URL',
    description: `address of the Skiff API server (env SKIFF_SERVER, default ${DEFAULT_SERVER})`,
  },
  {
    name: 'token',
    type: 'string',
    valueName: 'TOKEN',
    description: 'bearer token for a server with tenancy on (env SKIFF_TOKEN; default: the kubeconfig\'s user for this server)',
  },
  { name: 'help', short: 'h', type: 'boolean', description: 'show help' },
];

interface CommandEntry {
  name: string;
  summary: string;
  load: () => Promise<Command>;
}

const COMMANDS: CommandEntry[] = [
  { name: 'up', summary: 'Start the Skiff platform in the foreground', load: async () => (await import('./commands/up.js')).command },
  { name: 'node', summary: 'Run this machine as a node of a Kubernetes cluster', load: async () => (await import('./commands/node.js')).command },
  { name: 'apply', summary: 'Create or update objects from manifests', load: async () => (await import('./commands/apply.js')).command },
  { name: 'get', summary: 'List objects', load: async () => (await import('./commands/get.js')).command },
  { name: 'describe', summary: 'Show the details of an object and its events', load: async () => (await import('./commands/describe.js')).command },
  { name: 'delete', summary: 'Delete objects by name or from manifests', load: async () => (await import('./commands/delete.js')).command },
  { name: 'exec', summary: 'Run a command in a container of a running pod', load: async () => (await import('./commands/exec.js')).command },
  { name: 'logs', summary: 'Print the logs of a pod (or of a job\'s pod)', load: async () => (await import('./commands/logs.js')).command },
  { name: 'run', summary: 'Run a pipeline compiled by the kfp SDK', load: async () => (await import('./commands/run.js')).command },
  { name: 'wait', summary: 'Wait for a condition on an object, or for its deletion', load: async () => (await import('./commands/wait.js')).command },
  { name: 'api-resources', summary: 'List the resource types the server serves', load: async () => (await import('./commands/api-resources.js')).command },
  { name: 'version', summary: 'Print the client and server versions', load: async () => (await import('./commands/version.js')).command },
  { name: 'kubeconfig', summary: 'Print the kubeconfig that points kubectl and Kubernetes clients at Skiff', load: async () => (await import('./commands/kubeconfig.js')).command },
];

function topHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'skiff: a Kubernetes-style ML platform on one machine.',
    '',
    'Usage:',
    '  skiff COMMAND [ARGS] [FLAGS]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}   ${c.summary}`),
    `  ${'help'.padEnd(width)}   Help about a command`,
    '',
    'Global flags:',
    formatFlags(GLOBAL_FLAGS),
    '',
    "Use 'skiff COMMAND --help' for more about a command.",
    '',
  ].join('\n');
}

export function commandHelp(cmd: Command): string {
  const parts = [cmd.summary + '.', ''];
  if (cmd.description) parts.push(cmd.description.trim(), '');
  parts.push('Usage:', `  ${cmd.usage}`, '');
  if (cmd.examples) parts.push('Examples:', cmd.examples.replace(/^\n+|\s+$/g, ''), '');
  if (cmd.flags.length) parts.push('Flags:', formatFlags(cmd.flags), '');
  parts.push('Global flags:', formatFlags(GLOBAL_FLAGS), '');
  return parts.join('\n');
}

function findEntry(name: string): CommandEntry | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/**
 * Runs the CLI with `argv` (without `node` and the script) and returns the exit code.
 * `io` replaces stdout/stderr/stdin/env/cwd/clock/abort signal, for tests.
 */
export async function main(argv: string[], ioOverrides?: Partial<CliIO>): Promise<number> {
  const io = resolveIO(ioOverrides);
  const out = async (t: string): Promise<void> => {
    await io.stdout(t);
  };
  const err = async (t: string): Promise<void> => {
    await io.stderr(t);
  };

  let entry: CommandEntry | undefined;
  try {
    const idx = findCommandIndex(argv, [...GLOBAL_FLAGS, { name: 'namespace', short: 'n', type: 'string', description: '' }]);
    if (idx < 0) {
      parseArgs(argv, GLOBAL_FLAGS); // rejects unknown flags
      await out(topHelp());
      return 0;
    }
    const name = argv[idx] as string;
    const rest = [...argv.slice(0, idx), ...argv.slice(idx + 1)];
    if (name === 'help') {
      const topic = rest.find((a) => !a.startsWith('-'));
      if (!topic) {
        await out(topHelp());
        return 0;
      }
      const e = findEntry(topic);
      if (!e) throw new UsageError(`unknown command "${topic}" for "skiff"`);
      await out(commandHelp(await e.load()));
      return 0;
    }
    entry = findEntry(name);
    if (!entry) {
      const near = COMMANDS.filter((c) => c.name.startsWith(name.slice(0, 2))).map((c) => c.name);
      throw new UsageError(`unknown command "${name}" for "skiff"${near.length ? ` (did you mean ${near.join(' or ')}?)` : ''}`);
    }
    const cmd = await entry.load();
    // A plain --help anywhere wins over missing arguments and unknown flags that follow it.
    const helpIdx = argv.findIndex((a) => a === '--help' || a === '-h');
    const dashdash = argv.indexOf('--');
    if (helpIdx >= 0 && (dashdash < 0 || helpIdx < dashdash)) {
      await out(commandHelp(cmd));
      return 0;
    }
    const args = parseArgs(rest, [...GLOBAL_FLAGS, ...cmd.flags]);
    const serverRaw = args.string('server') || io.env.SKIFF_SERVER || DEFAULT_SERVER;
    const server = normalizeServer(serverRaw);
    const namespaceFlag = args.string('namespace');
    if (namespaceFlag !== undefined && namespaceFlag.trim() === '') throw new UsageError('the namespace may not be empty');
    const ctx: Context = {
      io,
      args,
      server,
      namespace: namespaceFlag ?? 'default',
      namespaceExplicit: args.isSet('namespace'),
      client: new Client(server, undefined, resolveToken(args.string('token'), io.env, io.cwd, server)),
      signal: io.signal,
      out,
      err,
    };
    return await cmd.run(ctx);
  } catch (e) {
    try {
      await err(`${formatError(e)}\n`);
      if (e instanceof UsageError) {
        await err(entry ? `See 'skiff ${entry.name} --help' for usage.\n` : "See 'skiff --help' for usage.\n");
      }
    } catch {
      // stderr is gone; nothing more to say
    }
    return e instanceof UsageError ? 1 : typeof (e as { exitCode?: unknown }).exitCode === 'number' ? ((e as { exitCode: number }).exitCode) : 1;
  }
}
