// Kubeflow Notebooks as a workload of the platform: the Notebook kinds and their controller. The
// proxy that serves `/notebook/<ns>/<name>/` lives with the server (src/server/notebook-proxy.ts).
import type { StoredObject } from '../../api/meta.js';
import type { Notebook } from '../../api/notebooks.js';
import { notebookKinds } from '../../api/notebooks.js';
import type { Workload } from '../workload.js';
import { addNotebookController } from './controller.js';
import { isStopped, renderPod, renderService } from './render.js';

export const notebooksWorkload: Workload = {
  name: 'notebooks',
  kinds: notebookKinds,
  async setup({ client, manager, recorder }) {
    addNotebookController(manager, { client, recorder: recorder('notebook-controller') });
  },
  dryRender(obj: StoredObject) {
    if (obj.kind !== 'Notebook' || !obj.apiVersion.startsWith('kubeflow.org/')) return undefined;
    const nb = obj as StoredObject & Notebook;
    return isStopped(nb) ? [renderService(nb)] : [renderService(nb), renderPod(nb)];
  },
};
