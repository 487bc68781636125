import { ApiError, CliError, ConnectionError, UsageError, formatError } from '../errors.js';
import { findByGVK, objectRef, resourcePath, type ResourceInfo } from '../discovery.js';
import { readManifests, type ManifestEntry } from '../manifests.js';
import { prepareCreate, prepareUpdate } from '../merge.js';
import { asList, formatObject, parseOutput } from '../output.js';
import { retiredTrainingKind } from '../../api/training.js';
import type { KObject } from '../types.js';
import { FILENAME_FLAG, NAMESPACE_FLAG, RECURSIVE_FLAG, type Command, type Context } from './common.js';

export interface Target {
  resource: ResourceInfo;
  namespace?: string;
  name: string;
  /** The manifest with its namespace settled. */
  object: KObject;
}

/**
 * Maps a manifest object to its resource and namespace. Discovery is refreshed once per unknown
 * apiVersion/kind, in case an earlier document created it (a CRD).
 */
export async function targetFor(ctx: Context, entry: ManifestEntry & { object: KObject }, refreshed: Set<string>): Promise<Target> {
  const obj = entry.object;
  const apiVersion = String(obj.apiVersion);
  const kind = String(obj.kind);
  let resource = findByGVK(await ctx.client.discovery(), apiVersion, kind);
  const gvk = `${apiVersion}/${kind}`;
  if (!resource && !refreshed.has(gvk)) {
    refreshed.add(gvk);
    resource = findByGVK(await ctx.client.discovery(true), apiVersion, kind);
  }
  const name = obj.metadata?.name;
  if (!resource) {
    const retired = retiredTrainingKind(apiVersion.split('/')[0] ?? '', kind);
    throw new CliError(
      `${entry.source}: no matches for kind "${kind}" in version "${apiVersion}"${name ? ` (object "${name}")` : ''}; ${retired ? `${retired}; ` : ''}see 'skiff api-resources'`,
    );
  }
  if (typeof name !== 'string' || name === '') {
    throw new CliError(`${entry.source}: ${kind} has no metadata.name${obj.metadata?.generateName ? ' (generateName cannot be used with apply)' : ''}`);
  }
  const object: KObject = { ...obj, metadata: { ...(obj.metadata ?? {}) } };
  let namespace: string | undefined;
  if (resource.namespaced) {
    const own = obj.metadata?.namespace;
    if (own && ctx.namespaceExplicit && own !== ctx.namespace) {
      throw new CliError(
        `${entry.source}: the namespace of ${objectRef(resource, name)} ("${own}") does not match the namespace "${ctx.namespace}" given with -n`,
      );
    }
    namespace = own || ctx.namespace;
    object.metadata = { ...object.metadata, namespace };
  } else if (object.metadata) {
    delete object.metadata.namespace;
  }
  return { resource, namespace, name, object };
}

type DryRun = 'none' | 'server' | 'client';

interface Applied {
  result: 'created' | 'configured' | 'unchanged';
  /** the object as the server answered (or, for a client dry run, as it would be sent) */
  object?: KObject;
  /** a server dry run: what the object would create (a training job's Pods, Services, ConfigMaps) */
  rendered: KObject[];
}

/** A server dry run asks for `dryRun=All&render=true`: the answer is a List, the object first. */
function dryAnswer(answer: KObject): { object: KObject; rendered: KObject[] } {
  const items = answer.kind === 'List' && Array.isArray(answer.items) ? (answer.items as KObject[]) : [answer];
  return { object: items[0] ?? answer, rendered: items.slice(1) };
}

async function applyOne(ctx: Context, t: Target, dryRun: DryRun = 'none'): Promise<Applied> {
  const objectPath = resourcePath(t.resource, { namespace: t.namespace, name: t.name });
  const query = dryRun === 'server' ? { dryRun: 'All', render: 'true' } : undefined;
  for (let attempt = 0; ; attempt++) {
    let live: KObject | undefined;
    try {
      live = await ctx.client.get(objectPath);
    } catch (err) {
      if (!(err instanceof ApiError && err.isNotFound)) throw err;
    }
    try {
      if (!live) {
        const body = prepareCreate(t.object);
        if (dryRun === 'client') return { result: 'created', object: body, rendered: [] };
        const answer = await ctx.client.request('POST', resourcePath(t.resource, { namespace: t.namespace }), { body, query });
        return { result: 'created', ...(dryRun === 'server' ? dryAnswer(answer) : { object: answer, rendered: [] }) };
      }
      const { body, changed } = prepareUpdate(live, t.object);
      if (dryRun === 'client') return { result: changed ? 'configured' : 'unchanged', object: changed ? body : live, rendered: [] };
      // a server dry run always asks, so that it shows what the object would create
      if (!changed && dryRun !== 'server') return { result: 'unchanged', object: live, rendered: [] };
      const answer = await ctx.client.request('PUT', objectPath, { body, query });
      return { result: changed ? 'configured' : 'unchanged', ...(dryRun === 'server' ? dryAnswer(answer) : { object: answer, rendered: [] }) };
    } catch (err) {
      // Someone else wrote in between (or created it first): read again and retry.
      const retryable = err instanceof ApiError && (err.code === 409 || (!live && err.reason === 'AlreadyExists'));
      if (!retryable || attempt >= 3) throw err;
    }
  }
}

