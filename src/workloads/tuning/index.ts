// Hyperparameter tuning as a workload of the platform: Katib's Experiment, Suggestion and Trial
// (kubeflow.org/v1beta1) and Skiff's ObservationLog. The API's checks are Katib's webhook's; this
// workload adds what only the algorithms know (their settings, a grid maxTrialCount cannot fill).
import { join } from 'node:path';
import type { FieldError } from '../../api/errors.js';
import type { KObject, StoredObject } from '../../api/meta.js';
import type { KindDef } from '../../api/registry.js';
import type { ExperimentSpec } from '../../api/tuning.js';
import { tuningKinds } from '../../api/tuning.js';
import type { Workload } from '../workload.js';
import { algorithmByName, notBuilt } from './algorithms/index.js';
import { addExperimentController } from './experiment-controller.js';
import { addSuggestionController } from './suggestion-controller.js';
import { addTrialController } from './trial-controller.js';
import { ashaStopper } from './asha.js';
import { Kinds } from '../../api/index.js';
import type { Experiment, ObservationLog } from '../../api/tuning.js';
import { TuningLabels } from '../../api/tuning.js';

/** the algorithm's own checks of an experiment Katib's webhook accepted */
export function algorithmErrors(obj: KObject): FieldError[] {
  const spec = obj.spec as ExperimentSpec | undefined;
  const name = spec?.algorithm?.algorithmName;
  if (!name) return [];
  if (notBuilt[name]) return [{ field: 'spec.algorithm.algorithmName', type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(name)}: ${notBuilt[name]}` }];
  const algorithm = algorithmByName(name);
  if (!algorithm) return [];
  const errs = algorithm.validate({
    parameters: spec.parameters ?? [], settings: spec.algorithm?.algorithmSettings ?? [],
    parallelTrialCount: spec.parallelTrialCount ?? 3,
    ...(spec.maxTrialCount !== undefined ? { maxTrialCount: spec.maxTrialCount } : {}),
  });
  return errs.map((e) => ({ field: e.field, type: 'FieldValueInvalid', message: e.message }));
}

function withAlgorithmChecks(def: KindDef): KindDef {
  if (def.kind !== 'Experiment') return def;
  return {
    ...def,
    validate: (obj: KObject, old?: StoredObject) => {
      const errs = def.validate?.(obj, old) ?? [];
      // settings are judged once the shape is right
      return errs.length ? errs : algorithmErrors(obj);
    },
  };
}

export const tuningWorkload: Workload = {
  name: 'tuning',
  kinds: tuningKinds.map(withAlgorithmChecks),
  async setup({ client, manager, recorder, podLogs, podFiles, settings }) {
    const experiment = tuningKinds.map(withAlgorithmChecks).find((d) => d.kind === 'Experiment');
    addExperimentController(manager, { client, recorder: recorder('katib-controller'), ...(experiment?.validate ? { validate: (e) => experiment.validate?.(e) ?? [] } : {}) });
    addSuggestionController(manager, { client, recorder: recorder('katib-suggestion'), algorithms: algorithmByName });
    const stopper = ashaStopper({
      experimentOf: (t) => (manager.cache.get(Kinds.KatibExperiment, { namespace: t.metadata.namespace, name: t.metadata.labels?.[TuningLabels.experiment] ?? '' }) as unknown as Experiment | undefined)?.spec,
      logsOf: (namespace, experiment) => (manager.cache.list(Kinds.ObservationLog, { namespace }) as unknown as ObservationLog[]).filter((l) => l.metadata.labels?.[TuningLabels.experiment] === experiment),
    });
    // on a cluster a trial's files are on its node: they come back in its log, through the API server
    addTrialController(manager, { client, recorder: recorder('trial-controller'), podLogs, podFiles: settings.cluster === true ? 'log' : podFiles, stopper, checkpointRoot: join(settings.dataDir, 'tuning', 'checkpoints') });
  },
};
