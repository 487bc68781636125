import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildExecutorInput } from './executor-input.js';
import { effectiveExecutorInput, resolvePlaceholders, type PlaceholderContext } from './placeholders.js';

const ei = buildExecutorInput({
  parameters: {
    input_one: { value: 'one', parameterType: 'STRING' },
    input_two: { value: 'two', parameterType: 'STRING' },
    required_input: { value: 'req', parameterType: 'STRING' },
    optional_input_1: { value: 'o1', parameterType: 'STRING' },
    optional_input_2: { value: undefined, parameterType: 'STRING' },
    null_input: { value: null, parameterType: 'STRING' },
    num: { value: 5, parameterType: 'NUMBER_INTEGER' },
    ratio: { value: 0.5, parameterType: 'NUMBER_DOUBLE' },
    flag: { value: true, parameterType: 'BOOLEAN' },
    items: { value: [1, 'a'], parameterType: 'LIST' },
    cfg: { value: { k: 'v' }, parameterType: 'STRUCT' },
    greeting: { value: "Hello {{$.inputs.parameters['pipelinechannel--name']}} from {{$.pipeline_job_name}}", parameterType: 'STRING' },
    'pipelinechannel--name': { value: 'world', parameterType: 'STRING' },
  },
  inputArtifacts: {
    model: [{ name: 'model', uri: 'gs://b/run/train/1/model', schemaTitle: 'system.Model', metadata: { accuracy: 0.9 } }],
    in_datasets: [
      { name: 'd1', uri: '/srv/root/p/r/double/1/out_dataset', schemaTitle: 'system.Dataset', schemaVersion: '0.0.1' },
      { name: 'd2', uri: '/srv/root/p/r/double/2/out_dataset', schemaTitle: 'system.Dataset', schemaVersion: '0.0.1' },
    ],
  },
  outputArtifacts: { predictions: { schemaTitle: 'system.Dataset' }, out_dataset: { schemaTitle: 'system.Dataset', schemaVersion: '0.0.1' } },
  outputArtifactUri: '/srv/root/p/r/t/9',
  outputParameterFiles: { Output: '/srv/root/p/r/t/9/Output' },
  executorOutputFile: '/srv/root/p/r/t/9/executor_output.json',
});

const ctx: PlaceholderContext = {
  executorInput: ei,
  inputDefinitions: {
    parameters: {
      optional_input_2: { parameterType: 'STRING', isOptional: true },
      with_default: { parameterType: 'NUMBER_INTEGER', isOptional: true, defaultValue: 3 },
      label_column: { parameterType: 'STRING', isOptional: true },
    },
    artifacts: { starting_model: { isOptional: true } },
  },
  pipelineJobName: 'my-job',
  pipelineJobResourceName: 'my-job-abc12',
  pipelineJobUuid: 'run-uuid',
  pipelineTaskName: 'train',
  pipelineTaskUuid: '17',
  pipelineRoot: '/srv/root',
};

