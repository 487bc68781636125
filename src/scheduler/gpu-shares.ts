// What a node's cards hold: every card with the shares placed on it, for the usage endpoint
// (/skiff/v1/nodes/<node>/gpus) and for the node's `skiff.dev/gpu-shares` annotation, which
// `kubectl describe node` and `kubectl get node -o wide` show. The annotation is kept by a small
// controller, recomputed from the Pods whenever one with GPUs changes; nothing else reads it back.
import type { Pod } from '../api/core-types.js';
import { HamiAnnotation, podContainers, podDevices } from '../api/gpu-sharing.js';
import { Kinds } from '../api/index.js';
import type { ObjectKey, StoredObject } from '../api/meta.js';
import type { GpuCardUsage, NodeGpuUsage } from '../api/usage.js';
import type { Controller, Manager } from '../control/controller.js';
import type { Client } from '../store/client.js';
import { assignedGpus, gpuAnnotation, nodeView } from './placement.js';

export const gpuSharesAnnotation = 'skiff.dev/gpu-shares';

const done = (p: Pod): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

/** the node's cards and the shares its running Pods hold on them */
export function nodeGpuUsage(node: StoredObject, pods: Pod[]): NodeGpuUsage {
  const view = nodeView(node);
  const cards: GpuCardUsage[] = (view.cards ?? []).map((c) => ({
    index: c.index, uuid: c.uuid, type: c.type, memoryMiB: c.memoryMiB, cores: c.cores, shares: c.split,
    used: { shares: 0, memoryMiB: 0, cores: 0 }, allocations: [],
  }));
  const byUuid = new Map(cards.map((c) => [c.uuid, c]));
  const byIndex = new Map(cards.map((c) => [c.index, c]));
  for (const p of pods) {
    if (p.spec.nodeName !== view.name || done(p)) continue;
    const namespace = p.metadata.namespace ?? 'default';
    const pod = p.metadata.name ?? '';
    const pd = podDevices(p);
    const containers = podContainers(p);
    if (pd) {
      pd.forEach((shares, i) => {
        for (const s of shares) {
          const card = byUuid.get(s.uuid);
          if (!card) continue;
          card.allocations.push({
            namespace, pod, container: containers[i]?.container.name ?? '', memoryMiB: s.memoryMiB, cores: s.cores,
            exclusive: s.memoryMiB >= card.memoryMiB && s.cores >= 100,
          });
          card.used.shares += 1;
          card.used.memoryMiB += s.memoryMiB;
          card.used.cores += s.cores;
        }
      });
      continue;
    }
    // placed before shares were recorded: whole cards by index
    for (const i of assignedGpus(p)) {
      const card = byIndex.get(i);
      if (!card) continue;
      card.allocations.push({ namespace, pod, container: '', memoryMiB: card.memoryMiB, cores: card.cores, exclusive: true });
      card.used.shares += 1;
      card.used.memoryMiB += card.memoryMiB;
      card.used.cores += card.cores;
    }
  }
  return { kind: 'NodeGpuUsage', node: view.name, cards };
}

/** `0: 2/10 shares, 20000/81920 MiB, 60/100 cores; 1: ...`, one card after the other */
export function sharesSummary(u: NodeGpuUsage): string {
  return u.cards.map((c) => `${c.index}: ${c.used.shares}/${c.shares} shares, ${c.used.memoryMiB}/${c.memoryMiB} MiB, ${c.used.cores}/${c.cores} cores`).join('; ');
}

/** keeps the node's `skiff.dev/gpu-shares` annotation current */
export function addGpuSharesController(mgr: Manager, client: Client, nodeName: string): Controller {
  const nodeKey: ObjectKey = { name: nodeName };
  const holdsGpus = (p: Pod): boolean => p.spec?.nodeName === nodeName && (p.metadata.annotations?.[HamiAnnotation.allocated] !== undefined || p.metadata.annotations?.[gpuAnnotation] !== undefined);
  return mgr.add({
    name: 'gpu-shares',
    for: Kinds.Node,
    predicate: (e) => e.object.metadata.name === nodeName,
    watches: [{ kind: Kinds.Pod, predicate: (e) => holdsGpus(e.object as Pod), map: () => [nodeKey] }],
    async reconcile(key) {
      const node = mgr.cache.get(Kinds.Node, key);
      if (!node) return;
      const usage = nodeGpuUsage(node, mgr.cache.list(Kinds.Pod) as Pod[]);
      if (!usage.cards.length) return;
      const summary = sharesSummary(usage);
      if (node.metadata.annotations?.[gpuSharesAnnotation] === summary) return;
      const fresh = await client.get(Kinds.Node, key);
      await client.update({ ...fresh, metadata: { ...fresh.metadata, annotations: { ...fresh.metadata.annotations, [gpuSharesAnnotation]: summary } } });
    },
  });
}
