import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { listPage, matches, parseFilter, parseSort } from './list.js';

const keys = ['run_id', 'display_name', 'state', 'created_at', 'experiment_id', 'storage_state'];
const runs = [
  { run_id: 'a', display_name: 'train', state: 'SUCCEEDED', created_at: '2024-01-01T00:00:00Z', experiment_id: 'x', storage_state: 'AVAILABLE' },
  { run_id: 'b', display_name: 'eval', state: 'FAILED', created_at: '2024-01-02T00:00:00Z', experiment_id: 'x', storage_state: 'ARCHIVED' },
  { run_id: 'c', display_name: 'train-2', state: 'RUNNING', created_at: '2024-01-03T00:00:00Z', experiment_id: 'y', storage_state: 'AVAILABLE' },
];
const f = (preds: unknown[]): string => JSON.stringify({ predicates: preds });
const ids = (filter: string, sort?: string): string[] => listPage(runs, { filter, sort_by: sort }, { keys, idKey: 'run_id' }).items.map((r) => String(r.run_id));

describe('KFP list filters', () => {
  it('takes operations as numbers or names and values in camelCase or snake_case', () => {
    assert.deepEqual(ids(f([{ key: 'display_name', operation: 1, stringValue: 'train' }])), ['a']);
    assert.deepEqual(ids(f([{ key: 'display_name', operation: 'EQUALS', string_value: 'train' }])), ['a']);
    assert.deepEqual(ids(f([{ key: 'state', operation: 'NOT_EQUALS', stringValue: 'FAILED' }])), ['a', 'c']);
    assert.deepEqual(ids(f([{ key: 'display_name', operation: 9, stringValue: 'train' }])), ['a', 'c']);
    assert.deepEqual(ids(f([{ key: 'state', operation: 8, stringValues: { values: ['FAILED', 'RUNNING'] } }])), ['b', 'c']);
    assert.deepEqual(ids(f([{ key: 'state', operation: 'IN', string_values: { values: ['SUCCEEDED'] } }, { key: 'experiment_id', operation: 1, stringValue: 'x' }])), ['a']);
  });

  it('compares timestamps as times', () => {
    assert.deepEqual(ids(f([{ key: 'created_at', operation: 'GREATER_THAN', timestampValue: '2024-01-01T12:00:00Z' }])), ['b', 'c']);
    assert.deepEqual(ids(f([{ key: 'created_at', operation: 5, timestamp_value: '2024-01-02T00:00:00Z' }])), ['b', 'c']);
    assert.deepEqual(ids(f([{ key: 'created_at', operation: 7, stringValue: '2024-01-02T00:00:00Z' }])), ['a', 'b']);
    assert.deepEqual(ids(f([{ key: 'created_at', operation: 6, timestampValue: { seconds: String(Date.parse('2024-01-02T00:00:00Z') / 1000) } }])), ['a']);
  });

  it('rejects what it cannot read, naming the place', () => {
    assert.throws(() => parseFilter('{', keys), /filter: not valid JSON/);
    assert.throws(() => parseFilter(f([{ key: 'colour', operation: 1, stringValue: 'x' }]), keys), /predicates\[0\]\.key: "colour" cannot be filtered on/);
    assert.throws(() => parseFilter(f([{ key: 'state', operation: 4, stringValue: 'x' }]), keys), /predicates\[0\]\.operation: 4/);
    assert.throws(() => parseFilter(f([{ key: 'state', operation: 1 }]), keys), /a value is required/);
    assert.throws(() => parseFilter(f([{ key: 'state', operation: 8, stringValue: 'x' }]), keys), /IN needs/);
    assert.throws(() => parseFilter('{"where": []}', keys), /unknown field "where"/);
    assert.deepEqual(parseFilter('', keys), []);
    assert.equal(matches({ state: 'X' }, []), true);
  });
});

describe('KFP list sorting and paging', () => {
  it('sorts by a key, ascending or descending', () => {
    assert.deepEqual(ids('', 'created_at desc'), ['c', 'b', 'a']);
    assert.deepEqual(ids('', 'display_name'), ['b', 'a', 'c']);
    assert.deepEqual(ids(''), ['a', 'b', 'c']);
    assert.throws(() => parseSort('colour', keys), /sort_by: "colour" cannot be sorted on/);
    assert.throws(() => parseSort('state sideways', keys), /sort_by/);
  });

  it('pages with a token and counts the whole list', () => {
    const q = { sort_by: 'created_at desc', page_size: '2' };
    const p1 = listPage(runs, q, { keys, idKey: 'run_id' });
    assert.deepEqual(p1.items.map((r) => r.run_id), ['c', 'b']);
    assert.equal(p1.total_size, 3);
    assert.ok(p1.next_page_token);
    const p2 = listPage(runs, { ...q, page_token: p1.next_page_token }, { keys, idKey: 'run_id' });
    assert.deepEqual(p2.items.map((r) => r.run_id), ['a']);
    assert.equal(p2.next_page_token, undefined);
    assert.throws(() => listPage(runs, { page_token: p1.next_page_token }, { keys, idKey: 'run_id' }), /page_token/);
    assert.throws(() => listPage(runs, { page_size: '-1' }, { keys, idKey: 'run_id' }), /page_size/);
  });
});
