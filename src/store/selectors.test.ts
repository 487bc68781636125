import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchFields, parseFieldSelector } from './selectors.js';

describe('field selectors', () => {
  it('parse as Kubernetes does: =, == and !=, escapes, nothing trimmed', () => {
    assert.deepEqual(parseFieldSelector('status.phase!=Running,metadata.name==a\\,b\\=c'), [
      { key: 'metadata.name', op: '=', value: 'a,b=c' },
      { key: 'status.phase', op: '!=', value: 'Running' },
    ]);
    assert.deepEqual(parseFieldSelector('metadata.name =x'), [{ key: 'metadata.name ', op: '=', value: 'x' }]);
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a,b=c', namespace: 'default' }, status: { phase: 'Pending' } };
    assert.equal(matchFields(parseFieldSelector('metadata.name=a\\,b\\=c,status.phase!=Running'), pod), true);
  });

  it('refuse with kube-apiserver\'s texts', () => {
    assert.throws(() => parseFieldSelector('metadata.name'), { message: "invalid selector: 'metadata.name'; can't understand 'metadata.name'" });
    assert.throws(() => parseFieldSelector('metadata.name=a=b'), { message: 'invalid field selector: unescaped character in value: 61' });
    assert.throws(() => parseFieldSelector('metadata.name=a\\b'), { message: 'invalid field selector: invalid escape sequence: \\b' });
  });
});
