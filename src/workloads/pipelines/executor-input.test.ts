import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildExecutorInput,
  checkParameterValue,
  formatFloatF,
  joinUri,
  localPathForUri,
  parameterValueToText,
  taskRootUri,
  type JsonValue,
  type ParameterType,
} from './executor-input.js';

describe('localPathForUri', () => {
  const cases: [string, string][] = [
    ['gs://bucket/a/b', '/gcs/bucket/a/b'],
    ['s3://bucket/k', '/s3/bucket/k'],
    ['minio://mlpipeline/v2/artifacts/p/r/t/1/model', '/minio/mlpipeline/v2/artifacts/p/r/t/1/model'],
    ['oci://reg/img', '/oci/reg_img/models'],
    ['/var/skiff/root/p/r/t/1/out', '/var/skiff/root/p/r/t/1/out'],
    ['file:///var/skiff/x', '/var/skiff/x'],
  ];
  for (const [uri, path] of cases) it(uri, () => assert.equal(localPathForUri(uri), path));
  it('rejects unknown schemes', () => assert.throws(() => localPathForUri('http://x/y'), /http:\/\/x\/y/));
});

describe('uris', () => {
  it('joinUri trims slashes and drops the query string', () => {
    assert.equal(joinUri('minio://mlpipeline/v2/artifacts/?region=x', 'p', 'r/', 't'), 'minio://mlpipeline/v2/artifacts/p/r/t');
    assert.equal(joinUri('file:///srv/root/', 'a'), '/srv/root/a');
  });
  it('taskRootUri', () => {
    assert.equal(
      taskRootUri({ pipelineRoot: '/srv/root', pipelineName: 'my-pipe', runId: 'r1', taskName: 'train', executionId: '7' }),
      '/srv/root/my-pipe/r1/train/7',
    );
  });
});

describe('parameter text (PbValueToText)', () => {
  const cases: [JsonValue, string][] = [
    ['hi', 'hi'], [5, '5'], [5.0, '5'], [3.14, '3.14'], [1e21, '1000000000000000000000'], [1e-7, '0.0000001'],
    [-2.5e-8, '-0.000000025'], [true, 'true'], [false, 'false'], [[1, 'a'], '[1,"a"]'], [{ a: 1 }, '{"a":1}'], [null, ''],
  ];
  for (const [v, s] of cases) it(JSON.stringify(v), () => assert.equal(parameterValueToText(v), s));
  it('formatFloatF -0', () => assert.equal(formatFloatF(-0), '-0'));
});

describe('checkParameterValue', () => {
  const ok: [JsonValue, ParameterType, JsonValue][] = [
    [5, 'STRING', '5'], [true, 'STRING', 'true'], [[1], 'STRING', '[1]'], [3, 'NUMBER_INTEGER', 3], [1.5, 'NUMBER_DOUBLE', 1.5],
    [false, 'BOOLEAN', false], [[], 'LIST', []], [{ a: 1 }, 'STRUCT', { a: 1 }],
  ];
  for (const [v, t, want] of ok) it(`${JSON.stringify(v)} as ${t}`, () => assert.deepEqual(checkParameterValue('x', v, t), want));
  const bad: [JsonValue, ParameterType][] = [[1.5, 'NUMBER_INTEGER'], ['1', 'NUMBER_DOUBLE'], ['true', 'BOOLEAN'], [{}, 'LIST'], [[], 'STRUCT']];
  for (const [v, t] of bad) it(`rejects ${JSON.stringify(v)} as ${t}`, () => assert.throws(() => checkParameterValue('num', v, t), /"num"/));
});

describe('buildExecutorInput', () => {
  it('builds the launcher shape (research notes example)', () => {
    const root = taskRootUri({ pipelineRoot: 'minio://mlpipeline/v2/artifacts', pipelineName: 'my-pipe', runId: 'run-1', taskName: 'train', executionId: 'u1' });
    const ei = buildExecutorInput({
      parameters: {
        num_steps: { value: 5, parameterType: 'NUMBER_INTEGER' },
        text: { value: 'hi', parameterType: 'STRING' },
        cfg: { value: { a: 1 }, parameterType: 'STRUCT' },
        items: { value: [1, 2], parameterType: 'LIST' },
        opt: { value: undefined, parameterType: 'STRING' },
      },
      inputArtifacts: {
        dataset: [{ name: '42', uri: 'minio://mlpipeline/v2/artifacts/my-pipe/run-1/producer/u0/dataset', schemaTitle: 'system.Dataset', schemaVersion: '0.0.1', metadata: { display_name: 'dataset' } }],
      },
      outputArtifacts: { model: { schemaTitle: 'system.Model', schemaVersion: '0.0.1' } },
      outputArtifactUri: root,
      outputParameterFiles: { Output: '/tmp/kfp/outputs/Output' },
      executorOutputFile: localPathForUri(`${root}/output_metadata.json`),
    });
    assert.deepEqual(ei, {
      inputs: {
        parameterValues: { num_steps: 5, text: 'hi', cfg: { a: 1 }, items: [1, 2] },
        artifacts: { dataset: { artifacts: [{ name: '42', type: { schemaTitle: 'system.Dataset', schemaVersion: '0.0.1' }, uri: 'minio://mlpipeline/v2/artifacts/my-pipe/run-1/producer/u0/dataset', metadata: { display_name: 'dataset' } }] } },
      },
      outputs: {
        parameters: { Output: { outputFile: '/tmp/kfp/outputs/Output' } },
        artifacts: { model: { artifacts: [{ name: 'model', type: { schemaTitle: 'system.Model', schemaVersion: '0.0.1' }, uri: 'minio://mlpipeline/v2/artifacts/my-pipe/run-1/train/u1/model', metadata: {} }] } },
        outputFile: '/minio/mlpipeline/v2/artifacts/my-pipe/run-1/train/u1/output_metadata.json',
      },
    });
    assert.equal(JSON.stringify(ei).includes('"num_steps":5,'), true);
  });
  it('accepts a uri function and a local root', () => {
    const ei = buildExecutorInput({
      outputArtifacts: { out_dataset: { schemaTitle: 'system.Dataset' } },
      outputArtifactUri: (n) => `/srv/root/p/r/t/1/${n}`,
      executorOutputFile: '/srv/root/p/r/t/1/executor_output.json',
    });
    assert.equal(ei.outputs.artifacts['out_dataset']?.artifacts[0]?.uri, '/srv/root/p/r/t/1/out_dataset');
  });
  it('requires an output uri when there are output artifacts', () => {
    assert.throws(() => buildExecutorInput({ outputArtifacts: { m: { schemaTitle: 'system.Model' } }, executorOutputFile: '/x' }), /outputArtifactUri/);
  });
  it('rejects ill-typed inputs naming them', () => {
    assert.throws(() => buildExecutorInput({ parameters: { n: { value: 'x', parameterType: 'NUMBER_INTEGER' } }, executorOutputFile: '/x' }), /"n"/);
  });
});
