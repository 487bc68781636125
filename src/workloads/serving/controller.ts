// The InferenceService controller and the revision controller.
//
// InferenceService → Revisions. Each component (predictor, transformer, explainer) becomes a
// Revision whenever its spec changes (everything but `canaryTrafficPercent`, as Knative makes a
// revision per template change); the predictor's runtime is chosen as KServe chooses it
// (runtimes.ts). Traffic follows KServe's canary rule: with `canaryTrafficPercent: P` and a rolled-out
// revision, the latest ready revision gets P% and the last rolled-out one the rest; otherwise the
// latest ready revision gets everything. `latestRolledoutRevision` moves when the latest ready
// revision is at 100%, and a revision that fails to load never takes traffic from the one before.
//
// Revision → replicas. A revision runs as many model-server Pods (or one in-process model) as the
// gateway's autoscaler asks: one while it first loads, then between min and max replicas on load,
// zero when it takes no traffic (or has `minReplicas: 0` and sat idle for a window). Its status
// carries the model state (Pending, Loading, Loaded, Standby when scaled to zero, FailedToLoad with
// the loader's message from the Pod's log).
import { createHash, randomBytes } from 'node:crypto';
import type { Container, Pod, PodSpec } from '../../api/core-types.js';
import { isConflict, isNotFound } from '../../api/errors.js';
import { findCondition, setCondition } from '../../api/conditions.js';
import type { Condition } from '../../api/conditions.js';
import { Kinds } from '../../api/index.js';
import type { ObjectKey, StoredObject } from '../../api/meta.js';
import { clone, deepEqual, now, ownerRefTo } from '../../api/meta.js';
import { RevisionKind, ServingLabels, revisionName } from '../../api/serving-revision.js';
import type { Revision, RevisionSpec, RevisionStatus } from '../../api/serving-revision.js';
import type { ClusterServingRuntime, ComponentExtensionSpec, ComponentStatus, InferenceService, InferenceServiceStatus, ModelStatus, PredictorSpec, ServingRuntime } from '../../api/serving.js';
import type { Manager, Result } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import type { Client } from '../../store/client.js';
import type { ComponentName, Gateway } from './gateway.js';
import { parseDuration } from '../../api/cron.js';
import { renderRuntimeArgs, selectRuntime } from './runtimes.js';
import { ModelStore, StorageError, parseStorageUri } from './storage.js';

type Isvc = InferenceService & StoredObject;
type Rev = Revision & StoredObject;
type PodObject = Pod & StoredObject;

export interface ServingControllerOptions {
  client: Client;
  recorder: Recorder;
  gateway: Gateway;
  models: ModelStore;
  /** `host:port` at which Pods reach the gateway (a transformer's predictor host starts with it) */
  podGateway: () => string;
  /** the API server's own URL, for `status.address` */
  serverUrl: () => string;
  /** the last lines of a Pod container's log, for FailedToLoad messages */
  podLog?: (pod: PodObject, container: string) => Promise<string>;
}

const components: ComponentName[] = ['predictor', 'transformer', 'explainer'];
const modelServerImage = 'skiff/model-server';
const inProcessImage = 'skiff/onnxruntime';
const unavailableAnnotation = 'serving.skiff.dev/unavailable';
const defaultPort = 8080;

export function addServingControllers(mgr: Manager, opts: ServingControllerOptions): void {
  const isvc = new InferenceServiceReconciler(opts);
  const isvcCtl = mgr.add({
    name: 'inferenceservice-controller',
    for: Kinds.InferenceService,
    owns: [RevisionKind],
    watches: [
      // a runtime appearing or changing may change which one serves a predictor
      { kind: Kinds.ServingRuntime, map: (o) => isvc.keysIn(o.metadata.namespace) },
      { kind: Kinds.ClusterServingRuntime, map: () => isvc.keysIn(undefined) },
      // `storage:` specs read the namespace's storage-config Secret
      { kind: Kinds.Secret, predicate: (e) => e.object.metadata.name === 'storage-config', map: (o) => isvc.keysIn(o.metadata.namespace) },
    ],
    reconcile: (key) => isvc.reconcile(key),
  });
  const rev = new RevisionReconciler(opts);
  const revCtl = mgr.add({
    name: 'revision-controller',
    for: RevisionKind,
    owns: [Kinds.Pod],
    reconcile: (key) => rev.reconcile(key),
    workers: 2,
  });
  opts.gateway.onChange((ns, name) => revCtl.enqueue({ namespace: ns, name }));
  isvc.enqueue = (k) => isvcCtl.enqueue(k);
}

// ---- building revisions ----

function hash(v: unknown): string {
  return createHash('sha256').update(JSON.stringify(v)).digest('hex').slice(0, 16);
}

