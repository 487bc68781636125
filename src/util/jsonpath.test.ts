import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonPath, JsonPathError } from './jsonpath.js';

const isvc = {
  metadata: { name: 'iris', labels: { 'app.kubernetes.io/name': 'iris', tier: 'web' } },
  spec: { containers: [{ name: 'kserve-container', image: 'x' }, { name: 'agent', image: 'y' }] },
  status: {
    url: 'http://iris.default.example.com',
    conditions: [
      { type: 'PredictorReady', status: 'True' },
      { type: 'Ready', status: 'False' },
    ],
    components: {
      predictor: {
        traffic: [
          { tag: 'prev', percent: 10, revisionName: 'iris-predictor-00001' },
          { latestRevision: true, percent: 90, revisionName: 'iris-predictor-00002' },
        ],
      },
    },
  },
};

/** the values one path finds, missing keys allowed, as a CRD column reads them */
const find = (path: string, data: unknown = isvc): unknown[] => JsonPath.parsePath(path).find(data, true)[0] ?? [];

describe('JSONPath (kubectl)', () => {
  it('reads fields, indexes, negative slices and wildcards', () => {
    assert.deepEqual(find('.status.url'), ['http://iris.default.example.com']);
    assert.deepEqual(find('.status.conditions[-1:].type'), ['Ready']);
    assert.deepEqual(find('.status.conditions[0].type'), ['PredictorReady']);
    assert.deepEqual(find('.status.conditions[-1].status'), ['False']);
    assert.deepEqual(find('.spec.containers[*].name'), ['kserve-container', 'agent']);
    assert.deepEqual(find('.spec.containers[0:2:1].image'), ['x', 'y']);
    assert.deepEqual(find('.spec.containers[1,0].name'), ['agent', 'kserve-container']);
    assert.deepEqual(find('.metadata.labels.*').sort(), ['iris', 'web']);
  });

  it('filters by equality with either quote, by boolean, by number and by existence', () => {
    assert.deepEqual(find(".status.conditions[?(@.type=='Ready')].status"), ['False']);
    assert.deepEqual(find('.status.conditions[?(@.type=="PredictorReady")].status'), ['True']);
    assert.deepEqual(find('.status.components.predictor.traffic[?(@.latestRevision==true)].percent'), [90]);
    assert.deepEqual(find(".status.components.predictor.traffic[?(@.tag=='prev')].revisionName"), ['iris-predictor-00001']);
    assert.deepEqual(find('.status.components.predictor.traffic[?(@.percent > 50)].revisionName'), ['iris-predictor-00002']);
    assert.deepEqual(find('.status.components.predictor.traffic[?(@.tag)].percent'), [10]);
    assert.deepEqual(find('.status.components.predictor.traffic[?(@.percent!=10)].percent'), [90]);
  });

  it('escapes dots in keys with a backslash; a bracketed key with dots reads nested fields, as kubectl does', () => {
    assert.deepEqual(find('.metadata.labels.app\\.kubernetes\\.io/name'), ['iris']);
    assert.deepEqual(find(".metadata['labels'].tier"), ['web']);
    assert.deepEqual(find(".metadata.labels['app.kubernetes.io/name']"), []);
  });

  it('finds nothing for a missing key when missing keys are allowed, and fails otherwise', () => {
    assert.deepEqual(find('.status.nothing.here'), []);
    assert.throws(() => JsonPath.parsePath('.status.nothing').find(isvc), /nothing is not found/);
  });

  it('fails where kubectl fails: an index out of range, a slice of a map, comparing a string with a number', () => {
    const p = (path: string, data: unknown = isvc): (() => unknown) => () => JsonPath.parsePath(path).find(data, true);
    assert.throws(p('.status.conditions[-1:].type', { status: { conditions: [] } }), /array index out of bounds/);
    assert.throws(p('.status.conditions[5]'), /array index out of bounds: index 5, length 2/);
    assert.throws(p('.metadata[0]'), JsonPathError);
    assert.throws(p('.status.conditions[?(@.type==3)]'), /incompatible types/);
  });

  it('recursive descent finds every match', () => {
    assert.deepEqual(find('..revisionName'), ['iris-predictor-00001', 'iris-predictor-00002']);
  });

  it('parses templates with text around actions, and refuses malformed ones', () => {
    const parts = JsonPath.parse('name={.metadata.name} url={.status.url}').find(isvc);
    assert.deepEqual(parts, [['name='], ['iris'], [' url='], ['http://iris.default.example.com']]);
    assert.throws(() => JsonPath.parse('{.status.url'), /unclosed action/);
    assert.throws(() => JsonPath.parse('{.a[x]}'), /invalid array index x/);
    assert.throws(() => JsonPath.parse('{.a[?(@.b=="c")}'), /unclosed array expect ]/);
    assert.throws(() => JsonPath.parse('{.a....b}'), /invalid multiple recursive descent/);
  });
});
