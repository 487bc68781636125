import { describe, expect, it } from 'vitest';
import type { ServingRuntime } from '../../api/types';
import { formatsText, stateOf } from './model';

const rt = (spec: Partial<ServingRuntime['spec']>, annotations?: Record<string, string>): ServingRuntime => ({ apiVersion: 'serving.kserve.io/v1alpha1', kind: 'ServingRuntime', metadata: { name: 'r', annotations }, spec: { containers: [], ...spec } }) as ServingRuntime;

describe('runtime summary', () => {
  it('lists formats with their versions', () => {
    expect(formatsText(rt({ supportedModelFormats: [{ name: 'sklearn', version: '1' }, { name: 'onnx' }] }))).toBe('sklearn 1, onnx');
    expect(formatsText(rt({}))).toBe('');
  });

  it('says whether Skiff can run it', () => {
    expect(stateOf(rt({}))).toBe('Available');
    expect(stateOf(rt({ disabled: true }, { 'serving.skiff.dev/unavailable': 'x' }))).toBe('Disabled');
    expect(stateOf(rt({}, { 'serving.skiff.dev/unavailable': 'vLLM is not shipped' }))).toBe('Unavailable');
  });
});
