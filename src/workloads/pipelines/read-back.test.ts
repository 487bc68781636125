import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildExecutorInput, type JsonValue, type ParameterType } from './executor-input.js';
import { resolvePlaceholders } from './placeholders.js';
import { parseExecutorOutput, readBackOutputs, textToParameterValue } from './read-back.js';

describe('textToParameterValue (launcher TextToPbValue)', () => {
  const ok: [string, ParameterType, JsonValue][] = [
    [' raw text\n', 'STRING', ' raw text\n'], ['42\n', 'NUMBER_INTEGER', 42], ['-7', 'NUMBER_INTEGER', -7], ['+3', 'NUMBER_INTEGER', 3],
    ['3.14\n', 'NUMBER_DOUBLE', 3.14], ['5', 'NUMBER_DOUBLE', 5], ['1e3', 'NUMBER_DOUBLE', 1000], ['.5', 'NUMBER_DOUBLE', 0.5],
    ['True', 'BOOLEAN', true], ['1', 'BOOLEAN', true], ['t\n', 'BOOLEAN', true], ['FALSE', 'BOOLEAN', false], ['0', 'BOOLEAN', false],
    ['[1, "a"]', 'LIST', [1, 'a']], ['{"a": {"b": 2}}', 'STRUCT', { a: { b: 2 } }], ['{"a":1}', 'LIST', { a: 1 }],
  ];
  for (const [text, type, want] of ok) it(`${JSON.stringify(text)} as ${type}`, () => assert.deepEqual(textToParameterValue('p', text, type), want));
  const bad: [string, ParameterType][] = [
    ['4.0', 'NUMBER_INTEGER'], ['', 'NUMBER_INTEGER'], ['9223372036854775808', 'NUMBER_INTEGER'], ['abc', 'NUMBER_DOUBLE'], ['NaN', 'NUMBER_DOUBLE'],
    ['yes', 'BOOLEAN'], ['[1,', 'LIST'], ["{'a': 1}", 'STRUCT'],
  ];
  for (const [text, type] of bad) it(`rejects ${JSON.stringify(text)} as ${type}`, () => assert.throws(() => textToParameterValue('myparam', text, type), /"myparam"/));
});

describe('parseExecutorOutput', () => {
  it('accepts what the Python executor writes', () => {
    const eo = parseExecutorOutput(JSON.stringify({
      parameterValues: { Output: 3, b: true },
      artifacts: { model: { artifacts: [{ name: 'model', uri: '/r/model', metadata: { acc: 0.5 }, custom_path: '/tmp/m' }] } },
    }));
    assert.deepEqual(eo.parameterValues, { Output: 3, b: true });
    assert.equal(eo.artifacts['model']?.artifacts[0]?.customPath, '/tmp/m');
  });
  it('accepts snake_case parameter_values', () => assert.deepEqual(parseExecutorOutput('{"parameter_values": {"x": "y"}}').parameterValues, { x: 'y' }));
  for (const [name, text] of [['unknown top-level field', '{"bogus": 1}'], ['unknown artifact field', '{"artifacts": {"m": {"artifacts": [{"nope": 1}]}}}'], ['not json', '{'], ['empty file', '']] as const) {
    it(`rejects ${name}`, () => assert.throws(() => parseExecutorOutput(text), /ExecutorOutput/));
  }
});

