// Test builders for InferenceServices, ServingRuntimes and Revisions. Defaults are the smallest valid
// objects; setters are named after the upstream fields. Only tests import this file.
import type { StoredObject } from '../../api/meta.js';
import { clone } from '../../api/meta.js';
import { RevisionKind, revisionName } from '../../api/serving-revision.js';
import type { Revision, RevisionSpec } from '../../api/serving-revision.js';
import { defaultInferenceService } from '../../api/serving.js';
import type { ClusterServingRuntime, InferenceService, ServingRuntime, ServingRuntimeSpec } from '../../api/serving.js';

abstract class Builder<T> {
  constructor(protected o: T) {}

  protected set(f: (o: T) => void): this {
    f(this.o);
    return this;
  }

  /** a fresh deep copy */
  obj(): T {
    return clone(this.o);
  }

  /** another builder, from a deep copy of this one's object */
  clone(): this {
    return new (this.constructor as new (o: T) => this)(clone(this.o));
  }
}

type Component = Record<string, unknown>;

export class InferenceServiceBuilder extends Builder<InferenceService> {
  private get predictor(): Component {
    return this.o.spec.predictor as unknown as Component;
  }

  /** `spec.predictor.model`: the format, and what else the model says */
  model(format: string, fields: Record<string, unknown> = {}, formatFields: Record<string, unknown> = {}): this {
    return this.set(() => { this.predictor['model'] = { modelFormat: { name: format, ...formatFields }, ...fields }; });
  }
  /** the older per-framework key (`sklearn: {storageUri}`, `onnx: {...}`) */
  framework(key: string, fields: Record<string, unknown>): this {
    return this.set(() => { delete this.predictor['model']; this.predictor[key] = fields; });
  }
  storageUri(uri: string): this { return this.set(() => { ((this.predictor['model'] ??= {}) as Component)['storageUri'] = uri; }); }
  protocolVersion(v: string): this { return this.set(() => { ((this.predictor['model'] ??= {}) as Component)['protocolVersion'] = v; }); }
  runtime(name: string): this { return this.set(() => { ((this.predictor['model'] ??= {}) as Component)['runtime'] = name; }); }
  /** the whole `spec.predictor` */
  predictorSpec(fields: Record<string, unknown>): this { return this.set((o) => { o.spec.predictor = clone(fields) as never; }); }
  /** fields directly under `spec.predictor` (minReplicas, canaryTrafficPercent, batcher, ...) */
  predictorField(k: string, v: unknown): this { return this.set(() => { this.predictor[k] = v; }); }
  minReplicas(n: number): this { return this.predictorField('minReplicas', n); }
  maxReplicas(n: number): this { return this.predictorField('maxReplicas', n); }
  canaryTrafficPercent(n: number): this { return this.predictorField('canaryTrafficPercent', n); }
  annotation(k: string, v: string): this { return this.set((o) => { (o.metadata.annotations ??= {})[k] = v; }); }
  label(k: string, v: string): this { return this.set((o) => { (o.metadata.labels ??= {})[k] = v; }); }
  /** a custom-container component (`transformer`, `explainer`, or a custom predictor) */
  containers(component: 'predictor' | 'transformer' | 'explainer', ...containers: Record<string, unknown>[]): this {
    return this.set((o) => { (o.spec as unknown as Record<string, Component>)[component] = { containers }; });
  }

  /** with KServe's defaults applied (the API server applies them on create) */
  defaulted(): InferenceService {
    const o = this.obj();
    defaultInferenceService(o);
    return o;
  }

  /** as the store holds it: defaulted, with a uid and a generation */
  stored(uid = 'uid-1'): InferenceService & StoredObject {
    const o = this.defaulted() as InferenceService & StoredObject;
    o.metadata.uid = uid;
    o.metadata.generation ??= 1;
    o.metadata.resourceVersion ??= '1';
    return o;
  }
}

/** An InferenceService whose predictor is an sklearn model at `gs://bucket/model`. */
export function makeInferenceService(name: string, namespace = 'default'): InferenceServiceBuilder {
  return new InferenceServiceBuilder({
    apiVersion: 'serving.kserve.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace },
    spec: { predictor: { model: { modelFormat: { name: 'sklearn' }, storageUri: 'gs://bucket/model' } } },
  } as InferenceService);
}

