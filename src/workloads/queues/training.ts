// Kueue's integration for the Kubeflow training kinds (PyTorchJob, TFJob, XGBoostJob, PaddleJob,
// JAXJob, MPIJob v1 and v2beta1): runPolicy.suspend, one pod set per replica type (named as Kueue
// names them, the type in lower case), admitted whole. A queued training job is admitted by its
// Workload; the training controller's own gang admission is left to jobs without a queue.
import type { ReplicaSpec, TrainingJob } from '../../api/training-types.js';
import { Kinds } from '../../api/index.js';
import { JAXJobInfo, MPIJobV1Info, MPIJobV2Info, PaddleJobInfo, PyTorchJobInfo, TFJobInfo, XGBoostJobInfo } from '../../api/training.js';
import type { StoredObject } from '../../api/meta.js';
import { apiVersionOf } from '../../api/registry.js';
import type { KindDef } from '../../api/registry.js';
import type { Controller, Manager } from '../../control/controller.js';
import type { PodSetLike } from './engine/index.js';
import type { IntegrationOptions, JobAdapter } from './integration.js';
import { addIntegration, placeTemplate, restoreTemplate } from './integration.js';

type TrainingObj = TrainingJob & StoredObject;

/** the kinds and versions Kueue integrates, and the field each keeps its replica specs in */
const replicaField: Record<string, string> = Object.fromEntries(
  [PyTorchJobInfo, TFJobInfo, XGBoostJobInfo, PaddleJobInfo, JAXJobInfo, MPIJobV1Info, MPIJobV2Info].map((i) => [`${i.group}/${i.version}/${i.kind}`, i.replicaSpecsField]),
);

function replicaSpecs(job: TrainingJob): [string, ReplicaSpec][] {
  const field = replicaField[`${job.apiVersion}/${job.kind}`];
  const specs = field ? (job.spec[field] as Record<string, ReplicaSpec> | undefined) : undefined;
  return Object.entries(specs ?? {});
}

const podSetName = (type: string): string => type.toLowerCase();

export function trainingPodSets(job: TrainingJob): PodSetLike[] {
  return replicaSpecs(job).map(([type, r]) => ({ name: podSetName(type), count: r.replicas ?? 1, template: structuredClone(r.template) as PodSetLike['template'] }));
}

function adapterFor(def: KindDef): JobAdapter<TrainingObj> {
  return {
    def,
    kind: def.kind,
    isSuspended: (job) => job.spec.runPolicy?.suspend === true,
    suspend(job) {
      const next = structuredClone(job);
      next.spec.runPolicy = { ...next.spec.runPolicy, suspend: true };
      return next;
    },
    podSets: trainingPodSets,
    run(job, placements) {
      const next = structuredClone(job);
      for (const [type, r] of replicaSpecs(next)) {
        r.template.spec ??= { containers: [] } as never;
        placeTemplate(r.template.spec, placements.get(podSetName(type)));
      }
      next.spec.runPolicy = { ...next.spec.runPolicy, suspend: false };
      return next;
    },
    restore(job, podSets) {
      const next = structuredClone(job);
      let changed = false;
      for (const [type, r] of replicaSpecs(next)) {
        const ps = podSets.find((p) => p.name === podSetName(type));
        if (restoreTemplate(r.template.spec, ps?.template?.spec as never)) changed = true;
      }
      return changed ? next : undefined;
    },
    finished(job) {
      for (const c of job.status?.conditions ?? []) {
        if (c.status !== 'True') continue;
        if (c.type === 'Succeeded') return { reason: 'Succeeded', message: c.message ?? `${job.kind} finished successfully` };
        if (c.type === 'Failed') return { reason: 'Failed', message: c.message ?? `${job.kind} failed` };
      }
      return undefined;
    },
    activePods(job, cache) {
      return cache.owned(Kinds.Pod, job.metadata.uid).filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed').length;
    },
  };
}

/** One integration per training kind the registry serves (MPIJob's two versions share one store). */
export function addTrainingIntegrations(mgr: Manager, opts: IntegrationOptions): Controller[] {
  const seen = new Set<string>();
  const out: Controller[] = [];
  for (const def of opts.client.registry.all()) {
    if (!replicaField[`${apiVersionOf(def)}/${def.kind}`]) continue;
    const storage = `${def.group}/${def.plural}`;
    if (seen.has(storage)) continue;
    seen.add(storage);
    out.push(addIntegration(mgr, adapterFor(def), opts));
  }
  return out;
}
