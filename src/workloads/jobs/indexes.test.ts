import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { countIndexes, firstPendingIndexes, formatIndexes, hasIndex, mergeIndexes, parseIndexes, withIndexes } from './indexes.js';

void describe('index sets', () => {
  void it('formats like Kubernetes: ranges with "-", pairs with ","', () => {
    const cases: [number[], string][] = [
      [[], ''],
      [[0], '0'],
      [[0, 1], '0,1'],
      [[0, 1, 2], '0-2'],
      [[0, 1, 2, 4], '0-2,4'],
      [[1, 3, 4, 5, 7, 8], '1,3-5,7,8'],
    ];
    for (const [ix, want] of cases) assert.equal(formatIndexes(withIndexes([], ix)), want, `${ix}`);
  });

  void it('parses, joins adjacent intervals, drops corrupt parts and indexes beyond completions', () => {
    assert.deepEqual(parseIndexes('0-2,4', 10), [{ first: 0, last: 2 }, { first: 4, last: 4 }]);
    assert.deepEqual(parseIndexes('0,1,2', 10), [{ first: 0, last: 2 }]);
    assert.deepEqual(parseIndexes('0-2,3-4', 10), [{ first: 0, last: 4 }]);
    assert.deepEqual(parseIndexes('x,1,3-y,5', 10), [{ first: 1, last: 1 }, { first: 5, last: 5 }]);
    assert.deepEqual(parseIndexes('1-8,9', 5), [{ first: 1, last: 4 }]);
    assert.deepEqual(parseIndexes('', 5), []);
    assert.deepEqual(parseIndexes(undefined, 5), []);
    for (const s of ['0', '0,1', '0-2,4', '1,3-5,7,8']) assert.equal(formatIndexes(parseIndexes(s, 100)), s);
  });

  void it('merges, adds and looks up', () => {
    const a = parseIndexes('0-2,6', 10);
    const b = parseIndexes('3,5,8-9', 10);
    assert.equal(formatIndexes(mergeIndexes(a, b)), '0-3,5,6,8,9');
    assert.equal(formatIndexes(withIndexes(a, [7, 4, 3])), '0-4,6,7');
    assert.equal(countIndexes(mergeIndexes(a, b)), 8);
    for (const ix of [0, 1, 2, 6]) assert.ok(hasIndex(a, ix));
    for (const ix of [3, 5, 7, -1]) assert.ok(!hasIndex(a, ix));
  });

  void it('picks the lowest pending indexes', () => {
    assert.deepEqual(firstPendingIndexes([], 3, 5), [0, 1, 2]);
    assert.deepEqual(firstPendingIndexes(parseIndexes('0,2-3', 10), 3, 10), [1, 4, 5]);
    assert.deepEqual(firstPendingIndexes(parseIndexes('1-3', 5), 10, 5), [0, 4]);
    assert.deepEqual(firstPendingIndexes(parseIndexes('0-4', 5), 2, 5), []);
    assert.deepEqual(firstPendingIndexes([], 0, 5), []);
  });
});
