import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { FieldError } from '../errors.js';
import { PipelineSpecError, parsePipelineFile, reindentQuotedContinuations, type PipelineSpec } from './ir.js';
import { validatePipelineSpec, validateRunParameters } from './ir-validate.js';
import { cycles, topologicalOrder, upstreamOf } from './dag.js';
import { conformanceDir, corpusFiles } from '../../conformance-path.js';

const corpus = join(conformanceDir(), 'kfp');
const haveCorpus = existsSync(corpus);

const walk = (dir: string): string[] => corpusFiles(dir, /\.(ya?ml|json)$/);

/**
 * Files under the scanned folders that are not compiled pipelines, with the reason.
 * At the pinned corpus commit every file under pipelines/valid, components/ and kubernetes/ is a
 * compiled PipelineSpec (components/ hold single-component pipelines), so this is empty.
 */
const NOT_PIPELINE_SPECS: Record<string, string> = {};

function rejection(text: string, name: string): FieldError[] {
  try {
    const { spec } = parsePipelineFile(text, name);
    return validatePipelineSpec(spec);
  } catch (e) {
    assert.ok(e instanceof PipelineSpecError, `expected PipelineSpecError, got ${String(e)}`);
    assert.equal(e.code, 422);
    return e.errors;
  }
}

describe('kfp conformance corpus', { skip: haveCorpus ? false : `corpus not found at ${corpus}` }, () => {
  const valid = [...walk(join(corpus, 'pipelines/valid')), ...walk(join(corpus, 'components')), ...walk(join(corpus, 'kubernetes')), ...walk(join(corpus, 'backend_test_resources')), ...walk(join(corpus, 'pipelines/argo_compatibility'))];

  it('finds the corpus files', () => {
    assert.ok(valid.length >= 170, `only ${valid.length} files`);
  });

  for (const f of valid) {
    const rel = relative(corpus, f);
    if (NOT_PIPELINE_SPECS[rel]) continue;
    it(`parses and validates ${rel}`, () => {
      const text = readFileSync(f, 'utf8');
      const { spec, platform } = parsePipelineFile(text, rel);
      assert.ok(spec.pipelineInfo.name);
      assert.ok(spec.root.dag);
      assert.deepEqual(validatePipelineSpec(spec), []);
      if (rel.startsWith('kubernetes/')) assert.ok(platform?.platforms.kubernetes, 'kubernetes/ files carry a platform spec');
      for (const c of [spec.root, ...Object.values(spec.components ?? {})]) {
        if (c.dag) assert.equal(topologicalOrder(c.dag).length, Object.keys(c.dag.tasks ?? {}).length);
      }
    });
  }

  const invalid: Record<string, string> = {
    'empty_file.yaml': '',
    'invalid_yaml.yaml': 'components_1',
    'no_name.yaml': 'pipelineInfo.name',
  };
  for (const f of walk(join(corpus, 'pipelines/invalid'))) {
    const base = f.slice(f.lastIndexOf('/') + 1);
    it(`rejects pipelines/invalid/${base}`, () => {
      const errs = rejection(readFileSync(f, 'utf8'), base);
      assert.ok(errs.length > 0);
      const field = invalid[base];
      assert.notEqual(field, undefined, `no expectation for ${base}`);
      assert.ok(errs.some((e) => e.field === field), JSON.stringify(errs));
    });
  }

  it('the JSON and YAML importer pipeline are the same spec', () => {
    const y = parsePipelineFile(readFileSync(join(corpus, 'pipelines/valid/pipeline_with_importer.yaml'), 'utf8')).spec;
    const j = parsePipelineFile(readFileSync(join(corpus, 'pipelines/valid/pipeline_with_importer.json'), 'utf8')).spec;
    assert.deepEqual(Object.keys(j.components ?? {}).sort(), Object.keys(y.components ?? {}).sort());
  });

  it('repairs under-indented quoted continuations the way PyYAML reads them', () => {
    const { spec } = parsePipelineFile(readFileSync(join(corpus, 'pipelines/valid/essential/placeholder_with_if_placeholder_none_input_value.yaml'), 'utf8'));
    const args = spec.deploymentSpec?.executors?.['exec-component-with-optional-inputs']?.container?.args ?? [];
    assert.equal(args.length, 4);
    assert.match(args[3] ?? '', /\], "Else": \["--arg2", "default value"\]\}\}$/);
  });
});

// ---------------------------------------------------------------- a small valid spec, one defect each