const cases: { name: string; in: unknown[]; out: string[]; ctx?: Partial<PlaceholderContext> }[] = [
  {
    name: 'corpus pipeline_with_concat_placeholder',
    in: [
      `echo "$0" > /tmp/test && [[ "$0" == 'one+two=three' ]]`,
      `{"Concat": ["{{$.inputs.parameters['input_one']}}", "+", "{{$.inputs.parameters['input_two']}}", "=three"]}`,
    ],
    out: [`echo "$0" > /tmp/test && [[ "$0" == 'one+two=three' ]]`, 'one+two=three'],
  },
  {
    name: 'corpus placeholder_with_if_placeholder_none_input_value',
    in: [
      '--arg0',
      "{{$.inputs.parameters['required_input']}}",
      `{"IfPresent": {"InputName": "optional_input_1", "Then": ["--arg1", "{{$.inputs.parameters['optional_input_1']}}"]}}`,
      `{"IfPresent": {"InputName": "optional_input_2", "Then": ["--arg2", "{{$.inputs.parameters['optional_input_2']}}"], "Else": ["--arg2", "default value"]}}`,
    ],
    out: ['--arg0', 'req', '--arg1', 'o1', '--arg2', 'default value'],
  },
  {
    name: 'corpus xgboost IfPresent with artifact path and absent param',
    in: [
      '--model', "{{$.inputs.artifacts['model'].path}}",
      `{"IfPresent": {"InputName": "starting_model", "Then": ["--starting-model", "{{$.inputs.artifacts['starting_model'].path}}"]}}`,
      `{"IfPresent": {"InputName": "label_column", "Then": ["--label-column", "{{$.inputs.parameters['label_column']}}"]}}`,
      '--predictions', "{{$.outputs.artifacts['predictions'].path}}",
    ],
    out: ['--model', '/gcs/b/run/train/1/model', '--predictions', '/srv/root/p/r/t/9/predictions'],
  },
  {
    name: 'corpus artifacts_simple add-container (bare artifact list + output uri)',
    in: ["{{$.inputs.artifacts['in_datasets']}}", "{{$.outputs.artifacts['out_dataset'].uri}}"],
    out: [
      JSON.stringify([
        { name: 'd1', type: { schemaTitle: 'system.Dataset', schemaVersion: '0.0.1' }, uri: '/srv/root/p/r/double/1/out_dataset', metadata: {} },
        { name: 'd2', type: { schemaTitle: 'system.Dataset', schemaVersion: '0.0.1' }, uri: '/srv/root/p/r/double/2/out_dataset', metadata: {} },
      ]),
      '/srv/root/p/r/t/9/out_dataset',
    ],
  },
  {
    name: 'parameter rendering per type',
    in: ["{{$.inputs.parameters['num']}}", "{{$.inputs.parameters['ratio']}}", "{{$.inputs.parameters['flag']}}", "{{$.inputs.parameters['items']}}", "{{$.inputs.parameters['cfg']}}", "{{$.inputs.parameters['null_input']}}"],
    out: ['5', '0.5', 'true', '[1,"a"]', '{"k":"v"}', ''],
  },
  {
    name: 'embedded placeholders and all simple kinds',
    in: [
      "--out={{$.outputs.parameters['Output'].output_file}}",
      "{{$.inputs.artifacts['model'].uri}}|{{$.inputs.artifacts['model'].metadata}}",
      "{{$.outputs.artifacts['predictions'].uri}}", "{{$.outputs.artifacts['predictions'].metadata}}",
      '{{$.outputs.output_file}}',
      '{{$.pipeline_job_name}}/{{$.pipeline_job_resource_name}}/{{$.pipeline_job_uuid}}/{{$.pipeline_task_name}}/{{$.pipeline_task_uuid}}/{{$.pipeline_root}}',
      'plain {{ not a placeholder }}',
    ],
    out: [
      '--out=/srv/root/p/r/t/9/Output', 'gs://b/run/train/1/model|{"accuracy":0.9}', '/srv/root/p/r/t/9/predictions', '{}',
      '/srv/root/p/r/t/9/executor_output.json', 'my-job/my-job-abc12/run-uuid/train/17//srv/root', 'plain {{ not a placeholder }}',
    ],
  },
  {
    name: 'nested Concat inside IfPresent and IfPresent inside Concat (objects and strings)',
    in: [
      { IfPresent: { InputName: 'num', Then: [{ Concat: ['--n=', "{{$.inputs.parameters['num']}}"] }, 'x'] } },
      { Concat: ['a', { IfPresent: { InputName: 'label_column', Then: ['-L'], Else: ['-', 'none'] } }, 'b'] },
      `{"IfPresent": {"InputName": "null_input", "Then": "yes", "Else": "no"}}`,
    ],
    out: ['--n=5', 'x', 'a-noneb', 'no'],
  },
  {
    name: 'defaults fill placeholders but do not make IfPresent true (driver runs before addDefaultParams)',
    in: ["{{$.inputs.parameters['with_default']}}", `{"IfPresent": {"InputName": "with_default", "Then": ["t"], "Else": ["e"]}}`],
    out: ['3', 'e'],
  },
  {
    name: 'absent optional input: verbatim (backend)',
    in: ["--label={{$.inputs.parameters['label_column']}}"],
    out: ["--label={{$.inputs.parameters['label_column']}}"],
  },
  { name: 'absent optional input: null (kfp.local)', in: ["{{$.inputs.parameters['label_column']}}"], out: ['null'], ctx: { absentInput: 'null' } },
  { name: 'absent optional input: empty', in: ["{{$.inputs.artifacts['starting_model'].path}}"], out: [''], ctx: { absentInput: 'empty' } },
];

describe('resolvePlaceholders', () => {
  for (const c of cases) it(c.name, () => assert.deepEqual(resolvePlaceholders(c.in, { ...ctx, ...c.ctx }), c.out));

  it('{{$}} is the executor input with defaults and resolved f-strings', () => {
    const [flag, json] = resolvePlaceholders(['--executor_input', '{{$}}'], ctx);
    assert.equal(flag, '--executor_input');
    const parsed = JSON.parse(json ?? '') as typeof ei;
    assert.equal(parsed.inputs.parameterValues['greeting'], 'Hello world from my-job');
    assert.equal(parsed.inputs.parameterValues['with_default'], 3);
    assert.equal(parsed.inputs.parameterValues['optional_input_2'], undefined);
    assert.deepEqual(parsed.outputs, ei.outputs);
    // the stored executor input is untouched
    assert.equal(ei.inputs.parameterValues['with_default'], undefined);
  });
  it('f-string parameter placeholder renders resolved text', () => {
    assert.deepEqual(resolvePlaceholders(["{{$.inputs.parameters['greeting']}}"], ctx), ['Hello world from my-job']);
  });
  it('effectiveExecutorInput leaves unknown placeholders in values alone', () => {
    const e = effectiveExecutorInput({ executorInput: buildExecutorInput({ parameters: { s: { value: '{{$.pipeline_google_cloud_project_id}}', parameterType: 'STRING' } }, executorOutputFile: '/x' }) });
    assert.equal(e.inputs.parameterValues['s'], '{{$.pipeline_google_cloud_project_id}}');
  });

  const errors: [string, unknown[], RegExp][] = [
    ['unknown placeholder', ['{{$.pipeline_google_cloud_project_id}}'], /unknown placeholder \{\{\$\.pipeline_google_cloud_project_id\}\}/],
    ['undeclared input', ["{{$.inputs.parameters['nope']}}"], /nope/],
    ['undeclared output artifact', ["{{$.outputs.artifacts['nope'].path}}"], /nope/],
    ['undeclared output parameter', ["{{$.outputs.parameters['nope'].output_file}}"], /nope/],
    ['bad field', ["{{$.inputs.artifacts['model'].size}}"], /unknown placeholder/],
    ['bad structured json', ['{"Concat": [}'], /invalid structured placeholder/],
    ['unknown struct', [{ Foo: [] }], /unknown structured placeholder/],
    ['non-string element', [5], /element 0/],
  ];
  for (const [name, input, re] of errors) it(`error: ${name}`, () => assert.throws(() => resolvePlaceholders(input, ctx), re));
  it('error: missing pipeline context value', () => {
    assert.throws(() => resolvePlaceholders(['{{$.pipeline_task_uuid}}'], { executorInput: ei }), /pipeline_task_uuid/);
  });
});
