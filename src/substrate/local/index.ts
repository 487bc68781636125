// The local substrate: this machine as one Node, Pods as processes.
import { Kinds } from '../../api/index.js';
import type { StoredObject } from '../../api/meta.js';
import type { Manager } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import type { NodeCapacity } from '../../scheduler/node.js';
import { nodeObject } from '../../scheduler/node.js';
import type { PodExecOptions, PodExecSession, PodLogOptions } from '../substrate.js';
import type { Client } from '../../store/client.js';
import type { Substrate } from '../substrate.js';
import type { Environments } from './environments.js';
import { Kubelet } from './kubelet.js';
import { addClaimController } from './pvc.js';

export interface LocalSubstrateOptions {
  client: Client;
  recorder: Recorder;
  manager: Manager;
  dataDir: string;
  nodeName: string;
  capacity: NodeCapacity;
  environments: Environments;
  version: string;
  crashLoopBaseMs?: number;
  crashLoopMaxMs?: number;
  log?: (msg: string) => void;
}

export class LocalSubstrate implements Substrate {
  readonly nodeName: string;
  private readonly kubelet: Kubelet;

  constructor(private readonly opts: LocalSubstrateOptions) {
    this.nodeName = opts.nodeName;
    this.kubelet = new Kubelet({
      client: opts.client,
      recorder: opts.recorder,
      dataDir: opts.dataDir,
      nodeName: opts.nodeName,
      environments: opts.environments,
      gpuCount: opts.capacity.gpus.length,
      crashLoopBaseMs: opts.crashLoopBaseMs,
      crashLoopMaxMs: opts.crashLoopMaxMs,
      log: opts.log,
    });
  }

  get sandboxed(): boolean {
    return this.kubelet.bubblewrap;
  }

  async start(): Promise<void> {
    const { client, nodeName, capacity, version } = this.opts;
    const desired = nodeObject(nodeName, capacity, version);
    const existing = await client.find(Kinds.Node, { name: nodeName });
    if (existing) {
      await client.update({ ...existing, metadata: { ...existing.metadata, labels: desired.metadata.labels, annotations: desired.metadata.annotations } });
      const fresh = await client.get(Kinds.Node, { name: nodeName });
      await client.updateStatus({ ...fresh, status: desired.status });
    } else {
      const created = await client.create(desired as StoredObject);
      await client.updateStatus({ ...created, status: desired.status });
    }
    addClaimController(this.opts.manager, client, this.opts.recorder, this.opts.dataDir);
    await this.kubelet.register(this.opts.manager);
  }

  async stop(): Promise<void> {
    // controllers stop with the manager; containers keep running for the next server to adopt
  }

  runningContainers(): number {
    return this.kubelet.runningContainers();
  }

  async shutdown(): Promise<void> {
    await this.kubelet.stopAll();
  }

  exec(pod: StoredObject, opts: PodExecOptions): Promise<PodExecSession> {
    return this.kubelet.exec(pod, opts);
  }

  /** where containers reach the API server (SKIFF_SERVER in their environment) */
  setApiServer(url: string): void {
    this.kubelet.apiServer = url;
  }

  logs(pod: StoredObject, opts: PodLogOptions, signal: AbortSignal): Promise<AsyncIterable<string>> {
    return this.kubelet.logs(pod, opts, signal);
  }
}
