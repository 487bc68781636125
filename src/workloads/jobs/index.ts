// batch/v1 Job as a workload of the platform.
import { batchKinds } from '../../api/batch.js';
import type { Workload } from '../workload.js';
import { addJobController } from './controller.js';

export const jobsWorkload: Workload = {
  name: 'jobs',
  kinds: batchKinds,
  async setup({ client, manager, recorder, settings }) {
    if (settings.cluster) return;
    addJobController(manager, { client, recorder: recorder('job-controller'), podBackoffBaseMs: settings.jobPodBackoffMs, podBackoffMaxMs: settings.jobPodBackoffMaxMs });
  },
};
