// JAXJob: jax.distributed.initialize's coordinator and process numbering.
import type { EnvVar, Pod } from '../../api/core-types.js';
import { JAXJobInfo as info } from '../../api/training.js';
import type { ReplicaView, TrainingJob } from './types.js';
import { allSucceeded, appendEnv, env, frameworkKind, replicaName, requirePort, totalReplicas, viewOf } from './common.js';

export function jaxEnv(job: TrainingJob, _type: string, index: number): EnvVar[] {
  return [
    env('PYTHONUNBUFFERED', '1'),
    env('COORDINATOR_PORT', requirePort(job, info, 'Worker')),
    // a host without the port: the program joins them
    env('COORDINATOR_ADDRESS', replicaName(job, 'Worker', 0)),
    env('NUM_PROCESSES', totalReplicas(job, info)),
    env('PROCESS_ID', index),
  ];
}

export const jaxKind = frameworkKind({
  info,
  isMasterRole: (_job, _type, index) => index === 0,
  inject(job: TrainingJob, type: string, index: number, pod: Pod) {
    const vars = jaxEnv(job, type, index);
    for (const c of pod.spec.containers) appendEnv(c, vars);
  },
  succeeded: (_job: TrainingJob, views: ReplicaView[]) => allSucceeded(viewOf(views, 'Worker')),
});
