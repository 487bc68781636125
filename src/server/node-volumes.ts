// PersistentVolumeClaims on a cluster of node agents: each agent is a local-path provisioner for its
// own node. A StorageClass with provisioner `skiff.dev/local-path` and volumeBindingMode
// WaitForFirstConsumer (deploy/kubernetes/node-agent/storageclass.yaml) leaves a claim unbound until
// a Pod that uses it is scheduled; the scheduler then names the node in the claim's
// `volume.kubernetes.io/selected-node`, and that node's agent makes a directory under its data dir
// and a `local` PersistentVolume with node affinity to itself, pre-bound to the claim (claimRef). The
// controller-manager's PV controller binds the two, the scheduler binds the Pod, and the kubelet
// mounts the volume's path. A Released volume of this node with reclaim policy Delete goes with its
// directory. Claims bound to hostPath or local volumes made by anyone else are mounted at their path.
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { ApiError, isNotFound } from '../api/errors.js';
import { Kinds } from '../api/index.js';
import type { ObjectKey, StoredObject } from '../api/meta.js';
import type { Manager } from '../control/controller.js';
import type { Recorder } from '../control/events.js';
import type { Client } from '../store/client.js';
import type { KubeHttp } from '../store/kube/http.js';
import { ConfigError } from '../substrate/local/env.js';
import { every, type Timer } from '../util/timers.js';

export const localPathProvisioner = 'skiff.dev/local-path';
const selectedNode = 'volume.kubernetes.io/selected-node';
const storageProvisioner = 'volume.kubernetes.io/storage-provisioner';
const betaStorageProvisioner = 'volume.beta.kubernetes.io/storage-provisioner';
const nodeLabel = 'skiff.dev/node';

interface PersistentVolume extends StoredObject {
  spec?: {
    hostPath?: { path: string; type?: string };
    local?: { path: string };
    persistentVolumeReclaimPolicy?: string;
    claimRef?: { namespace?: string; name?: string; uid?: string };
    [k: string]: unknown;
  };
  status?: { phase?: string };
}

export interface NodeVolumesOptions {
  http: KubeHttp;
  client: Client;
  manager: Manager;
  recorder: Recorder;
  nodeName: string;
  dataDir: string;
  log: (m: string) => void;
  /** how often Released volumes of this node are looked for (default 10 s) */
  sweepMs?: number;
}

/** the directories this node provisions, one per volume */
export const provisionedRoot = (dataDir: string): string => join(dataDir, 'volumes', 'provisioned');

/** The directory of the PersistentVolume a bound claim names, on this node. */
export async function claimVolumeDir(http: KubeHttp, claim: StoredObject): Promise<string> {
  const pvName = claim.spec?.volumeName as string | undefined;
  const claimName = `persistentvolumeclaim "${claim.metadata.name}"`;
  if (!pvName) throw new ConfigError(`${claimName} is bound to no volume`);
  let pv: PersistentVolume;
  try {
    pv = await http.request<PersistentVolume>('GET', `/api/v1/persistentvolumes/${encodeURIComponent(pvName)}`);
  } catch (e) {
    if (isNotFound(e)) throw new ConfigError(`${claimName}: persistentvolume "${pvName}" not found`);
    throw e;
  }
  const path = pv.spec?.local?.path ?? pv.spec?.hostPath?.path;
  if (!path) throw new ConfigError(`${claimName}: persistentvolume "${pvName}" is neither a local nor a hostPath volume, the only kinds this node mounts`);
  // a hostPath volume is made as a hostPath Pod volume is; a local one must be there already
  if (pv.spec?.hostPath) mkdirSync(path, { recursive: true });
  return path;
}

