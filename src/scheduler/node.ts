// The machine as a core/v1 Node, from the capacity its substrate found (CPU, memory, NVIDIA GPUs).
import os from 'node:os';
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
}

export function nodeObject(name: string, cap: NodeCapacity, version: string): Record<string, any> {
  const capacity: Record<string, string> = {
    cpu: String(cap.cpu),
    memory: formatBytes(cap.memoryBytes),
    pods: '110',
    'ephemeral-storage': '0',
  };
  if (cap.gpus.length) capacity['nvidia.com/gpu'] = String(cap.gpus.length);
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
    metadata: { name, labels, annotations: { 'skiff.dev/gpus': JSON.stringify(cap.gpus) } },
    spec: {},
    status: {
      capacity,
      allocatable: { ...capacity },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'skiff node agent is posting ready status', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }],
      addresses: [{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: os.hostname() }],
      nodeInfo: { kubeletVersion: `skiff-${version}`, operatingSystem: process.platform, architecture: process.arch, kernelVersion: os.release(), osImage: os.type() },
    },
  };
}
