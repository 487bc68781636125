// Test builders for Notebooks and their Pods. Defaults are the smallest valid objects; setters are
// named after the upstream fields; state shortcuts after what happened. Only tests import this file.
import type { Pod } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import { clone } from '../../api/meta.js';
import type { Notebook } from '../../api/notebooks.js';
import { NotebookNames } from '../../api/notebooks.js';

export class NotebookBuilder {
  constructor(private nb: Notebook) {}

  private set(f: (n: Notebook) => void): this {
    f(this.nb);
    return this;
  }

  image(image: string): this { return this.set((n) => { for (const c of n.spec.template.spec.containers) c.image = image; }); }
  env(name: string, value: string): this { return this.set((n) => { const c = n.spec.template.spec.containers[0]; if (c) (c.env ??= []).push({ name, value }); }); }
  port(containerPort: number): this { return this.set((n) => { const c = n.spec.template.spec.containers[0]; if (c) c.ports = [{ name: 'http', containerPort }]; }); }
  label(k: string, v: string): this { return this.set((n) => { (n.metadata.labels ??= {})[k] = v; }); }
  annotation(k: string, v: string): this { return this.set((n) => { (n.metadata.annotations ??= {})[k] = v; }); }
  stopped(at = '2024-01-01T00:00:00Z'): this { return this.annotation(NotebookNames.stopped, at); }
  /** a PVC mounted at /home/jovyan, as the spawner gives every notebook */
  homeVolume(claim: string): this {
    return this.set((n) => {
      (n.spec.template.spec.volumes ??= []).push({ name: 'home', persistentVolumeClaim: { claimName: claim } });
      const c = n.spec.template.spec.containers[0];
      if (c) (c.volumeMounts ??= []).push({ name: 'home', mountPath: '/home/jovyan' });
    });
  }

  obj(): Notebook {
    return clone(this.nb);
  }

  /** as the store would hand it back */
  stored(uid = `uid-${this.nb.metadata.name ?? ''}`): Notebook & StoredObject {
    const o = this.obj();
    return { ...o, metadata: { ...o.metadata, name: o.metadata.name ?? '', namespace: o.metadata.namespace ?? 'default', uid, resourceVersion: '1', generation: 1, creationTimestamp: '2024-01-01T00:00:00Z' } } as Notebook & StoredObject;
  }
}

/** A valid Notebook: one container named as the Notebook, Kubeflow's jupyter-scipy image. */
export function makeNotebook(name: string, namespace = 'default'): NotebookBuilder {
  return new NotebookBuilder({
    apiVersion: 'kubeflow.org/v1',
    kind: 'Notebook',
    metadata: { name, namespace },
    spec: { template: { spec: { containers: [{ name, image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0' }] } } },
  });
}

/** the server's Pod as the kubelet reports it running and ready */
export function runningPod(pod: Pod, at = '2024-01-01T00:00:05Z'): Pod {
  const p = clone(pod);
  p.status = {
    phase: 'Running',
    podIP: '127.1.0.9',
    conditions: [
      { type: 'Initialized', status: 'True', lastTransitionTime: at },
      { type: 'Ready', status: 'True', lastTransitionTime: at },
      { type: 'ContainersReady', status: 'True', lastTransitionTime: at },
      { type: 'PodScheduled', status: 'True', lastTransitionTime: at },
    ],
    containerStatuses: p.spec.containers.map((c) => ({ name: c.name, ready: true, restartCount: 0, state: { running: { startedAt: at } }, lastState: {} })),
  };
  return p;
}

/** the server's Pod waiting for its container */
export function waitingPod(pod: Pod, reason: string, message: string): Pod {
  const p = clone(pod);
  p.status = {
    phase: 'Pending',
    conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'False', reason: 'ContainersNotReady' }],
    containerStatuses: p.spec.containers.map((c) => ({ name: c.name, ready: false, restartCount: 0, state: { waiting: { reason, message } }, lastState: {} })),
  };
  return p;
}
