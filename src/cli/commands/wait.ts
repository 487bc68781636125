import { ApiError, CliError, UsageError, isAbortError, type Status } from '../errors.js';
import { parseDuration, shortDuration } from '../duration.js';
import { objectRef, resourcePath, type ResourceInfo } from '../discovery.js';
import { conditionOf } from '../printers.js';
import type { KObject } from '../types.js';
import { NAMESPACE_FLAG, combineSignals, isNotFound, resolveRequests, sleep, type Command, type Context } from './common.js';

export type WaitFor = { kind: 'delete' } | { kind: 'condition'; type: string; value: string };

/** Parses `--for`: `delete`, `condition=Complete`, `condition=Complete=false`. */
export function parseWaitFor(raw: string): WaitFor {
  const s = raw.trim();
  if (s.toLowerCase() === 'delete') return { kind: 'delete' };
  const m = /^condition=([^=]+)(?:=(.*))?$/i.exec(s);
  if (m) {
    const value = m[2] === undefined || m[2] === '' ? 'true' : m[2];
    return { kind: 'condition', type: (m[1] as string).trim(), value };
  }
  throw new UsageError(`unrecognized condition: "${raw}" (use --for=condition=NAME[=true|false] or --for=delete)`);
}

/** Conditions that end an object's life and rule out waiting for another: Complete vs Failed. */
const TERMINAL_OPPOSITES: Record<string, string[]> = {
  complete: ['Failed'],
  succeeded: ['Failed'],
  failed: ['Complete', 'Succeeded'],
};

const VERB_FOR: Record<string, string> = { failed: 'failed', complete: 'completed', succeeded: 'succeeded' };

export type Check = { done: true } | { done: false; error?: string };

/** Checks `obj` against a condition wait: met, impossible (opposite terminal condition), or not yet. */
export function checkCondition(obj: KObject, ref: string, want: { type: string; value: string }): Check {
  const conds = (obj.status as { conditions?: unknown } | undefined)?.conditions;
  const list = Array.isArray(conds) ? (conds as { type?: string; status?: string; reason?: string; message?: string }[]) : [];
  const cond = list.find((c) => c?.type?.toLowerCase() === want.type.toLowerCase());
  if (cond && (cond.status ?? '').toLowerCase() === want.value.toLowerCase()) return { done: true };
  if (want.value.toLowerCase() === 'true') {
    for (const opposite of TERMINAL_OPPOSITES[want.type.toLowerCase()] ?? []) {
      const o = conditionOf(obj, opposite) ?? list.find((c) => c?.type?.toLowerCase() === opposite.toLowerCase());
      if (o?.status === 'True') {
        const verb = VERB_FOR[opposite.toLowerCase()] ?? opposite.toLowerCase();
        const detail = [o.reason, o.message?.replace(/\s*\n\s*/g, ' ')].filter(Boolean).join(': ');
        return { done: false, error: `${ref} ${verb}${detail ? `: ${detail}` : ''}` };
      }
    }
  }
  return { done: false };
}

