// The seam between the control plane and whatever runs Pods. `local/` runs them as processes on this
// machine; a Kubernetes substrate would hand them to a real cluster.
import type { PodExecSource, PodLogSource } from '../server/app.js';

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
