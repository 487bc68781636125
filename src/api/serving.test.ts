// KServe's kinds: the structural-schema validator, KServe's defaulting and its validating webhook's
// rules, each rejected object naming its field.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FieldError } from './errors.js';
import { Kinds, defaultRegistry } from './index.js';
import type { KObject } from './meta.js';
import { ClusterServingRuntimeKind, InferenceServiceKind, ServingRuntimeKind, defaultInferenceService, isRecognisedStorageUri } from './serving.js';
import { SchemaSet, kserveSchemas } from './structural-schema.js';
import type { StructuralSchema } from './structural-schema.js';

function isvc(spec: unknown, meta: Record<string, unknown> = {}): KObject {
  return { apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'iris', namespace: 'default', ...meta }, spec };
}

const sklearn = { model: { modelFormat: { name: 'sklearn' }, storageUri: 'gs://kfserving-examples/models/sklearn/1.0/model' } };

/** defaults then validates, as the store client does */
function admit(obj: KObject): FieldError[] {
  InferenceServiceKind.default?.(obj);
  return InferenceServiceKind.validate?.(obj) ?? [];
}

function rejects(obj: KObject, field: string, message?: RegExp): FieldError[] {
  const errs = admit(obj);
  const hit = errs.find((e) => e.field === field);
  assert.ok(hit, `expected an error at ${field}, got ${JSON.stringify(errs)}`);
  if (message) assert.match(hit.message, message);
  return errs;
}

