// Kueue's controllers as a workload of the platform: the queue manager (admission through the
// engine, queue status, eviction and preemption) and the job integrations that run jobs through
// Workloads. Kueue's kinds themselves are served by the core (src/api/kueue.ts).
import { parseDuration } from '../../util/duration.js';
import type { QueueSettings, Workload } from '../workload.js';
import type { PodsReadySettings } from './integration.js';
import { addQueueJobController } from './jobs.js';
import { QueueManager } from './manager.js';
import { addPodIntegration } from './pods.js';
import { addTrainingIntegrations } from './training.js';

/** the running queue manager, for the visibility API and metrics (one server, one manager) */
let current: QueueManager | undefined;

export function queueManager(): QueueManager | undefined {
  return current;
}

export const queuesWorkload: Workload = {
  name: 'queues',
  kinds: [],
  async setup({ client, manager, recorder, settings }) {
    const q = settings.queues ?? {};
    const fair = q.fairSharing?.enable ? { fairSharing: { preemptionStrategies: q.fairSharing.preemptionStrategies ?? [] } } : {};
    const wfpr = podsReadySettings(q);
    const engine = { ...fair, ...(q.waitForPodsReady?.requeuingStrategy?.timestamp ? { requeuingTimestamp: q.waitForPodsReady.requeuingStrategy.timestamp } : {}) };
    const qm = new QueueManager({ client, cache: manager.cache, recorder: recorder('kueue-admission'), engine });
    qm.register(manager);
    const integration = { client, cache: manager.cache, recorder: recorder('kueue-job-controller'), manageJobsWithoutQueueName: q.manageJobsWithoutQueueName ?? false, ...(wfpr ? { waitForPodsReady: wfpr } : {}) };
    addQueueJobController(manager, integration);
    addTrainingIntegrations(manager, integration);
    addPodIntegration(manager, integration);
    current = qm;
    return {
      stop() {
        qm.stop();
        if (current === qm) current = undefined;
      },
    };
  },
};

/** the config's waitForPodsReady (already checked) in the integrations' terms */
export function podsReadySettings(q: QueueSettings): PodsReadySettings | undefined {
  const w = q.waitForPodsReady;
  if (!w) return undefined;
  const rs = w.requeuingStrategy ?? {};
  const timeoutMs = parseDuration(w.timeout ?? '30m') ?? 30 * 60_000;
  const recoveryTimeoutMs = w.recoveryTimeout ? parseDuration(w.recoveryTimeout) : undefined;
  return {
    timeoutMs,
    ...(recoveryTimeoutMs !== undefined ? { recoveryTimeoutMs } : {}),
    ...(rs.backoffLimitCount !== undefined ? { backoffLimitCount: rs.backoffLimitCount } : {}),
    backoffBaseSeconds: rs.backoffBaseSeconds ?? 60,
    backoffMaxSeconds: rs.backoffMaxSeconds ?? 3600,
  };
}
