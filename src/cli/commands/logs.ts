import { ApiError, CliError, UsageError, isAbortError } from '../errors.js';
import { parseDuration } from '../duration.js';
import { findResource, objectRef, resolveResource, resourcePath, type ResourceInfo } from '../discovery.js';
import type { KObject, Pod } from '../types.js';
import { NAMESPACE_FLAG, positiveIntFlag, sleep, type Command, type Context } from './common.js';
import type { HttpResponse } from '../http.js';

const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';

function created(o: KObject): number {
  const t = o.metadata?.creationTimestamp ? Date.parse(o.metadata.creationTimestamp) : NaN;
  return Number.isNaN(t) ? Number.MAX_SAFE_INTEGER : t;
}

/** Pods belonging to an owner object: by the job-name label for Jobs, else by ownerReferences uid. */
async function podsOf(ctx: Context, podsRes: ResourceInfo, owner: ResourceInfo, obj: KObject, namespace: string): Promise<Pod[]> {
  const podsPath = resourcePath(podsRes, { namespace });
  const name = obj.metadata?.name ?? '';
  if (owner.group === 'serving.kserve.io' && owner.kind === 'InferenceService') {
    // the predictor's model-server Pods (their owner is a Revision, not the InferenceService)
    const list = await ctx.client.list(podsPath, { labelSelector: `serving.kserve.io/inferenceservice=${name},component=predictor` });
    return list.items as Pod[];
  }
  if (owner.group === 'kubeflow.org' && owner.kind === 'Trial') {
    // a Katib trial's Pods belong to its job (a Job, a training job, a Run); each carries the trial's label
    const list = await ctx.client.list(podsPath, { labelSelector: `katib.kubeflow.org/trial=${name}` });
    return list.items as Pod[];
  }
  if (owner.group === 'batch' && owner.kind === 'Job') {
    const list = await ctx.client.list(podsPath, { labelSelector: `batch.kubernetes.io/job-name=${name}` });
    if (list.items.length > 0) return list.items as Pod[];
  }
  const uid = obj.metadata?.uid;
  const list = await ctx.client.list(podsPath);
  return (list.items as Pod[]).filter((p) =>
    (p.metadata?.ownerReferences ?? []).some((o) => (uid && o.uid === uid) || (!uid && o.kind === owner.kind && o.name === name)),
  );
}

const TRAINING_KINDS = new Set(['PyTorchJob', 'TFJob', 'XGBoostJob', 'PaddleJob', 'JAXJob', 'MPIJob']);
const REPLICA_TYPE_LABEL = 'training.kubeflow.org/replica-type';
const REPLICA_INDEX_LABEL = 'training.kubeflow.org/replica-index';
const JOB_ROLE_LABEL = 'training.kubeflow.org/job-role';

function isTrainingKind(r: ResourceInfo): boolean {
  return r.group === 'kubeflow.org' && TRAINING_KINDS.has(r.kind);
}

/** a training job's replica as TYPE-INDEX (`worker-1`, `master-0`, `launcher`) */
function replicaName(job: string, p: Pod): string {
  const type = p.metadata?.labels?.[REPLICA_TYPE_LABEL];
  const index = p.metadata?.labels?.[REPLICA_INDEX_LABEL];
  if (type) return index !== undefined ? `${type}-${index}` : type;
  const name = p.metadata?.name ?? '';
  return name.startsWith(`${job}-`) ? name.slice(job.length + 1) : name;
}

/**
 * The pod of a training job to show: the one `--replica TYPE-INDEX` names, else the master role
 * (Master/Chief, worker-0 of a worker-only job, the MPI launcher), else worker-0, else the oldest.
 */
function pickReplica(job: string, pods: Pod[], replica: string | undefined): Pod | undefined {
  if (replica) {
    const want = replica.toLowerCase();
    const alt = want.endsWith('-0') ? want.slice(0, -2) : `${want}-0`;
    return pods.find((p) => replicaName(job, p) === want) ?? pods.find((p) => replicaName(job, p) === alt);
  }
  const role = (r: string): Pod | undefined => pods.find((p) => p.metadata?.labels?.[JOB_ROLE_LABEL] === r);
  return role('master') ?? role('launcher') ?? pods.find((p) => replicaName(job, p) === 'worker-0');
}

