import { describe, expect, it } from 'vitest';
import type { InferenceService } from '../../api/types';
import { canaryPatch, canaryState, componentsOf, endpoints, exampleRequest, runtimeOf, shortRevision, trafficRows, trafficText } from './model';

const isvc = (spec: unknown, status?: unknown): InferenceService => ({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'digits', namespace: 'team' }, spec, status }) as InferenceService;

const canary = isvc(
  { predictor: { canaryTrafficPercent: 20, sklearn: { storageUri: 'file:///m/2' } } },
  {
    url: 'http://digits.team.example.com',
    clusterServingRuntimeName: 'kserve-sklearnserver',
    components: {
      predictor: {
        latestCreatedRevision: 'digits-predictor-00002',
        latestReadyRevision: 'digits-predictor-00002',
        latestRolledoutRevision: 'digits-predictor-00001',
        traffic: [
          { revisionName: 'digits-predictor-00002', percent: 20, tag: 'latest', latestRevision: true },
          { revisionName: 'digits-predictor-00001', percent: 80, tag: 'prev', latestRevision: false },
        ],
      },
    },
  },
);

describe('components', () => {
  it('reads legacy keys, model formats, runtimes and the protocol', () => {
    const [p] = componentsOf(canary);
    expect(p).toMatchObject({ name: 'predictor', format: 'sklearn', storageUri: 'file:///m/2', protocol: 'v1', canaryTrafficPercent: 20 });
    expect(runtimeOf(canary)).toBe('kserve-sklearnserver');
    const onnx = componentsOf(isvc({ predictor: { onnx: { storageUri: 's3://x' } } }))[0];
    expect(onnx?.protocol).toBe('v2');
    const model = isvc({
      predictor: { model: { modelFormat: { name: 'xgboost', version: '2' }, runtime: 'my-rt', protocolVersion: 'v2', storageUri: 'pvc://m', resources: { limits: { cpu: '1' } } } },
      transformer: { containers: [{ image: 'me/tf:1', resources: { requests: { memory: '1Gi' } } }] },
    });
    const [mp, mt] = componentsOf(model);
    expect(mp).toMatchObject({ format: 'xgboost 2', runtime: 'my-rt', protocol: 'v2', storageUri: 'pvc://m', resources: { limits: { cpu: '1' } } });
    expect(mt).toMatchObject({ name: 'transformer', image: 'me/tf:1', resources: { requests: { memory: '1Gi' } } });
    expect(mt?.format).toBeUndefined();
    expect(runtimeOf(model)).toBe('my-rt');
  });
});

describe('traffic', () => {
  it('says the split in words, largest first, with short revision names', () => {
    expect(shortRevision('digits-predictor-00012')).toBe('r12');
    expect(shortRevision('custom')).toBe('custom');
    expect(trafficText(canary.status?.components?.predictor?.traffic)).toBe('80% r1 · 20% r2');
    expect(trafficText([{ revisionName: 'a-predictor-00003', percent: 100 }, { revisionName: 'a-predictor-00002', percent: 0 }])).toBe('100% r3');
    expect(trafficText(undefined)).toBe('');
  });

  it('lists each revision with its share and its part in the rollout', () => {
    expect(trafficRows(canary.status?.components?.predictor)).toEqual([
      { revision: 'digits-predictor-00002', percent: 20, tag: 'latest', latest: true, roles: ['latest created', 'latest ready'] },
      { revision: 'digits-predictor-00001', percent: 80, tag: 'prev', latest: false, roles: ['rolled out'] },
    ]);
  });

  it('allows promote while a canary runs and roll back to the rolled-out revision', () => {
    expect(canaryState(canary)).toEqual({ percent: 20, canPromote: true, canRollback: true, rollbackTo: 'digits-predictor-00001', latest: 'digits-predictor-00002' });
    const promoted = isvc({ predictor: { sklearn: {} } }, { components: { predictor: { latestReadyRevision: 'd-predictor-00002', latestRolledoutRevision: 'd-predictor-00002', previousRolledoutRevision: 'd-predictor-00001' } } });
    expect(canaryState(promoted)).toMatchObject({ canPromote: false, canRollback: true, rollbackTo: 'd-predictor-00001' });
    const rolledBack = isvc({ predictor: { canaryTrafficPercent: 0, sklearn: {} } }, promoted.status);
    expect(canaryState(rolledBack)).toMatchObject({ percent: 0, canPromote: true, canRollback: false });
    const first = isvc({ predictor: { sklearn: {} } }, { components: { predictor: { latestReadyRevision: 'd-predictor-00001', latestRolledoutRevision: 'd-predictor-00001' } } });
    expect(canaryState(first)).toMatchObject({ canPromote: false, canRollback: false });
    expect(canaryState(first).rollbackTo).toBeUndefined();
  });

  it('builds merge patches and refuses a percent outside 0..100', () => {
    expect(canaryPatch(35)).toEqual({ spec: { predictor: { canaryTrafficPercent: 35 } } });
    expect(canaryPatch(null)).toEqual({ spec: { predictor: { canaryTrafficPercent: null } } });
    expect(() => canaryPatch(101)).toThrow(/0 to 100/);
    expect(() => canaryPatch(2.5)).toThrow(/whole number/);
  });
});

describe('endpoints and example requests', () => {
  it('puts the gateway path first', () => {
    expect(endpoints(canary, 'http://h:1')).toEqual([
      { label: 'Path', url: 'http://h:1/serving/team/digits' },
      { label: 'URL (Host)', url: 'http://digits.team.example.com' },
    ]);
  });

  it('shapes V2 inputs from the metadata, a variable batch dimension as one row', () => {
    const r = exampleRequest('v2', 'digits', { inputs: [{ name: 'input', datatype: 'FP32', shape: [-1, 3] }] });
    expect(r.path).toBe('/v2/models/digits/infer');
    expect(JSON.parse(r.body)).toEqual({ inputs: [{ name: 'input', shape: [1, 3], datatype: 'FP32', data: [0, 0, 0] }] });
  });

  it('shapes V1 instances from the first input\'s row shape', () => {
    const r = exampleRequest('v1', 'digits', { inputs: [{ name: 'input-0', datatype: 'FP64', shape: [-1, 2, 2] }] });
    expect(r.path).toBe('/v1/models/digits:predict');
    expect(JSON.parse(r.body)).toEqual({ instances: [[[0, 0], [0, 0]]] });
    expect(JSON.parse(exampleRequest('v1', 'm').body)).toEqual({ instances: [[0, 0, 0, 0]] });
  });
});
