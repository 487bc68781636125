import { ApiError, CliError, ConnectionError, UsageError, formatError } from '../errors.js';
import { parseDuration, shortDuration } from '../duration.js';
import { resourcePath, typeName, type ResourceInfo } from '../discovery.js';
import { readManifests } from '../manifests.js';
import { targetFor } from './apply.js';
import { FILENAME_FLAG, NAMESPACE_FLAG, RECURSIVE_FLAG, isNotFound, resolveRequests, sleep, type Command, type Context } from './common.js';

interface Victim {
  resource: ResourceInfo;
  namespace?: string;
  name: string;
  uid?: string;
}

const CASCADE: Record<string, string> = { background: 'Background', foreground: 'Foreground', orphan: 'Orphan', true: 'Background', false: 'Orphan' };

/** Polls GET until the object is gone (404) or replaced by a new one with another uid. */
async function waitGone(ctx: Context, v: Victim, deadline: number): Promise<boolean> {
  const path = resourcePath(v.resource, { namespace: v.namespace, name: v.name });
  let delay = 100;
  for (;;) {
    try {
      const obj = await ctx.client.get(path);
      if (v.uid && obj.metadata?.uid && obj.metadata.uid !== v.uid) return true;
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
    const left = deadline - Date.now();
    if (left <= 0) return false;
    if (!(await sleep(Math.min(delay, left), ctx.signal))) return false;
    delay = Math.min(delay * 2, 1000);
  }
}

export const command: Command = {
  name: 'delete',
  summary: 'Delete objects by name or from manifests',
  usage: 'skiff delete KIND NAME... | KIND/NAME... | -f FILE|DIR|- | KIND -l SELECTOR | KIND --all  [-n NS] [--wait=false]',
  examples: `
  skiff delete job pi
  skiff delete -f job.yaml
  skiff delete pods -l batch.kubernetes.io/job-name=pi --wait=false`,
  flags: [
    FILENAME_FLAG,
    RECURSIVE_FLAG,
    NAMESPACE_FLAG,
    { name: 'selector', short: 'l', type: 'string', valueName: 'SELECTOR', description: 'delete the objects matching this label selector' },
    { name: 'all', type: 'boolean', description: 'delete all objects of the type in the namespace' },
    { name: 'wait', type: 'boolean', default: true, description: 'wait until the objects are gone' },
    { name: 'timeout', type: 'string', default: '60s', valueName: 'DURATION', description: 'how long --wait waits' },
    { name: 'ignore-not-found', type: 'boolean', description: 'do not fail for objects that do not exist' },
    { name: 'cascade', type: 'string', default: 'background', valueName: 'MODE', description: 'what happens to dependents: background, foreground or orphan' },
  ],

  async run(ctx) {
    const a = ctx.args;
    const files = a.strings('filename');
    const selector = a.string('selector');
    const all = a.boolean('all');
    const ignoreNotFound = a.boolean('ignore-not-found');
    const timeoutMs = parseDuration(a.string('timeout') ?? '60s');
    if (timeoutMs === undefined) throw new UsageError(`invalid --timeout "${a.string('timeout')}" (use e.g. 30s, 5m, 1h)`);
    const cascadeRaw = (a.string('cascade') ?? 'background').toLowerCase();
    const propagationPolicy = CASCADE[cascadeRaw];
    if (!propagationPolicy) throw new UsageError(`invalid --cascade "${a.string('cascade')}": use background, foreground or orphan`);

    let failed = false;
    const victims: Victim[] = [];
    if (files.length > 0) {
      if (a.positionals.length > 0) throw new UsageError('give either -f or KIND NAME, not both');
      const refreshed = new Set<string>();
      for (const entry of await readManifests(files, ctx.io, a.boolean('recursive'))) {
        if (entry.error !== undefined) {
          failed = true;
          await ctx.err(`error: ${entry.error}\n`);
          continue;
        }
        try {
          const t = await targetFor(ctx, entry, refreshed);
          victims.push({ resource: t.resource, namespace: t.namespace, name: t.name });
        } catch (err) {
          if (!(err instanceof CliError) || err instanceof ConnectionError) throw err;
          failed = true;
          await ctx.err(`${formatError(err)}\n`);
        }
      }
    } else {
      if (a.positionals.length === 0) throw new UsageError('you must specify the type of resource to delete, or -f FILE');
      const requests = await resolveRequests(ctx, a.positionals, 'delete');
      for (const req of requests) {
        const ns = req.resource.namespaced ? ctx.namespace : undefined;
        if (req.names.length > 0) {
          if (selector || all) throw new UsageError('names cannot be given together with -l or --all');
          for (const name of req.names) victims.push({ resource: req.resource, namespace: ns, name });
        } else if (selector || all) {
          const list = await ctx.client.list(resourcePath(req.resource, { namespace: ns }), { labelSelector: selector });
          for (const o of list.items) {
            if (o.metadata?.name) victims.push({ resource: req.resource, namespace: ns, name: o.metadata.name, uid: o.metadata.uid });
          }
        } else {
          throw new UsageError(`you must name the ${req.resource.plural} to delete, or use -l SELECTOR or --all`);
        }
      }
      if (victims.length === 0 && (selector || all)) {
        await ctx.err('No resources found\n');
        return 0;
      }
    }

    const deleted: Victim[] = [];
    for (const v of victims) {
      const path = resourcePath(v.resource, { namespace: v.namespace, name: v.name });
      try {
        const res = await ctx.client.request('DELETE', path, { query: { propagationPolicy } });
        // The server may answer with the object (still terminating) or a Status.
        if (res.kind !== 'Status' && res.metadata?.uid) v.uid ??= res.metadata.uid;
        deleted.push(v);
        await ctx.out(`${typeName(v.resource)} "${v.name}" deleted\n`);
      } catch (err) {
        if (err instanceof ApiError && err.isNotFound && ignoreNotFound) continue;
        if (!(err instanceof ApiError)) throw err;
        failed = true;
        await ctx.err(`${formatError(err)}\n`);
      }
    }

    if (a.boolean('wait') && deleted.length > 0) {
      const deadline = Date.now() + timeoutMs;
      const results = await Promise.all(deleted.map((v) => waitGone(ctx, v, deadline)));
      for (let i = 0; i < deleted.length; i++) {
        if (results[i] || ctx.signal?.aborted) continue;
        const v = deleted[i] as Victim;
        failed = true;
        await ctx.err(`error: timed out after ${shortDuration(timeoutMs)} waiting for ${typeName(v.resource)}/${v.name} to be deleted\n`);
      }
    }
    return failed ? 1 : 0;
  },
};