function num(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

/** a Go duration annotation (Knative's `window`, e.g. "60s") in seconds; undefined when absent or bad */
function seconds(v: string | undefined): number | undefined {
  if (!v) return undefined;
  try {
    return parseDuration(v.trim()) / 1000;
  } catch {
    return undefined;
  }
}

type ComponentSpec = PredictorSpec & ComponentExtensionSpec & { containers?: Container[] };

function scaling(isvc: Isvc, c: ComponentSpec): Pick<RevisionSpec, 'containerConcurrency' | 'timeoutSeconds' | 'batcher' | 'minReplicas' | 'maxReplicas' | 'scaleMetric' | 'scaleTarget' | 'windowSeconds'> {
  const ann = { ...(isvc.metadata.annotations ?? {}), ...(c.annotations ?? {}) };
  const min = c.minReplicas ?? num(ann['autoscaling.knative.dev/min-scale']) ?? 1;
  const max = c.maxReplicas ?? num(ann['autoscaling.knative.dev/max-scale']) ?? 0;
  const metric = c.scaleMetric ?? (ann['autoscaling.knative.dev/metric'] as RevisionSpec['scaleMetric'] | undefined) ?? 'concurrency';
  const target = c.scaleTarget ?? num(ann['autoscaling.knative.dev/target']);
  const out: ReturnType<typeof scaling> = {
    containerConcurrency: c.containerConcurrency ?? 0,
    timeoutSeconds: c.timeout ?? 300,
    minReplicas: min,
    maxReplicas: max,
    scaleMetric: ['concurrency', 'rps', 'cpu', 'memory'].includes(metric) ? metric : 'concurrency',
    windowSeconds: seconds(ann['autoscaling.knative.dev/window']) ?? 60,
  };
  if (target !== undefined) out.scaleTarget = target;
  if (c.batcher) out.batcher = { maxBatchSize: c.batcher.maxBatchSize ?? 32, maxLatencyMs: c.batcher.maxLatency ?? 0 };
  return out;
}

function mergeEnv(base: Container['env'], over: Container['env']): Container['env'] {
  const out = [...(base ?? [])];
  for (const e of over ?? []) {
    const i = out.findIndex((x) => x.name === e.name);
    if (i >= 0) out[i] = e;
    else out.push(e);
  }
  return out;
}

function podSpecOf(c: ComponentSpec): Partial<PodSpec> {
  const skip = new Set(['model', 'sklearn', 'xgboost', 'tensorflow', 'pytorch', 'triton', 'onnx', 'huggingface', 'pmml', 'lightgbm', 'paddle', 'storageUris', 'storageContainerName', 'workerSpec', 'name', 'art',
    'minReplicas', 'maxReplicas', 'scaleTarget', 'scaleMetric', 'scaleMetricType', 'autoScaling', 'containerConcurrency', 'timeout', 'canaryTrafficPercent', 'logger', 'batcher', 'labels', 'annotations', 'deploymentStrategy']);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(c)) if (!skip.has(k)) out[k] = v;
  return out as Partial<PodSpec>;
}

function withArg(args: string[], name: string, value: string): string[] {
  return args.some((a) => a === name || a.startsWith(`${name}=`)) ? args : [...args, name, value];
}

/**
 * The revision a component's spec makes. Throws nothing: what cannot run is a revision with
 * `failure` set, so the status can say why.
 */
/**
 * The URI a `storage: {key, path, parameters}` spec names: the `storage-config` Secret's entry `key`
 * (JSON, as KServe's), with `parameters` over it. Skiff adds the local types `pvc` (`claim`) and
 * `file` (`root`); cloud types give their URI, which then fails as unreachable from this machine.
 */
export function storageSpecUri(storage: { key?: string; path?: string; parameters?: Record<string, string> }, config: Record<string, string> | undefined): string {
  const key = storage.key ?? config?.['default_storage'] ?? 'default';
  let entry: Record<string, string> = {};
  const raw = config?.[key];
  if (raw !== undefined) {
    try {
      entry = JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as Record<string, string>;
    } catch {
      throw new StorageError(`storage key "${key}" of secret storage-config is not JSON`);
    }
  } else if (!storage.parameters?.['type']) {
    throw new StorageError(`storage key "${key}" is not in secret storage-config`);
  }
  const e = { ...entry, ...(storage.parameters ?? {}) };
  const path = (storage.path ?? '').replace(/^\/+/, '');
  const join2 = (a: string, b: string): string => (b ? `${a.replace(/\/+$/, '')}/${b}` : a);
  switch (e['type']) {
    case 'pvc': return join2(`pvc://${e['claim'] ?? e['bucket'] ?? ''}`, path);
    case 'file': case 'local': return join2(`file://${e['root'] ?? '/'}`, path);
    case 's3': return join2(`s3://${e['bucket'] ?? ''}`, path);
    case 'gs': case 'gcs': return join2(`gs://${e['bucket'] ?? ''}`, path);
    default: throw new StorageError(`storage key "${key}": type ${JSON.stringify(e['type'])} is not one Skiff reads (pvc, file, s3, gs)`);
  }
}

