// XGBoostJob: the Rabit tracker's variables (MASTER_*, WORLD_SIZE, RANK) and LightGBM's WORKER_*.
import type { EnvVar, Pod } from '../../api/core-types.js';
import { XGBoostJobInfo as info } from '../../api/training.js';
import type { ReplicaView, TrainingJob } from './types.js';
import { allSucceeded, appendEnv, env, frameworkKind, replicaCount, replicaName, replicaSpec, requirePort, totalReplicas, viewOf } from './common.js';

export function xgboostEnv(job: TrainingJob, type: string, index: number): EnvVar[] {
  const total = totalReplicas(job, info);
  const rank = type === 'Master' ? index : index + replicaCount(info, 'Master', replicaSpec(job, info, 'Master'));
  const vars = [
    env('MASTER_PORT', requirePort(job, info, 'Master')),
    env('MASTER_ADDR', replicaName(job, 'Master', 0)),
    env('WORLD_SIZE', total),
    env('RANK', rank),
    env('PYTHONUNBUFFERED', '1'),
  ];
  if (total > 1) {
    const workers: string[] = [];
    for (let i = 0; i < total - 1; i++) workers.push(replicaName(job, 'Worker', i));
    vars.push(env('WORKER_PORT', requirePort(job, info, 'Worker')), env('WORKER_ADDRS', workers.join(',')));
  }
  return vars;
}

export const xgboostKind = frameworkKind({
  info,
  isMasterRole: (_job, type) => type === 'Master',
  inject(job: TrainingJob, type: string, index: number, pod: Pod) {
    const vars = xgboostEnv(job, type, index);
    for (const c of pod.spec.containers) appendEnv(c, vars);
  },
  succeeded: (_job: TrainingJob, views: ReplicaView[]) => allSucceeded(viewOf(views, 'Master')),
});