describe('structural schema validator', () => {
  const set = new SchemaSet(
    {
      Thing: {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            required: ['name'],
            properties: {
              name: { type: 'string', maxLength: 5, pattern: '^[a-z]+$' },
              size: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
              mode: { type: 'string', enum: ['a', 'b'] },
              count: { type: 'integer', minimum: 0, maximum: 10 },
              items: { type: 'array', minItems: 1, items: { $ref: '#/$defs/item' } },
              labels: { type: 'object', additionalProperties: { type: 'string' } },
              free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'boolean' } } },
              ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['port', 'protocol'], items: { type: 'object', properties: { port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } } } },
              maybe: { type: 'string', nullable: true },
              withDefault: { type: 'object', properties: { path: { type: 'string', default: '/mnt/models' } } },
            },
          },
        },
      },
    },
    { item: { type: 'object', properties: { values: { type: 'array', items: { type: 'array', items: { type: 'number' } } } } } satisfies StructuralSchema },
  );
  const check = (spec: unknown): FieldError[] => set.validate({ spec }, 'Thing');

  it('accepts a conforming object', () => {
    assert.deepEqual(check({ name: 'abc', size: '100m', mode: 'a', count: 3, items: [{ values: [[1, 2.5]] }], labels: { a: 'b' }, free: { anything: 1, known: true }, maybe: null }), []);
  });

  it('leaves fields the schema does not declare to field validation, checking those it does', () => {
    assert.deepEqual(check({ name: 'abc', alibi: {}, items: [{ values: [], extra: 1 }] }), []);
    assert.equal(check({ name: 'abc', alibi: {}, items: [{ values: 'x', extra: 1 }] })[0]?.field, 'spec.items[0].values');
  });

  it('keeps unknown fields under x-kubernetes-preserve-unknown-fields but checks known ones', () => {
    assert.deepEqual(check({ name: 'a', free: { x: { y: 1 } } }), []);
    assert.equal(check({ name: 'a', free: { known: 'yes' } })[0]?.field, 'spec.free.known');
  });

  it('int-or-string takes integers and strings, not floats', () => {
    assert.deepEqual(check({ name: 'a', size: 2 }), []);
    assert.deepEqual(check({ name: 'a', size: '0.1' }), []);
    const [err] = check({ name: 'a', size: 0.1 });
    assert.equal(err?.field, 'spec.size');
    assert.equal(err?.message, 'Invalid value: "number": spec.size in body must be of type integer,string: "number"');
  });

  it('checks enum, required, types, bounds, lengths and patterns', () => {
    const fields = (spec: unknown): string[] => check(spec).map((e) => `${e.field} ${e.type}`);
    assert.deepEqual(fields({}), ['spec.name FieldValueRequired']);
    assert.deepEqual(fields({ name: 'a', mode: 'c' }), ['spec.mode FieldValueNotSupported']);
    assert.deepEqual(fields({ name: 'a', count: -1 }), ['spec.count FieldValueInvalid']);
    assert.deepEqual(fields({ name: 'a', count: 11 }), ['spec.count FieldValueInvalid']);
    assert.deepEqual(fields({ name: 'a', count: 1.5 }), ['spec.count FieldValueTypeInvalid']);
    assert.deepEqual(fields({ name: 'abcdef' }), ['spec.name FieldValueTooLong']);
    assert.deepEqual(fields({ name: 'AB' }), ['spec.name FieldValueInvalid']);
    assert.deepEqual(fields({ name: 'a', items: [] }), ['spec.items FieldValueInvalid']);
    assert.deepEqual(fields({ name: 'a', labels: { a: 1 } }), ['spec.labels.a FieldValueTypeInvalid']);
    assert.deepEqual(fields({ name: 'a', items: [{ values: [[1, 'x']] }] }), ['spec.items[0].values[0][1] FieldValueTypeInvalid']);
    assert.deepEqual(fields({ name: 'a', mode: 1 }), ['spec.mode FieldValueTypeInvalid']);
  });

  it('rejects duplicate keys of a map-typed list, defaulted key fields included', () => {
    const errs = check({ name: 'a', ports: [{ port: 80 }, { port: 80, protocol: 'TCP' }] });
    assert.deepEqual(errs.map((e) => `${e.field} ${e.type}`), ['spec.ports[1] FieldValueDuplicate']);
    assert.deepEqual(check({ name: 'a', ports: [{ port: 80 }, { port: 80, protocol: 'UDP' }] }), []);
  });

  it('defaults absent fields of present objects and drops non-nullable nulls', () => {
    const obj: any = { spec: { name: 'a', withDefault: {}, ports: [{ port: 1 }], count: null, maybe: null } };
    set.applyDefaults(obj, 'Thing');
    assert.deepEqual(obj.spec, { name: 'a', withDefault: { path: '/mnt/models' }, ports: [{ port: 1, protocol: 'TCP' }], maybe: null });
  });

  it('loads the generated KServe schemas with their $defs', () => {
    const s = kserveSchemas();
    assert.deepEqual(Object.keys(s.roots).sort(), ['ClusterServingRuntime', 'InferenceService', 'ServingRuntime']);
    assert.ok(Object.keys(s.defs).length > 50);
    const errs = s.validate({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: {}, spec: { predictor: { containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 'http' }] }] } } }, 'InferenceService');
    assert.deepEqual(errs.map((e) => e.field), ['spec.predictor.containers[0].ports[0].containerPort']);
  });
});

describe('InferenceService kinds', () => {
  it('registers the three kinds', () => {
    const reg = defaultRegistry();
    assert.equal(reg.forObject('serving.kserve.io/v1beta1', 'InferenceService'), Kinds.InferenceService);
    assert.equal(reg.forObject('serving.kserve.io/v1alpha1', 'ServingRuntime'), Kinds.ServingRuntime);
    assert.equal(reg.forObject('serving.kserve.io/v1alpha1', 'ClusterServingRuntime'), Kinds.ClusterServingRuntime);
    assert.equal(reg.forObject('serving.kserve.io/v1alpha2', 'InferenceService'), undefined);
    assert.deepEqual(Kinds.InferenceService.shortNames, ['isvc']);
    assert.equal(Kinds.InferenceService.plural, 'inferenceservices');
    assert.equal(Kinds.ClusterServingRuntime.namespaced, false);
    assert.ok(Kinds.ServingRuntime.namespaced && Kinds.ServingRuntime.hasStatus && Kinds.InferenceService.hasStatus);
  });

  it('accepts a modern model predictor', () => {
    assert.deepEqual(admit(isvc({ predictor: structuredClone(sklearn) })), []);
  });
});