/** Resolves the argument to one pod (waiting up to `waitMs` for an owner's pods to appear). */
async function resolvePod(ctx: Context, target: string, waitMs: number): Promise<Pod> {
  const discovery = await ctx.client.discovery();
  const podsRes = findResource(discovery, 'pods') ?? resolveResource(discovery, 'pods');
  const slash = target.indexOf('/');
  const kindArg = slash > 0 ? target.slice(0, slash) : 'pods';
  const name = slash > 0 ? target.slice(slash + 1) : target;
  if (!name) throw new UsageError(`invalid argument "${target}": expected POD or KIND/NAME`);
  const r = slash > 0 ? resolveResource(discovery, kindArg) : podsRes;
  const namespace = ctx.namespace;
  const obj = await ctx.client.get(resourcePath(r, { namespace: r.namespaced ? namespace : undefined, name }));
  if (r.group === '' && r.kind === 'Pod') return obj as Pod;

  const deadline = Date.now() + waitMs;
  const task = ctx.args.string('task');
  const replica = ctx.args.string('replica');
  if (replica && !isTrainingKind(r)) throw new UsageError('--replica is for training jobs (pytorchjob/NAME, tfjob/NAME, mpijob/NAME, ...)');
  for (;;) {
    let pods = await podsOf(ctx, podsRes, r, obj, namespace);
    if (isTrainingKind(r) && pods.length > 0) {
      const chosen = pickReplica(name, pods, replica);
      if (chosen) return chosen;
      if (replica && Date.now() >= deadline) {
        const known = [...new Set(pods.map((p) => replicaName(name, p)))].sort();
        throw new CliError(`${objectRef(r, name)} has no replica "${replica}" (its replicas: ${known.join(', ')})`);
      }
      if (replica) pods = [];
    }
    if (task) {
      // a pipeline run's task: by its dotted path, or by its own name
      const taskOf = (p: Pod): string[] => [p.metadata?.annotations?.['pipelines.kubeflow.org/task-path'] ?? '', p.metadata?.labels?.['pipelines.kubeflow.org/task'] ?? ''];
      const matching = pods.filter((p) => taskOf(p).includes(task));
      if (pods.length > 0 && matching.length === 0 && Date.now() >= deadline) {
        const known = [...new Set(pods.map((p) => taskOf(p)[0]).filter(Boolean))].sort();
        throw new CliError(`${objectRef(r, name)} has no task "${task}"${known.length ? ` (its tasks: ${known.join(', ')})` : ''}`);
      }
      pods = matching;
    }
    if (pods.length > 0) {
      // the first Pod a workload made; for a served model the newest replica (the latest revision's)
      const dir = r.group === 'serving.kserve.io' ? -1 : 1;
      pods.sort((a, b) => dir * (created(a) - created(b)) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
      const pod = pods[0] as Pod;
      if (pods.length > 1) await ctx.err(`Found ${pods.length} pods, using pod/${pod.metadata?.name ?? ''}\n`);
      return pod;
    }
    if (Date.now() >= deadline || !(await sleep(Math.min(1000, deadline - Date.now()), ctx.signal))) {
      throw new CliError(`no pods found for ${objectRef(r, name)}`);
    }
  }
}

function isNotStartedYet(err: unknown): boolean {
  return (
    err instanceof ApiError &&
    err.code === 400 &&
    /waiting to start|ContainerCreating|PodInitializing|not (yet )?(started|running)|is pending/i.test(err.message)
  );
}

export const command: Command = {
  name: 'logs',
  summary: "Print the logs of a pod (or of a job's pod)",
  usage: 'skiff logs POD|KIND/NAME [CONTAINER] [-c CONTAINER] [-f] [-p] [--tail N] [--timestamps] [--task TASK] [--replica TYPE-INDEX] [-n NS]',
  description: `
For KIND/NAME other than a pod (e.g. job/pi) the logs of its first pod (oldest) are shown. For a
training job (pytorchjob/NAME, tfjob/NAME, mpijob/NAME, ...) the master's: the Master or Chief,
worker-0 of a worker-only job, the MPI launcher; --replica TYPE-INDEX picks another (worker-1).`,
  examples: `
  skiff logs job/pi
  skiff logs pytorchjob/mnist --replica worker-1
  skiff logs -f pi-x7k2q -c trainer
  skiff logs pi-x7k2q --previous --tail 20`,
  flags: [
    NAMESPACE_FLAG,
    { name: 'container', short: 'c', type: 'string', valueName: 'NAME', description: 'container to show (default: the only, or first, one)' },
    { name: 'task', type: 'string', valueName: 'TASK', description: "for a pipeline run: the task whose pod to show (its name or dotted path)" },
    { name: 'replica', type: 'string', valueName: 'TYPE-INDEX', description: 'for a training job: the replica whose pod to show (master-0, worker-1, launcher)' },
    { name: 'follow', short: 'f', type: 'boolean', description: 'keep streaming new output' },
    { name: 'previous', short: 'p', type: 'boolean', description: 'logs of the previous (crashed) run of the container' },
    { name: 'tail', type: 'string', default: '-1', valueName: 'N', description: 'only the last N lines (-1: all)' },
    { name: 'timestamps', type: 'boolean', description: 'prefix each line with its timestamp' },
    { name: 'pod-running-timeout', type: 'string', default: '20s', valueName: 'DURATION', description: 'how long to wait for a pod to appear or start' },
  ],

  async run(ctx) {
    const a = ctx.args;
    const [target, positionalContainer, extra] = a.positionals;
    if (!target) throw new UsageError('you must specify a pod, or KIND/NAME (e.g. job/pi)');
    if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
    if (positionalContainer !== undefined && a.isSet('container')) throw new UsageError('give the container either as an argument or with -c, not both');
    const tail = positiveIntFlag(a, 'tail') ?? -1;
    const waitMs = parseDuration(a.string('pod-running-timeout') ?? '20s');
    if (waitMs === undefined) throw new UsageError(`invalid --pod-running-timeout "${a.string('pod-running-timeout')}"`);

    const pod = await resolvePod(ctx, target, waitMs);
    const podName = pod.metadata?.name ?? '';
    const containers = (pod.spec?.containers ?? []).map((c) => c.name ?? '');
    let container = a.string('container') ?? positionalContainer;
    if (!container && containers.length > 1) {
      const preferred = pod.metadata?.annotations?.[DEFAULT_CONTAINER_ANNOTATION];
      container = preferred && containers.includes(preferred) ? preferred : containers[0];
      await ctx.err(`Defaulted container "${container}" out of: ${containers.join(', ')}\n`);
    }

    const discovery = await ctx.client.discovery();
    const podsRes = findResource(discovery, 'pods') ?? resolveResource(discovery, 'pods');
    const path = resourcePath(podsRes, { namespace: pod.metadata?.namespace ?? ctx.namespace, name: podName, subresource: 'log' });
    const query = {
      container,
      follow: a.boolean('follow'),
      previous: a.boolean('previous'),
      tailLines: tail >= 0 ? tail : undefined,
      timestamps: a.boolean('timestamps'),
    };

    const deadline = Date.now() + waitMs;
    let res: HttpResponse;
    for (;;) {
      try {
        res = await ctx.client.raw('GET', path, { query, signal: ctx.signal });
        break;
      } catch (err) {
        if (isAbortError(err)) return 0;
        // With -f, wait for a container that is still starting, as kubectl does.
        if (a.boolean('follow') && isNotStartedYet(err) && Date.now() < deadline) {
          if (!(await sleep(1000, ctx.signal))) return 0;
          continue;
        }
        throw err;
      }
    }
    if (!res.body) return 0;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body) {
        const text = decoder.decode(chunk, { stream: true });
        if (text) await ctx.out(text);
      }
      const rest = decoder.decode();
      if (rest) await ctx.out(rest);
    } catch (err) {
      if (isAbortError(err) || ctx.signal?.aborted) return 0;
      throw new CliError(`the log stream of pod/${podName} broke off: ${(err as Error).message}`);
    }
    return 0;
  },
};
