import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonPatchError, applyJsonPatch, mergePatch } from './patch.js';

const doc = { metadata: { name: 'x', labels: { a: '1' } }, spec: { args: ['p', 'q'] } };

describe('JSON patch', () => {
  it('adds, removes, replaces, moves, copies and tests, leaving the input alone', () => {
    const out = applyJsonPatch(doc, [
      { op: 'add', path: '/metadata/labels/b', value: '2' },
      { op: 'add', path: '/spec/args/1', value: 'mid' },
      { op: 'add', path: '/spec/args/-', value: 'end' },
      { op: 'replace', path: '/metadata/name', value: 'y' },
      { op: 'remove', path: '/metadata/labels/a' },
      { op: 'copy', from: '/metadata/name', path: '/metadata/generateName' },
      { op: 'move', from: '/spec/args/0', path: '/spec/first' },
      { op: 'test', path: '/spec/first', value: 'p' },
      { op: 'add', path: '/metadata/labels/a~1b', value: 'slash' },
    ]);
    assert.deepEqual(out, { metadata: { name: 'y', generateName: 'y', labels: { b: '2', 'a/b': 'slash' } }, spec: { args: ['mid', 'q', 'end'], first: 'p' } });
    assert.deepEqual(doc.metadata.labels, { a: '1' });
  });

  it('replaces the whole document at the empty path', () => {
    assert.deepEqual(applyJsonPatch(doc, [{ op: 'replace', path: '', value: { other: true } }]), { other: true });
  });

  it('words what does not apply as the JSON patch library kube-apiserver uses', () => {
    const fails = (ops: unknown[], message: string): void => {
      assert.throws(() => applyJsonPatch(doc, ops), (e: unknown) => e instanceof JsonPatchError && e.message === message);
    };
    fails([{ op: 'replace', path: '/spec/nothing', value: 1 }], 'replace operation does not apply: doc is missing key: /spec/nothing: missing value');
    fails([{ op: 'replace', path: '/spec/no/where', value: 1 }], 'replace operation does not apply: doc is missing path: /spec/no/where: missing value');
    fails([{ op: 'add', path: '/spec/no/where', value: 1 }], 'add operation does not apply: doc is missing path: "/spec/no/where": missing value');
    fails([{ op: 'add', path: '/spec/args/5', value: 1 }], "error in add for path: '/spec/args/5': Unable to access invalid index: 5: invalid index referenced");
    fails([{ op: 'remove', path: '/metadata/nope' }], "error in remove for path: '/metadata/nope': Unable to remove nonexistent key: nope: missing value");
    fails([{ op: 'test', path: '/metadata/name', value: 'z' }], 'testing value /metadata/name failed: test failed');
    fails([{ op: 'frobnicate', path: '/x' }], 'Unexpected kind: frobnicate');
    fails([{ op: 'move', from: '/nope', path: '/x' }], 'move operation does not apply: doc is missing from path: /nope: missing value');
  });
});

describe('JSON merge patch', () => {
  it('merges maps, deletes with null and replaces lists', () => {
    assert.deepEqual(mergePatch(doc, { metadata: { labels: { a: null, c: '3' } }, spec: { args: ['z'] } }), { metadata: { name: 'x', labels: { c: '3' } }, spec: { args: ['z'] } });
  });
});