describe('InferenceService defaulting', () => {
  it('rewrites a legacy framework key into model, keeping its fields', () => {
    const obj = isvc({ predictor: { minReplicas: 0, sklearn: { storageUri: 'gs://b/m', runtimeVersion: '1.2', resources: { limits: { cpu: '1' } }, env: [{ name: 'A', value: 'b' }] } } });
    assert.deepEqual(admit(obj), []);
    assert.deepEqual(obj.spec.predictor, {
      minReplicas: 0,
      model: { modelFormat: { name: 'sklearn' }, storageUri: 'gs://b/m', runtimeVersion: '1.2', resources: { limits: { cpu: '1' } }, env: [{ name: 'A', value: 'b' }] },
    });
  });

  for (const key of ['triton', 'onnx', 'huggingface']) {
    it(`forces protocol v2 for legacy ${key} when unset`, () => {
      const obj = isvc({ predictor: { [key]: { storageUri: 'gs://b/m' } } });
      defaultInferenceService(obj);
      assert.equal(obj.spec.predictor.model.protocolVersion, 'v2');
      assert.equal(obj.spec.predictor.model.modelFormat.name, key);
      const explicit = isvc({ predictor: { [key]: { storageUri: 'gs://b/m', protocolVersion: 'grpc-v2' } } });
      defaultInferenceService(explicit);
      assert.equal(explicit.spec.predictor.model.protocolVersion, 'grpc-v2');
    });
  }

  it('leaves the protocol of other legacy keys unset, and minReplicas alone', () => {
    for (const key of ['sklearn', 'xgboost', 'tensorflow', 'pytorch', 'pmml', 'lightgbm', 'paddle']) {
      const obj = isvc({ predictor: { [key]: { storageUri: 'gs://b/m' } } });
      defaultInferenceService(obj);
      assert.equal(obj.spec.predictor.model.modelFormat.name, key);
      assert.equal(obj.spec.predictor.model.protocolVersion, undefined);
      assert.equal(obj.spec.predictor.minReplicas, undefined);
    }
  });

  it('gives model format triton protocol v2 as KServe does', () => {
    const obj = isvc({ predictor: { model: { modelFormat: { name: 'triton' }, storageUri: 'gs://b/m' } } });
    defaultInferenceService(obj);
    assert.equal(obj.spec.predictor.model.protocolVersion, 'v2');
    const onnx = isvc({ predictor: { model: { modelFormat: { name: 'onnx' }, storageUri: 'gs://b/m' } } });
    defaultInferenceService(onnx);
    assert.equal(onnx.spec.predictor.model.protocolVersion, undefined);
  });

  it('fills schema defaults (storageUris mountPath, container port protocol)', () => {
    const obj = isvc({ predictor: { model: { modelFormat: { name: 'sklearn' }, ports: [{ containerPort: 8080 }] }, storageUris: [{ uri: 's3://b/m' }] } });
    assert.deepEqual(admit(obj), []);
    assert.equal(obj.spec.predictor.storageUris[0].mountPath, '/mnt/models');
    assert.equal(obj.spec.predictor.model.ports[0].protocol, 'TCP');
  });

  it('is idempotent', () => {
    const obj = isvc({ predictor: { onnx: { storageUri: 'gs://b/m' } }, transformer: { containers: [{ name: 't', image: 'x' }] } });
    defaultInferenceService(obj);
    const once = structuredClone(obj);
    defaultInferenceService(obj);
    assert.deepEqual(obj, once);
  });

  it('a legacy key replaces a model already there (re-applying a legacy manifest); two legacy keys are reported', () => {
    const obj = isvc({ predictor: { sklearn: { storageUri: 'gs://b/m2' }, model: { modelFormat: { name: 'sklearn' }, storageUri: 'gs://b/m1' } } });
    assert.deepEqual(admit(obj), []);
    assert.deepEqual(obj.spec.predictor.model, { modelFormat: { name: 'sklearn' }, storageUri: 'gs://b/m2' });
    assert.equal(obj.spec.predictor.sklearn, undefined);
    const two = isvc({ predictor: { sklearn: { storageUri: 'gs://b/m' }, xgboost: { storageUri: 'gs://b/m' } } });
    rejects(two, 'spec.predictor', /exactly one of \[sklearn, xgboost, tensorflow, pytorch, triton, onnx, huggingface, pmml, lightgbm, paddle, model, containers\] must be specified in PredictorSpec/);
  });
});

