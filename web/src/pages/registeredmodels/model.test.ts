import { describe, expect, it } from 'vitest';
import { aliasesByVersion, dnsName, inferenceServiceFor, modelRows, moveText, propertyRows, runSourceOf, showValue, uriProblem, type RegistryObject } from './model';

const obj = (name: string, spec: Record<string, unknown>, parent?: string): RegistryObject => ({
  apiVersion: 'modelregistry.skiff.dev/v1alpha1',
  kind: 'X',
  metadata: { name, namespace: 'default', ...(parent ? { labels: { 'modelregistry.skiff.dev/parent-id': parent } } : {}) },
  spec: { createTimeSinceEpoch: '1000', lastUpdateTimeSinceEpoch: '1000', ...spec },
});

describe('modelRows', () => {
  const models = [obj('1', { name: 'iris', owner: 'ada', state: 'LIVE', lastUpdateTimeSinceEpoch: '5000' }), obj('2', { name: 'old', state: 'ARCHIVED' })];
  const versions = [obj('3', { name: 'v1', createTimeSinceEpoch: '2000' }, '1'), obj('4', { name: 'v2', createTimeSinceEpoch: '3000' }, '1')];

  it('counts versions, names the newest, and leaves archived models out unless asked', () => {
    const rows = modelRows(models, versions, false);
    expect(rows.map((r) => [r.name, r.owner, r.state, r.newest?.spec.name, r.versions, r.updated])).toEqual([['iris', 'ada', 'LIVE', 'v2', 2, new Date(5000).toISOString()]]);
    expect(modelRows(models, versions, true).map((r) => [r.name, r.state, r.versions])).toEqual([
      ['iris', 'LIVE', 2],
      ['old', 'ARCHIVED', 0],
    ]);
  });
});

describe('custom properties', () => {
  it('shows the value of each tagged MetadataValue, not the tag', () => {
    expect(showValue({ metadataType: 'MetadataStringValue', string_value: 'vision' })).toBe('vision');
    expect(showValue({ metadataType: 'MetadataIntValue', int_value: '10' })).toBe('10');
    expect(showValue({ metadataType: 'MetadataDoubleValue', double_value: 0.97 })).toBe('0.97');
    expect(showValue({ metadataType: 'MetadataBoolValue', bool_value: false })).toBe('false');
    expect(showValue({ metadataType: 'MetadataStructValue', struct_value: btoa('{"a":1}') })).toBe('{"a":1}');
    expect(propertyRows(obj('1', { customProperties: { b: { metadataType: 'MetadataIntValue', int_value: '2' }, a: { metadataType: 'MetadataStringValue', string_value: '' } } }))).toEqual([
      { key: 'a', value: '' },
      { key: 'b', value: '2' },
    ]);
  });
});

describe('deploying', () => {
  it('proposes a DNS-safe InferenceService name', () => {
    expect(dnsName('Iris Classifier_v2')).toBe('iris-classifier-v2');
    expect(dnsName('42-answers')).toBe('answers');
    expect(dnsName('___')).toBe('model');
    expect(dnsName('a'.repeat(80)).length).toBe(45);
  });

  it('serves model-registry://<model>/<version> in the model artifact\'s format', () => {
    const art = obj('5', { modelFormatName: 'sklearn', modelFormatVersion: '1' });
    expect(inferenceServiceFor('iris', 'iris', 'v1', art)).toEqual({
      apiVersion: 'serving.kserve.io/v1beta1',
      kind: 'InferenceService',
      metadata: { name: 'iris' },
      spec: { predictor: { model: { modelFormat: { name: 'sklearn', version: '1' }, storageUri: 'model-registry://iris/v1' } } },
    });
    // no format: the API is left to say it is missing
    expect(inferenceServiceFor('iris', 'iris', 'v1', undefined)).toMatchObject({ spec: { predictor: { model: { storageUri: 'model-registry://iris/v1' } } } });
    // a format named in the form, when the artifact has none
    expect(inferenceServiceFor('iris', 'iris', 'v1', obj('9', {}), 'xgboost')).toMatchObject({ spec: { predictor: { model: { modelFormat: { name: 'xgboost' } } } } });
    expect(uriProblem('team/iris', 'v1')).toMatch(/cannot name model "team\/iris"/);
    expect(uriProblem('iris', 'v1')).toBeUndefined();
  });
});

describe('lineage', () => {
  it('reads a kfp model source as a run in a namespace', () => {
    const a = obj('6', { modelSourceKind: 'kfp', modelSourceClass: 'pipelinerun', modelSourceGroup: 'team-a', modelSourceId: 'r-1', modelSourceName: 'nightly' });
    expect(runSourceOf(a)).toEqual({ namespace: 'team-a', run: 'r-1', runName: 'nightly' });
    expect(runSourceOf(obj('7', { modelSourceKind: 'kfp', modelSourceClass: 'train', modelSourceGroup: 'ns', modelSourceId: 'r-2' }))).toEqual({ namespace: 'ns', run: 'r-2', runName: 'r-2', task: 'train' });
    expect(runSourceOf(obj('8', { modelSourceKind: 'mlflow', modelSourceId: 'x' }))).toBeUndefined();
  });
});

describe('aliases', () => {
  it('groups aliases by version and tells a move in words', () => {
    const m = aliasesByVersion([
      { id: '1', name: 'staging', registeredModelId: '1', modelVersionId: '4' },
      { id: '2', name: 'production', registeredModelId: '1', modelVersionId: '4' },
    ]);
    expect(m.get('4')).toEqual(['production', 'staging']);
    const name = (id: string): string => ({ '3': 'v1', '4': 'v2' })[id] ?? id;
    expect(moveText({ id: '9', name: 'p', registeredModelId: '1', fromModelVersionId: '3', toModelVersionId: '4' }, name)).toBe('moved from v1 to v2');
    expect(moveText({ id: '9', name: 'p', registeredModelId: '1', toModelVersionId: '3' }, name)).toBe('set on v1');
    expect(moveText({ id: '9', name: 'p', registeredModelId: '1', fromModelVersionId: '4' }, name)).toBe('removed from v2');
  });
});