function base(): PipelineSpec {
  return {
    pipelineInfo: { name: 'p' },
    schemaVersion: '2.1.0',
    components: {
      'comp-gen': {
        executorLabel: 'exec-gen',
        inputDefinitions: { parameters: { n: { parameterType: 'NUMBER_INTEGER' }, tag: { parameterType: 'STRING', defaultValue: 'x', isOptional: true } } },
        outputDefinitions: { parameters: { Output: { parameterType: 'LIST' } }, artifacts: { data: { artifactType: { schemaTitle: 'system.Dataset', schemaVersion: '0.0.1' } } } },
      },
      'comp-use': {
        executorLabel: 'exec-use',
        inputDefinitions: { parameters: { items: { parameterType: 'LIST' } }, artifacts: { data: { artifactType: { schemaTitle: 'system.Dataset', schemaVersion: '0.0.1' } } } },
      },
    },
    deploymentSpec: { executors: { 'exec-gen': { container: { image: 'python:3.11', command: ['gen'] } }, 'exec-use': { container: { image: 'python:3.11' } } } },
    root: {
      inputDefinitions: { parameters: { count: { parameterType: 'NUMBER_INTEGER', defaultValue: 3, isOptional: true }, name: { parameterType: 'STRING' } } },
      dag: {
        tasks: {
          gen: { taskInfo: { name: 'gen' }, componentRef: { name: 'comp-gen' }, inputs: { parameters: { n: { componentInputParameter: 'count' } } } },
          use: {
            taskInfo: { name: 'use' },
            componentRef: { name: 'comp-use' },
            dependentTasks: ['gen'],
            inputs: {
              parameters: { items: { taskOutputParameter: { producerTask: 'gen', outputParameterKey: 'Output' } } },
              artifacts: { data: { taskOutputArtifact: { producerTask: 'gen', outputArtifactKey: 'data' } } },
            },
          },
        },
      },
    },
  };
}

type Mutation = (s: PipelineSpec) => void;
const task = (s: PipelineSpec, n: string) => {
  const t = s.root.dag?.tasks?.[n];
  assert.ok(t);
  return t;
};