export function buildRevision(isvc: Isvc, component: ComponentName, runtimes: { namespaced: ServingRuntime[]; cluster: ClusterServingRuntime[] }, podGateway: string, storageConfig?: Record<string, string>): Omit<RevisionSpec, 'number'> {
  const name = isvc.metadata.name;
  const ns = isvc.metadata.namespace ?? 'default';
  const c = (isvc.spec as unknown as Record<string, ComponentSpec>)[component] as ComponentSpec;
  const common = { inferenceService: name, component, ...scaling(isvc, c) };
  const relevantAnnotations = Object.fromEntries(Object.entries(isvc.metadata.annotations ?? {}).filter(([k]) => k.startsWith('autoscaling.knative.dev/') || k.startsWith('serving.kserve.io/')));
  const { canaryTrafficPercent: _ignored, ...hashed } = c;
  const labels = { ...(c.labels ?? {}) };
  const annotations = { ...(c.annotations ?? {}) };
  const base = podSpecOf(c);
  const fail = (reason: string, message: string, extra: Partial<RevisionSpec> = {}): Omit<RevisionSpec, 'number'> => ({
    ...common, serverKind: 'custom', modelName: name, protocol: 'v1', port: defaultPort, specHash: hash({ hashed, relevantAnnotations, reason, message }), failure: { reason, message }, ...extra,
  });

  if (component === 'predictor' && c.model) {
    const sel = selectRuntime(isvc, runtimes.namespaced, runtimes.cluster);
    if (!sel.ok) return fail(sel.reason, sel.message);
    const rt = sel.runtime;
    const rtName = rt.metadata.name as string;
    const unavailable = rt.metadata.annotations?.[unavailableAnnotation];
    const specHash = hash({ hashed, relevantAnnotations, runtime: rtName, rv: rt.metadata.resourceVersion, protocol: sel.protocol });
    let uri = c.model.storageUri;
    if (!uri && c.model.storage) {
      try {
        uri = storageSpecUri(c.model.storage, storageConfig);
      } catch (e) {
        return { ...fail('ModelLoadFailed', (e as Error).message), runtime: rtName, runtimeKind: sel.kind, modelFormat: sel.modelFormat.name };
      }
    }
    const info = { runtime: rtName, runtimeKind: sel.kind, modelFormat: sel.modelFormat.name, ...(uri ? { storageUri: uri } : {}) };
    if (unavailable) return { ...fail('RuntimeNotRecognized', unavailable), ...info, specHash };
    const rc = rt.spec.containers[0];
    if (!rc) return { ...fail('InvalidPredictorSpec', `runtime ${rtName} has no containers`), ...info, specHash };
    const m = c.model;
    let image = m.image ?? rc.image ?? '';
    if (m.runtimeVersion && image.includes(':') === false) image = `${image}:${m.runtimeVersion}`;
    const args = [...(rc.args ?? []), ...((m.args as string[] | undefined) ?? [])].map((a) => renderRuntimeArgs(a, isvc));
    const container: Container = {
      ...rc,
      name: 'kserve-container',
      image,
      args,
      env: mergeEnv(rc.env, m.env as Container['env']),
      ...(m.command ? { command: m.command as string[] } : {}),
      ...(m.resources ? { resources: m.resources as Container['resources'] } : {}),
      ...(m.readinessProbe ? { readinessProbe: m.readinessProbe } : {}),
    } as Container;
    const port = (container.ports?.[0]?.containerPort as number | undefined) ?? defaultPort;
    const serverKind = (rc.image ?? '').startsWith(inProcessImage) ? 'in-process' : (rc.image ?? '').startsWith(modelServerImage) ? 'skiff' : 'custom';
    if (serverKind === 'in-process') {
      if (!uri) return { ...fail('InvalidPredictorSpec', 'an ONNX model needs a storageUri'), ...info, specHash };
      return { ...common, ...info, serverKind, modelName: name, protocol: sel.protocol, port, specHash };
    }
    if (!container.ports?.length) container.ports = [{ containerPort: port, name: 'http1', protocol: 'TCP' }];
    const spec: PodSpec = {
      ...(rt.spec.volumes ? { volumes: rt.spec.volumes } : {}),
      ...(base as PodSpec),
      containers: [container, ...((base.containers ?? []).filter((x) => x.name !== 'kserve-container'))],
    };
    return { ...common, ...info, serverKind, modelName: name, protocol: sel.protocol, port, specHash, podTemplate: { metadata: { labels, annotations }, spec } };
  }

  // custom containers: the predictor is `kserve-container` or the first; transformers and explainers
  const containers = clone(base.containers ?? []);
  if (containers.length === 0) return fail('InvalidPredictorSpec', `spec.${component} has no containers`);
  const mainIndex = Math.max(0, containers.findIndex((x) => x.name === 'kserve-container'));
  const main = containers[mainIndex] as Container;
  const port = (main.ports?.[0]?.containerPort as number | undefined) ?? defaultPort;
  if (!main.ports?.length) main.ports = [{ containerPort: port, name: 'http1', protocol: 'TCP' }];
  if (component !== 'predictor') {
    let a = main.args ?? [];
    a = withArg(a, '--model_name', name);
    a = withArg(a, '--predictor_host', `${podGateway}/serving/${ns}/${name}-predictor`);
    a = withArg(a, '--http_port', String(port));
    main.args = a;
  }
  const storageUri = (c as { storageUri?: string }).storageUri ?? (component === 'explainer' ? (c as { art?: { storageUri?: string } }).art?.storageUri : undefined);
  return {
    ...common,
    serverKind: 'custom',
    modelName: name,
    protocol: (c as { protocolVersion?: string }).protocolVersion ?? 'v1',
    port,
    specHash: hash({ hashed, relevantAnnotations, podGateway: component === 'predictor' ? '' : podGateway }),
    ...(storageUri ? { storageUri } : {}),
    podTemplate: { metadata: { labels, annotations }, spec: { ...(base as PodSpec), containers } },
  };
}

