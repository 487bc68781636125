// A training job as its page shows it: the replica types as groups (Launcher, Chief, Master, PS,
// Worker, Evaluator), each with its wanted count, the operator's counts and its Pods in index order;
// the state from the conditions; the run policy in words. Pure: the job and the namespace's Pods in.
import type { Condition } from '../../api/types';
import type { Pod, ReplicaSpec, ReplicaStatus, TrainingJob } from '../../api/workload-types';
import { podSummary } from '../pods/view';
import type { PodSummary } from '../pods/view';

const JOB_NAME = 'training.kubeflow.org/job-name';
const REPLICA_TYPE = 'training.kubeflow.org/replica-type';
const REPLICA_INDEX = 'training.kubeflow.org/replica-index';
const JOB_ROLE = 'training.kubeflow.org/job-role';

/** the order the operators create replica types in; others follow by name */
const TYPE_ORDER = ['Launcher', 'Chief', 'Master', 'PS', 'Worker', 'Evaluator'];

export interface ReplicaPod extends PodSummary {
  index?: number;
  pod: Pod;
}

export interface ReplicaGroup {
  type: string;
  /** replicas the spec asks for */
  wanted: number;
  restartPolicy?: string;
  /** status.replicaStatuses[type] */
  counts: { active: number; succeeded: number; failed: number };
  pods: ReplicaPod[];
  /** the group's state, from its Pods: Failed if any failed, Running if any runs, … */
  state: string;
  image?: string;
}

/** the spec field holding the replica specs (`pytorchReplicaSpecs`, `mpiReplicaSpecs`, …) */
export function replicaSpecs(job: TrainingJob): Record<string, ReplicaSpec> {
  for (const [k, v] of Object.entries(job.spec ?? {})) if (k.endsWith('ReplicaSpecs') && v && typeof v === 'object') return v as Record<string, ReplicaSpec>;
  return {};
}

function typeRank(t: string): number {
  const i = TYPE_ORDER.findIndex((x) => x.toLowerCase() === t.toLowerCase());
  return i < 0 ? TYPE_ORDER.length : i;
}

/** which replica type a Pod is: the replica-type label (lower case upstream), else its job role (the MPI launcher) */
function podType(p: Pod, types: string[]): string | undefined {
  const l = p.metadata?.labels ?? {};
  const t = l[REPLICA_TYPE] ?? l[JOB_ROLE];
  return t === undefined ? undefined : types.find((x) => x.toLowerCase() === t.toLowerCase());
}

function groupState(pods: ReplicaPod[], counts: ReplicaGroup['counts'], wanted: number): string {
  const states = pods.map((p) => p.state);
  if (states.some((s) => ['Failed', 'Error', 'OOMKilled', 'CrashLoopBackOff', 'ImagePullBackOff'].includes(s)) || counts.failed > 0) return 'Failed';
  if (states.some((s) => s === 'Running')) return 'Running';
  if (states.some((s) => s === 'Pending' || s === 'ContainerCreating' || s === 'PodInitializing')) return 'Pending';
  if (wanted > 0 && counts.succeeded >= wanted) return 'Succeeded';
  if (pods.length && states.every((s) => s === 'Succeeded')) return 'Succeeded';
  return pods.length ? (states[0] ?? 'Pending') : wanted === 0 ? 'None' : 'Pending';
}

export function replicaGroups(job: TrainingJob, pods: Pod[]): ReplicaGroup[] {
  const specs = replicaSpecs(job);
  const statuses: Record<string, ReplicaStatus> = job.status?.replicaStatuses ?? {};
  const types = [...new Set([...Object.keys(specs), ...Object.keys(statuses)])].sort((a, b) => typeRank(a) - typeRank(b) || a.localeCompare(b));
  const name = job.metadata?.name;
  const uid = job.metadata?.uid;
  const mine = pods.filter((p) => p.metadata?.labels?.[JOB_NAME] === name && (!uid || !p.metadata?.ownerReferences?.length || p.metadata.ownerReferences.some((r) => r.uid === uid)));
  return types.map((type) => {
    const spec = specs[type];
    const st = statuses[type] ?? {};
    const counts = { active: st.active ?? 0, succeeded: st.succeeded ?? 0, failed: st.failed ?? 0 };
    const group = mine
      .filter((p) => podType(p, types) === type)
      .map((p): ReplicaPod => {
        const i = p.metadata?.labels?.[REPLICA_INDEX];
        return { ...podSummary(p), ...(i !== undefined ? { index: Number(i) } : {}), pod: p };
      })
      .sort((a, b) => (a.index ?? 0) - (b.index ?? 0) || a.name.localeCompare(b.name));
    const wanted = spec?.replicas ?? 1;
    return {
      type,
      wanted,
      ...(spec?.restartPolicy ? { restartPolicy: spec.restartPolicy } : {}),
      counts,
      pods: group,
      state: groupState(group, counts, wanted),
      ...(spec?.template?.spec?.containers?.[0]?.image ? { image: spec.template.spec.containers[0].image } : {}),
    };
  });
}

