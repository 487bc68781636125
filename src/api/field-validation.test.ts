import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from './errors.js';
import { duplicateJsonFields, duplicateYamlKeys, scanJsonFields, fieldValidationOutcome, parseFieldValidation, pruneUnknownFields } from './field-validation.js';
import { schemaCatalog } from './openapi-schemas.js';

const catalog = schemaCatalog();

describe('field validation', () => {
  it('finds and drops the unknown fields of a built-in kind in document order, keeping maps and RawExtension-like objects', () => {
    const pod: Record<string, any> = {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: 'p', labels: { anything: 'goes' }, bogus: 1, managedFields: [{ fieldsV1: { 'f:spec': {} } }] },
      spec: { foo: 'bar', containers: [{ name: 'main', image: 'python', bogus: { deep: 1 }, resources: { limits: { cpu: '1' } } }], nodeSelector: { a: 'b' } },
      status: { phase: 'Pending', nope: true },
    };
    const found = pruneUnknownFields(catalog, '', 'v1', 'Pod', pod);
    assert.deepEqual(found, ['metadata.bogus', 'spec.foo', 'spec.containers[0].bogus', 'status.nope']);
    assert.equal(pod.spec.foo, undefined);
    assert.equal(pod.spec.containers[0].bogus, undefined);
    assert.deepEqual(pod.metadata.labels, { anything: 'goes' });
    assert.deepEqual(pod.metadata.managedFields[0].fieldsV1, { 'f:spec': {} });
    assert.deepEqual(pod.spec.nodeSelector, { a: 'b' });
  });

  it('prunes a CRD kind structurally: sorted paths, map values by key, the root metadata against ObjectMeta', () => {
    const job: Record<string, any> = {
      apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name: 'j', extra: 1 },
      spec: {
        zzz: 1,
        pytorchReplicaSpecs: { Worker: { replicas: 2, colour: 'red', template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'pytorch', image: 'x', what: 1 }] } } } },
      },
    };
    const found = pruneUnknownFields(catalog, 'kubeflow.org', 'v1', 'PyTorchJob', job);
    assert.deepEqual(found, ['metadata.extra', 'spec.pytorchReplicaSpecs.Worker.colour', 'spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].what', 'spec.zzz']);
    assert.equal(job.spec.pytorchReplicaSpecs.Worker.replicas, 2);
    assert.deepEqual(job.spec.pytorchReplicaSpecs.Worker.template.metadata.labels, { a: 'b' });
    assert.equal(job.spec.zzz, undefined);
  });

  it('checks KServe kinds from their CRD too', () => {
    const isvc: Record<string, any> = { apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'i' }, spec: { predictor: { model: { modelFormat: { name: 'sklearn' } } }, explainer: { alibi: {} } } };
    assert.deepEqual(pruneUnknownFields(catalog, 'serving.kserve.io', 'v1beta1', 'InferenceService', isvc), ['spec.explainer.alibi']);
  });

  it('keeps every field of a kind without a schema but its metadata', () => {
    const run: Record<string, any> = { apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run', metadata: { name: 'r', nope: 1 }, spec: { anything: { at: 'all' } } };
    assert.deepEqual(pruneUnknownFields(catalog, 'pipelines.kubeflow.org', 'v2beta1', 'Run', run), ['metadata.nope']);
    assert.deepEqual(run.spec, { anything: { at: 'all' } });
  });

  it('finds fields a JSON text repeats, at their path', () => {
    assert.deepEqual(duplicateJsonFields('{"spec":{"a":1,"b":[{"x":1,"x":2}],"a":3},"kind":"K","kind":"K"}'), ['spec.b[0].x', 'spec.a', 'kind']);
    assert.deepEqual(duplicateJsonFields('{"a":"\\"a\\"","b":{}}'), []);
    assert.deepEqual(duplicateJsonFields('a: 1\na: 2\n'), []);
    // a built-in kind's errors in the order of the text, as Go's decoder meets them
    const text = '{"metadata":{"name":"x","bogus":1},"data":{},"data":{},"zzz":1}';
    const scan = scanJsonFields(text);
    assert.ok(scan);
    assert.deepEqual(fieldValidationOutcome('Warn', 'ConfigMap', 'v1', { unknown: ['metadata.bogus', 'zzz'], duplicates: ['data'], documentOrder: scan }), ['unknown field "metadata.bogus"', 'duplicate field "data"', 'unknown field "zzz"']);
  });

  it('finds keys a YAML text repeats, with their line, as the YAML decoder words them', () => {
    assert.deepEqual(duplicateYamlKeys('kind: Pod\nspec:\n  a: 1\n  b:\n  - x: 1\n    x: 2\n  a: 3\n'), ['line 6: key "x" already set in map', 'line 7: key "a" already set in map']);
    assert.deepEqual(duplicateYamlKeys('a: 1\nb: 2\n'), []);
    const f = { unknown: ['spec.foo'], yamlDuplicates: ['line 7: key "a" already set in map', 'line 9: key "b" already set in map'] };
    assert.deepEqual(fieldValidationOutcome('Warn', 'Pod', 'v1', f), ['line 7: key "a" already set in map', 'line 9: key "b" already set in map', 'unknown field "spec.foo"']);
    assert.throws(() => fieldValidationOutcome('Strict', 'Pod', 'v1', f), (e: unknown) => e instanceof ApiError
      && e.message === 'Pod in version "v1" cannot be handled as a Pod: strict decoding error: yaml: unmarshal errors:\n  line 7: key "a" already set in map\n  line 9: key "b" already set in map, unknown field "spec.foo"');
  });

  it('answers by the directive, in kube-apiserver words', () => {
    assert.equal(parseFieldValidation(undefined, 'CreateOptions'), 'Warn');
    assert.equal(parseFieldValidation('', 'CreateOptions'), 'Warn');
    assert.throws(() => parseFieldValidation('strict', 'PatchOptions'), (e: unknown) => e instanceof ApiError && e.code === 422 && e.message === 'PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"');
    const f = { unknown: ['spec.foo', 'spec.bar'], duplicates: ['spec.x'] };
    assert.deepEqual(fieldValidationOutcome('Ignore', 'Pod', 'v1', f), []);
    assert.deepEqual(fieldValidationOutcome('Warn', 'Pod', 'v1', f), ['duplicate field "spec.x"', 'unknown field "spec.foo"', 'unknown field "spec.bar"']);
    assert.throws(() => fieldValidationOutcome('Strict', 'Pod', 'v1', f), (e: unknown) => e instanceof ApiError && e.code === 400
      && e.message === 'Pod in version "v1" cannot be handled as a Pod: strict decoding error: duplicate field "spec.x", unknown field "spec.foo", unknown field "spec.bar"');
    assert.throws(() => fieldValidationOutcome('Strict', 'Pod', 'v1', { unknown: ['spec.foo'], patched: { spec: { foo: 1 } } }), (e: unknown) => e instanceof ApiError && e.code === 422
      && e.message === ' "" is invalid: patch: Invalid value: "{\\"spec\\":{\\"foo\\":1}}": strict decoding error: unknown field "spec.foo"' && e.details.causes?.[0]?.field === 'patch');
    assert.deepEqual(fieldValidationOutcome('Strict', 'Pod', 'v1', { unknown: [] }), []);
  });
});
