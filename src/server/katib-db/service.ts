// Katib's DBManager (api.v1.beta1.DBManager) over Skiff's store: a trial's metric logs are the
// ObservationLog object named as the Trial, in its namespace and owned by it, so they go when the
// Trial goes and every Kubernetes client can read them.
import { podNamespaceAt } from '../auth/pod-caller.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../api/errors.js';
import type { KObject, StoredObject } from '../../api/meta.js';
import type { KindDef } from '../../api/registry.js';
import type { MetricLog, ObservationLog, Trial } from '../../api/tuning-types.js';
import { ObservationLogGroup, TuningApiVersion, TuningLabels } from '../../api/tuning-types.js';
import type { Client } from '../../store/client.js';
import { GrpcError, GrpcStatus, type UnaryHandler } from './grpc.js';
import {
  DecodeError, decodeDeleteObservationLogRequest, decodeGetObservationLogRequest, decodeReportObservationLogRequest, encodeGetObservationLogReply,
} from './messages.js';
import { acceptMetricLogs, queryMetricLogs } from './observations.js';

export const DBManagerService = 'api.v1.beta1.DBManager';
const ObservationLogApiVersion = `${ObservationLogGroup}/v1`;

function kind(client: Client, apiVersion: string, name: string): KindDef {
  const def = client.registry.forObject(apiVersion, name);
  if (!def) throw new GrpcError(GrpcStatus.UNIMPLEMENTED, `this server does not serve ${name} (${apiVersion})`);
  return def;
}

function decoding<T>(decode: (b: Buffer) => T, body: Buffer): T {
  try {
    return decode(body);
  } catch (e) {
    if (e instanceof DecodeError) throw new GrpcError(GrpcStatus.INVALID_ARGUMENT, e.message);
    throw e;
  }
}


/**
 * The Trial a request names. Katib's requests carry the trial's name only (trial names are unique
 * in Katib's database, since an Experiment's name is in them), so every namespace is searched.
 * When Trials of that name exist in several namespaces, a call from a Pod means the one in the
 * Pod's namespace; any other call cannot tell them apart, and is refused.
 */
export async function findTrial(client: Client, name: string, peer = ''): Promise<Trial & StoredObject> {
  if (name === '') throw new GrpcError(GrpcStatus.INVALID_ARGUMENT, 'trial_name: required');
  const def = kind(client, TuningApiVersion, 'Trial');
  const found = (await client.listAll<Trial>(def, { fieldSelector: `metadata.name=${name}` })).filter((t) => t.metadata.name === name);
  const only = found[0];
  if (!only) throw new GrpcError(GrpcStatus.NOT_FOUND, `trial "${name}" not found in any namespace`);
  if (found.length > 1) {
    const ns = await podNamespaceAt(client, peer);
    const mine = found.filter((t) => t.metadata.namespace === ns);
    if (mine.length === 1) return mine[0] as Trial & StoredObject;
    const where = found.map((t) => t.metadata.namespace).sort().join(', ');
    throw new GrpcError(GrpcStatus.FAILED_PRECONDITION, `trial name "${name}" is ambiguous: Trials of that name exist in namespaces ${where}; Katib's API names a trial without its namespace, so rename one or report from a Pod in the trial's namespace`);
  }
  return only;
}

function newLog(trial: Trial & StoredObject, logs: MetricLog[]): ObservationLog {
  const exp = trial.metadata.labels?.[TuningLabels.experiment];
  return {
    apiVersion: ObservationLogApiVersion, kind: 'ObservationLog',
    metadata: {
      name: trial.metadata.name, namespace: trial.metadata.namespace,
      labels: { [TuningLabels.trial]: trial.metadata.name, ...(exp ? { [TuningLabels.experiment]: exp } : {}) },
      ownerReferences: [{ apiVersion: trial.apiVersion, kind: trial.kind, name: trial.metadata.name, uid: trial.metadata.uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: { trialName: trial.metadata.name, metricLogs: logs },
  };
}

/** appends to the trial's ObservationLog, making it at the first report */
export async function appendMetricLogs(client: Client, trial: Trial & StoredObject, logs: MetricLog[]): Promise<void> {
  if (!logs.length) return;
  const def = kind(client, ObservationLogApiVersion, 'ObservationLog');
  const key = { namespace: trial.metadata.namespace ?? 'default', name: trial.metadata.name };
  // another report (or a pull collector) may write between the read and the write: read again
  for (let attempt = 0; ; attempt++) {
    try {
      const cur = await client.find<ObservationLog>(def, key);
      if (!cur) {
        await client.create(newLog(trial, logs) as KObject);
      } else {
        await client.update({ ...cur, spec: { ...cur.spec, trialName: cur.spec?.trialName ?? trial.metadata.name, metricLogs: [...(cur.spec?.metricLogs ?? []), ...logs] } } as KObject);
      }
      return;
    } catch (e) {
      if (!(isConflict(e) || isAlreadyExists(e)) || attempt >= 20) throw e;
    }
  }
}

/** the gRPC methods, keyed by path */
export function dbManagerMethods(client: Client): Record<string, UnaryHandler> {
  const logDef = (): KindDef => kind(client, ObservationLogApiVersion, 'ObservationLog');
  return {
    [`/${DBManagerService}/ReportObservationLog`]: async (body, call) => {
      const req = decoding(decodeReportObservationLogRequest, body);
      const logs = acceptMetricLogs(req.observationLog?.metricLogs ?? []);
      const trial = await findTrial(client, req.trialName, call.peer);
      await appendMetricLogs(client, trial, logs);
      return Buffer.alloc(0);
    },
    [`/${DBManagerService}/GetObservationLog`]: async (body, call) => {
      const req = decoding(decodeGetObservationLogRequest, body);
      const trial = await findTrial(client, req.trialName, call.peer);
      const stored = await client.find<ObservationLog>(logDef(), { namespace: trial.metadata.namespace ?? 'default', name: trial.metadata.name });
      const logs = queryMetricLogs(stored?.spec?.metricLogs ?? [], req);
      return encodeGetObservationLogReply({ observationLog: { metricLogs: logs.map((l) => ({ timeStamp: l.timeStamp, metric: { name: l.name, value: l.value } })) } });
    },
    [`/${DBManagerService}/DeleteObservationLog`]: async (body, call) => {
      const req = decoding(decodeDeleteObservationLogRequest, body);
      const trial = await findTrial(client, req.trialName, call.peer);
      try {
        await client.delete(logDef(), { namespace: trial.metadata.namespace ?? 'default', name: trial.metadata.name });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      return Buffer.alloc(0);
    },
    // Katib's DB manager answers the standard health check; probes and `grpc_health_probe` use it
    '/grpc.health.v1.Health/Check': async () => Buffer.from([0x08, 0x01]),
  };
}