describe('validatePipelineSpec', () => {
  it('accepts the base spec', () => {
    assert.deepEqual(validatePipelineSpec(base()), []);
  });

  const cases: [string, Mutation, string][] = [
    ['missing component', (s) => (task(s, 'use').componentRef.name = 'comp-nope'), 'root.dag.tasks.use.componentRef.name'],
    ['unknown executor label', (s) => (s.components!['comp-use']!.executorLabel = 'exec-nope'), 'components.comp-use.executorLabel'],
    ['bad dependentTasks', (s) => (task(s, 'use').dependentTasks = ['gen', 'ghost']), 'root.dag.tasks.use.dependentTasks[1]'],
    [
      'cycle',
      (s) => {
        task(s, 'gen').dependentTasks = ['use'];
      },
      'root.dag.tasks.gen',
    ],
    ['unknown producer task', (s) => (task(s, 'use').inputs!.parameters!.items!.taskOutputParameter!.producerTask = 'ghost'), 'root.dag.tasks.use.inputs.parameters.items.taskOutputParameter.producerTask'],
    ['unknown producer output', (s) => (task(s, 'use').inputs!.parameters!.items!.taskOutputParameter!.outputParameterKey = 'Nope'), 'root.dag.tasks.use.inputs.parameters.items.taskOutputParameter.outputParameterKey'],
    ['unknown producer artifact', (s) => (task(s, 'use').inputs!.artifacts!.data!.taskOutputArtifact!.outputArtifactKey = 'model'), 'root.dag.tasks.use.inputs.artifacts.data.taskOutputArtifact.outputArtifactKey'],
    ['undeclared componentInputParameter', (s) => (task(s, 'gen').inputs!.parameters!.n = { componentInputParameter: 'nope' }), 'root.dag.tasks.gen.inputs.parameters.n.componentInputParameter'],
    ['unknown parameterType', (s) => (s.root.inputDefinitions!.parameters!.name!.parameterType = 'TEXT'), 'root.inputDefinitions.parameters.name.parameterType'],
    ['wrong default type', (s) => (s.root.inputDefinitions!.parameters!.count!.defaultValue = 'three'), 'root.inputDefinitions.parameters.count.defaultValue'],
    ['non-integer default for NUMBER_INTEGER', (s) => (s.components!['comp-gen']!.inputDefinitions!.parameters!.n!.defaultValue = 1.5), 'components.comp-gen.inputDefinitions.parameters.n.defaultValue'],
    ['missing required task input', (s) => delete task(s, 'gen').inputs!.parameters!.n, 'root.dag.tasks.gen.inputs.parameters.n'],
    ['missing required task artifact', (s) => delete task(s, 'use').inputs!.artifacts!.data, 'root.dag.tasks.use.inputs.artifacts.data'],
    ['unknown iterator input', (s) => (task(s, 'use').parameterIterator = { items: { inputParameter: 'nope' }, itemInput: 'it' }), 'root.dag.tasks.use.parameterIterator.items.inputParameter'],
    ['raw iterator not a JSON list', (s) => (task(s, 'use').parameterIterator = { items: { raw: '{"a":1}' }, itemInput: 'it' }), 'root.dag.tasks.use.parameterIterator.items.raw'],
    ['bad trigger strategy', (s) => (task(s, 'use').triggerPolicy = { strategy: 'WHENEVER' }), 'root.dag.tasks.use.triggerPolicy.strategy'],
    ['dag output from unknown subtask', (s) => (s.root.dag!.outputs = { parameters: { o: { valueFromParameter: { producerSubtask: 'ghost', outputParameterKey: 'Output' } } } }), 'root.dag.outputs.parameters.o.valueFromParameter.producerSubtask'],
    ['executor without image', (s) => (s.deploymentSpec!.executors!['exec-use'] = { container: { image: '' } }), 'deploymentSpec.executors.exec-use.container.image'],
  ];
  for (const [name, mutate, field] of cases) {
    it(`reports ${name} at ${field}`, () => {
      const s = base();
      mutate(s);
      const errs = validatePipelineSpec(s);
      assert.ok(errs.some((e) => e.field === field), `want ${field}, got ${JSON.stringify(errs)}`);
    });
  }

  it('names the tasks of a cycle', () => {
    const s = base();
    task(s, 'gen').dependentTasks = ['use'];
    const err = validatePipelineSpec(s).find((e) => e.message.includes('cycle'));
    assert.ok(err);
    assert.match(err.message, /gen, use/);
  });

  it('validates nested component DAGs with their own paths', () => {
    const s = base();
    s.components!['comp-sub'] = { dag: { tasks: { a: { componentRef: { name: 'comp-use' }, dependentTasks: ['zz'], inputs: { parameters: { items: { runtimeValue: { constant: [1] } } }, artifacts: { data: { componentInputArtifact: 'd' } } } } } }, inputDefinitions: { artifacts: { d: { artifactType: { schemaTitle: 'system.Dataset' } } } } };
    assert.deepEqual(
      validatePipelineSpec(s).map((e) => e.field),
      ['components.comp-sub.dag.tasks.a.dependentTasks[0]'],
    );
  });
});

describe('validateRunParameters', () => {
  const cases: [string, Record<string, unknown>, string | null][] = [
    ['ok', { name: 'n', count: 5 }, null],
    ['defaults fill optional', { name: 'n' }, null],
    ['missing required', { count: 5 }, 'runtime_config.parameters.name'],
    ['string for NUMBER_INTEGER', { name: 'n', count: '5' }, 'runtime_config.parameters.count'],
    ['double for NUMBER_INTEGER', { name: 'n', count: 5.5 }, 'runtime_config.parameters.count'],
    ['number for STRING', { name: 1 }, 'runtime_config.parameters.name'],
    ['unknown name', { name: 'n', nope: 1 }, 'runtime_config.parameters.nope'],
  ];
  for (const [name, params, field] of cases) {
    it(name, () => {
      const errs = validateRunParameters(base(), params);
      if (field === null) assert.deepEqual(errs, []);
      else assert.ok(errs.some((e) => e.field === field), `want ${field}, got ${JSON.stringify(errs)}`);
    });
  }
  it('reports the type problem as FieldValueTypeInvalid', () => {
    const [e] = validateRunParameters(base(), { name: 'n', count: '5' });
    assert.equal(e?.type, 'FieldValueTypeInvalid');
  });
});