// ---- InferenceService ----

class InferenceServiceReconciler {
  enqueue: (k: ObjectKey) => void = () => {};
  private readonly known = new Set<string>();

  constructor(private readonly opts: ServingControllerOptions) {}

  keysIn(ns: string | undefined): ObjectKey[] {
    return [...this.known].map((k) => {
      const i = k.indexOf('/');
      return { namespace: k.slice(0, i), name: k.slice(i + 1) };
    }).filter((k) => ns === undefined || k.namespace === ns);
  }

  async reconcile(key: ObjectKey): Promise<Result | void> {
    const { client, gateway } = this.opts;
    const k = `${key.namespace}/${key.name}`;
    const isvc = await client.find<Isvc>(Kinds.InferenceService, key);
    if (!isvc || isvc.metadata.deletionTimestamp) {
      this.known.delete(k);
      gateway.removeRoute(key.namespace ?? 'default', key.name);
      return;
    }
    this.known.add(k);
    const ns = isvc.metadata.namespace ?? 'default';
    const runtimes = {
      namespaced: await client.listAll<ServingRuntime & StoredObject>(Kinds.ServingRuntime, { namespace: ns }),
      cluster: await client.listAll<ClusterServingRuntime & StoredObject>(Kinds.ClusterServingRuntime),
    };
    const all = await client.listAll<Rev>(RevisionKind, { namespace: ns, labelSelector: `${ServingLabels.inferenceService}=${isvc.metadata.name}` });
    const storageConfig = (await client.find<StoredObject>(Kinds.Secret, { namespace: ns, name: 'storage-config' }))?.data as Record<string, string> | undefined;
    const status: InferenceServiceStatus = clone(isvc.status ?? {});
    const route: Parameters<Gateway['setRoute']>[0] = { namespace: ns, name: isvc.metadata.name, components: {}, latest: {} };
    const conds: Condition[] = [];
    let allReady = true;
    status.components ??= {};
    for (const comp of components) {
      if (!(isvc.spec as unknown as Record<string, unknown>)[comp]) {
        delete status.components[comp];
        continue;
      }
      const built = buildRevision(isvc, comp, runtimes, this.opts.podGateway(), storageConfig);
      const mine = all.filter((r) => r.spec.component === comp && ownedBy(r, isvc)).sort((a, b) => a.spec.number - b.spec.number);
      let latest = mine[mine.length - 1];
      if (!latest || latest.spec.specHash !== built.specHash) {
        const number = (latest?.spec.number ?? 0) + 1;
        latest = await this.createRevision(isvc, { ...built, number } as RevisionSpec);
        mine.push(latest);
      }
      const cs: ComponentStatus = status.components[comp] ?? {};
      status.components[comp] = cs;
      cs.latestCreatedRevision = latest.metadata.name;
      const ready = [...mine].reverse().find((r) => r.status?.ready && !r.spec.failure);
      if (ready) cs.latestReadyRevision = ready.metadata.name;
      else delete cs.latestReadyRevision;
      const traffic = this.traffic(isvc, comp, cs, ready, latest.metadata.name);
      cs.traffic = traffic.map((t) => ({ ...t, ...(t.revisionName === cs.latestReadyRevision ? { latestRevision: true } : { latestRevision: false }) }));
      const host = `${isvc.metadata.name}-${comp}.${ns}`;
      cs.url = `http://${host}.${gateway.domain}`;
      cs.restUrl = `${this.opts.serverUrl()}/serving/${ns}/${isvc.metadata.name}-${comp}`;
      cs.address = { url: `http://${host}.svc.cluster.local` };
      route.components[comp] = traffic.filter((t) => (t.percent ?? 0) > 0).map((t) => ({ revision: `${ns}/${t.revisionName}`, percent: t.percent ?? 0 }));
      route.latest[comp] = `${ns}/${latest.metadata.name}`;
      const type = comp === 'predictor' ? 'PredictorReady' : comp === 'transformer' ? 'TransformerReady' : 'ExplainerReady';
      const latestOk = latest.status?.ready && !latest.spec.failure;
      if (latestOk) conds.push({ type, status: 'True' });
      else {
        allReady &&= false;
        const f = latest.spec.failure ?? (latest.status?.modelState === 'FailedToLoad' ? latest.status.lastFailureInfo : undefined);
        conds.push({ type, status: f ? 'False' : 'Unknown', reason: f ? f.reason : 'RevisionLoading', message: f ? f.message : `revision ${latest.metadata.name} is loading its model` });
      }
      if (comp === 'predictor') {
        status.modelStatus = modelStatusOf(latest, ready);
        if (latest.spec.runtimeKind === 'ServingRuntime') {
          status.servingRuntimeName = latest.spec.runtime;
          delete status.clusterServingRuntimeName;
        } else if (latest.spec.runtime) {
          status.clusterServingRuntimeName = latest.spec.runtime;
          delete status.servingRuntimeName;
        }
        if (latest.spec.failure) route.failure = `${latest.spec.failure.reason}: ${latest.spec.failure.message}`;
      }
    }
    // the ingress is up once every component has a ready revision taking traffic
    const routable = components.every((c) => !(isvc.spec as unknown as Record<string, unknown>)[c] || (route.components[c]?.length ?? 0) > 0);
    conds.push(routable ? { type: 'IngressReady', status: 'True' } : { type: 'IngressReady', status: 'False', reason: 'ComponentNotReady', message: 'a component has no ready revision yet' });
    const ready = allReady && routable;
    const notReady = conds.find((c) => c.status !== 'True');
    conds.push(ready ? { type: 'Ready', status: 'True' } : { type: 'Ready', status: 'False', reason: notReady?.reason ?? 'NotReady', message: notReady?.message ?? '' });
    for (const c of conds) {
      setCondition(status, c);
      if (c.status === 'True') {
        const stored = findCondition(status.conditions, c.type);
        if (stored) {
          delete stored.reason;
          delete stored.message;
        }
      }
    }
    status.conditions = (status.conditions ?? []).filter((c) => conds.some((x) => x.type === c.type));
    status.url = `http://${isvc.metadata.name}.${ns}.${gateway.domain}`;
    status.address = { url: `${this.opts.serverUrl()}/serving/${ns}/${isvc.metadata.name}` };
    status.deploymentMode = 'Serverless';
    status.observedGeneration = isvc.metadata.generation ?? 1;
    gateway.setRoute(route);
    if (!deepEqual(status, isvc.status ?? {})) {
      const was = findCondition(isvc.status?.conditions, 'Ready')?.status;
      try {
        await client.updateStatus({ ...isvc, status });
      } catch (e) {
        if (isConflict(e) || isNotFound(e)) return { requeueAfter: 10 };
        throw e;
      }
      const nowReady = findCondition(status.conditions, 'Ready')?.status;
      if (was !== nowReady && nowReady === 'True') this.opts.recorder.event(isvc, 'Normal', 'InferenceServiceReady', `InferenceService ${isvc.metadata.name} is ready`);
    }
    // revisions outside the traffic split and older than the rolled-out one are kept for rollback;
    // only the ten newest of each component stay
    for (const comp of components) {
      const mine = all.filter((r) => r.spec.component === comp).sort((a, b) => b.spec.number - a.spec.number);
      const keep = new Set([status.components[comp]?.latestRolledoutRevision, status.components[comp]?.previousRolledoutRevision, status.components[comp]?.latestReadyRevision, status.components[comp]?.latestCreatedRevision]);
      for (const r of mine.slice(10)) if (!keep.has(r.metadata.name)) await client.delete(RevisionKind, { namespace: ns, name: r.metadata.name }).catch(() => undefined);
    }
  }

