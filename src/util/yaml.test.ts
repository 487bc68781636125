import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { quickYamlDocuments, yamlLibrary } from './yaml.js';

describe('quickYamlDocuments', () => {
  it('reads plain documents as the yaml package does (YAML 1.2 core: dates and yes stay strings)', () => {
    const text = 'a: 1\nb: [x, "y"]\nwhen: 2024-01-02\nok: yes\non: true\nn: ~\n---\nsecond: {c: 0x1f}\n';
    const quick = quickYamlDocuments(text);
    assert.deepEqual(quick, yamlLibrary().parseAllDocuments(text).map((d) => d.toJS()));
    assert.equal((quick?.[0] as Record<string, unknown>).when, '2024-01-02');
  });

  it('leaves aliases to the yaml package, which limits their expansion', () => {
    assert.equal(quickYamlDocuments('a: &x [1, 2]\nb: *x\n'), undefined);
    // a string that merely contains & or * is no alias
    assert.deepEqual(quickYamlDocuments('cmd: pip install kfp && "$0" "$@"\nf: def g(*args, **kw)\n'), [{ cmd: 'pip install kfp && "$0" "$@"', f: 'def g(*args, **kw)' }]);
  });

  it('gives up on what js-yaml refuses, so the caller gets the yaml package\'s error', () => {
    assert.equal(quickYamlDocuments('a: 1\na: 2\n'), undefined);
    assert.equal(quickYamlDocuments('a: [1, 2\n'), undefined);
  });
});
