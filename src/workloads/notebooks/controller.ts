// The Notebook controller, with Kubeflow notebook-controller's semantics: a Service `<name>` and the
// Pod `<name>-0` from spec.template, the Pod deleted while the `kubeflow-resource-stopped`
// annotation is present and made again once it is gone, and the status mirrored from the Pod. Each
// pass takes the next step from what exists; a Pod still terminating is waited for, so a stop and a
// start in quick succession never run two servers on one home volume. With tenancy on it also keeps
// the server's token in the Secret `<name>-notebook-token` (token.ts).
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
import type { RenderOptions } from './render.js';
import { isStopped, notebookStatus, podNameOf, renderPod, renderService, revisionLabel } from './render.js';
import { ownTokenEntry, renderTokenSecret, tokenSecretName, usesTokenSecret } from './token.js';

type StoredNotebook = StoredObject & Notebook;

export function addNotebookController(mgr: Manager, opts: { client: Client; recorder?: Recorder } & RenderOptions): Controller {
  const r = new NotebookReconciler(opts.client, opts.recorder, { tenancy: opts.tenancy === true });
  return mgr.add({
    name: 'notebook',
    for: NotebookKind,
    // the token's Secret too: one deleted is made again (and the server restarted with it)
    owns: [Kinds.Pod, Kinds.Service, Kinds.Secret],
    reconcile: (key) => r.reconcile(key),
  });
}

export class NotebookReconciler {
  constructor(private readonly client: Client, private readonly recorder?: Recorder, private readonly opts: RenderOptions = {}) {}

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
    const want = renderPod(nb, this.opts);
    let newToken = false;
    if (this.opts.tenancy && want.spec.containers[0] && usesTokenSecret(want.spec.containers[0], nb.metadata.name)) {
      const token = await this.ensureTokenSecret(nb);
      if (token === 'wait') return { requeueAfter: 1000 };
      newToken = token === 'created';
    }
    if (isStopped(nb)) {
      if (pod && !pod.metadata.deletionTimestamp) {
        await this.client.delete(Kinds.Pod, podKey, { uid: pod.metadata.uid });
        this.recorder?.event(nb, 'Normal', 'Stopped', `Deleted pod ${podKey.name}: the notebook is stopped`);
      }
    } else if (!pod) {
      pod = await this.client.create<Pod>(want);
      this.recorder?.event(nb, 'Normal', 'SuccessfulCreate', `create Pod ${podKey.name} in StatefulSet ${nb.metadata.name} successful`);
    } else if (!pod.metadata.deletionTimestamp && pod.metadata.labels?.[revisionLabel] !== undefined && pod.metadata.labels[revisionLabel] !== want.metadata.labels?.[revisionLabel]) {
      // a changed template rolls the Pod, as the StatefulSet upstream makes does (its home volume stays)
      await this.client.delete(Kinds.Pod, podKey, { uid: pod.metadata.uid });
      this.recorder?.event(nb, 'Normal', 'Restarting', `Deleted pod ${podKey.name}: the notebook's template changed; it starts again from the new one`);
      pod = await this.client.find<Pod & StoredObject>(Kinds.Pod, podKey);
    } else if (this.opts.tenancy && !pod.metadata.deletionTimestamp) {
      // A server without a token (its Pod made before tenancy was on) would take requests from
      // anyone who reaches its address, and one whose Secret was just made again holds a token the
      // proxy no longer has: either is started again, with the token, as a changed template rolls a
      // StatefulSet's Pod.
      const server = pod.spec.containers[0];
      const why = !server || !ownTokenEntry(server) ? 'its server has no token (the Pod was made before tenancy was on)'
        : newToken && usesTokenSecret(server, nb.metadata.name) ? `its token's Secret ${tokenSecretName(nb.metadata.name)} was made again` : undefined;
      if (why) {
        await this.client.delete(Kinds.Pod, podKey, { uid: pod.metadata.uid });
        this.recorder?.event(nb, 'Normal', 'Restarting', `Deleted pod ${podKey.name}: ${why}; it starts again with the token`);
        pod = await this.client.find<Pod & StoredObject>(Kinds.Pod, podKey);
      }
    }
    const status = notebookStatus(nb, isStopped(nb) ? undefined : pod);
    if (!deepEqual(status, nb.status ?? {})) await this.client.updateStatus({ ...nb, status });
    // a Pod still terminating after a start: look again once it has gone
    if (!isStopped(nb) && pod?.metadata.deletionTimestamp) return { requeueAfter: 500 };
    return {};
  }

  /**
   * The server's token: made once, kept while its Secret exists (never rotated: deleting the
   * Secret is how to get a new one). A Secret of that name that is not this Notebook's (an earlier
   * Notebook's, being deleted, or someone's own) is waited for, never taken over.
   */
  private async ensureTokenSecret(nb: StoredNotebook): Promise<'kept' | 'created' | 'wait'> {
    const key = { namespace: nb.metadata.namespace ?? 'default', name: tokenSecretName(nb.metadata.name) };
    const secret = await this.client.find(Kinds.Secret, key);
    if (!secret) {
      await this.client.create(renderTokenSecret(nb));
      return 'created';
    }
    if (secret.metadata.ownerReferences?.some((o) => o.uid === nb.metadata.uid)) return 'kept';
    this.recorder?.event(nb, 'Warning', 'SecretExists', `secret ${key.name} exists and is not controlled by this notebook; the server needs it for its token`);
    return 'wait';
  }
}