  private async createRevision(isvc: Isvc, spec: RevisionSpec): Promise<Rev> {
    const ns = isvc.metadata.namespace ?? 'default';
    const name = revisionName(isvc.metadata.name, spec.component, spec.number);
    const obj: Revision = {
      apiVersion: `${RevisionKind.group}/${RevisionKind.version}`,
      kind: 'Revision',
      metadata: {
        name, namespace: ns,
        labels: { [ServingLabels.inferenceService]: isvc.metadata.name, [ServingLabels.component]: spec.component, [ServingLabels.revisionNumber]: String(spec.number) },
        ownerReferences: [ownerRefTo(isvc)],
      },
      spec,
    };
    try {
      const r = await this.opts.client.create<Rev>(obj);
      this.opts.recorder.event(isvc, 'Normal', 'RevisionCreated', `${spec.component} revision ${name} created${spec.failure ? ` (cannot run: ${spec.failure.message})` : ''}`);
      return r;
    } catch (e) {
      if (isConflict(e)) return this.opts.client.get<Rev>(RevisionKind, { namespace: ns, name });
      throw e;
    }
  }

  /** KServe's canary rule, with its rolled-out bookkeeping kept in the component status. */
  private traffic(isvc: Isvc, comp: ComponentName, cs: ComponentStatus, ready: Rev | undefined, latestCreated: string): { revisionName: string; percent: number; tag?: string }[] {
    if (!ready) {
      // nothing ready yet: traffic stays on what was rolled out before, if anything
      return cs.latestRolledoutRevision ? [{ revisionName: cs.latestRolledoutRevision, percent: 100 }] : [];
    }
    const c = (isvc.spec as unknown as Record<string, ComponentExtensionSpec>)[comp];
    const p = comp === 'predictor' ? c?.canaryTrafficPercent : undefined;
    const latest = ready.metadata.name;
    let out: { revisionName: string; percent: number; tag?: string }[];
    if (p !== undefined && p < 100 && cs.latestRolledoutRevision && cs.latestRolledoutRevision !== latest) {
      out = [{ revisionName: latest, percent: p, tag: 'latest' }];
      if (100 - p > 0) out.push({ revisionName: cs.latestRolledoutRevision, percent: 100 - p, tag: 'prev' });
    } else if (p !== undefined && p < 100 && latest === latestCreated && cs.latestRolledoutRevision === latest && cs.previousRolledoutRevision) {
      // the rolled-out revision, with nothing newer, given less than 100% again (`canaryTrafficPercent:
      // 0` pins back): the rest goes back to the revision before it
      out = [{ revisionName: latest, percent: p, tag: 'latest' }];
      if (100 - p > 0) out.push({ revisionName: cs.previousRolledoutRevision, percent: 100 - p, tag: 'prev' });
      cs.latestRolledoutRevision = cs.previousRolledoutRevision;
      delete cs.previousRolledoutRevision;
    } else {
      out = [{ revisionName: latest, percent: 100 }];
    }
    const full = out.find((t) => t.revisionName === latest && t.percent === 100);
    if (full && cs.latestRolledoutRevision !== latest) {
      if (cs.latestRolledoutRevision) cs.previousRolledoutRevision = cs.latestRolledoutRevision;
      cs.latestRolledoutRevision = latest;
    }
    return out;
  }
}

