// PaddleJob: PADDLE_* for paddle.distributed.launch; rank 0 advertises its own Pod IP through the
// downward API (POD_IP_DUMMY), the others reach it by name.
import type { EnvVar, Pod } from '../../api/core-types.js';
import { PaddleJobInfo as info } from '../../api/training.js';
import type { ReplicaView, TrainingJob } from './types.js';
import { allSucceeded, appendEnv, env, findPort, frameworkKind, replicaName, replicaSpec, totalReplicas, viewOf } from './common.js';

export function paddleEnv(job: TrainingJob, type: string, index: number): EnvVar[] {
  const vars = [env('PYTHONUNBUFFERED', '1'), env('PADDLE_JOB_ID', job.metadata.name ?? ''), env('PADDLE_NNODES', totalReplicas(job, info))];
  const psMode = replicaSpec(job, info, 'Master') !== undefined;
  const rank0 = psMode ? 'Master' : 'Worker';
  const port = findPort(replicaSpec(job, info, rank0), info.defaultContainer, info.portName ?? '') ?? info.defaultPort ?? 36543;
  if (type === rank0 && index === 0) {
    vars.push({ name: 'POD_IP_DUMMY', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } });
    vars.push(env('PADDLE_MASTER', `$(POD_IP_DUMMY):${port}`));
  } else {
    vars.push(env('PADDLE_MASTER', `${replicaName(job, rank0, 0)}:${port}`));
  }
  if (psMode) vars.push(type === 'Master' ? env('PADDLE_SERVER_NUM', '1') : env('PADDLE_TRAINER_NUM', '1'));
  return vars;
}

export const paddleKind = frameworkKind({
  info,
  isMasterRole: (_job, type) => type === 'Master',
  inject(job: TrainingJob, type: string, index: number, pod: Pod) {
    const vars = paddleEnv(job, type, index);
    for (const c of pod.spec.containers) appendEnv(c, vars);
  },
  succeeded(job: TrainingJob, views: ReplicaView[]) {
    if (replicaSpec(job, info, 'Master')) return allSucceeded(viewOf(views, 'Master'));
    return allSucceeded(viewOf(views, 'Worker'));
  },
});
