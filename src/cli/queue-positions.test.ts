import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from './client.js';
import type { HttpFetch } from './http.js';
import type { ServerColumn, ServerTable } from './server-table.js';
import { readPositions, withPositions, workloadRefs } from './queue-positions.js';

const columns: ServerColumn[] = [
  { name: 'Name', type: 'string', format: 'name' },
  { name: 'Queue', type: 'string' },
  { name: 'Reserved in', type: 'string' },
  { name: 'Admitted', type: 'string' },
  { name: 'Finished', type: 'string' },
  { name: 'Age', type: 'date' },
];

const row = (ns: string, name: string, queue: string, reservedIn = '') => ({
  cells: [name, queue, reservedIn, reservedIn ? 'True' : '', '', '5s'],
  object: { kind: 'PartialObjectMetadata', metadata: { name, namespace: ns } },
});

/** a fake server: answers by path from `routes`, 404 otherwise, and records what was asked */
function fake(routes: Record<string, unknown>): { client: Client; asked: string[] } {
  const asked: string[] = [];
  const fetchImpl: HttpFetch = async (url) => {
    const u = new URL(url);
    asked.push(u.pathname + u.search);
    const body = routes[u.pathname];
    const status = body === undefined ? 404 : typeof body === 'number' ? body : 200;
    const text = status === 200 ? JSON.stringify(body) : JSON.stringify({ kind: 'Status', code: status, message: 'no' });
    return { ok: status === 200, status, statusText: '', body: null, text: async () => text };
  };
  return { client: new Client('http://skiff', fetchImpl), asked };
}

const pending = (ns: string, name: string, lq: string, cq: number, local: number) => ({
  metadata: { name, namespace: ns }, priority: 0, localQueueName: lq, positionInClusterQueue: cq, positionInLocalQueue: local,
});

void test('one visibility request per ClusterQueue, positions beside Kueue\'s columns, blank for admitted ones', async () => {
  const table: ServerTable = {
    kind: 'Table', columnDefinitions: columns,
    rows: [row('a', 'wl-run', 'lq-a', 'team'), row('a', 'wl-1', 'lq-a'), row('a', 'wl-2', 'lq-a'), row('b', 'wl-3', 'lq-b'), row('a', 'wl-x', 'gone')],
  };
  const refs = workloadRefs(table, columns);
  assert.deepEqual(refs[1], { namespace: 'a', name: 'wl-1', queue: 'lq-a' });
  const { client, asked } = fake({
    '/apis/kueue.x-k8s.io/v1beta2/localqueues': {
      items: [
        { metadata: { namespace: 'a', name: 'lq-a' }, spec: { clusterQueue: 'team' } },
        { metadata: { namespace: 'b', name: 'lq-b' }, spec: { clusterQueue: 'team' } },
      ],
    },
    '/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/team/pendingworkloads': {
      items: [pending('a', 'wl-1', 'lq-a', 0, 0), pending('b', 'wl-3', 'lq-b', 1, 0), pending('a', 'wl-2', 'lq-a', 2, 1)],
    },
  });
  const positions = await readPositions(client, 'v1beta2', refs);
  assert.deepEqual(asked, ['/apis/kueue.x-k8s.io/v1beta2/localqueues?limit=500', '/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/team/pendingworkloads?limit=1000&offset=0']);
  const headers = ['NAME', 'QUEUE', 'RESERVED IN', 'ADMITTED', 'FINISHED', 'AGE'];
  const t = withPositions({ headers, rows: table.rows.map((r) => r.cells.map(String)) }, refs, positions, false);
  assert.deepEqual(t.headers, ['NAME', 'QUEUE', 'RESERVED IN', 'ADMITTED', 'FINISHED', 'POSITION', 'AGE']);
  assert.deepEqual(t.rows.map((r) => r[5]), ['', '0', '2', '1', '']);
  const wide = withPositions({ headers, rows: table.rows.map((r) => r.cells.map(String)) }, refs, positions, true);
  assert.deepEqual(wide.headers.slice(5, 7), ['POSITION', 'POSITION IN LOCALQUEUE']);
  assert.deepEqual(wide.rows.map((r) => r.slice(5, 7)), [['', ''], ['0', '0'], ['2', '1'], ['1', '0'], ['', '']]);
});

void test('a ClusterQueue closed to the caller: its LocalQueues are asked instead', async () => {
  const table: ServerTable = { kind: 'Table', columnDefinitions: columns, rows: [row('a', 'wl-1', 'lq-a'), row('a', 'wl-2', 'lq-a')] };
  const { client, asked } = fake({
    '/apis/kueue.x-k8s.io/v1beta2/namespaces/a/localqueues': { items: [{ metadata: { namespace: 'a', name: 'lq-a' }, spec: { clusterQueue: 'team' } }] },
    '/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/team/pendingworkloads': 403,
    '/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/a/localqueues/lq-a/pendingworkloads': { items: [pending('a', 'wl-1', 'lq-a', 3, 0), pending('a', 'wl-2', 'lq-a', 5, 1)] },
  });
  const positions = await readPositions(client, 'v1beta2', workloadRefs(table, columns));
  assert.deepEqual(positions.get('a/wl-2'), { inClusterQueue: 5, inLocalQueue: 1 });
  assert.equal(asked.length, 3);
});

void test('no queued Workloads: no request at all', async () => {
  const { client, asked } = fake({});
  const positions = await readPositions(client, 'v1beta2', [undefined, { namespace: 'a', name: 'x' }]);
  assert.equal(positions.size, 0);
  assert.deepEqual(asked, []);
});