function ownedBy(r: Rev, isvc: Isvc): boolean {
  return (r.metadata.ownerReferences ?? []).some((o) => o.uid === isvc.metadata.uid);
}

function modelStatusOf(latest: Rev, ready: Rev | undefined): ModelStatus {
  const target = latest.spec.failure ? 'FailedToLoad' : latest.status?.modelState ?? 'Pending';
  const active = ready?.status?.modelState ?? '';
  const ms: ModelStatus = {
    transitionStatus: latest.spec.failure
      ? ['NoSupportingRuntime', 'RuntimeNotRecognized', 'RuntimeDisabled', 'InvalidPredictorSpec'].includes(latest.spec.failure.reason) ? 'InvalidSpec' : 'BlockedByFailedLoad'
      : target === 'FailedToLoad' ? 'BlockedByFailedLoad' : latest.status?.ready ? 'UpToDate' : 'InProgress',
    states: { activeModelState: active, targetModelState: target },
    copies: { failedCopies: latest.status?.failedCopies ?? 0, totalCopies: latest.status?.replicas ?? 0 },
  };
  const f = latest.spec.failure ?? latest.status?.lastFailureInfo;
  if (f) ms.lastFailureInfo = { reason: f.reason as never, message: f.message, modelRevisionName: latest.metadata.name, ...('exitCode' in f && f.exitCode !== undefined ? { exitCode: f.exitCode } : {}), ...('time' in f && f.time ? { time: f.time } : {}) };
  return ms;
}

// ---- Revision ----

class RevisionReconciler {
  constructor(private readonly opts: ServingControllerOptions) {}