describe('InferenceService validation', () => {
  it('checks the name format', () => {
    for (const bad of ['1abc', 'a.b', 'Abc', 'abc-']) rejects(isvc({ predictor: structuredClone(sklearn) }, { name: bad }), 'metadata.name', /regex used for validation/);
    rejects(isvc({ predictor: structuredClone(sklearn) }, { name: `a${'b'.repeat(63)}` }), 'metadata.name', /63/);
    assert.deepEqual(admit(isvc({ predictor: structuredClone(sklearn) }, { name: 'a-1' })), []);
  });

  it('needs exactly one predictor implementation; containers alone are a custom predictor', () => {
    rejects(isvc({ predictor: { minReplicas: 1 } }), 'spec.predictor', /exactly one of/);
    rejects(isvc({ predictor: { sklearn: { storageUri: 'gs://a/b' }, xgboost: { storageUri: 'gs://a/b' } } }), 'spec.predictor', /exactly one of/);
    assert.deepEqual(admit(isvc({ predictor: { containers: [{ name: 'kserve-container', image: 'me/server' }] } })), []);
    // model with containers: the runtime container overridden, or a collocated transformer
    assert.deepEqual(admit(isvc({ predictor: { ...structuredClone(sklearn), containers: [{ name: 'transformer-container', image: 't' }] } })), []);
    rejects(isvc({}), 'spec.predictor');
  });

  it('checks replica bounds', () => {
    rejects(isvc({ predictor: { ...structuredClone(sklearn), minReplicas: -1 } }), 'spec.predictor.minReplicas', /cannot be less than 0/);
    rejects(isvc({ predictor: { ...structuredClone(sklearn), maxReplicas: -1 } }), 'spec.predictor.maxReplicas', /cannot be less than 0/);
    rejects(isvc({ predictor: { ...structuredClone(sklearn), minReplicas: 3, maxReplicas: 2 } }), 'spec.predictor.minReplicas', /greater than MaxReplicas/);
    assert.deepEqual(admit(isvc({ predictor: { ...structuredClone(sklearn), minReplicas: 3, maxReplicas: 0 } })), []);
    assert.deepEqual(admit(isvc({ predictor: { ...structuredClone(sklearn), minReplicas: 0, maxReplicas: 1 } })), []);
    rejects(isvc({ predictor: structuredClone(sklearn), transformer: { containers: [{ name: 't', image: 't' }], minReplicas: 2, maxReplicas: 1 } }), 'spec.transformer.minReplicas');
  });

  it('checks containerConcurrency, canaryTrafficPercent and scaleMetric', () => {
    rejects(isvc({ predictor: { ...structuredClone(sklearn), containerConcurrency: -1 } }), 'spec.predictor.containerConcurrency', /less than 0/);
    rejects(isvc({ predictor: { ...structuredClone(sklearn), canaryTrafficPercent: 101 } }), 'spec.predictor.canaryTrafficPercent', /between 0 and 100/);
    rejects(isvc({ predictor: { ...structuredClone(sklearn), canaryTrafficPercent: -1 } }), 'spec.predictor.canaryTrafficPercent');
    rejects(isvc({ predictor: { ...structuredClone(sklearn), scaleMetric: 'qps' } }), 'spec.predictor.scaleMetric', /supported values: "cpu", "memory", "concurrency", "rps"/);
    assert.deepEqual(admit(isvc({ predictor: { ...structuredClone(sklearn), canaryTrafficPercent: 10, containerConcurrency: 0, scaleMetric: 'rps' } })), []);
  });

  it('checks the autoscaler class annotation', () => {
    rejects(isvc({ predictor: structuredClone(sklearn) }, { annotations: { 'serving.kserve.io/autoscalerClass': 'knative' } }), 'metadata.annotations.serving.kserve.io/autoscalerClass', /not a supported autoscaler class/);
    for (const cls of ['hpa', 'external', 'keda', 'none', 'kpa']) assert.deepEqual(admit(isvc({ predictor: structuredClone(sklearn) }, { annotations: { 'serving.kserve.io/autoscalerClass': cls } })), []);
  });

  it('recognises storage URI schemes', () => {
    for (const uri of ['gs://b/m', 's3://b/m', 'pvc://claim/path', 'pvc://${PVC_NAME}/export', 'http://h/m.joblib', 'https://acct.blob.core.windows.net/c/m', 'hf://org/model', 'file:///models/m', '/models/m', 'oci://img', 'oci+fetch://img', 'oci+native://img', 'modelscope://m', 'hdfs://h/m', 'webhdfs://h/m', 'model-registry://iris/v1']) {
      assert.ok(isRecognisedStorageUri(uri), uri);
      assert.deepEqual(admit(isvc({ predictor: { model: { modelFormat: { name: 'sklearn' }, storageUri: uri } } })), [], uri);
    }
    rejects(isvc({ predictor: { model: { modelFormat: { name: 'sklearn' }, storageUri: 'ftp://h/m' } } }), 'spec.predictor.model.storageUri', /Cannot recognize storage type for ftp:\/\/h\/m/);
    rejects(isvc({ predictor: { sklearn: { storageUri: 'gcs://b/m' } } }), 'spec.predictor.model.storageUri', /Cannot recognize storage type/);
    rejects(isvc({ predictor: { containers: [{ name: 'c', image: 'x' }], storageUris: [{ uri: 'bogus://x' }] } }), 'spec.predictor.storageUris[0].uri', /Cannot recognize storage type/);
  });

  it('checks storageUris mount paths and their exclusivity with storageUri', () => {
    const errs = admit(isvc({ predictor: { containers: [{ name: 'c', image: 'x' }], storageUris: [{ uri: 's3://b/m', mountPath: 'relative' }] } }));
    assert.ok(errs.some((e) => e.field === 'spec.predictor.storageUris[0].mountPath'), JSON.stringify(errs));
    rejects(isvc({ predictor: { ...structuredClone(sklearn), storageUris: [{ uri: 's3://b/m' }] } }), 'spec.predictor.storageUris', /both StorageURI and StorageURIs/);
    assert.deepEqual(admit(isvc({ predictor: { containers: [{ name: 'c', image: 'x' }], storageUris: [{ uri: 's3://b/m', mountPath: '/mnt/a' }, { uri: 'hf://o/m', mountPath: '/mnt/b' }] } })), []);
  });

  it('allows name only on canary predictors', () => {
    // the CRD's canary predictors require the model's (container) name as well
    const canaryModel = (): Record<string, unknown> => ({ model: { ...structuredClone(sklearn.model), name: 'kserve-container' } });
    const canary = (name: string | undefined, trafficPercent: number): Record<string, unknown> => ({ trafficPercent, predictor: { ...canaryModel(), ...(name ? { name } : {}) } });
    rejects(isvc({ predictor: { ...structuredClone(sklearn), name: 'stable' } }), 'spec.predictor.name', /not allowed in standard predictor/);
    assert.deepEqual(admit(isvc({ predictor: structuredClone(sklearn), canary: [canary('v2', 20), canary('dark', 0)] })), []);
    rejects(isvc({ predictor: structuredClone(sklearn), canary: [canary('v2', 20), { trafficPercent: 5, predictor: { model: structuredClone(sklearn.model) } }] }), 'spec.canary[1].predictor.model.name');
    rejects(isvc({ predictor: structuredClone(sklearn), canary: [canary(undefined, 20)] }), 'spec.canary[0].predictor.name', /must be named/);
    rejects(isvc({ predictor: structuredClone(sklearn), canary: [canary('a', 30), canary('a', 30)] }), 'spec.canary[1].predictor.name', /Duplicate/);
    rejects(isvc({ predictor: structuredClone(sklearn), canary: [canary('a', 60), canary('b', 60)] }), 'spec.canary', /at most 100/);
    rejects(isvc({ predictor: structuredClone(sklearn), canary: [canary('a', 101)] }), 'spec.canary[0].trafficPercent');
  });

  it('needs containers in a transformer and art or containers in an explainer', () => {
    rejects(isvc({ predictor: structuredClone(sklearn), transformer: { minReplicas: 1 } }), 'spec.transformer.containers', /TransformerSpec/);
    rejects(isvc({ predictor: structuredClone(sklearn), explainer: { minReplicas: 1 } }), 'spec.explainer', /ExplainerSpec/);
    assert.deepEqual(admit(isvc({ predictor: structuredClone(sklearn), explainer: { art: { type: 'SquareAttack' } } })), []);
  });

  it('rejects fields the CRD does not have, and float quantities', () => {
    rejects(isvc({ predictor: structuredClone(sklearn), explainer: { alibi: { type: 'AnchorTabular' } } }), 'spec.explainer.alibi', /unknown field "alibi"/);
    rejects(isvc({ predictor: structuredClone(sklearn), transformer: { custom: { container: { image: 'x' } } } }), 'spec.transformer.custom', /unknown field/);
    rejects(isvc({ predictor: { model: { modelFormat: { name: 'sklearn' }, resources: { requests: { cpu: 0.1 } } } } }), 'spec.predictor.model.resources.requests.cpu', /must be of type integer,string: "number"/);
    assert.deepEqual(admit(isvc({ predictor: { model: { modelFormat: { name: 'sklearn' }, resources: { requests: { cpu: '100m', memory: 1 } } } } })), []);
  });

  it('an update may not switch the deployment mode the controller deployed', () => {
    const old = isvc({ predictor: structuredClone(sklearn) }, { annotations: { 'serving.kserve.io/deploymentMode': 'Serverless' } });
    old.status = { deploymentMode: 'Serverless' };
    const change = isvc({ predictor: structuredClone(sklearn) }, { annotations: { 'serving.kserve.io/deploymentMode': 'Standard' } });
    InferenceServiceKind.default?.(change);
    const errs = InferenceServiceKind.validate?.(change, old as any) ?? [];
    assert.deepEqual(errs.map((e) => e.field), ['metadata.annotations.serving.kserve.io/deploymentMode']);
    const renamed = isvc({ predictor: structuredClone(sklearn) }, { annotations: { 'serving.kserve.io/deploymentMode': 'Knative' } });
    assert.deepEqual(InferenceServiceKind.validate?.(renamed, old as any), []);
  });

  it('ignores status (written through the status endpoint)', () => {
    const obj = isvc({ predictor: structuredClone(sklearn) });
    obj.status = { whatever: true, url: 'http://x' };
    assert.deepEqual(admit(obj), []);
    assert.deepEqual(obj.status, { whatever: true, url: 'http://x' });
  });
});