describe('readBackOutputs', () => {
  const provisioned = {
    model: { artifacts: [{ name: 'model', type: { schemaTitle: 'system.Model', schemaVersion: '0.0.1' }, uri: 'minio://b/p/r/train/1/model', metadata: { framework: 'x' } }] },
  };
  it('executor output wins over files; files parsed by type; artifacts merged', () => {
    const r = readBackOutputs({
      executorOutputText: JSON.stringify({
        parameterValues: { Output: 7, extra: 'ignored' },
        artifacts: { model: { artifacts: [{ name: 'model', uri: '', metadata: { accuracy: 0.9 } }] } },
      }),
      outputParameterFiles: { Output: '999', count: '12\n', flag: 'True', names: '["a","b"]', msg: 'hello\n' },
      outputParameters: { Output: 'NUMBER_INTEGER', count: 'NUMBER_INTEGER', flag: 'BOOLEAN', names: 'LIST', msg: 'STRING' },
      outputArtifacts: provisioned,
    });
    assert.deepEqual(r.parameters, { Output: 7, count: 12, flag: true, names: ['a', 'b'], msg: 'hello\n' });
    assert.deepEqual(r.artifacts['model'], [{
      name: 'model', type: { schemaTitle: 'system.Model', schemaVersion: '0.0.1' }, uri: 'minio://b/p/r/train/1/model',
      metadata: { framework: 'x', accuracy: 0.9 }, localPath: '/minio/b/p/r/train/1/model',
    }]);
  });
  it('missing executor output file is not an error', () => {
    const r = readBackOutputs({ outputParameterFiles: { a: 'x' }, outputParameters: { a: 'STRING' }, outputArtifacts: provisioned });
    assert.deepEqual(r.parameters, { a: 'x' });
    assert.deepEqual(r.artifacts['model']?.[0]?.metadata, { framework: 'x' });
  });
  it('a declared output missing from both fails naming it', () => {
    assert.throws(() => readBackOutputs({ executorOutputText: '{}', outputParameters: { a: 'STRING', sum: 'NUMBER_INTEGER' }, outputParameterFiles: { a: 'x' } }), /"sum"/);
  });
  it('pythonic uri/custom_path override and artifact lists', () => {
    const r = readBackOutputs({
      executorOutputText: JSON.stringify({ artifacts: { model: { artifacts: [
        { name: 'model', uri: '/srv/root/elsewhere/model', customPath: '/tmp/x' },
        { name: 'm2', uri: '/srv/root/elsewhere/m2' },
      ] } } }),
      outputArtifacts: provisioned,
    });
    assert.equal(r.artifacts['model']?.length, 2);
    assert.equal(r.artifacts['model']?.[0]?.uri, '/srv/root/elsewhere/model');
    assert.equal(r.artifacts['model']?.[0]?.localPath, '/tmp/x');
    assert.equal(r.artifacts['model']?.[1]?.localPath, '/srv/root/elsewhere/m2');
    assert.deepEqual(r.artifacts['model']?.[1]?.type, { schemaTitle: 'system.Model', schemaVersion: '0.0.1' });
  });
});

describe('round trip through the real kfp SDK executor', () => {
  // the project's Python environment (scripts/setup.sh installs kfp there)
  const venv = fileURLToPath(new URL('../../../../.venv/bin/python', import.meta.url));
  const python = existsSync(venv) ? venv : 'python3';
  const probe = spawnSync(python, ['-c', 'import kfp'], { encoding: 'utf8' });
  const skip = probe.status === 0 ? false : `kfp is not installed for ${python} (run scripts/setup.sh); skipping the SDK round trip`;
  it('runs kfp.dsl.executor_main on a resolved command line and reads the outputs back', { skip }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-kfp-'));
    try {
      const module = join(dir, 'comp.py');
      writeFileSync(module, [
        'from kfp.dsl import *',
        'from typing import *',
        'def add(a: int, b: float, s: str, model: Output[Model]) -> NamedTuple("Out", [("total", float), ("msg", str)]):',
        '    with open(model.path, "w") as f:',
        '        f.write("m")',
        '    model.metadata["k"] = "v"',
        '    Out = NamedTuple("Out", [("total", float), ("msg", str)])',
        '    return Out(a + b, s.upper())',
        '',
      ].join('\n'));
      const root = join(dir, 'root');
      const taskRoot = `${root}/p/r/add/1`;
      const ei = buildExecutorInput({
        parameters: { a: { value: 2, parameterType: 'NUMBER_INTEGER' }, b: { value: 0.5, parameterType: 'NUMBER_DOUBLE' }, s: { value: 'hi', parameterType: 'STRING' } },
        outputArtifacts: { model: { schemaTitle: 'system.Model', schemaVersion: '0.0.1' } },
        outputArtifactUri: taskRoot,
        outputParameterFiles: { total: `${taskRoot}/total`, msg: `${taskRoot}/msg` },
        executorOutputFile: `${taskRoot}/executor_output.json`,
      });
      mkdirSync(taskRoot, { recursive: true });
      const argv = resolvePlaceholders(
        [python, '-m', 'kfp.dsl.executor_main', '--component_module_path', module, '--executor_input', '{{$}}', '--function_to_execute', 'add'],
        { executorInput: ei },
      );
      const res = spawnSync(argv[0] ?? python, argv.slice(1), { encoding: 'utf8', env: { ...process.env, _KFP_RUNTIME: 'true' } });
      assert.equal(res.status, 0, res.stderr);
      const outFile = `${taskRoot}/executor_output.json`;
      const r = readBackOutputs({
        executorOutputText: existsSync(outFile) ? readFileSync(outFile, 'utf8') : undefined,
        outputParameters: { total: 'NUMBER_DOUBLE', msg: 'STRING' },
        outputArtifacts: ei.outputs.artifacts,
      });
      assert.deepEqual(r.parameters, { total: 2.5, msg: 'HI' });
      assert.equal(r.artifacts['model']?.[0]?.metadata['k'], 'v');
      assert.equal(readFileSync(r.artifacts['model']?.[0]?.localPath ?? '', 'utf8'), 'm');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
