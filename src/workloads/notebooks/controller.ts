// The Notebook controller, with Kubeflow notebook-controller's semantics: a Service `<name>` and the
// Pod `<name>-0` from spec.template, the Pod deleted while the `kubeflow-resource-stopped`
// annotation is present and made again once it is gone, and the status mirrored from the Pod. Each
// pass takes the next step from what exists; a Pod still terminating is waited for, so a stop and a
// start in quick succession never run two servers on one home volume.
import { isAlreadyExists, isConflict, isNotFound } from '../../api/errors.js';
import { Kinds } from '../../api/index.js';
import type { Pod } from '../../api/core-types.js';
import type { ObjectKey, StoredObject } from '../../api/meta.js';
import { deepEqual } from '../../api/meta.js';
import type { Notebook } from '../../api/notebooks.js';
import { NotebookKind } from '../../api/notebooks.js';
import type { Controller, Manager, Result } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import type { Client } from '../../store/client.js';
import { isStopped, notebookStatus, podNameOf, renderPod, renderService } from './render.js';

type StoredNotebook = StoredObject & Notebook;

export function addNotebookController(mgr: Manager, opts: { client: Client; recorder?: Recorder }): Controller {
  const r = new NotebookReconciler(opts.client, opts.recorder);
  return mgr.add({
    name: 'notebook',
    for: NotebookKind,
    owns: [Kinds.Pod, Kinds.Service],
    reconcile: (key) => r.reconcile(key),
  });
}

export class NotebookReconciler {
  constructor(private readonly client: Client, private readonly recorder?: Recorder) {}

  async reconcile(key: ObjectKey): Promise<Result> {
    const nb = await this.client.find<StoredNotebook>(NotebookKind, key);
    if (!nb || nb.metadata.deletionTimestamp) return {};
    try {
      return await this.sync(nb);
    } catch (e) {
      // someone wrote in between, or the Pod went meanwhile: read again
      if (isConflict(e) || isNotFound(e) || isAlreadyExists(e)) return { requeueAfter: 100 };
      throw e;
    }
  }

  private async sync(nb: StoredNotebook): Promise<Result> {
    const namespace = nb.metadata.namespace ?? 'default';
    if (!(await this.client.find(Kinds.Service, { namespace, name: nb.metadata.name }))) {
      await this.client.create(renderService(nb));
    }
    const podKey = { namespace, name: podNameOf(nb.metadata.name) };
    let pod = await this.client.find<Pod & StoredObject>(Kinds.Pod, podKey);
    if (pod && !pod.metadata.ownerReferences?.some((o) => o.uid === nb.metadata.uid)) {
      // a Pod of that name that is not this Notebook's (an earlier Notebook's, being deleted): wait
      this.recorder?.event(nb, 'Warning', 'PodExists', `pod ${podKey.name} exists and is not controlled by this notebook`);
      return { requeueAfter: 1000 };
    }
    if (isStopped(nb)) {
      if (pod && !pod.metadata.deletionTimestamp) {
        await this.client.delete(Kinds.Pod, podKey, { uid: pod.metadata.uid });
        this.recorder?.event(nb, 'Normal', 'Stopped', `Deleted pod ${podKey.name}: the notebook is stopped`);
      }
    } else if (!pod) {
      pod = await this.client.create<Pod>(renderPod(nb));
      this.recorder?.event(nb, 'Normal', 'SuccessfulCreate', `create Pod ${podKey.name} in StatefulSet ${nb.metadata.name} successful`);
    }
    const status = notebookStatus(nb, isStopped(nb) ? undefined : pod);
    if (!deepEqual(status, nb.status ?? {})) await this.client.updateStatus({ ...nb, status });
    // a Pod still terminating after a start: look again once it has gone
    if (!isStopped(nb) && pod?.metadata.deletionTimestamp) return { requeueAfter: 500 };
    return {};
  }
}