describe('ServingRuntime validation', () => {
  const runtime = (kind: string, spec: unknown): KObject => ({ apiVersion: 'serving.kserve.io/v1alpha1', kind, metadata: { name: 'rt', ...(kind === 'ServingRuntime' ? { namespace: 'default' } : {}) }, spec });
  const good = { supportedModelFormats: [{ name: 'sklearn', version: '1', autoSelect: true, priority: 1 }], protocolVersions: ['v1', 'v2'], containers: [{ name: 'kserve-container', image: 'x', args: ['--model_name={{.Name}}'] }] };

  for (const def of [ServingRuntimeKind, ClusterServingRuntimeKind]) {
    it(`${def.kind}: accepts a runtime and rejects bad ones by field`, () => {
      const ok = runtime(def.kind, structuredClone(good));
      def.default?.(ok);
      assert.deepEqual(def.validate?.(ok), []);
      const fields = (spec: unknown): string[] => {
        const o = runtime(def.kind, spec);
        def.default?.(o);
        return (def.validate?.(o) ?? []).map((e) => e.field);
      };
      assert.deepEqual(fields({ ...structuredClone(good), containers: undefined }), ['spec.containers']);
      assert.deepEqual(fields({ ...structuredClone(good), supportedModelFormats: [{ name: 'sklearn', priority: 0 }] }), ['spec.supportedModelFormats[0].priority']);
      assert.deepEqual(fields({ ...structuredClone(good), protocolVersions: ['v3'] }), ['spec.protocolVersions[0]']);
      assert.deepEqual(fields({ ...structuredClone(good), supportedModelFormats: [{ name: 'sklearn', version: '1' }, { name: 'sklearn', version: '1' }] }), ['spec.supportedModelFormats[1]']);
      assert.deepEqual(fields({ ...structuredClone(good), bogus: 1 }), ['spec.bogus']);
    });
  }
});
