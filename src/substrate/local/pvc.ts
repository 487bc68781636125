// PersistentVolumeClaims on one machine: a claim is bound to a directory under the data dir, which
// outlives the Pods that mount it and goes when the claim is deleted.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Kinds } from '../../api/index.js';
import type { ObjectKey } from '../../api/meta.js';
import type { Controller, Manager } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import type { Client } from '../../store/client.js';

const finalizer = 'kubernetes.io/pvc-protection';

export function addClaimController(mgr: Manager, client: Client, recorder: Recorder, dataDir: string): Controller {
  const dirOf = (key: ObjectKey): string => join(dataDir, 'volumes', key.namespace ?? 'default', key.name);
  async function reconcile(key: ObjectKey): Promise<void> {
    const pvc = await client.find(Kinds.PersistentVolumeClaim, key);
    if (!pvc) return;
    if (pvc.metadata.deletionTimestamp) {
      // keep the data while a live Pod still mounts it, as pvc-protection does
      const users = (await client.listAll(Kinds.Pod, { namespace: key.namespace })).filter((p) =>
        !['Succeeded', 'Failed'].includes(p.status?.phase) && (p.spec?.volumes ?? []).some((v: any) => v.persistentVolumeClaim?.claimName === key.name));
      if (users.length) return;
      rmSync(dirOf(key), { recursive: true, force: true });
      pvc.metadata.finalizers = (pvc.metadata.finalizers ?? []).filter((f) => f !== finalizer);
      await client.update(pvc);
      return;
    }
    if (!(pvc.metadata.finalizers ?? []).includes(finalizer)) {
      pvc.metadata.finalizers = [...(pvc.metadata.finalizers ?? []), finalizer];
      await client.update(pvc);
      return;
    }
    if (pvc.status?.phase !== 'Bound') {
      mkdirSync(dirOf(key), { recursive: true });
      const storage = pvc.spec?.resources?.requests?.storage;
      pvc.status = { ...pvc.status, phase: 'Bound', accessModes: pvc.spec?.accessModes ?? ['ReadWriteOnce'], ...(storage ? { capacity: { storage } } : {}) };
      await client.updateStatus(pvc);
      recorder.event(pvc, 'Normal', 'Bound', `bound to directory ${dirOf(key)}`);
    }
  }
  return mgr.add({
    name: 'persistentvolumeclaim',
    for: Kinds.PersistentVolumeClaim,
    watches: [{
      kind: Kinds.Pod,
      // a claim waiting for its last user to finish
      predicate: (e) => e.type === 'DELETED' || ['Succeeded', 'Failed'].includes(e.object.status?.phase),
      map: (pod) => (pod.spec?.volumes ?? []).filter((v: any) => v.persistentVolumeClaim).map((v: any) => ({ namespace: pod.metadata.namespace, name: v.persistentVolumeClaim.claimName })),
    }],
    reconcile,
  });
}
