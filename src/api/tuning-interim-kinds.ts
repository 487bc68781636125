// Kinds the Katib DB manager (src/server/katib-db/) needs registered until the tuning workload
// registers its own in src/api/tuning.ts: ObservationLog, and a bare Trial with no defaulting or
// validation. The server registers these before every workload's kinds, so the workload's
// definitions replace them; delete this file once src/api/tuning.ts registers both.
import type { KindDef } from './registry.js';
import { ObservationLogGroup, TuningGroup, TuningVersion } from './tuning-types.js';

export const ObservationLogKind: KindDef = {
  group: ObservationLogGroup, version: 'v1', kind: 'ObservationLog', plural: 'observationlogs', singular: 'observationlog',
  namespaced: true, hasStatus: false,
};

export const InterimTrialKind: KindDef = {
  group: TuningGroup, version: TuningVersion, kind: 'Trial', plural: 'trials', singular: 'trial',
  namespaced: true, hasStatus: true,
};

export const interimTuningKinds: KindDef[] = [ObservationLogKind, InterimTrialKind];
