// The machine as a core/v1 Node, from the capacity its substrate found (CPU, memory, NVIDIA GPUs).
// Its GPUs count as HAMi's device plugin counts them: nvidia.com/gpu is the number of shares (cards x
// deviceSplitCount), and the cards themselves are registered in HAMi's node annotation.
import os from 'node:os';
import type { GpuCard } from '../api/gpu-sharing.js';
import { HamiAnnotation, defaultDeviceSplitCount, encodeNodeDevices } from '../api/gpu-sharing.js';
import { goArch, kubeGitVersion } from '../api/kube-version.js';
import { formatBytes } from '../api/quantity.js';

export interface GpuInfo {
  index: number;
  uuid: string;
  name: string;
  memoryMiB: number;
}

export interface NodeCapacity {
  cpu: number;
  memoryBytes: number;
  gpus: GpuInfo[];
  /** shares each card may be split into (HAMi's deviceSplitCount, default 10) */
  deviceSplitCount?: number;
}

/** the node's cards as placement sees them */
export function gpuCards(cap: NodeCapacity): GpuCard[] {
  const split = cap.deviceSplitCount ?? defaultDeviceSplitCount;
  // HAMi's device plugin registers a model without the vendor's name as NVIDIA-<model>
  return cap.gpus.map((g) => ({ index: g.index, uuid: g.uuid, type: g.name.startsWith('NVIDIA') ? g.name : `NVIDIA-${g.name}`, memoryMiB: g.memoryMiB, cores: 100, split, health: true }));
}

export function nodeObject(name: string, cap: NodeCapacity, version: string): Record<string, any> {
  const capacity: Record<string, string> = {
    cpu: String(cap.cpu),
    memory: formatBytes(cap.memoryBytes),
    pods: '110',
    'ephemeral-storage': '0',
  };
  const cards = gpuCards(cap);
  if (cards.length) capacity['nvidia.com/gpu'] = String(cards.reduce((n, c) => n + c.split, 0));
  const labels: Record<string, string> = {
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': process.platform,
    'kubernetes.io/arch': process.arch === 'x64' ? 'amd64' : process.arch,
    'node-role.kubernetes.io/control-plane': '',
  };
  if (cap.gpus[0]) {
    labels['nvidia.com/gpu.present'] = 'true';
    labels['nvidia.com/gpu.count'] = String(cap.gpus.length);
    labels['nvidia.com/gpu.product'] = cap.gpus[0].name.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 63);
    labels['nvidia.com/gpu.memory'] = String(cap.gpus[0].memoryMiB);
  }
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name, labels,
      annotations: { 'skiff.dev/gpus': JSON.stringify(cap.gpus), ...(cards.length ? { [HamiAnnotation.register]: encodeNodeDevices(cards) } : {}) },
    },
    spec: {},
    status: {
      capacity,
      allocatable: { ...capacity },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'skiff node agent is posting ready status', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }],
      addresses: [{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: os.hostname() }],
      nodeInfo: { kubeletVersion: kubeGitVersion(version), operatingSystem: process.platform, architecture: goArch(), kernelVersion: os.release(), osImage: os.type() },
    },
  };
}
