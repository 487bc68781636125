// The seam between the control plane and whatever runs Pods. `local/` runs them as processes on this
// machine; a Kubernetes substrate would hand them to a real cluster.
import type { Readable, Writable } from 'node:stream';
import type { StoredObject } from '../api/meta.js';

export interface PodLogOptions {
  container?: string;
  follow?: boolean;
  previous?: boolean;
  tailLines?: number;
  timestamps?: boolean;
  sinceSeconds?: number;
  limitBytes?: number;
}

/** Where pod logs come from: the substrate that ran the pod. */
export interface PodLogSource {
  logs(pod: StoredObject, opts: PodLogOptions, signal: AbortSignal): Promise<AsyncIterable<string>>;
}

export interface PodExecOptions {
  container?: string;
  command: string[];
  /** the request body is the command's standard input */
  stdin: boolean;
}

/** A command started in a Pod's container (`skiff exec`). */
export interface PodExecSession {
  stdout: Readable;
  stderr: Readable;
  /** present when stdin was asked for */
  stdin?: Writable;
  /** the command's end: its exit code, or the signal that killed it */
  done: Promise<{ exitCode: number; signal?: string }>;
  /** kills the command and what it started */
  kill(): void;
}

/** Where commands run in Pods: the substrate that runs them. */
export interface PodExecSource {
  exec(pod: StoredObject, opts: PodExecOptions): Promise<PodExecSession>;
}


export interface Substrate extends PodLogSource, PodExecSource {
  /** the Node this substrate runs Pods for */
  readonly nodeName: string;
  /** registers the node and starts running the Pods bound to it (adopting those already running) */
  start(): Promise<void>;
  /** stops watching; running containers keep running so a restarted server can adopt them */
  stop(): Promise<void>;
  /** stops watching and terminates every container (a clean shutdown of the whole platform) */
  shutdown(): Promise<void>;
}
