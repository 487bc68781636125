// KServe model serving as a workload of the platform: InferenceService, ServingRuntime,
// ClusterServingRuntime and their Revisions. The data plane (the inference gateway) is the server's;
// the controllers reach it through ServingDataPlane.
import { join } from 'node:path';
import { RevisionKind } from '../../api/serving-revision.js';
import { servingKinds } from '../../api/serving.js';
import type { Workload } from '../workload.js';
import { addServingControllers } from './controller.js';
import type { ServingDataPlane } from './data-plane.js';
import { installStockRuntimes } from './install-runtimes.js';
import { serviceAccountS3Store } from './s3-credentials.js';
import { lookUpRegistryModel } from './model-registry.js';
import { ModelStore } from './storage.js';

export function servingWorkload(dataPlane: ServingDataPlane): Workload {
  return {
    name: 'serving',
    kinds: [...servingKinds, RevisionKind],
    async setup({ client, manager, recorder, settings, artifacts, s3, endpoints, podLogs, log }) {
      await installStockRuntimes(client, log);
      return addServingControllers(manager, {
        client, recorder: recorder('inferenceservice-controller'), dataPlane,
        models: new ModelStore(join(settings.dataDir, 'serving', 'models'), (ns, claim) => join(settings.dataDir, 'volumes', ns, claim), artifacts, s3 ? (owner, uri) => serviceAccountS3Store(client, s3, owner, uri) : undefined, (ns, uri, pinned) => lookUpRegistryModel(client, ns, uri, pinned)),
        podGateway: endpoints.pods,
        serverUrl: endpoints.server,
        storageRetry: { baseMs: settings.crashLoopBackoffMs ?? 10_000, maxMs: settings.crashLoopBackoffMaxMs ?? 300_000 },
        podLog: async (pod, container) => {
          const ac = new AbortController();
          const lines: string[] = [];
          try {
            for await (const l of await podLogs.logs(pod, { container, tailLines: 30 }, ac.signal)) lines.push(l);
          } finally {
            ac.abort();
          }
          return lines.join('');
        },
      });
    },
  };
}
