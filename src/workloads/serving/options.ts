// What the serving controllers are given by the server that runs them.
import type { Pod } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import type { Recorder } from '../../control/events.js';
import type { Client } from '../../store/client.js';
import type { ServingDataPlane } from './data-plane.js';
import type { ModelStore } from './storage.js';

export interface ServingControllerOptions {
  client: Client;
  recorder: Recorder;
  /** the inference gateway: routes requests, probes replicas, measures load */
  dataPlane: ServingDataPlane;
  models: ModelStore;
  /** `host:port` at which Pods reach the gateway (a transformer's predictor host starts with it) */
  podGateway: () => string;
  /** the API server's own URL, for `status.address` */
  serverUrl: () => string;
  /** the last lines of a Pod container's log, for FailedToLoad messages */
  podLog?: (pod: Pod & StoredObject, container: string) => Promise<string>;
  /** how soon a revision whose model could not be read looks again: `baseMs` doubling to `maxMs`
   *  (default a crash loop's, 10 s to 5 min, as KServe's storage initializer is retried) */
  storageRetry?: { baseMs: number; maxMs: number };
}
