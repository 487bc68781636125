// Every kind Skiff serves, in one registry.
import { batchKinds } from './batch.js';
import { coreKinds } from './core.js';
import { kfpKinds } from './kfp-objects.js';
import { pipelineKinds } from './pipelines.js';
import { KindRegistry } from './registry.js';
import type { KindDef } from './registry.js';

/** The kinds the server serves: each has its controllers wired in src/server/main.ts. */
export function defaultRegistry(): KindRegistry {
  return new KindRegistry().register(...coreKinds, ...batchKinds, ...pipelineKinds, ...kfpKinds);
}

function find(defs: KindDef[], kind: string): KindDef {
  const def = defs.find((d) => d.kind === kind);
  if (!def) throw new Error(`kind ${kind} is not defined`);
  return def;
}

/** The built-in kinds, for controllers to name what they read and write. */
export const Kinds = {
  Namespace: find(coreKinds, 'Namespace'),
  Pod: find(coreKinds, 'Pod'),
  ConfigMap: find(coreKinds, 'ConfigMap'),
  Secret: find(coreKinds, 'Secret'),
  PersistentVolumeClaim: find(coreKinds, 'PersistentVolumeClaim'),
  Service: find(coreKinds, 'Service'),
  Node: find(coreKinds, 'Node'),
  Event: find(coreKinds, 'Event'),
  Job: find(batchKinds, 'Job'),
  Run: find(pipelineKinds, 'Run'),
  TaskCache: find(pipelineKinds, 'TaskCache'),
  Pipeline: find(kfpKinds, 'Pipeline'),
  PipelineVersion: find(kfpKinds, 'PipelineVersion'),
  Experiment: find(kfpKinds, 'Experiment'),
  RecurringRun: find(kfpKinds, 'RecurringRun'),
} as const;
