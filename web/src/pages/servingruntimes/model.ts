// What the runtime pages say about a ServingRuntime or ClusterServingRuntime.
import type { ServingRuntime } from '../../api/types';

// set by Skiff on the stock runtimes it cannot run; the value says why (src/workloads/serving/stock-runtimes.ts)
export const UNAVAILABLE = 'serving.skiff.dev/unavailable';

export function stateOf(rt: ServingRuntime): string {
  if (rt.spec?.disabled) return 'Disabled';
  return rt.metadata?.annotations?.[UNAVAILABLE] ? 'Unavailable' : 'Available';
}

export function formatsText(rt: ServingRuntime): string {
  return (rt.spec?.supportedModelFormats ?? []).map((f) => (f.version ? `${f.name} ${f.version}` : f.name)).join(', ');
}
