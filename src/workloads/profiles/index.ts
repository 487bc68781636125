// Kubeflow Profiles as a workload of the platform: the Profile kinds and their controller. The
// ResourceQuota a Profile makes is enforced by admission (src/store/admission.ts) and kept by the
// quota controller (src/control/resourcequota.ts), as for any ResourceQuota.
import { profileKinds } from '../../api/profiles.js';
import type { Workload } from '../workload.js';
import { addProfileController } from './controller.js';

export const profilesWorkload: Workload = {
  name: 'profiles',
  kinds: profileKinds,
  async setup({ client, manager, recorder }) {
    addProfileController(manager, { client, recorder: recorder('profile-controller') });
  },
};