export const command: Command = {
  name: 'apply',
  summary: 'Create or update objects from manifests',
  usage: 'skiff apply -f FILE|DIR|URL|- [-f ...] [-R] [-n NS] [--dry-run=server|client] [-o yaml|json|name]',
  description: `
Reads YAML (multi-document) or JSON manifests, including List objects, and makes the server
match them: objects that do not exist are created, the others updated. Directories contribute
their .yaml, .yml and .json files in name order. Fields removed from a manifest since the
previous apply are removed from the object (the applied manifest is kept in the
kubectl.kubernetes.io/last-applied-configuration annotation, as kubectl does).

--dry-run=server sends each object with dryRun=All: the server defaults and validates it and
stores nothing. With -o yaml|json it prints the object as it would be stored and then, for a
training job (PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob, MPIJob), a List of everything
the job would create: its replica Pods with their injected environment, their Services, MPI's
ConfigMap. --dry-run=client only shows what would be sent.`,
  examples: `
  skiff apply -f job.yaml
  skiff apply -f manifests/ -n team-a
  cat job.yaml | skiff apply -f -
  skiff apply --dry-run=server -o yaml -f pytorchjob.yaml`,
  flags: [
    FILENAME_FLAG, RECURSIVE_FLAG, NAMESPACE_FLAG,
    { name: 'dry-run', type: 'string', valueName: 'none|server|client', description: 'server: defaulted and validated by the server, stored nothing (with -o, a training job\'s Pods too); client: only printed' },
    { name: 'output', short: 'o', type: 'string', valueName: 'FORMAT', description: 'yaml, json or name: print the applied objects' },
  ],

  async run(ctx) {
    const files = ctx.args.strings('filename');
    if (files.length === 0) throw new UsageError('you must specify at least one manifest with -f (a file, a directory, a URL or - for standard input)');
    if (ctx.args.positionals.length > 0) throw new UsageError(`unexpected argument "${ctx.args.positionals[0]}"; manifests are given with -f`);
    const dryRunFlag = ctx.args.string('dry-run') ?? 'none';
    if (!['none', 'server', 'client'].includes(dryRunFlag)) throw new UsageError(`invalid --dry-run value "${dryRunFlag}": must be none, server or client`);
    const dryRun = dryRunFlag as DryRun;
    const output = parseOutput(ctx.args.string('output'), ['table', 'json', 'yaml', 'name']);
    const entries = await readManifests(files, ctx.io, ctx.args.boolean('recursive'));
    let failed = 0;
    let done = 0;
    const refreshed = new Set<string>();
    for (const entry of entries) {
      if (entry.error !== undefined) {
        failed++;
        await ctx.err(`error: ${entry.error}\n`);
        continue;
      }
      try {
        const t = await targetFor(ctx, entry, refreshed);
        const applied = await applyOne(ctx, t, dryRun);
        done++;
        const suffix = dryRun === 'none' ? '' : ` (${dryRun} dry run)`;
        if (output === 'table') await ctx.out(`${objectRef(t.resource, t.name)} ${applied.result}${suffix}\n`);
        else if (output === 'name') await ctx.out(`${objectRef(t.resource, t.name)}\n`);
        else if (output === 'json' || output === 'yaml') {
          const sep = output === 'yaml' ? '---\n' : '';
          await ctx.out((done > 1 ? sep : '') + await formatObject(applied.object ?? t.object, output));
          if (applied.rendered.length) await ctx.out(sep + await formatObject(asList(applied.rendered), output));
        }
      } catch (err) {
        if (!(err instanceof ApiError || err instanceof CliError) || err instanceof UsageError) throw err;
        if (err instanceof ConnectionError) throw err;
        failed++;
        await ctx.err(`${formatError(err)}\n`);
      }
    }
    if (failed === 0 && done === 0) {
      await ctx.err('error: no objects passed to apply\n');
      return 1;
    }
    return failed > 0 ? 1 : 0;
  },
};
