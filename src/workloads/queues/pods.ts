// Kueue's integration for plain Pods: a Pod labelled with a LocalQueue and owned by no controller
// Kueue integrates (none, a Notebook, a pipeline Run) is created behind the scheduling gate
// kueue.x-k8s.io/admission (the store's KueueJobSuspend admission), gets a Workload of one pod set,
// and has the gate removed (the flavors' node labels added) when it is admitted. A gated Pod cannot
// be gated again, so an evicted Pod is deleted, as Kueue stops it. Pods that Jobs or training jobs
// own go through their owner's integration instead (queuedAsPod).
import type { Pod } from '../../api/core-types.js';
import { Kinds } from '../../api/index.js';
import { KueueNames } from '../../api/kueue.js';
import { queuedAsPod } from '../../api/kueue-types.js';
import type { StoredObject } from '../../api/meta.js';
import type { Controller, Manager } from '../../control/controller.js';
import type { PodSetLike } from './engine/index.js';
import type { IntegrationOptions, JobAdapter } from './integration.js';
import { addIntegration, placeTemplate, podReadyOrDone } from './integration.js';

type PodObj = Pod & StoredObject;

const gated = (p: PodObj): boolean => (p.spec.schedulingGates ?? []).some((g: { name: string }) => g.name === KueueNames.admissionGate);
const terminal = (p: PodObj): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

export const podAdapter: JobAdapter<PodObj> = {
  def: Kinds.Pod,
  kind: 'Pod',
  manages: (pod) => queuedAsPod(pod.metadata),
  isSuspended: (pod) => gated(pod) || terminal(pod),
  suspend: (pod) => pod,
  async stop(pod, client) {
    await client.delete(Kinds.Pod, { namespace: pod.metadata.namespace, name: pod.metadata.name });
  },
  podSets(pod): PodSetLike[] {
    const spec = structuredClone(pod.spec) as Record<string, unknown>;
    delete spec.schedulingGates;
    return [{ name: KueueNames.defaultPodSetName, count: 1, template: { metadata: { labels: { ...pod.metadata.labels } }, spec } as PodSetLike['template'] }];
  },
  run(pod, placements) {
    const next = structuredClone(pod);
    next.spec.schedulingGates = (next.spec.schedulingGates ?? []).filter((g: { name: string }) => g.name !== KueueNames.admissionGate);
    if (!next.spec.schedulingGates.length) delete next.spec.schedulingGates;
    placeTemplate(next.spec, placements.get(KueueNames.defaultPodSetName));
    return next;
  },
  restore: () => undefined,
  finished(pod) {
    if (pod.status?.phase === 'Succeeded') return { reason: 'Succeeded', message: 'Job finished successfully' };
    if (pod.status?.phase === 'Failed') return { reason: 'Failed', message: pod.status.message ?? 'Failed' };
    return undefined;
  },
  activePods: (pod) => (terminal(pod) ? 0 : 1),
  // the Pod is its own only Pod
  readyPods: (pod) => (podReadyOrDone(pod) ? 1 : 0),
};

export function addPodIntegration(mgr: Manager, opts: IntegrationOptions): Controller {
  return addIntegration(mgr, podAdapter, opts);
}
