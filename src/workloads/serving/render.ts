// What the serving controllers make: a component's Revision spec from the InferenceService (its
// runtime chosen as KServe chooses it, runtimes.ts; its scaling from the spec and Knative's
// annotations), the Revision object, and a revision's replica Pod (KServe's predictor Deployment's
// Pod, with the model mounted at /mnt/models as the storage initializer leaves it).
import { createHash, randomBytes } from 'node:crypto';
import type { Container, Pod, PodSpec } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import { clone, ownerRefTo } from '../../api/meta.js';
import { RevisionKind, ServingLabels, revisionName } from '../../api/serving-revision.js';
import type { Revision, RevisionSpec } from '../../api/serving-revision.js';
import type { ClusterServingRuntime, ComponentExtensionSpec, InferenceService, PredictorSpec, ServingRuntime } from '../../api/serving.js';
import { parseDuration } from '../../api/cron.js';
import type { ComponentName } from './data-plane.js';
import { renderRuntimeArgs, selectRuntime } from './runtimes.js';
import type { ModelSource } from './storage.js';
import { StorageError } from './storage.js';

type Isvc = InferenceService & StoredObject;

const modelServerImage = 'skiff/model-server';
const inProcessImage = 'skiff/onnxruntime';
const tensorflowServerImage = 'skiff/model-server-tensorflow';
const unavailableAnnotation = 'serving.skiff.dev/unavailable';
const defaultPort = 8080;


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

export function mergeEnv(base: Container['env'], over: Container['env']): Container['env'] {
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

/**
 * The revision a component's spec makes. Throws nothing: what cannot run is a revision with
 * `failure` set, so the status can say why.
 */
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
    let rc = rt.spec.containers[0];
    if (!rc) return { ...fail('InvalidPredictorSpec', `runtime ${rtName} has no containers`), ...info, specHash };
    if ((rc.image ?? '').startsWith(inProcessImage) && sel.modelFormat.name === 'tensorflow') {
      // Triton's TensorFlow format (a SavedModel over V2): the in-process server reads only ONNX, so
      // the SavedModel goes to the model server in TensorFlow's environment, which speaks V2 too
      rc = { name: 'kserve-container', image: tensorflowServerImage, command: ['skiff-model-server'], args: ['--model_name={{.Name}}', '--model_dir=/mnt/models', '--http_port=8080', '--format=tensorflow'] };
    }
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

/**
 * A revision whose storageUri names a registry alias (`model-registry://<model>@<alias>`), with the
 * version the alias names now made part of it and of its hash: an alias moved is a spec changed, so
 * a new revision, which the canary rule rolls out. An alias that names nothing (`pin` says why) is a
 * revision that cannot run, as any other registry URI that names nothing.
 */
export function pinRegistryVersion(spec: Omit<RevisionSpec, 'number'>, pin: { modelVersionId: string } | string): Omit<RevisionSpec, 'number'> {
  if (typeof pin === 'string') {
    return { ...spec, specHash: hash({ base: spec.specHash, unresolved: pin }), failure: { reason: 'ModelLoadFailed', message: `storageUri ${spec.storageUri ?? ''}: ${pin}` } };
  }
  return { ...spec, registryVersionId: pin.modelVersionId, specHash: hash({ base: spec.specHash, registryVersionId: pin.modelVersionId }) };
}

/** The Revision object of an InferenceService's component, owned by the InferenceService. */
export function renderRevision(isvc: Isvc, spec: RevisionSpec): Revision {
  const name = revisionName(isvc.metadata.name, spec.component, spec.number);
  return {
    apiVersion: `${RevisionKind.group}/${RevisionKind.version}`,
    kind: 'Revision',
    metadata: {
      name, namespace: isvc.metadata.namespace ?? 'default',
      labels: { [ServingLabels.inferenceService]: isvc.metadata.name, [ServingLabels.component]: spec.component, [ServingLabels.revisionNumber]: String(spec.number) },
      ownerReferences: [ownerRefTo(isvc)],
    },
    spec,
  };
}

/** One replica Pod of a revision that runs model-server Pods; `src` is where its model lies. */
export function renderReplicaPod(rev: Revision & StoredObject, src: ModelSource | undefined): Pod {
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
  return {
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
}
