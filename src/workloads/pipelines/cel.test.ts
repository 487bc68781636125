import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { CelError, evaluateCel, evaluateCondition, parseCel, selectParameter } from './cel.js';
import { conformanceDir } from '../../conformance-path.js';

const corpus = join(conformanceDir(), 'kfp/pipelines');

function files(dir: string): string[] {
  const out: string[] = [];
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (/\.(ya?ml|json)$/.test(n)) out.push(p);
  }
  return out;
}

/** every `condition` and `parameterExpressionSelector` string in the corpus */
function corpusExpressions(): { file: string; key: string; expr: string }[] {
  const out: { file: string; key: string; expr: string }[] = [];
  const visit = (v: unknown, file: string): void => {
    if (Array.isArray(v)) for (const x of v) visit(x, file);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (typeof x === 'string' && (k === 'parameterExpressionSelector' || (k === 'condition' && 'condition' in v && Object.keys(v).every((kk) => kk === 'condition' || kk === 'strategy')))) out.push({ file, key: k, expr: x });
        else visit(x, file);
      }
    }
  };
  for (const f of files(corpus)) {
    let docs: unknown[];
    try {
      docs = parseAllDocuments(readFileSync(f, 'utf8')).map((d) => (Array.isArray(d) ? undefined : d.toJS()));
    } catch {
      continue;
    }
    for (const d of docs) visit(d, f);
  }
  return out;
}

const cond = (expr: string, parameters: Record<string, unknown>): boolean => evaluateCondition(expr, { parameters });

describe('CEL', () => {
  it('parses every condition and selector in the corpus', () => {
    const exprs = corpusExpressions();
    assert.ok(exprs.filter((e) => e.key === 'condition').length >= 40, `found ${exprs.length}`);
    assert.ok(exprs.some((e) => e.key === 'parameterExpressionSelector'));
    for (const e of exprs) assert.doesNotThrow(() => parseCel(e.expr), `${e.file}: ${e.expr}`);
  });

  it('evaluates the shapes the SDK emits', () => {
    const p = { 'pipelinechannel--flip-coin-Output': 'heads', 'pipelinechannel--n': 7, 'pipelinechannel--s': '12', 'pipelinechannel--b': true };
    assert.equal(cond("inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'heads'", p), true);
    assert.equal(cond("!(inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'heads')", p), false);
    assert.equal(cond("!(inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'heads') && inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'tails'", { 'pipelinechannel--flip-coin-Output': 'tails' }), true);
    assert.equal(cond("int(inputs.parameter_values['pipelinechannel--n']) > 5", p), true);
    assert.equal(cond("int(inputs.parameter_values['pipelinechannel--n']) <= 5", p), false);
    assert.equal(cond("int(inputs.parameter_values['pipelinechannel--s']) >= int(inputs.parameter_values['pipelinechannel--n'])", p), true);
    assert.equal(cond("inputs.parameter_values['pipelinechannel--b'] == true", p), true);
    assert.equal(cond("int(inputs.parameter_values['pipelinechannel--n']) == 7", p), true);
    assert.equal(cond("inputs.parameter_values['pipelinechannel--n'] == 7", p), true, 'double 7.0 == int 7');
  });

  it('follows CEL precedence', () => {
    assert.equal(evaluateCel('true || false && false', {}), true);
    assert.equal(evaluateCel('(true || false) && false', {}), false);
    assert.equal(evaluateCel('!false && false', {}), false);
    assert.equal(evaluateCel('1 + 2 * 3 == 7', {}), true);
    assert.equal(evaluateCel('1 < 2 == true', {}), true);
    assert.equal(evaluateCel('true ? 1 : 2', {}), 1n);
    assert.equal(evaluateCel('-3 + 1', {}), -2n);
    assert.throws(() => evaluateCel('1 < 2 < 3', {}), /no such overload: bool < int/);
    assert.throws(() => parseCel('(1 < 2'), /cannot parse CEL expression "\(1 < 2": expected "\)"/);
  });

  it('keeps CEL types', () => {
    assert.equal(evaluateCel('7 / 2', {}), 3n);
    assert.equal(evaluateCel('7.0 / 2.0', {}), 3.5);
    assert.equal(evaluateCel("int('42')", {}), 42n);
    assert.equal(evaluateCel('int(3.9)', {}), 3n);
    assert.equal(evaluateCel("double('2.5')", {}), 2.5);
    assert.equal(evaluateCel('string(5)', {}), '5');
    assert.equal(evaluateCel("'a' + 'b'", {}), 'ab');
    assert.equal(evaluateCel("'1' == 1", {}), false, 'heterogeneous equality is false, not an error');
    assert.equal(evaluateCel('null == null', {}), true);
    assert.equal(evaluateCel("\"x\\ty\" == 'x\ty'", {}), true);
    assert.throws(() => evaluateCel("'1' < 1", {}), /no such overload/);
    assert.throws(() => evaluateCel('1 + 1.0', {}), /no such overload/);
    assert.throws(() => evaluateCel("int('1.5')", {}), /not an integer/);
    assert.equal(evaluateCel('false && (1 / 0 == 1)', {}), false, 'logical operators absorb errors');
  });

  it('reports errors naming the expression', () => {
    assert.throws(() => parseCel("inputs.parameter_values['x' =="), (e: unknown) => e instanceof CelError && e.message.includes("inputs.parameter_values['x' =="));
    assert.throws(() => cond("inputs.parameter_values['missing'] == 'a'", {}), /no such key: missing/);
    assert.throws(() => cond("inputs.parameter_values['x']", { x: 'a' }), /not a bool/);
  });

  it('selects loop item fields with parseJson(string_value)', () => {
    assert.equal(selectParameter('parseJson(string_value)["A_a"]', { A_a: '1', B_b: '2' }), '1');
    assert.equal(selectParameter('parseJson(string_value)["a"]', { a: 1, b: 2 }), 1);
    assert.equal(selectParameter('parseJson(string_value)["a"]', '{"a": [1, 2]}')?.toString(), '1,2');
  });
});
