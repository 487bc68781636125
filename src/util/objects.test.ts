import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isPlainObject } from './objects.js';

it('isPlainObject is true only for non-null, non-array objects', () => {
  assert.equal(isPlainObject({}), true);
  assert.equal(isPlainObject({ a: 1 }), true);
  for (const v of [null, undefined, [], [1], 'x', 1, true]) assert.equal(isPlainObject(v), false, JSON.stringify(v));
});
