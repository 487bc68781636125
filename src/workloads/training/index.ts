// Kubeflow training jobs as a workload of the platform: PyTorchJob, TFJob, XGBoostJob, PaddleJob,
// JAXJob and MPIJob (kubeflow.org/v1), and the mpi-operator's v2beta1 MPIJob.
import { ApiError } from '../../api/errors.js';
import { trainingKinds } from '../../api/training.js';
import type { Workload } from '../workload.js';
import { addTrainingController } from './controller.js';
import { trainingKindFor } from './render.js';

export const trainingWorkload: Workload = {
  name: 'training',
  kinds: trainingKinds,
  async setup({ client, manager, recorder, settings }) {
    // one controller per training kind
    addTrainingController(manager, { client, recorder: recorder('training-operator'), kinds: trainingKindFor, nodeName: settings.nodeName });
  },
  /** each replica's Pod, their Services, MPI's ConfigMap: what the operator would create */
  dryRender(obj) {
    const kind = trainingKindFor(obj.apiVersion, obj.kind);
    if (!kind) return undefined;
    try {
      const rendered = kind.render(obj as never);
      return [...rendered.replicas.map((r) => r.pod), ...rendered.objects];
    } catch (e) {
      // the renderer's messages start with the field they are about: `spec.x.y: ...`
      const msg = (e as Error).message;
      const i = msg.indexOf(': ');
      const field = i > 0 && !msg.slice(0, i).includes(' ') ? msg.slice(0, i) : 'spec';
      throw ApiError.invalid(obj.kind, obj.apiVersion.split('/')[0] ?? '', obj.metadata.name, [{ field, type: 'FieldValueInvalid', message: i > 0 ? msg.slice(i + 2) : msg }]);
    }
  },
};
