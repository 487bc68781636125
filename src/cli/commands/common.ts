/** What every command gets, and helpers they share. */
import type { FlagSpec, ParsedArgs } from '../args.js';
import { Client } from '../client.js';
import { ApiError, CliError, UsageError } from '../errors.js';
import {
  findResource,
  resolveResource,
  resourcesInCategory,
  type Discovery,
  type ResourceInfo,
} from '../discovery.js';
import type { CliIO } from '../io.js';
import type { KObject } from '../types.js';
import { after } from '../../util/timers.js';

export interface Context {
  io: CliIO;
  args: ParsedArgs;
  /** Normalised server URL. */
  server: string;
  /** `-n`, or `default`. */
  namespace: string;
  /** Whether `-n` was given. */
  namespaceExplicit: boolean;
  client: Client;
  /** Ends long-running work (watch, follow, up). */
  signal?: AbortSignal;
  out(text: string): Promise<void>;
  err(text: string): Promise<void>;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  description?: string;
  examples?: string;
  flags: FlagSpec[];
  run(ctx: Context): Promise<number>;
}

export const NAMESPACE_FLAG: FlagSpec = {
  name: 'namespace',
  short: 'n',
  type: 'string',
  valueName: 'NS',
  description: 'namespace of the objects (default "default")',
};

export const FILENAME_FLAG: FlagSpec = {
  name: 'filename',
  short: 'f',
  type: 'strings',
  valueName: 'FILE|DIR|URL|-',
  description: 'manifest file, directory of manifests, URL, or - for standard input (repeatable)',
};

export const RECURSIVE_FLAG: FlagSpec = {
  name: 'recursive',
  short: 'R',
  type: 'boolean',
  description: 'also read manifests in sub-directories of -f directories',
};

/** A type plus the names asked for (empty: all). */
export interface ResourceRequest {
  arg: string;
  resource: ResourceInfo;
  names: string[];
}

/**
 * Reads `KIND[,KIND2] [NAME...]` or `KIND/NAME [KIND/NAME...]` and resolves the kinds through
 * discovery (including categories such as `all`).
 */
export async function resolveRequests(ctx: Context, positionals: string[], verb: string): Promise<ResourceRequest[]> {
  if (positionals.length === 0) {
    throw new UsageError(`you must specify the type of resource to ${verb}`);
  }
  const discovery = await ctx.client.discovery();
  const first = positionals[0] as string;
  if (first.includes('/')) {
    const out: ResourceRequest[] = [];
    for (const p of positionals) {
      const slash = p.indexOf('/');
      if (slash <= 0 || slash === p.length - 1) {
        throw new UsageError(`arguments in resource/name form must have a single resource and name ("${p}")`);
      }
      const kindArg = p.slice(0, slash);
      const name = p.slice(slash + 1);
      const resource = resolveResource(discovery, kindArg);
      const existing = out.find((r) => r.resource === resource);
      if (existing) existing.names.push(name);
      else out.push({ arg: kindArg, resource, names: [name] });
    }
    return out;
  }
  const names = positionals.slice(1);
  const out: ResourceRequest[] = [];
  for (const kindArg of first.split(',').filter(Boolean)) {
    for (const resource of resolveKindOrCategory(discovery, kindArg)) {
      if (!out.some((r) => r.resource === resource)) out.push({ arg: kindArg, resource, names: [...names] });
    }
  }
  if (out.length === 0) throw new UsageError(`you must specify the type of resource to ${verb}`);
  return out;
}

function resolveKindOrCategory(d: Discovery, arg: string): ResourceInfo[] {
  const r = findResource(d, arg);
  if (r) return [r];
  const cat = resourcesInCategory(d, arg);
  if (cat) return cat;
  if (arg.toLowerCase() === 'all') {
    // The server does not declare the `all` category: use the workload types we know.
    const known = d.resources.filter(
      (r) => r.preferred && ((r.group === '' && r.kind === 'Pod') || (r.group === 'batch' && r.kind === 'Job') || (r.group === 'kubeflow.org' && r.kind.endsWith('Job'))),
    );
    if (known.length) return known;
  }
  return [resolveResource(d, arg)]; // throws the standard message
}

/** Namespace for an object of `r` given by the user: `-n`/default, none for cluster-scoped types. */
export function namespaceFor(ctx: Context, r: ResourceInfo): string | undefined {
  return r.namespaced ? ctx.namespace : undefined;
}

/** Fills in `apiVersion`/`kind` on list items, which servers may omit. */
export function withTypeMeta(r: ResourceInfo, obj: KObject): KObject {
  if (obj.apiVersion && obj.kind) return obj;
  return { apiVersion: r.groupVersion, kind: r.kind, ...obj };
}

export function requireNoExtraArgs(args: ParsedArgs, max: number, what: string): void {
  if (args.positionals.length > max) {
    throw new UsageError(`unexpected argument "${args.positionals[max]}"${what ? ` (${what})` : ''}`);
  }
}

/** Sleeps, returning early (false) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const t = after(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    });
    const onAbort = (): void => {
      t.clear();
      resolve(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A signal that aborts when any of `signals` does, or after `timeoutMs`. */
export function combineSignals(signals: (AbortSignal | undefined)[], timeoutMs?: number): { signal: AbortSignal; dispose(): void; timedOut(): boolean } {
  const ac = new AbortController();
  let timedOut = false;
  const cleanups: (() => void)[] = [];
  for (const s of signals) {
    if (!s) continue;
    if (s.aborted) ac.abort(s.reason);
    const on = (): void => ac.abort(s.reason);
    s.addEventListener('abort', on, { once: true });
    cleanups.push(() => s.removeEventListener('abort', on));
  }
  if (timeoutMs !== undefined) {
    const t = after(timeoutMs, () => {
      timedOut = true;
      ac.abort(new DOMException('timed out', 'TimeoutError'));
    });
    cleanups.push(() => t.clear());
  }
  return {
    signal: ac.signal,
    dispose: () => cleanups.forEach((c) => c()),
    timedOut: () => timedOut,
  };
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.isNotFound;
}

export function positiveIntFlag(args: ParsedArgs, name: string): number | undefined {
  const raw = args.string(name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw new UsageError(`invalid argument "${raw}" for "--${name}" flag: expected an integer`);
  return n;
}

export { CliError };