export class ServingRuntimeBuilder<T extends ServingRuntime | ClusterServingRuntime> extends Builder<T> {
  /** `supportedModelFormats`: one entry, autoSelect unless said otherwise */
  format(name: string, fields: { version?: string; autoSelect?: boolean; priority?: number } = {}): this {
    return this.set((o) => { (o.spec.supportedModelFormats ??= []).push({ name, autoSelect: true, ...fields }); });
  }
  protocols(...p: string[]): this { return this.set((o) => { o.spec.protocolVersions = p as ServingRuntimeSpec['protocolVersions']; }); }
  disabled(b = true): this { return this.set((o) => { o.spec.disabled = b; }); }
  image(image: string): this { return this.set((o) => { for (const c of o.spec.containers) c.image = image; }); }
  args(...args: string[]): this { return this.set((o) => { (o.spec.containers[0] as { args?: string[] }).args = args; }); }
  created(at: string): this { return this.set((o) => { o.metadata.creationTimestamp = at; }); }
  annotation(k: string, v: string): this { return this.set((o) => { (o.metadata.annotations ??= {})[k] = v; }); }
  /** any other spec field */
  spec(fields: Partial<ServingRuntimeSpec>): this { return this.set((o) => { Object.assign(o.spec, fields); }); }
}

const runtimeContainers = (): ServingRuntimeSpec['containers'] => [{ name: 'kserve-container', image: 'x' }];

/** A namespaced ServingRuntime with one container `kserve-container` and no formats yet. */
export function makeServingRuntime(name: string, namespace = 'default'): ServingRuntimeBuilder<ServingRuntime> {
  return new ServingRuntimeBuilder<ServingRuntime>({
    apiVersion: 'serving.kserve.io/v1alpha1', kind: 'ServingRuntime',
    metadata: { name, namespace, creationTimestamp: '2024-01-01T00:00:00Z' },
    spec: { containers: runtimeContainers() },
  });
}

/** The cluster-wide kind of `makeServingRuntime`. */
export function makeClusterServingRuntime(name: string): ServingRuntimeBuilder<ClusterServingRuntime> {
  return new ServingRuntimeBuilder<ClusterServingRuntime>({
    apiVersion: 'serving.kserve.io/v1alpha1', kind: 'ClusterServingRuntime',
    metadata: { name, creationTimestamp: '2024-01-01T00:00:00Z' },
    spec: { containers: runtimeContainers() },
  });
}

export class RevisionBuilder extends Builder<Revision & StoredObject> {
  private spec(f: (s: RevisionSpec) => void): this { return this.set((o) => f(o.spec)); }
  minReplicas(n: number): this { return this.spec((s) => { s.minReplicas = n; }); }
  maxReplicas(n: number): this { return this.spec((s) => { s.maxReplicas = n; }); }
  scaleMetric(m: RevisionSpec['scaleMetric'], target?: number): this { return this.spec((s) => { s.scaleMetric = m; if (target !== undefined) s.scaleTarget = target; }); }
  containerConcurrency(n: number): this { return this.spec((s) => { s.containerConcurrency = n; }); }
  windowSeconds(n: number): this { return this.spec((s) => { s.windowSeconds = n; }); }
  serverKind(k: RevisionSpec['serverKind']): this { return this.spec((s) => { s.serverKind = k; }); }
  failure(reason: string, message: string): this { return this.spec((s) => { s.failure = { reason, message }; }); }
  ready(b = true): this { return this.set((o) => { (o.status ??= {}).ready = b; }); }

  /** `<namespace>/<name>`, as the data plane and the autoscaler key revisions */
  get key(): string {
    return `${this.o.metadata.namespace}/${this.o.metadata.name}`;
  }
}

/** Revision `number` of an InferenceService's component: Skiff's model server, one replica minimum. */
export function makeRevision(isvc: string, number = 1, component: RevisionSpec['component'] = 'predictor', namespace = 'default'): RevisionBuilder {
  return new RevisionBuilder({
    apiVersion: `${RevisionKind.group}/${RevisionKind.version}`,
    kind: 'Revision',
    metadata: { name: revisionName(isvc, component, number), namespace, uid: `rev-${isvc}-${component}-${number}`, resourceVersion: '1' },
    spec: {
      inferenceService: isvc, component, number, specHash: `h${number}`, serverKind: 'skiff', modelName: isvc, protocol: 'v1', port: 8080,
      containerConcurrency: 0, timeoutSeconds: 300, minReplicas: 1, maxReplicas: 0, scaleMetric: 'concurrency', windowSeconds: 60,
    },
  } as Revision & StoredObject);
}
