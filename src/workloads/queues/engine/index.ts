// Kueue's admission engine: which pending Workloads to admit and with which flavors, which admitted
// ones to preempt, and why the rest wait, computed from the queue objects alone. The queue
// controllers feed it and write its answers back; nothing here touches the store or the clock.
export { AdmissionEngine, positions, schedule } from './engine.js';
export { formatAmount, toAmount } from './quantities.js';
export { usageOf, workloadPriority, type UsageSummary } from './workload-info.js';
export { humanReason } from './preemption.js';
export type * from './types.js';