async function waitOne(
  ctx: Context,
  r: ResourceInfo,
  name: string,
  want: WaitFor,
  signal: AbortSignal,
): Promise<'met' | 'aborted'> {
  const ns = r.namespaced ? ctx.namespace : undefined;
  const ref = objectRef(r, name);
  const objectPath = resourcePath(r, { namespace: ns, name });
  const collection = resourcePath(r, { namespace: ns });

  for (;;) {
    let obj: KObject;
    try {
      obj = await ctx.client.get(objectPath, undefined, signal);
    } catch (err) {
      if (isAbortError(err)) return 'aborted';
      if (isNotFound(err) && want.kind === 'delete') return 'met';
      throw err;
    }
    const uid = obj.metadata?.uid;
    if (want.kind === 'condition') {
      const c = checkCondition(obj, ref, want);
      if (c.done) return 'met';
      if (c.error) throw new CliError(c.error);
    }
    let rv = obj.metadata?.resourceVersion;
    let restart = false;
    for await (const ev of ctx.client.watch(collection, { fieldSelector: `metadata.name=${name}`, resourceVersion: rv, allowWatchBookmarks: true }, signal)) {
      if (ev.type === 'BOOKMARK') {
        rv = ev.object.metadata?.resourceVersion ?? rv;
        continue;
      }
      if (ev.type === 'ERROR') {
        const status = ev.object as Status;
        if (status.code === 410) {
          restart = true;
          break;
        }
        throw new ApiError(status, status.code ?? 500);
      }
      if (ev.object.metadata?.name !== name) continue; // a server that ignores the field selector
      rv = ev.object.metadata?.resourceVersion ?? rv;
      if (ev.type === 'DELETED') {
        if (want.kind === 'delete') return 'met';
        throw new CliError(`${ref} was deleted while waiting for condition ${want.type}`);
      }
      if (want.kind === 'delete') {
        if (uid && ev.object.metadata?.uid && ev.object.metadata.uid !== uid) return 'met'; // gone and re-created
        continue;
      }
      const c = checkCondition(ev.object, ref, want);
      if (c.done) return 'met';
      if (c.error) throw new CliError(c.error);
    }
    if (signal.aborted) return 'aborted';
    // The watch ended (server timeout, or our version expired): look again.
    if (!restart && !(await sleep(200, signal))) return 'aborted';
  }
}

export const command: Command = {
  name: 'wait',
  summary: 'Wait for a condition on an object, or for its deletion',
  usage: 'skiff wait KIND/NAME... --for=condition=TYPE[=true|false] | --for=delete [--timeout=30s] [-n NS]',
  description: `
Exits 0 once every object meets the condition. Fails at once when the opposite terminal
condition appears (waiting for Complete and the job Failed, or the other way round), and
after --timeout (30s, 5m, 1h...).`,
  examples: `
  skiff wait job/pi --for=condition=Complete --timeout=5m
  skiff wait job/pi --for=delete`,
  flags: [
    NAMESPACE_FLAG,
    { name: 'for', type: 'string', valueName: 'CONDITION', description: 'condition=TYPE[=VALUE] or delete' },
    { name: 'timeout', type: 'string', default: '30s', valueName: 'DURATION', description: 'give up after this long' },
  ],

  async run(ctx) {
    const a = ctx.args;
    const forRaw = a.string('for');
    if (!forRaw) throw new UsageError('--for is required (e.g. --for=condition=Complete or --for=delete)');
    const want = parseWaitFor(forRaw);
    const timeoutRaw = a.string('timeout') ?? '30s';
    const timeoutMs = parseDuration(timeoutRaw);
    if (timeoutMs === undefined) throw new UsageError(`invalid --timeout "${timeoutRaw}" (use e.g. 30s, 5m, 1h)`);
    if (a.positionals.length === 0) throw new UsageError('you must specify the object to wait for, e.g. job/pi');
    const requests = await resolveRequests(ctx, a.positionals, 'wait for');
    const targets = requests.flatMap((req) => req.names.map((name) => ({ r: req.resource, name })));
    if (targets.length === 0) throw new UsageError('you must name the object to wait for, e.g. job/pi');

    const { signal, dispose, timedOut } = combineSignals([ctx.signal], timeoutMs);
    const what = want.kind === 'delete' ? 'its deletion' : `condition ${want.type}${want.value.toLowerCase() === 'true' ? '' : `=${want.value}`}`;
    try {
      for (const t of targets) {
        const ref = objectRef(t.r, t.name);
        const result = await waitOne(ctx, t.r, t.name, want, signal);
        if (result === 'aborted') {
          if (timedOut()) {
            await ctx.err(`error: timed out after ${shortDuration(timeoutMs)} waiting for ${what} on ${ref}\n`);
          }
          return 1;
        }
        await ctx.out(`${ref} condition met\n`);
      }
      return 0;
    } finally {
      dispose();
    }
  },
};