  async reconcile(key: ObjectKey): Promise<Result | void> {
    const { client, gateway } = this.opts;
    const revKey = `${key.namespace}/${key.name}`;
    const rev = await client.find<Rev>(RevisionKind, key);
    if (!rev || rev.metadata.deletionTimestamp) {
      gateway.removeRevision(revKey);
      return;
    }
    const spec = rev.spec;
    const status: RevisionStatus = clone(rev.status ?? {});
    const d = gateway.revision(revKey, spec);
    if (spec.failure) {
      status.modelState = 'FailedToLoad';
      status.lastFailureInfo = { reason: spec.failure.reason, message: spec.failure.message };
      return this.write(rev, status);
    }
    const pods = (await client.listAll<PodObject>(Kinds.Pod, { namespace: key.namespace, labelSelector: `${ServingLabels.revision}=${key.name}` })).filter((p) => !p.metadata.deletionTimestamp);
    const current = spec.serverKind === 'in-process' ? gateway.readyReplicas(revKey) : pods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed').length;
    const want = gateway.desired(revKey, spec, !!status.ready, current);
    let desired = want.replicas;
    const recheck: Result = want.recheckMs !== undefined ? { requeueAfter: want.recheckMs } : {};
    let modelPath: string | undefined;
    let storageFailure: string | undefined;
    if (spec.storageUri && desired > 0) {
      try {
        const src = await this.opts.models.resolve(spec.storageUri);
        modelPath = src.kind === 'host' ? src.path : undefined;
        if (src.kind === 'pvc' && spec.serverKind === 'in-process') modelPath = undefined;
      } catch (e) {
        storageFailure = e instanceof StorageError ? e.message : `storage: ${(e as Error).message}`;
      }
    }
    if (storageFailure) {
      status.modelState = 'FailedToLoad';
      status.lastFailureInfo = { reason: 'ModelLoadFailed', message: storageFailure, time: now() };
      desired = 0;
    }
    status.desiredReplicas = desired;
    const finish = (r: Promise<Result>): Promise<Result> => {
      d.setFailure(status.modelState === 'FailedToLoad' ? `model of revision ${rev.metadata.name} failed to load: ${status.lastFailureInfo?.message ?? 'unknown error'}` : undefined);
      return r;
    };
    if (spec.serverKind === 'in-process') {
      if (!storageFailure) {
        const pvcPath = spec.storageUri?.startsWith('pvc://') ? this.pvcPath(key.namespace ?? 'default', spec.storageUri) : undefined;
        try {
          await gateway.ensureInProcess(revKey, spec, desired > 0, modelPath ?? pvcPath);
          if (desired > 0) delete status.lastFailureInfo;
        } catch (e) {
          status.modelState = 'FailedToLoad';
          status.lastFailureInfo = { reason: 'ModelLoadFailed', message: (e as Error).message, time: now() };
          status.failedCopies = 1;
          return finish(this.write(rev, status, { requeueAfter: 30_000 }));
        }
      }
      const n = gateway.readyReplicas(revKey);
      status.replicas = n;
      status.readyReplicas = n;
      if (n > 0) status.ready = true;
      if (!storageFailure) status.modelState = n > 0 ? 'Loaded' : status.ready ? 'Standby' : 'Pending';
      if (n > 0) status.failedCopies = 0;
      return finish(this.write(rev, status, recheck));
    }
    // Pods: as many as desired, the ones not ready go first when there are too many
    const live = pods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
    for (const p of pods.filter((x) => x.status?.phase === 'Succeeded' || x.status?.phase === 'Failed')) await this.deletePod(p);
    if (live.length < desired && !storageFailure) {
      const src = spec.storageUri ? await this.opts.models.resolve(spec.storageUri) : undefined;
      for (let i = live.length; i < desired; i++) live.push(await this.createPod(rev, src));
    } else if (live.length > desired) {
      const rank = (p: PodObject): number => (d.replicas.get(p.metadata.name)?.ready ? 1 : 0);
      const extra = [...live].sort((a, b) => rank(a) - rank(b) || (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '')).slice(0, live.length - desired);
      for (const p of extra) {
        await this.deletePod(p);
        live.splice(live.indexOf(p), 1);
      }
    }
    d.setReplicas(live.map((p) => ({ name: p.metadata.name, ...(p.status?.phase === 'Running' && p.status.podIP ? { ip: p.status.podIP } : {}) })));
    const readyN = gateway.readyReplicas(revKey);
    status.replicas = live.length;
    status.readyReplicas = readyN;
    if (readyN > 0) status.ready = true;
    const failing = live.map(loadFailure).filter((f): f is { exitCode: number; reason: string } => f !== undefined);
    status.failedCopies = readyN > 0 ? 0 : failing.length;
    if (storageFailure) {
      // already set
    } else if (readyN > 0) {
      status.modelState = 'Loaded';
      delete status.lastFailureInfo;
    } else if (failing.length > 0) {
      status.modelState = 'FailedToLoad';
      const pod = live.find((p) => loadFailure(p));
      const f = failing[0] as { exitCode: number; reason: string };
      let message = `the model server exited with code ${f.exitCode} (${f.reason})`;
      if (pod && this.opts.podLog) {
        const text = await this.opts.podLog(pod, pod.spec.containers[0]?.name ?? 'kserve-container').catch(() => '');
        const line = text.split('\n').map((l) => l.trim()).filter(Boolean).reverse().find((l) => /fail|error|exception/i.test(l)) ?? text.trim().split('\n').pop();
        if (line) message = line.replace(/^\S+Z (stdout|stderr) [FP] /, '');
      }
      status.lastFailureInfo = { reason: 'ModelLoadFailed', message, exitCode: f.exitCode, time: status.lastFailureInfo?.time ?? now() };
    } else if (live.length > 0) status.modelState = 'Loading';
    else status.modelState = status.ready ? 'Standby' : 'Pending';
    return finish(this.write(rev, status, recheck));
  }

