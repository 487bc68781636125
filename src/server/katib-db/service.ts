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
import { GrpcError, GrpcStatus, type CallInfo, type UnaryHandler } from './grpc.js';
import { forbiddenMessage } from '../auth/messages.js';
import type { Authorizer, UserInfo } from '../auth/types.js';
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
 * Who may use the DBManager when tenancy is on. Katib's SDK sends no credentials (report_metrics()
 * opens a plain channel), so a trial's Pod is known by its source address and may reach the Trials
 * of its own namespace only; any other caller sends a bearer token as `authorization` metadata and
 * is authorized as the Kubernetes API would authorize it on the Trial (get, update to report,
 * delete). Without either, the call is UNAUTHENTICATED.
 */
export interface DbManagerAccess {
  /** the user a token names; throws when it names nobody */
  authenticate(token: string): Promise<UserInfo>;
  authorizer: Authorizer;
}

type Caller = { namespace: string } | { user: UserInfo } | undefined;

async function callerOf(client: Client, call: CallInfo, access: DbManagerAccess | undefined): Promise<Caller> {
  if (!access) return undefined;
  if (call.token !== undefined) {
    try {
      return { user: await access.authenticate(call.token) };
    } catch {
      throw new GrpcError(GrpcStatus.UNAUTHENTICATED, 'the bearer token in the authorization metadata is not valid');
    }
  }
  const namespace = await podNamespaceAt(client, call.peer);
  if (namespace === undefined) throw new GrpcError(GrpcStatus.UNAUTHENTICATED, 'tenancy is on: call from a trial\'s Pod, or send a bearer token as authorization metadata');
  return { namespace };
}

/** the Trial, once the caller may `verb` it */
async function trialFor(client: Client, name: string, call: CallInfo, access: DbManagerAccess | undefined, verb: string): Promise<Trial & StoredObject> {
  const caller = await callerOf(client, call, access);
  if (caller && 'namespace' in caller) {
    // a Pod sees its own namespace's Trials only: another namespace's are not there for it
    const def = kind(client, TuningApiVersion, 'Trial');
    const t = await client.find<Trial>(def, { namespace: caller.namespace, name });
    if (!t) throw new GrpcError(GrpcStatus.NOT_FOUND, `trial "${name}" not found in namespace "${caller.namespace}"`);
    return t;
  }
  const trial = await findTrial(client, name, call.peer);
  if (caller && access) {
    const attrs = { user: caller.user, resource: { verb, apiGroup: 'kubeflow.org', resource: 'trials', namespace: trial.metadata.namespace ?? 'default', name } };
    const d = access.authorizer.authorize(attrs);
    if (!d.allowed) throw new GrpcError(GrpcStatus.PERMISSION_DENIED, forbiddenMessage(attrs));
  }
  return trial;
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
export function dbManagerMethods(client: Client, access?: DbManagerAccess): Record<string, UnaryHandler> {
  const logDef = (): KindDef => kind(client, ObservationLogApiVersion, 'ObservationLog');
  return {
    [`/${DBManagerService}/ReportObservationLog`]: async (body, call) => {
      const req = decoding(decodeReportObservationLogRequest, body);
      const logs = acceptMetricLogs(req.observationLog?.metricLogs ?? []);
      const trial = await trialFor(client, req.trialName, call, access, 'update');
      await appendMetricLogs(client, trial, logs);
      return Buffer.alloc(0);
    },
    [`/${DBManagerService}/GetObservationLog`]: async (body, call) => {
      const req = decoding(decodeGetObservationLogRequest, body);
      const trial = await trialFor(client, req.trialName, call, access, 'get');
      const stored = await client.find<ObservationLog>(logDef(), { namespace: trial.metadata.namespace ?? 'default', name: trial.metadata.name });
      const logs = queryMetricLogs(stored?.spec?.metricLogs ?? [], req);
      return encodeGetObservationLogReply({ observationLog: { metricLogs: logs.map((l) => ({ timeStamp: l.timeStamp, metric: { name: l.name, value: l.value } })) } });
    },
    [`/${DBManagerService}/DeleteObservationLog`]: async (body, call) => {
      const req = decoding(decodeDeleteObservationLogRequest, body);
      const trial = await trialFor(client, req.trialName, call, access, 'delete');
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
