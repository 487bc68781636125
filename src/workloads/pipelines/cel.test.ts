import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { CelError, evaluateCel, evaluateCondition, parseCel, selectParameter } from './cel.js';
import { conformanceDir } from '../../conformance-path.js';

const corpus = join(conformanceDir(), 'kfp');

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
  it('evaluates every condition and selector in the corpus with the values KFP gives them', () => {
    const exprs = corpusExpressions();
    const conditions = exprs.filter((e) => e.key === 'condition');
    const selectors = exprs.filter((e) => e.key === 'parameterExpressionSelector');
    assert.ok(conditions.length >= 40, `found ${conditions.length} conditions`);
    assert.ok(selectors.length >= 10, `found ${selectors.length} selectors`);
    for (const e of conditions) {
      // every parameter the condition reads, valued as a task output would be: a number where int()
      // reads it (a protobuf Value, so a double), a bool where it is compared with true, else a string
      const parameters: Record<string, unknown> = {};
      for (const m of e.expr.matchAll(/(int\()?inputs\.parameter_values\['([^']+)'\](\)?\s*==\s*true)?/g)) {
        const name = m[2] as string;
        parameters[name] = m[1] ? 7 : m[3] ? true : 'heads';
      }
      assert.ok(Object.keys(parameters).length > 0, `${e.file}: ${e.expr} reads no parameter`);
      const v = evaluateCondition(e.expr, { parameters });
      assert.equal(typeof v, 'boolean', `${e.file}: ${e.expr}`);
    }
    for (const e of selectors) {
      const key = /^parseJson\(string_value\)\["([^"]+)"\]$/.exec(e.expr)?.[1];
      assert.ok(key, `${e.file}: unexpected selector ${e.expr}`);
      assert.equal(selectParameter(e.expr, { [key]: 'v', other: 2 }), 'v', `${e.file}: ${e.expr}`);
      assert.equal(selectParameter(e.expr, JSON.stringify({ [key]: 3 })), 3, `${e.file}: ${e.expr} over JSON text`);
    }
    // printed so the count can be quoted; the test output shows it
    console.log(`CEL corpus: ${conditions.length} conditions (${new Set(conditions.map((e) => e.expr)).size} distinct), ${selectors.length} selectors (${new Set(selectors.map((e) => e.expr)).size} distinct)`);
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
    assert.throws(() => evaluateCel('1 < 2 < 3', {}), /no matching overload for '_<_' applied to '\(bool, int\)'/);
    assert.throws(() => parseCel('(1 < 2'), /cannot parse CEL expression "\(1 < 2": .*expecting '\)'/);
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
    assert.throws(() => evaluateCel("'1' < 1", {}), /no matching overload/);
    assert.throws(() => evaluateCel('1 + 1.0', {}), /no matching overload/);
    assert.throws(() => evaluateCel("int('1.5')", {}), /evaluating CEL expression "int\('1.5'\)"/);
    assert.equal(evaluateCel('false && (1 / 0 == 1)', {}), false, 'logical operators absorb errors');
  });

  it('reports errors naming the expression', () => {
    assert.throws(() => parseCel("inputs.parameter_values['x' =="), (e: unknown) => e instanceof CelError && e.message.includes("inputs.parameter_values['x' =="));
    assert.throws(() => cond("inputs.parameter_values['missing'] == 'a'", {}), /evaluating CEL expression .*: .*missing/);
    assert.throws(() => cond("inputs.parameter_values['x']", { x: 'a' }), /not a bool/);
  });

  it('selects loop item fields with parseJson(string_value)', () => {
    assert.equal(selectParameter('parseJson(string_value)["A_a"]', { A_a: '1', B_b: '2' }), '1');
    assert.equal(selectParameter('parseJson(string_value)["a"]', { a: 1, b: 2 }), 1);
    assert.equal(selectParameter('parseJson(string_value)["a"]', '{"a": [1, 2]}')?.toString(), '1,2');
  });

  it('has the whole language: macros, matches, timestamps and durations', () => {
    const p = { 'pipelinechannel--scores': '[0.2, 0.9, 0.4]', 'pipelinechannel--tag': 'v1.12-rc3', 'pipelinechannel--at': '2025-03-01T12:00:00Z' };
    const scores = "parseJson(inputs.parameter_values['pipelinechannel--scores'])";
    assert.equal(cond(`${scores}.exists(s, s > 0.8)`, p), true);
    assert.equal(cond(`${scores}.all(s, s > 0.3)`, p), false);
    assert.equal(cond(`${scores}.exists_one(s, s < 0.3)`, p), true);
    assert.equal(cond(`${scores}.filter(s, s >= 0.4).size() == 2`, p), true);
    assert.equal(cond(`${scores}.map(s, s * 10.0)[1] == 9.0`, p), true);
    assert.equal(cond("has(inputs.parameter_values.x)", p), false);
    assert.equal(cond("inputs.parameter_values['pipelinechannel--tag'].matches('^v[0-9]+\\\\.[0-9]+-rc[0-9]+$')", p), true);
    assert.equal(cond("inputs.parameter_values['pipelinechannel--tag'].matches('(?i)^V1')", p), true, 'RE2 flags, as cel-go has them');
    assert.equal(cond("timestamp(inputs.parameter_values['pipelinechannel--at']) > timestamp('2025-01-01T00:00:00Z')", p), true);
    assert.equal(cond("timestamp(inputs.parameter_values['pipelinechannel--at']) + duration('12h') == timestamp('2025-03-02T00:00:00Z')", p), true);
    assert.equal(cond("timestamp(inputs.parameter_values['pipelinechannel--at']).getMonth() == 2", p), true, 'getMonth counts from 0');
    assert.equal(cond("duration('90m') > duration('1h')", p), true);
    assert.equal(evaluateCel('1u == 1', {}), true, 'numbers compare across int, uint and double');
    assert.deepEqual(evaluateCel("{'a': [1, 2.5, 'x']}", {}), { a: [1n, 2.5, 'x'] });
    assert.throws(() => cond("timestamp('yesterday') < timestamp('2025-01-01T00:00:00Z')", p), /evaluating CEL expression "timestamp\('yesterday'\)/);
  });

  it('selects over the protobuf Value fields KFP binds', () => {
    assert.equal(selectParameter('number_value + 1.0', 2), 3);
    assert.equal(selectParameter('struct_value.a', { a: 'x' }), 'x');
    assert.equal(selectParameter('size(list_value)', [1, 2, 3]), 3, 'an int result is a number');
    assert.equal(selectParameter('string_value', 'plain'), 'plain', 'a string is bound as itself, not as JSON text');
    assert.throws(() => selectParameter("timestamp('2025-01-01T00:00:00Z')", 'x'), /CEL expression "timestamp\('2025-01-01T00:00:00Z'\)" is a message, not a JSON value/);
    assert.throws(() => selectParameter('parseJson(string_value)', '{oops'), /evaluating CEL expression "parseJson\(string_value\)": .*parseJson/);
  });
});
