// PyTorchJob: MASTER_*/RANK/WORLD_SIZE when a Master exists, torchrun's PET_* variables always, the
// elastic rendezvous for elasticPolicy, and the workers' wait for the master.
import type { Container, EnvVar, Pod } from '../../api/core-types.js';
import { PyTorchJobInfo as info } from '../../api/training.js';
import type { TrainingJob, ReplicaView } from './types.js';
import { allSucceeded, appendEnv, env, frameworkKind, replicaCount, replicaName, replicaSpec, requirePort, totalReplicas, viewOf } from './common.js';

/** how many times the workers' init container looks for the master, two seconds apart (upstream's default) */
export const pytorchInitMaxTries = 100;

/**
 * The init container upstream puts on every Worker of a job with a Master: it waits until the
 * master's name resolves. Upstream runs `nslookup` in an alpine image; here commands run on this
 * machine, where `nslookup` may be missing and names come from the Pod's hosts file, so the loop
 * asks `getent hosts` (glibc's resolver, which reads that file) and falls back to reading
 * /etc/hosts itself. Same name, image, limits, tries and wait as upstream.
 */
export function pytorchInitContainer(job: TrainingJob): Container {
  const master = replicaName(job, 'Master', 0);
  const found = `{ getent hosts ${master} || grep -Eq "[[:space:]]${master}([[:space:]]|$)" /etc/hosts; } >/dev/null 2>&1`;
  return {
    name: 'init-pytorch',
    image: 'alpine:3.10',
    imagePullPolicy: 'IfNotPresent',
    resources: { limits: { cpu: '100m', memory: '20Mi' } },
    command: ['sh', '-c', `err=1;for i in $(seq ${pytorchInitMaxTries}); do if ${found}; then err=0 && break; fi;echo waiting for master; sleep 2; done; exit $err`],
  };
}

/** Go's strconv.Atoi: an integer nprocPerNode multiplies WORLD_SIZE, anything else ("auto", "gpu") counts 1 */
function nprocMultiplier(nproc: unknown): number {
  return typeof nproc === 'string' && /^[+-]?\d+$/.test(nproc) ? Number.parseInt(nproc, 10) : 1;
}

export function pytorchEnv(job: TrainingJob, type: string, index: number): EnvVar[] {
  const spec = job.spec as Record<string, any>;
  const vars: EnvVar[] = [env('PYTHONUNBUFFERED', '1')];
  const master = replicaSpec(job, info, 'Master');
  const total = totalReplicas(job, info);
  if (master) {
    const port = requirePort(job, info, 'Master');
    const addr = replicaName(job, 'Master', 0);
    const rank = type === 'Master' ? index : index + replicaCount(info, 'Master', master);
    vars.push(
      env('MASTER_PORT', port), env('PET_MASTER_PORT', port),
      env('MASTER_ADDR', addr), env('PET_MASTER_ADDR', addr),
      env('WORLD_SIZE', total * nprocMultiplier(spec.nprocPerNode)),
      env('RANK', rank), env('PET_NODE_RANK', rank),
    );
  }
  if (spec.nprocPerNode !== undefined && spec.nprocPerNode !== null) vars.push(env('PET_NPROC_PER_NODE', String(spec.nprocPerNode)));
  const ep = spec.elasticPolicy as Record<string, any> | undefined | null;
  if (ep && typeof ep === 'object') {
    const host = ep.rdzvHost ?? replicaName(job, 'Worker', 0);
    const port = ep.rdzvPort ?? requirePort(job, info, 'Worker');
    vars.push(env('PET_RDZV_ENDPOINT', `${host}:${port}`), env('PET_RDZV_BACKEND', ep.rdzvBackend ?? 'c10d'));
    if (ep.minReplicas != null || ep.maxReplicas != null) vars.push(env('PET_NNODES', `${ep.minReplicas ?? ''}:${ep.maxReplicas ?? ''}`));
    else vars.push(env('PET_NNODES', replicaCount(info, 'Worker', replicaSpec(job, info, 'Worker'))));
    if (ep.maxRestarts != null) vars.push(env('PET_MAX_RESTARTS', ep.maxRestarts));
    if (ep.nProcPerNode != null) vars.push(env('PET_NPROC_PER_NODE', ep.nProcPerNode));
    if (ep.rdzvId != null) vars.push(env('PET_RDZV_ID', ep.rdzvId));
    if (Array.isArray(ep.rdzvConf) && ep.rdzvConf.length > 0) vars.push(env('PET_RDZV_CONF', ep.rdzvConf.map((kv: { key: string; value?: string }) => `${kv.key}=${kv.value ?? ''}`).join(',')));
    if (ep.standalone === true) vars.push(env('PET_STANDALONE', ''));
  } else {
    vars.push(env('PET_NNODES', total));
  }
  return vars;
}

export const pytorchKind = frameworkKind({
  info,
  isMasterRole(job, type, index) {
    return replicaSpec(job, info, 'Master') ? type === 'Master' : type === 'Worker' && index === 0;
  },
  inject(job: TrainingJob, type: string, index: number, pod: Pod) {
    const vars = pytorchEnv(job, type, index);
    for (const c of pod.spec.containers) appendEnv(c, vars);
    if (type === 'Worker' && replicaSpec(job, info, 'Master')) pod.spec.initContainers = [...(pod.spec.initContainers ?? []), pytorchInitContainer(job)];
  },
  succeeded(job: TrainingJob, views: ReplicaView[]) {
    if (replicaSpec(job, info, 'Master')) return allSucceeded(viewOf(views, 'Master'));
    const workers = viewOf(views, 'Worker');
    if (allSucceeded(workers)) return true;
    return Boolean(job.spec.elasticPolicy) && (workers?.succeeded ?? 0) > 0;
  },
});
