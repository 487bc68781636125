import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { resolveFString } from './placeholders.js';

const fixtures = fileURLToPath(new URL('../../../../test/fixtures/fstrings/', import.meta.url));
const PH = /\{\{\$\.inputs\.parameters\['([^']+)'\]\}\}/g;

interface TaskLike { inputs?: { parameters?: Record<string, { runtimeValue?: { constant?: unknown } }> } }

/** every task input compiled from an f-string, with the task's input names, across all DAGs of a spec */
function fstringInputs(spec: any): { where: string; text: string; inputs: string[] }[] {
  const out: { where: string; text: string; inputs: string[] }[] = [];
  const dags: [string, Record<string, TaskLike>][] = [['root', spec.root?.dag?.tasks ?? {}]];
  for (const [name, c] of Object.entries<any>(spec.components ?? {})) if (c.dag) dags.push([name, c.dag.tasks ?? {}]);
  for (const [dag, tasks] of dags) {
    for (const [tname, t] of Object.entries(tasks)) {
      for (const [iname, p] of Object.entries(t.inputs?.parameters ?? {})) {
        const c = p.runtimeValue?.constant;
        if (typeof c === 'string' && c.includes('{{$.inputs.parameters[')) out.push({ where: `${dag}/${tname}/${iname}`, text: c, inputs: Object.keys(t.inputs?.parameters ?? {}) });
      }
    }
  }
  return out;
}

describe('f-string task inputs', () => {
  const files = readdirSync(fixtures).filter((f) => f.endsWith('.yaml')).sort();

  it('the fixtures cover every shape: parameter, output, both, loop item, nested pipeline and dsl.If', () => {
    assert.deepEqual(files, ['fstring-both.yaml', 'fstring-loop.yaml', 'fstring-nested.yaml', 'fstring-output.yaml', 'fstring-param.yaml']);
  });

  for (const file of files) {
    it(`${file}: each placeholder names an input of its own task, and all of them resolve`, () => {
      const found = fstringInputs(YAML.parse(readFileSync(fixtures + file, 'utf8')));
      assert.ok(found.length > 0, `${file} has an f-string input`);
      for (const f of found) {
        const names = [...f.text.matchAll(PH)].map((m) => m[1] ?? '');
        assert.ok(names.length > 0, f.where);
        for (const n of names) assert.ok(n.startsWith('pipelinechannel--') && f.inputs.includes(n), `${f.where}: ${n} is one of ${f.inputs.join(', ')}`);
        const values = Object.fromEntries(names.map((n, i) => [n, `v${i}`]));
        const out = resolveFString(f.text, values);
        assert.doesNotMatch(out, /\{\{\$/, f.where);
        for (const v of Object.values(values)) assert.ok(out.includes(v), `${f.where}: ${out}`);
      }
    });
  }

  it('renders values as the driver does, and leaves what it cannot resolve', () => {
    const inputs = { 'pipelinechannel--n': 4, 'pipelinechannel--f': 1.5, 'pipelinechannel--b': false, 'pipelinechannel--l': [1, 'a'], 'pipelinechannel--s': 'x' };
    const text = (n: string): string => `{{$.inputs.parameters['pipelinechannel--${n}']}}`;
    assert.equal(resolveFString(`${text('n')}/${text('f')}/${text('b')}/${text('l')}/${text('s')}`, inputs), '4/1.5/false/[1,"a"]/x');
    assert.equal(resolveFString(`a-${text('missing')}-{{$.pipeline_job_name}}`, inputs), `a-${text('missing')}-{{$.pipeline_job_name}}`);
    assert.equal(resolveFString('plain', inputs), 'plain');
  });
});
