import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findCommandIndex, parseArgs, type FlagSpec } from './args.js';
import { UsageError } from './errors.js';

const SPECS: FlagSpec[] = [
  { name: 'namespace', short: 'n', type: 'string', description: '' },
  { name: 'all-namespaces', short: 'A', type: 'boolean', description: '' },
  { name: 'watch', short: 'w', type: 'boolean', description: '' },
  { name: 'filename', short: 'f', type: 'strings', description: '' },
  { name: 'wait', type: 'boolean', default: true, description: '' },
  { name: 'output', short: 'o', type: 'string', description: '' },
  { name: 'server', type: 'string', description: '' },
  { name: 'help', short: 'h', type: 'boolean', description: '' },
];

void test('long flags with space and equals, positionals in between', () => {
  const a = parseArgs(['jobs', '--namespace', 'ns1', 'pi', '--output=json'], SPECS);
  assert.deepEqual(a.positionals, ['jobs', 'pi']);
  assert.equal(a.string('namespace'), 'ns1');
  assert.equal(a.string('output'), 'json');
  assert.equal(a.isSet('namespace'), true);
  assert.equal(a.isSet('watch'), false);
});

void test('short flags: -n ns, -nns, -n=ns and grouped booleans', () => {
  assert.equal(parseArgs(['-n', 'a'], SPECS).string('namespace'), 'a');
  assert.equal(parseArgs(['-nb'], SPECS).string('namespace'), 'b');
  assert.equal(parseArgs(['-n=c'], SPECS).string('namespace'), 'c');
  const g = parseArgs(['-Aw'], SPECS);
  assert.equal(g.boolean('all-namespaces'), true);
  assert.equal(g.boolean('watch'), true);
  const g2 = parseArgs(['-An', 'x'], SPECS);
  assert.equal(g2.boolean('all-namespaces'), true);
  assert.equal(g2.string('namespace'), 'x');
});

void test('boolean defaults and --flag=false', () => {
  assert.equal(parseArgs([], SPECS).boolean('wait'), true);
  assert.equal(parseArgs(['--wait=false'], SPECS).boolean('wait'), false);
  assert.equal(parseArgs(['--wait=0'], SPECS).boolean('wait'), false);
  assert.equal(parseArgs(['--watch'], SPECS).boolean('watch'), true);
  // pflag semantics: a bool flag does not consume the next argument
  assert.deepEqual(parseArgs(['--watch', 'false'], SPECS).positionals, ['false']);
  assert.throws(() => parseArgs(['--wait=maybe'], SPECS), /invalid argument "maybe" for "--wait"/);
});

void test('repeated list flags collect values', () => {
  const a = parseArgs(['-f', 'a.yaml', '--filename=b.yaml', '-fc.yaml'], SPECS);
  assert.deepEqual(a.strings('filename'), ['a.yaml', 'b.yaml', 'c.yaml']);
  assert.deepEqual(parseArgs([], SPECS).strings('filename'), []);
});

void test('-- ends flags; a single dash is a positional', () => {
  const a = parseArgs(['-f', '-', '--', '-w', '--x'], SPECS);
  assert.deepEqual(a.strings('filename'), ['-']);
  assert.deepEqual(a.positionals, ['-w', '--x']);
  assert.deepEqual(parseArgs(['-'], SPECS).positionals, ['-']);
});

void test('string flags take the next argument even when it looks like a flag', () => {
  assert.equal(parseArgs(['--output', '-x'], SPECS).string('output'), '-x');
});

void test('unknown flags and missing values are usage errors', () => {
  assert.throws(() => parseArgs(['--nope'], SPECS), (e: unknown) => e instanceof UsageError && /unknown flag: --nope/.test(e.message));
  assert.throws(() => parseArgs(['-z'], SPECS), /unknown shorthand flag: 'z'/);
  assert.throws(() => parseArgs(['--namespace'], SPECS), /flag needs an argument: --namespace/);
  assert.throws(() => parseArgs(['-n'], SPECS), /flag needs an argument/);
});

void test('findCommandIndex skips global flags and their values', () => {
  const globals = SPECS.filter((s) => ['server', 'namespace', 'help'].includes(s.name));
  assert.equal(findCommandIndex(['get', 'pods'], globals), 0);
  assert.equal(findCommandIndex(['--server', 'http://x', 'get', 'pods'], globals), 2);
  assert.equal(findCommandIndex(['-n', 'ns', 'get'], globals), 2);
  assert.equal(findCommandIndex(['--server=http://x', 'get'], globals), 1);
  assert.equal(findCommandIndex(['--help'], globals), -1);
  assert.equal(findCommandIndex([], globals), -1);
});
