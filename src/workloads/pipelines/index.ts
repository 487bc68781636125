// Kubeflow Pipelines v2 as a workload of the platform: Runs and RecurringRuns, and the KFP objects
// (Pipeline, PipelineVersion, Experiment) the KFP API stores.
import { kfpKinds } from '../../api/kfp-objects.js';
import { pipelineKinds } from '../../api/pipelines.js';
import type { Workload } from '../workload.js';
import { addRecurringRunController } from './recurring-run-controller.js';
import { addRunController } from './run-controller.js';

export const pipelinesWorkload: Workload = {
  name: 'pipelines',
  kinds: [...pipelineKinds, ...kfpKinds],
  async setup({ client, manager, recorder, settings, artifacts, s3 }) {
    const region = settings.artifacts?.s3?.region ?? 'us-east-1';
    addRunController(manager, {
      client, recorder: recorder('pipeline-runner'), pipelineRoot: settings.pipelineRoot, rootPerNamespace: settings.podIsolation === true, artifacts,
      // on a cluster a task Pod may run on any node: its node is its launcher
      launcherInPod: settings.cluster === true,
      // Pods that real kubelets run carry the launcher themselves, reaching S3 where Skiff does
      ...(settings.cluster === true && settings.artifacts?.launcherImage ? {
        inPodLauncher: {
          image: settings.artifacts.launcherImage,
          region,
          endpoint: settings.artifacts.s3?.endpoint ?? `https://s3.${region}.amazonaws.com`,
        },
      } : {}),
      ...(settings.artifacts?.pipelineRoot ? { defaultPipelineRoot: settings.artifacts.pipelineRoot } : {}), ...(s3 ? { s3 } : {}),
    });
    addRecurringRunController(manager, { client, recorder: recorder('recurring-run-controller') });
  },
};
