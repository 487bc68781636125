import { describe, expect, it } from 'vitest';
import type { PipelineSpec } from '../../api/types';
import { collect, fieldsOf, parseField, placeServerError } from './runform';

const spec = {
  root: {
    inputDefinitions: {
      parameters: {
        text: { parameterType: 'STRING' },
        epochs: { parameterType: 'NUMBER_INTEGER', defaultValue: 3 },
        lr: { parameterType: 'NUMBER_DOUBLE', defaultValue: 0.1 },
        shuffle: { parameterType: 'BOOLEAN', defaultValue: true },
        items: { parameterType: 'LIST', defaultValue: [1, 2] },
        cfg: { parameterType: 'STRUCT', isOptional: true },
      },
    },
  },
} as unknown as PipelineSpec;

describe('the run form', () => {
  it('has a field per input, defaults as text, optional ones marked', () => {
    const f = fieldsOf(spec);
    expect(f.map((x) => [x.name, x.initial, x.optional])).toEqual([
      ['text', '', false],
      ['epochs', '3', true],
      ['lr', '0.1', true],
      ['shuffle', 'true', true],
      ['items', '[1,2]', true],
      ['cfg', '', true],
    ]);
  });
  it('checks each type as the kfp SDK types it', () => {
    const [text, epochs, lr, shuffle, items, cfg] = fieldsOf(spec);
    expect(parseField(text!, '')).toEqual({ error: 'required' });
    expect(parseField(epochs!, '2.5')).toEqual({ error: 'must be a whole number' });
    expect(parseField(epochs!, '7')).toEqual({ value: 7 });
    expect(parseField(lr!, 'abc')).toEqual({ error: 'must be a number' });
    expect(parseField(shuffle!, 'yes')).toEqual({ error: 'must be true or false' });
    expect(parseField(items!, '{"a":1}')).toEqual({ error: 'must be a JSON list' });
    expect(parseField(cfg!, '')).toEqual({ omit: true });
    expect(parseField(cfg!, '{"a":1}')).toEqual({ value: { a: 1 } });
  });
  it('collects parameters or per-field errors', () => {
    const f = fieldsOf(spec);
    expect(collect(f, { text: 'hi', epochs: 'x' }).errors).toEqual({ epochs: 'must be a whole number' });
    expect(collect(f, { text: 'hi' }).parameters).toEqual({ text: 'hi', epochs: 3, lr: 0.1, shuffle: true, items: [1, 2] });
  });
  it('puts each field the KFP API names on its parameter, with its own words', () => {
    const f = fieldsOf(spec);
    expect(placeServerError(f, 'Invalid input error: runtime_config.parameters.epochs: Invalid value: "x": expected an integer; runtime_config.parameters.text: Required value')).toEqual({
      fields: { epochs: 'Invalid value: "x": expected an integer', text: 'Required value' },
      general: [],
    });
  });
  it('puts a Kubernetes Status cause on its parameter and keeps the rest general', () => {
    const f = fieldsOf(spec);
    expect(placeServerError(f, 'Run "u" is invalid', [{ field: 'spec.parameters.lr', message: 'Invalid value: "string": expected a number' }, { field: 'metadata.name', message: 'bad' }])).toEqual({
      fields: { lr: 'Invalid value: "string": expected a number' },
      general: ['metadata.name: bad'],
    });
  });
  it('does not pin prose that happens to hold a parameter\'s name on it', () => {
    const f = fieldsOf(spec);
    expect(placeServerError(f, 'experiment_id: the text of experiment "x" was not found')).toEqual({ fields: {}, general: ['experiment_id: the text of experiment "x" was not found'] });
    expect(placeServerError(f, 'nothing to see')).toEqual({ fields: {}, general: ['nothing to see'] });
    expect(placeServerError(f, 'x', [{ field: 'spec.parameters.ghost', message: 'Unsupported value' }])).toEqual({ fields: {}, general: ['spec.parameters.ghost: Unsupported value'] });
  });
});
