import { ApiError, UsageError, formatError } from '../errors.js';
import { findResource, resourcePath, type ResourceInfo } from '../discovery.js';
import { describeObject } from '../describe.js';
import type { KEvent, KObject } from '../types.js';
import { NAMESPACE_FLAG, resolveRequests, type Command, type Context } from './common.js';

/** What a kind shows beside itself: a Katib Experiment's Trials (by Katib's experiment label). */
async function relatedTo(ctx: Context, r: ResourceInfo, obj: KObject): Promise<{ trials?: KObject[] }> {
  if (r.group !== 'kubeflow.org' || r.kind !== 'Experiment') return {};
  const trials = findResource(await ctx.client.discovery(), 'trials.kubeflow.org');
  if (!trials) return {};
  const list = await ctx.client.list(resourcePath(trials, { namespace: obj.metadata?.namespace }), { labelSelector: `katib.kubeflow.org/experiment=${obj.metadata?.name ?? ''}` });
  return { trials: list.items };
}

/** Core/v1 Events about the object (by uid); undefined when they cannot be listed. */
export async function eventsFor(ctx: Context, r: ResourceInfo, obj: KObject): Promise<KEvent[] | undefined> {
  const uid = obj.metadata?.uid;
  if (!uid) return undefined;
  const discovery = await ctx.client.discovery();
  const events = findResource(discovery, 'events');
  const core = events && events.group === '' ? events : discovery.resources.find((x) => x.group === '' && x.plural === 'events');
  const eventsResource: ResourceInfo = core ?? {
    group: '', version: 'v1', groupVersion: 'v1', plural: 'events', singular: 'event', kind: 'Event',
    namespaced: true, verbs: [], shortNames: [], categories: [], preferred: true,
  };
  const namespace = r.namespaced ? obj.metadata?.namespace ?? ctx.namespace : undefined;
  try {
    const list = await ctx.client.list(resourcePath(eventsResource, { namespace }), {
      fieldSelector: `involvedObject.uid=${uid}`,
    });
    return list.items as KEvent[];
  } catch (err) {
    if (err instanceof ApiError) return undefined;
    throw err;
  }
}

export const command: Command = {
  name: 'describe',
  summary: 'Show the details of an object and its events',
  usage: 'skiff describe KIND NAME... | KIND/NAME... [-n NS]',
  examples: `
  skiff describe job pi
  skiff describe pod/pi-x7k2q`,
  flags: [NAMESPACE_FLAG, { name: 'show-events', type: 'boolean', default: true, description: 'list the events about the object' }],

  async run(ctx) {
    const requests = await resolveRequests(ctx, ctx.args.positionals, 'describe');
    let failed = false;
    let first = true;
    for (const req of requests) {
      const r = req.resource;
      const ns = r.namespaced ? ctx.namespace : undefined;
      let objects: KObject[];
      if (req.names.length === 0) {
        // kubectl describes every object of the type when no name is given.
        objects = (await ctx.client.list(resourcePath(r, { namespace: ns }))).items;
        if (objects.length === 0) {
          await ctx.err(r.namespaced ? `No resources found in ${ctx.namespace} namespace.\n` : 'No resources found\n');
          continue;
        }
      } else {
        objects = [];
        for (const name of req.names) {
          try {
            objects.push(await ctx.client.get(resourcePath(r, { namespace: ns, name })));
          } catch (err) {
            if (!(err instanceof ApiError)) throw err;
            failed = true;
            await ctx.err(`${formatError(err)}\n`);
          }
        }
      }
      for (const obj of objects) {
        const events = ctx.args.boolean('show-events') ? await eventsFor(ctx, r, obj) : null;
        const text = describeObject(r, obj, events, ctx.io.now(), await relatedTo(ctx, r, obj));
        await ctx.out(`${first ? '' : '\n\n'}${text}`);
        first = false;
      }
    }
    if (requests.length === 0) throw new UsageError('you must specify the type of resource to describe');
    return failed ? 1 : 0;
  },
};