describe('parsePipelineFile', () => {
  const yaml = 'pipelineInfo: {name: p}\nroot: {dag: {tasks: {}}}\nschemaVersion: 2.1.0\n';
  it('parses one YAML document', () => {
    const r = parsePipelineFile(yaml);
    assert.equal(r.spec.pipelineInfo.name, 'p');
    assert.equal(r.platform, undefined);
  });
  it('parses a platform spec document', () => {
    const r = parsePipelineFile(yaml + '---\nplatforms:\n  kubernetes:\n    deploymentSpec: {executors: {exec-a: {nodeSelector: {labels: {a: b}}}}}\n');
    assert.deepEqual(r.platform?.platforms.kubernetes?.deploymentSpec?.executors?.['exec-a'], { nodeSelector: { labels: { a: 'b' } } });
  });
  it('parses JSON, plain and REST-wrapped', () => {
    const spec = { pipelineInfo: { name: 'j' }, root: { dag: { tasks: {} } } };
    assert.equal(parsePipelineFile(JSON.stringify(spec)).spec.pipelineInfo.name, 'j');
    const w = parsePipelineFile(JSON.stringify({ pipeline_spec: spec, platform_spec: { platforms: { kubernetes: {} } } }));
    assert.equal(w.spec.pipelineInfo.name, 'j');
    assert.ok(w.platform);
  });
  const bad: [string, string, string, RegExp?][] = [
    ['empty', '', ''],
    ['comments only', '# PIPELINE DEFINITION\n# Name: x\n', ''],
    ['invalid YAML with line', 'pipelineInfo:\n  name: [unclosed\nroot: {}\n', '', /line \d+/],
    ['invalid JSON', '{"pipelineInfo": ', '', /invalid JSON/],
    ['not a mapping', '- a\n- b\n', ''],
    ['missing name', 'pipelineInfo: {}\nroot: {dag: {}}\n', 'pipelineInfo.name'],
    ['missing root', 'pipelineInfo: {name: p}\n', 'root'],
    ['root not a dag', 'pipelineInfo: {name: p}\nroot: {executorLabel: x}\n', 'root.dag'],
    ['second doc not a platform spec', yaml + '---\nfoo: 1\n', 'platforms'],
  ];
  for (const [name, text, field, msg] of bad) {
    it(`rejects ${name}`, () => {
      assert.throws(
        () => parsePipelineFile(text, 'f.yaml'),
        (e: unknown) => {
          assert.ok(e instanceof PipelineSpecError);
          assert.ok(e.errors.some((x) => x.field === field), JSON.stringify(e.errors));
          if (msg) assert.match(e.errors[0]?.message ?? '', msg);
          assert.equal(e.details.causes?.length, e.errors.length);
          return true;
        },
      );
    });
  }
  it('keeps unknown nested fields', () => {
    const r = parsePipelineFile('pipelineInfo: {name: p, futureField: 1}\nroot: {dag: {tasks: {}}, singlePlatformSpecs: []}\n');
    assert.equal(r.spec.pipelineInfo.futureField, 1);
    assert.deepEqual(r.spec.root.singlePlatformSpecs, []);
  });
  it('reindents only the continuation lines of open quoted scalars', () => {
    const src = 'a:\n  - "one\n  \\ two"\n  - b\n';
    assert.equal(reindentQuotedContinuations(src), 'a:\n  - "one\n    \\ two"\n  - b\n');
  });
});

describe('dag helpers', () => {
  it('upstreamOf unions dependentTasks and producers', () => {
    assert.deepEqual(
      upstreamOf({
        componentRef: { name: 'c' },
        dependentTasks: ['a'],
        inputs: { parameters: { x: { taskOutputParameter: { producerTask: 'b', outputParameterKey: 'o' } }, s: { taskFinalStatus: { producerTask: 'e' } } }, artifacts: { y: { taskOutputArtifact: { producerTask: 'a', outputArtifactKey: 'o' } } } },
      }),
      ['a', 'b', 'e'],
    );
  });
  it('topologicalOrder is deterministic and respects edges', () => {
    const dag = { tasks: { d: { componentRef: { name: 'c' }, dependentTasks: ['b', 'c'] }, c: { componentRef: { name: 'c' }, dependentTasks: ['a'] }, b: { componentRef: { name: 'c' }, dependentTasks: ['a'] }, a: { componentRef: { name: 'c' } } } };
    assert.deepEqual(topologicalOrder(dag), ['a', 'b', 'c', 'd']);
    assert.deepEqual(cycles(dag), []);
  });
  it('cycles finds each cycle and self-loops; topologicalOrder throws', () => {
    const dag = {
      tasks: {
        a: { componentRef: { name: 'c' }, dependentTasks: ['c'] },
        b: { componentRef: { name: 'c' }, dependentTasks: ['a'] },
        c: { componentRef: { name: 'c' }, dependentTasks: ['b'] },
        s: { componentRef: { name: 'c' }, dependentTasks: ['s'] },
        free: { componentRef: { name: 'c' } },
      },
    };
    assert.deepEqual(cycles(dag), [['a', 'b', 'c'], ['s']]);
    assert.throws(() => topologicalOrder(dag), /cycle/);
  });
});
