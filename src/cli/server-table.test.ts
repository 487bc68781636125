import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ResourceInfo } from './discovery.js';
import { renderTable } from './printers.js';
import { fromServerTable, isServerTable, type ServerTable } from './server-table.js';

const jobs: ResourceInfo = { group: 'batch', version: 'v1', groupVersion: 'batch/v1', kind: 'Job', plural: 'jobs', singular: 'job', namespaced: true, verbs: [], shortNames: [], categories: [], preferred: true };

const table: ServerTable = {
  kind: 'Table',
  columnDefinitions: [
    { name: 'Name', type: 'string', format: 'name', priority: 0 },
    { name: 'Status', type: 'string', format: '', priority: 0 },
    { name: 'Completions', type: 'string', format: '', priority: 0 },
    { name: 'Duration', type: 'string', format: '', priority: 0 },
    { name: 'Age', type: 'string', format: '', priority: 0 },
    { name: 'Containers', type: 'string', format: '', priority: 1 },
  ],
  rows: [
    { cells: ['pi', 'Complete', '1/1', '5s', '1m', 'pi'], object: { metadata: { name: 'pi', namespace: 'team-a', labels: { b: '2', a: '1' } } } },
    { cells: ['e', 'Running', '0/1', null, '2s', 'x'], object: { metadata: { name: 'e', namespace: 'team-b' } } },
  ],
};

test('a server Table prints as kubectl prints it', () => {
  assert.ok(isServerTable(table));
  assert.ok(!isServerTable({ kind: 'JobList', items: [] }));
  const now = 0;
  assert.equal(renderTable(fromServerTable(jobs, table, table.columnDefinitions ?? [], { now })),
    'NAME   STATUS     COMPLETIONS   DURATION   AGE\npi     Complete   1/1           5s         1m\ne      Running    0/1                      2s\n');
  const wide = fromServerTable(jobs, table, table.columnDefinitions ?? [], { now, wide: true, allNamespaces: true, withKind: true, showLabels: true });
  assert.deepEqual(wide.headers, ['NAMESPACE', 'NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE', 'CONTAINERS', 'LABELS']);
  assert.deepEqual(wide.rows[0], ['team-a', 'job.batch/pi', 'Complete', '1/1', '5s', '1m', 'pi', 'a=1,b=2']);
  assert.deepEqual(wide.rows[1]?.slice(-1), ['<none>']);
});

test('a multi-line cell shows its first line and an ellipsis', () => {
  const t: ServerTable = { kind: 'Table', columnDefinitions: [{ name: 'Message' }], rows: [{ cells: ['one\ntwo'] }, { cells: [3] }, { cells: [true] }] };
  assert.deepEqual(fromServerTable(jobs, t, t.columnDefinitions ?? [], { now: 0 }).rows, [['one...'], ['3'], ['true']]);
});
