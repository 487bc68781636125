// TFJob: TF_CONFIG, byte for byte as the operator's Go json.Marshal writes it (struct fields in
// declaration order, map keys sorted), in the first `tensorflow` container, for distributed jobs only.
import type { Pod } from '../../api/core-types.js';
import { TFJobInfo as info } from '../../api/training.js';
import type { ReplicaView, TrainingJob } from './types.js';
import { allSucceeded, findPort, frameworkKind, jobNamespace, replicaCount, replicaName, replicaSpec, replicaSpecs, totalReplicas, viewOf } from './common.js';

/** a JSON string as Go's encoding/json writes it (it escapes <, > and & for HTML, and U+2028/9) */
export function goString(s: string): string {
  return JSON.stringify(s).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

function goStringList(list: string[]): string {
  return `[${list.map(goString).join(',')}]`;
}

/** a Go map[string]X: keys sorted bytewise */
function goMap(entries: [string, string][]): string {
  const sorted = [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${sorted.map(([k, v]) => `${goString(k)}:${v}`).join(',')}}`;
}

/** `<job>-<type>-<i>.<ns>.svc:<port>` for every replica of every type, by lowercase type */
export function tfCluster(job: TrainingJob): Map<string, string[]> {
  const ns = jobNamespace(job);
  const cluster = new Map<string, string[]>();
  for (const [type, rs] of replicaSpecs(job, info)) {
    const port = findPort(rs, info.defaultContainer, info.portName ?? '') ?? info.defaultPort ?? 2222;
    const hosts: string[] = [];
    for (let i = 0; i < replicaCount(info, type, rs); i++) hosts.push(`${replicaName(job, type, i)}.${ns}.svc:${port}`);
    cluster.set(type.toLowerCase(), hosts);
  }
  return cluster;
}

/** TF_CONFIG for one replica; undefined for a job of one replica (a local, non-distributed run) */
export function tfConfig(job: TrainingJob, type: string, index: number): string | undefined {
  if (totalReplicas(job, info) === 1) return undefined;
  const cluster = tfCluster(job);
  const rt = type.toLowerCase();
  const task = `{"type":${goString(rt)},"index":${index}}`;
  if (job.spec.enableDynamicWorker === true) {
    const ps = cluster.get('ps') ?? [];
    const workers: [string, string][] = [];
    let psList = ps;
    if (rt === 'worker') {
      const addr = cluster.get('worker')?.[index];
      if (addr !== undefined) workers.push([String(index), goString(addr)]);
    } else if (rt === 'ps') {
      psList = ps[index] !== undefined ? [ps[index] as string] : [];
    }
    return `{"cluster":{"worker":${goMap(workers)},"ps":${goStringList(psList)}},"task":${task}}`;
  }
  const clusterJson = goMap([...cluster.entries()].map(([k, hosts]) => [k, goStringList(hosts)]));
  return `{"cluster":${clusterJson},"task":${task},"environment":"cloud"}`;
}

function hasChief(job: TrainingJob): string | undefined {
  return ['Chief', 'Master'].find((t) => replicaSpec(job, info, t) !== undefined);
}

export const tensorflowKind = frameworkKind({
  info,
  isMasterRole(job, type, index) {
    return hasChief(job) ? type === 'Chief' || type === 'Master' : type === 'Worker' && index === 0;
  },
  inject(job: TrainingJob, type: string, index: number, pod: Pod) {
    const config = tfConfig(job, type, index);
    if (config === undefined) return;
    const c = pod.spec.containers.find((x) => x.name === info.defaultContainer);
    if (c) c.env = [...(c.env ?? []), { name: 'TF_CONFIG', value: config }];
  },
  succeeded(job: TrainingJob, views: ReplicaView[]) {
    const chief = hasChief(job);
    if (chief) return allSucceeded(viewOf(views, chief));
    const workers = viewOf(views, 'Worker');
    if (job.spec.successPolicy === 'AllWorkers') return allSucceeded(workers);
    const first = workers?.pods.find((p) => p.index === 0);
    return first?.phase === 'Succeeded' && (first.exitCode === undefined || first.exitCode === 0);
  },
  // The TFJob controller's own failure rule: a failed replica fails the job unless the job is
  // restarting (the failure is looked at again once the restart is over), or it is a Worker and
  // `enableDynamicWorker` is set (workers may come and go; the job goes on without it).
  unretriedFailure(job: TrainingJob, type: string, restarting: boolean) {
    if (restarting) return 'defer';
    if (job.spec.enableDynamicWorker === true && type === 'Worker') return 'ignore';
    return 'fail';
  },
});
