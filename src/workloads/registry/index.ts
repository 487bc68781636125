// Kubeflow's Model Registry as a workload of the platform: its kinds (modelregistry.skiff.dev),
// served through the registry's REST API (src/server/model-registry/) and the Kubernetes API alike,
// and the controller that records in each namespace's registry what is deployed from it
// (deployments.ts). `model-registry://` storage URIs are resolved by the serving workload.
import { modelRegistryKinds } from '../../api/model-registry.js';
import type { Workload } from '../workload.js';
import { addDeploymentRecorder } from './deployments.js';

export const registryWorkload: Workload = {
  name: 'model-registry',
  kinds: modelRegistryKinds,
  async setup({ client, manager }) {
    addDeploymentRecorder(manager, client);
  },
};
