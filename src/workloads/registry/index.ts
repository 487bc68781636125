// Kubeflow's Model Registry as a workload of the platform: its kinds (modelregistry.skiff.dev), served
// through the registry's REST API (src/server/model-registry/) and the Kubernetes API alike. It runs
// no controller yet: lineage from pipeline artifacts and `model-registry://` storage URIs are where
// this workload's controllers will go.
import { modelRegistryKinds } from '../../api/model-registry.js';
import type { Workload } from '../workload.js';

export const registryWorkload: Workload = {
  name: 'model-registry',
  kinds: modelRegistryKinds,
  async setup() {
    // nothing runs for the registry's objects: the API writes them and reads them back
  },
};
