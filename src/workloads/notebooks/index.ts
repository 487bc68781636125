// Kubeflow Notebooks as a workload of the platform: the Notebook kinds, their controller and, when
// enabled, the culler of idle notebooks. The
// proxy that serves `/notebook/<ns>/<name>/` lives with the server (src/server/notebook-proxy.ts).
import type { StoredObject } from '../../api/meta.js';
import type { Notebook } from '../../api/notebooks.js';
import { notebookKinds } from '../../api/notebooks.js';
import type { Workload } from '../workload.js';
import { addNotebookController } from './controller.js';
import { NotebookCuller } from './culling.js';
import { isStopped, renderPod, renderService } from './render.js';
import { renderTokenSecret, usesTokenSecret } from './token.js';

export const notebooksWorkload: Workload = {
  name: 'notebooks',
  kinds: notebookKinds,
  async setup({ client, manager, recorder, settings, log }) {
    const events = recorder('notebook-controller');
    addNotebookController(manager, { client, recorder: events, tenancy: settings.tenancy === true });
    if (!settings.notebooks?.enableCulling) return;
    const { cullIdleTimeMinutes: idle, idlenessCheckPeriodMinutes: period } = settings.notebooks;
    const culler = new NotebookCuller({ client, settings: settings.notebooks, recorder: events, log });
    // a clock that writes: it runs with the controllers (on a cluster, on the leader only)
    manager.addRunnable(culler);
    log(`notebooks: culling on, idle notebooks stopped after ${idle} minutes, checked every ${period} minutes`);
  },
  dryRender(obj: StoredObject, settings) {
    if (obj.kind !== 'Notebook' || !obj.apiVersion.startsWith('kubeflow.org/')) return undefined;
    const nb = obj as StoredObject & Notebook;
    const tenancy = settings?.tenancy === true;
    const pod = renderPod(nb, { tenancy });
    // the token's Secret without its token: the value is made when the Notebook is, and only then
    const secret = pod.spec.containers[0] && tenancy && usesTokenSecret(pod.spec.containers[0], nb.metadata.name) ? renderTokenSecret(nb) : undefined;
    if (secret) delete secret.data;
    return [renderService(nb), ...(secret ? [secret] : []), ...(isStopped(nb) ? [] : [pod])];
  },
};