export function startNodeVolumes(opts: NodeVolumesOptions): { stop(): void } {
  const { http, client, nodeName, log } = opts;
  const root = provisionedRoot(opts.dataDir);

  async function reconcile(key: ObjectKey): Promise<void> {
    const pvc = await client.find(Kinds.PersistentVolumeClaim, key);
    if (!pvc || pvc.metadata.deletionTimestamp || pvc.spec?.volumeName || pvc.status?.phase === 'Bound') return;
    const ann = pvc.metadata.annotations ?? {};
    if (ann[selectedNode] !== nodeName) return;
    if ((ann[storageProvisioner] ?? ann[betaStorageProvisioner]) !== localPathProvisioner) return;
    const className = pvc.spec?.storageClassName as string | undefined;
    let reclaim = 'Delete';
    if (className) {
      try {
        const sc = await http.request<{ reclaimPolicy?: string }>('GET', `/apis/storage.k8s.io/v1/storageclasses/${encodeURIComponent(className)}`);
        reclaim = sc.reclaimPolicy ?? 'Delete';
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    const name = `pvc-${pvc.metadata.uid}`;
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true, mode: 0o777 });
    const storage = pvc.spec?.resources?.requests?.storage ?? '1Gi';
    const pv = {
      apiVersion: 'v1', kind: 'PersistentVolume',
      metadata: { name, labels: { [nodeLabel]: nodeName }, annotations: { 'pv.kubernetes.io/provisioned-by': localPathProvisioner } },
      spec: {
        capacity: { storage },
        accessModes: pvc.spec?.accessModes ?? ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: reclaim,
        ...(className ? { storageClassName: className } : {}),
        volumeMode: 'Filesystem',
        claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: pvc.metadata.namespace, name: pvc.metadata.name, uid: pvc.metadata.uid },
        local: { path: dir },
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [nodeName] }] }] } },
      },
    };
    try {
      await http.request('POST', '/api/v1/persistentvolumes', { body: pv });
    } catch (e) {
      if (e instanceof ApiError && e.code === 409) return;
      throw e;
    }
    opts.recorder.event(pvc, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${name} at ${dir} on node ${nodeName}`);
    log(`node ${nodeName}: provisioned ${name} for persistentvolumeclaim ${pvc.metadata.namespace}/${pvc.metadata.name} at ${dir}`);
  }

  opts.manager.add({
    name: 'local-path-provisioner',
    for: Kinds.PersistentVolumeClaim,
    predicate: (e) => e.type !== 'DELETED' && e.object.metadata.annotations?.[selectedNode] === nodeName && !e.object.spec?.volumeName,
    reconcile: async (key) => {
      await reconcile(key);
      return {};
    },
  });

  /** Released volumes of this node whose policy is Delete: the directory, then the object */
  const sweep = async (): Promise<void> => {
    const list = await http.request<{ items?: PersistentVolume[] }>('GET', '/api/v1/persistentvolumes', { query: { labelSelector: `${nodeLabel}=${nodeName}` } });
    for (const pv of list.items ?? []) {
      if (pv.metadata.annotations?.['pv.kubernetes.io/provisioned-by'] !== localPathProvisioner) continue;
      if (pv.status?.phase !== 'Released' || (pv.spec?.persistentVolumeReclaimPolicy ?? 'Delete') !== 'Delete') continue;
      const dir = pv.spec?.local?.path;
      // only what this node made, under its own directory
      if (dir && resolve(dir).startsWith(root + sep)) rmSync(dir, { recursive: true, force: true });
      try {
        await http.request('DELETE', `/api/v1/persistentvolumes/${encodeURIComponent(pv.metadata.name)}`, { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: pv.metadata.uid } } });
        log(`node ${nodeName}: deleted ${pv.metadata.name} (released by ${pv.spec?.claimRef?.namespace}/${pv.spec?.claimRef?.name}) and its directory`);
      } catch (e) {
        if (!isNotFound(e) && !(e instanceof ApiError && e.code === 409)) throw e;
      }
    }
  };
  const timer: Timer = every(opts.sweepMs ?? 10_000, () => void sweep().catch((e) => log(`node ${nodeName}: deleting released volumes: ${(e as Error).message}`))).unref();
  return { stop: () => timer.clear() };
}