/** the job's state as the operator's conditions say it: the newest true one of Failed, Succeeded, Suspended, Restarting, Running, Created */
export function trainingState(job: TrainingJob): string | undefined {
  const conds = job.status?.conditions ?? [];
  const on = (t: string): Condition | undefined => conds.find((c) => c.type === t && c.status === 'True');
  for (const t of ['Failed', 'Succeeded', 'Suspended', 'Restarting', 'Running', 'Created']) if (on(t)) return t;
  return conds.length ? undefined : 'Pending';
}

/** "1 Master · 2 Worker": the wanted replicas per type, for the list */
export function replicaCounts(job: TrainingJob): string {
  return Object.entries(replicaSpecs(job))
    .sort((a, b) => typeRank(a[0]) - typeRank(b[0]))
    .map(([t, s]) => `${s.replicas ?? 1} ${t}`)
    .join(' · ');
}

/** the condition that explains the state (its reason and message), for the header */
export function stateReason(job: TrainingJob): Condition | undefined {
  const s = trainingState(job);
  return (job.status?.conditions ?? []).find((c) => c.type === s && c.status === 'True');
}

/** the run policy in words, one line a setting, only the settings that are set */
export function runPolicyLines(job: TrainingJob): [string, string][] {
  const rp = job.spec?.runPolicy ?? {};
  const lines: [string, string][] = [];
  lines.push(['Clean Pods', { None: 'never (Pods stay after the job ends)', Running: 'the running ones when the job ends', All: 'all when the job ends' }[rp.cleanPodPolicy ?? 'None'] ?? rp.cleanPodPolicy ?? '']);
  if (rp.backoffLimit !== undefined) lines.push(['Backoff limit', `${job.status?.restarts ?? 0} of ${rp.backoffLimit} restarts used`]);
  if (rp.ttlSecondsAfterFinished !== undefined) lines.push(['Deleted after finishing', `${rp.ttlSecondsAfterFinished}s`]);
  if (rp.activeDeadlineSeconds !== undefined) lines.push(['Deadline', `${rp.activeDeadlineSeconds}s`]);
  lines.push(['Suspended', rp.suspend ? 'yes' : 'no']);
  const sp = rp.schedulingPolicy;
  if (sp) {
    const parts = [sp.minAvailable !== undefined ? `gang of ${sp.minAvailable}` : '', sp.queue ? `queue ${sp.queue}` : '', sp.priorityClass ? `priority ${sp.priorityClass}` : ''].filter(Boolean);
    if (parts.length) lines.push(['Scheduling', parts.join(', ')]);
  }
  if (rp.managedBy) lines.push(['Managed by', rp.managedBy]);
  return lines;
}

/** a PyTorchJob's elasticPolicy in words, or undefined */
export function elasticLines(job: TrainingJob): [string, string][] | undefined {
  const e = job.spec?.elasticPolicy as { minReplicas?: number; maxReplicas?: number; rdzvBackend?: string; rdzvHost?: string; rdzvPort?: number; nProcPerNode?: number; maxRestarts?: number; metrics?: unknown[] } | undefined;
  if (!e || typeof e !== 'object') return undefined;
  const lines: [string, string][] = [];
  if (e.minReplicas !== undefined || e.maxReplicas !== undefined) lines.push(['Replicas', `${e.minReplicas ?? '?'} to ${e.maxReplicas ?? '?'}`]);
  if (e.rdzvBackend) lines.push(['Rendezvous', `${e.rdzvBackend}${e.rdzvHost ? ` at ${e.rdzvHost}${e.rdzvPort ? `:${e.rdzvPort}` : ''}` : ''}`]);
  if (e.nProcPerNode !== undefined) lines.push(['Processes per node', String(e.nProcPerNode)]);
  if (e.maxRestarts !== undefined) lines.push(['Max restarts', String(e.maxRestarts)]);
  if (e.metrics?.length) lines.push(['Autoscaling metrics', `${e.metrics.length}`]);
  return lines;
}
