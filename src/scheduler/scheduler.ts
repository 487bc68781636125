// The scheduler: binds each unplaced Pod to the node when it fits, or leaves it Pending with
// PodScheduled=False and a reason naming the resource that is short. As in Kubernetes' default
// scheduler a smaller Pod may pass a larger waiting one; when a Pod finishes or goes away, the waiting
// ones are looked at again. Queue order and quotas belong to admission, in front of this.
import type { Pod } from '../api/core-types.js';
import { setCondition } from '../api/conditions.js';
import { Kinds } from '../api/index.js';
import type { ObjectKey, StoredObject } from '../api/meta.js';
import { keyString, parseKeyString } from '../api/meta.js';
import type { Controller, Manager } from '../control/controller.js';
import type { Recorder } from '../control/events.js';
import type { Client } from '../store/client.js';
import { gpuQuotaOf } from './gpu-quota.js';
import type { Placement } from './placement.js';
import { assignmentAnnotations, nodeView } from './placement.js';

export interface SchedulerOptions {
  client: Client;
  recorder: Recorder;
  nodeName: string;
  placement: Placement;
}

const terminal = (p: Pod): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

export function addScheduler(mgr: Manager, opts: SchedulerOptions): Controller {
  const { client, recorder, nodeName, placement } = opts;
  /** pods waiting for room, oldest first */
  const waiting = new Map<string, string>();

  const wakeWaiting = (): ObjectKey[] => [...waiting.keys()].map(parseKeyString);

  // Pods and the Node are read from the Manager's informers: placing one Pod must not list every Pod
  // from the store. A stale read costs a conflict on the bind, and the key is tried again.
  async function reconcile(key: ObjectKey): Promise<void> {
    const cached = mgr.cache.get(Kinds.Pod, key) as (Pod & StoredObject) | undefined;
    const pod = cached && structuredClone(cached);
    if (!pod || pod.spec.nodeName || pod.metadata.deletionTimestamp || terminal(pod)) {
      waiting.delete(keyString(key));
      return;
    }
    if (pod.spec.schedulerName && pod.spec.schedulerName !== 'default-scheduler') return;
    // a gated Pod waits, as kube-scheduler's PreEnqueue leaves it: the gates' owners remove them
    if ((pod.spec.schedulingGates?.length ?? 0) > 0) {
      const status = pod.status ?? {};
      if (setCondition(status, { type: 'PodScheduled', status: 'False', reason: 'SchedulingGated', message: 'Scheduling is blocked due to non-empty scheduling gates' })) {
        pod.status = { ...status, phase: 'Pending' };
        await client.updateStatus(pod);
      }
      return;
    }
    const mine = pod.metadata.creationTimestamp;
    const node = mgr.cache.get(Kinds.Node, { name: nodeName });
    if (!node) throw new Error(`node ${nodeName} is not registered yet`);
    const pods = mgr.cache.list(Kinds.Pod) as (Pod & StoredObject)[];
    const placed = pods.filter((p) => p.spec.nodeName === nodeName && !terminal(p));
    const view = nodeView(node);
    const gpuQuota = gpuQuotaOf(pod, mgr.cache.list(Kinds.ResourceQuota, { namespace: pod.metadata.namespace }), pods);
    const result = placement.place(pod, view, placed, gpuQuota ? { gpuQuota } : {});
    if (!result.fits) {
      waiting.set(keyString(key), mine);
      const status = pod.status ?? {};
      if (setCondition(status, { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: result.reason })) {
        pod.status = { ...status, phase: 'Pending' };
        await client.updateStatus(pod);
        recorder.event(pod, 'Warning', 'FailedScheduling', result.reason);
      }
      return;
    }
    const bound = structuredClone(pod) as StoredObject;
    bound.spec.nodeName = nodeName;
    const assigned = assignmentAnnotations(result, nodeName);
    if (Object.keys(assigned).length) bound.metadata.annotations = { ...bound.metadata.annotations, ...assigned };
    const status = bound.status ?? {};
    setCondition(status, { type: 'PodScheduled', status: 'True' });
    bound.status = status;
    // one write, as the API server's binding does: the node and the PodScheduled condition together
    const written = await client.bind<Pod>(bound);
    waiting.delete(keyString(key));
    recorder.event(written, 'Normal', 'Scheduled', `Successfully assigned ${key.namespace}/${key.name} to ${nodeName}${result.gpus.length ? ` with GPUs ${result.gpus.join(',')}` : ''}`);
    // the next waiting pod may fit too
    for (const k of wakeWaiting()) c.enqueue(k);
  }

  const c = mgr.add({
    name: 'scheduler',
    for: Kinds.Pod,
    predicate: (e) => e.type !== 'DELETED' && !e.object.spec?.nodeName,
    watches: [
      {
        kind: Kinds.Pod,
        // room frees up when a placed pod ends or is deleted
        predicate: (e) => Boolean(e.object.spec?.nodeName) && (e.type === 'DELETED' || terminal(e.object as Pod)),
        map: wakeWaiting,
      },
      { kind: Kinds.Node, map: wakeWaiting },
      // a quota raised (or removed) may let a Pod held back by HAMi's GPU quota through
      { kind: Kinds.ResourceQuota, map: wakeWaiting },
    ],
    reconcile,
  });
  return c;
}
