// What one pass of the Job controller works on; the rungs (controller.ts, manage.ts) all take it.
import type { JobObject } from './pods.js';
import type { JobView } from './tracking.js';

/** What one pass knows: read once at the start, never updated mid-pass. */
export interface Pass {
  job: JobObject;
  view: JobView;
  now: Date;
  at: string;
  /** delays after which this Job wants another look */
  wakes: number[];
}