  private pvcPath(ns: string, uri: string): string | undefined {
    const p = parseStorageUri(uri);
    return p.claim ? `${this.opts.models.claimDir(ns, p.claim)}${p.subPath ? `/${p.subPath}` : ''}` : undefined;
  }

  private async write(rev: Rev, status: RevisionStatus, result: Result = {}): Promise<Result> {
    if (deepEqual(status, rev.status ?? {})) return result;
    try {
      await this.opts.client.updateStatus({ ...rev, status });
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) return { requeueAfter: 10 };
      throw e;
    }
    return result;
  }

  private async deletePod(p: PodObject): Promise<void> {
    try {
      await this.opts.client.delete(Kinds.Pod, { namespace: p.metadata.namespace, name: p.metadata.name }, { gracePeriodSeconds: 5 } as never);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  private async createPod(rev: Rev, src: Awaited<ReturnType<ModelStore['resolve']>> | undefined): Promise<PodObject> {
    const spec = rev.spec;
    const t = clone(spec.podTemplate as NonNullable<RevisionSpec['podTemplate']>);
    const ps = t.spec;
    const main = ps.containers.find((c) => c.name === 'kserve-container') ?? ps.containers[0];
    if (src && main) {
      ps.volumes = [...(ps.volumes ?? []).filter((v) => v.name !== 'kserve-provision-location')];
      if (src.kind === 'pvc') ps.volumes.push({ name: 'kserve-provision-location', persistentVolumeClaim: { claimName: src.claim as string, readOnly: true } });
      else ps.volumes.push({ name: 'kserve-provision-location', hostPath: { path: src.path as string } });
      main.volumeMounts = [...(main.volumeMounts ?? []).filter((m) => m.mountPath !== '/mnt/models'), { name: 'kserve-provision-location', mountPath: '/mnt/models', readOnly: true, ...(src.kind === 'pvc' && src.subPath ? { subPath: src.subPath } : {}) }];
    }
    const ksvc = `${spec.inferenceService}-${spec.component}`;
    for (const c of ps.containers) c.env = mergeEnv([{ name: 'PORT', value: String(spec.port) }, { name: 'K_SERVICE', value: ksvc }, { name: 'K_REVISION', value: rev.metadata.name }, { name: 'K_CONFIGURATION', value: ksvc }], c.env);
    ps.restartPolicy = 'Always';
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${rev.metadata.name}-deployment-${randomBytes(3).toString('hex').slice(0, 5)}`,
        namespace: rev.metadata.namespace,
        labels: { ...(t.metadata.labels ?? {}), [ServingLabels.inferenceService]: spec.inferenceService, [ServingLabels.component]: spec.component, [ServingLabels.revision]: rev.metadata.name, app: rev.metadata.name },
        annotations: { ...(t.metadata.annotations ?? {}) },
        ownerReferences: [ownerRefTo(rev)],
      },
      spec: ps,
    };
    return this.opts.client.create<PodObject>(pod);
  }
}

/** A container that ended with an error and is not serving: the model did not load. */
function loadFailure(p: PodObject): { exitCode: number; reason: string } | undefined {
  for (const cs of p.status?.containerStatuses ?? []) {
    const term = cs.state?.terminated ?? (cs.state?.waiting ? cs.lastState?.terminated : undefined);
    if (term && (term.exitCode ?? 0) !== 0) return { exitCode: term.exitCode ?? 1, reason: cs.state?.waiting?.reason ?? term.reason ?? 'Error' };
  }
  return undefined;
}
