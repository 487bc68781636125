import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '../../api/core-types.js';
import { Kinds, defaultRegistry } from '../../api/index.js';
import type { StoredObject } from '../../api/meta.js';
import type { Notebook } from '../../api/notebooks.js';
import { NotebookKind, NotebookNames } from '../../api/notebooks.js';
import type { Recorder } from '../../control/events.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { NotebookReconciler } from './controller.js';
import { NotebookCuller, activityOf, rfc3339 } from './culling.js';
import { makeNotebook, runningPod } from './testing.js';

const t0 = Date.parse('2024-05-01T10:00:00Z');
const minute = 60_000;

/** a Jupyter server's answers, changed by the test between checks */
interface FakeJupyter {
  kernels: unknown;
  terminals: unknown;
  /** a status other than 200 for /api/kernels */
  kernelsStatus?: number;
  /** /api/status, or 404 */
  status?: unknown;
  /** the server's token: a request without it is refused, as Jupyter refuses it */
  token?: string;
  asked: string[];
}

describe('notebook activity', () => {
  it('is the latest kernel or terminal activity, and now while a kernel is busy', () => {
    const k = (at: string, state = 'idle'): { last_activity: string; execution_state: string } => ({ last_activity: at, execution_state: state });
    assert.deepEqual(activityOf([k('2024-05-01T09:00:00.123Z'), k('2024-05-01T09:30:00Z')], [{ last_activity: '2024-05-01T09:40:00Z' }], t0), { last: Date.parse('2024-05-01T09:40:00Z'), busy: false });
    assert.deepEqual(activityOf([k('2024-05-01T09:00:00Z', 'busy')], [], t0), { last: t0, busy: true });
    assert.deepEqual(activityOf([], [], t0), { busy: false });
    assert.deepEqual(activityOf([{ last_activity: 'not a time', execution_state: 'dead' }], [], t0), { busy: false });
    assert.equal(rfc3339(Date.parse('2024-05-01T09:40:00.987Z')), '2024-05-01T09:40:00Z');
  });
});

describe('notebook culling', () => {
  let server: Server;
  let port = 0;
  const jupyter: FakeJupyter = { kernels: [], terminals: [], asked: [] };
  before(async () => {
    server = createServer((req, res) => {
      jupyter.asked.push(req.url ?? '');
      if (jupyter.token !== undefined && req.headers.authorization !== `token ${jupyter.token}`) {
        res.writeHead(403, { 'content-type': 'application/json' });
        return void res.end('{"message": "Forbidden", "reason": null}');
      }
      if (req.url?.endsWith('/api/kernels')) {
        res.writeHead(jupyter.kernelsStatus ?? 200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify(jupyter.kernels));
      }
      if (req.url?.endsWith('/api/terminals')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify(jupyter.terminals));
      }
      if (req.url?.endsWith('/api/status') && jupyter.status) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify(jupyter.status));
      }
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  /** a notebook whose Pod runs (started at `startedAt`) with the fake server at its address */
  async function setup(opts: { startedAt?: number; idleMinutes?: number; tenancy?: boolean } = {}): Promise<{
    client: Client; culler: NotebookCuller; clock: { now: number }; events: string[];
    notebook(): Promise<Notebook & StoredObject>; check(): ReturnType<NotebookCuller['check']>;
  }> {
    jupyter.kernels = [];
    jupyter.terminals = [];
    delete jupyter.kernelsStatus;
    delete jupyter.status;
    delete jupyter.token;
    jupyter.asked = [];
    const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
    await client.create<Notebook>(makeNotebook('nb', 'team-a').port(port).obj());
    const controller = new NotebookReconciler(client, undefined, { tenancy: opts.tenancy === true });
    for (let i = 0; i < 2; i++) await controller.reconcile({ namespace: 'team-a', name: 'nb' });
    const pod = await client.get<Pod>(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' });
    const status = runningPod(pod, new Date(opts.startedAt ?? t0 - 10 * minute).toISOString()).status;
    await client.updateStatus({ ...pod, status: { ...status, podIP: '127.0.0.1' } });
    const clock = { now: t0 };
    const events: string[] = [];
    const recorder: Recorder = { event: (_o, type, reason, message) => void events.push(`${type} ${reason}: ${message}`) };
    const culler = new NotebookCuller({ client, recorder, settings: { enableCulling: true, cullIdleTimeMinutes: opts.idleMinutes ?? 30, idlenessCheckPeriodMinutes: 1 }, now: () => clock.now, timeoutMs: 2000 });
    const notebook = (): Promise<Notebook & StoredObject> => client.get<Notebook>(NotebookKind, { namespace: 'team-a', name: 'nb' });
    return { client, culler, clock, events, notebook, check: async () => culler.check(await notebook()) };
  }

  it('stops a notebook idle longer than CULL_IDLE_TIME, and writes the annotations as upstream', async () => {
    const { clock, check, notebook, events } = await setup();
    jupyter.kernels = [{ id: 'k', last_activity: new Date(t0 - 5 * minute).toISOString(), execution_state: 'idle' }];
    assert.equal(await check(), 'idle');
    let nb = await notebook();
    // the server started 10 minutes ago; its kernel was last used 5 minutes ago
    assert.equal(nb.metadata.annotations?.[NotebookNames.lastActivity], '2024-05-01T09:55:00Z');
    assert.equal(nb.metadata.annotations?.[NotebookNames.lastActivityCheck], '2024-05-01T10:00:00Z');
    assert.equal(nb.metadata.annotations?.[NotebookNames.stopped], undefined);
    assert.deepEqual(jupyter.asked.sort(), ['/notebook/team-a/nb/api/kernels', '/notebook/team-a/nb/api/status', '/notebook/team-a/nb/api/terminals']);
    clock.now = t0 + 25 * minute;
    assert.equal(await check(), 'idle', '30 minutes have not passed since 09:55');
    clock.now = t0 + 26 * minute;
    assert.equal(await check(), 'culled');
    nb = await notebook();
    assert.equal(nb.metadata.annotations?.[NotebookNames.stopped], '2024-05-01T10:26:00Z');
    assert.match(events.join('\n'), /Normal Culled: Stopped the notebook: idle since 2024-05-01T09:55:00Z/);
    // once stopped, the activity annotations go, as upstream drops them
    assert.equal(await check(), 'stopped');
    nb = await notebook();
    assert.equal(nb.metadata.annotations?.[NotebookNames.lastActivity], undefined);
    assert.equal(nb.metadata.annotations?.[NotebookNames.lastActivityCheck], undefined);
  });

  it('never culls a notebook whose kernel is busy, however long the cell runs', async () => {
    const { clock, check, notebook } = await setup({ idleMinutes: 1 });
    jupyter.kernels = [
      { id: 'a', last_activity: new Date(t0 - 300 * minute).toISOString(), execution_state: 'busy' },
      { id: 'b', last_activity: new Date(t0 - 300 * minute).toISOString(), execution_state: 'idle' },
    ];
    for (const step of [0, 10, 600, 6000]) {
      clock.now = t0 + step * minute;
      assert.equal(await check(), 'active');
      const nb = await notebook();
      assert.equal(nb.metadata.annotations?.[NotebookNames.stopped], undefined);
      assert.equal(nb.metadata.annotations?.[NotebookNames.lastActivity], rfc3339(clock.now), 'a busy kernel is activity now');
    }
  });

  it('moves the annotation with the kernels\' and terminals\' activity', async () => {
    const { clock, check, notebook } = await setup({ idleMinutes: 10 });
    jupyter.kernels = [{ id: 'k', last_activity: new Date(t0 - 20 * minute).toISOString(), execution_state: 'idle' }];
    await check();
    assert.equal((await notebook()).metadata.annotations?.[NotebookNames.lastActivity], '2024-05-01T09:50:00Z', 'the server\'s start is activity too');
    clock.now = t0 + 8 * minute;
    jupyter.terminals = [{ name: '1', last_activity: new Date(t0 + 7 * minute).toISOString() }];
    assert.equal(await check(), 'idle');
    assert.equal((await notebook()).metadata.annotations?.[NotebookNames.lastActivity], '2024-05-01T10:07:00Z');
    clock.now = t0 + 15 * minute;
    jupyter.kernels = [{ id: 'k', last_activity: new Date(t0 + 14 * minute).toISOString(), execution_state: 'idle' }];
    assert.equal(await check(), 'idle', 'used a minute ago: not culled');
    assert.equal((await notebook()).metadata.annotations?.[NotebookNames.lastActivity], '2024-05-01T10:14:00Z');
    clock.now = t0 + 25 * minute;
    assert.equal(await check(), 'culled');
  });

  it('counts the Jupyter server\'s own start as activity: a slow start is not idle time', async () => {
    const { clock, check, notebook } = await setup({ idleMinutes: 10 });
    jupyter.status = { started: new Date(t0 - 2 * minute).toISOString(), last_activity: new Date(t0).toISOString() };
    clock.now = t0 + 5 * minute;
    assert.equal(await check(), 'idle');
    assert.equal((await notebook()).metadata.annotations?.[NotebookNames.lastActivity], '2024-05-01T09:58:00Z');
  });

  it('does not cull a notebook whose server cannot be asked, and says so once', async () => {
    const { clock, check, notebook, events } = await setup({ idleMinutes: 1 });
    jupyter.kernelsStatus = 404;
    for (const step of [0, 10, 20]) {
      clock.now = t0 + step * minute;
      assert.equal(await check(), 'unknown');
    }
    const nb = await notebook();
    assert.equal(nb.metadata.annotations?.[NotebookNames.stopped], undefined);
    assert.equal(nb.metadata.annotations?.[NotebookNames.lastActivityCheck], '2024-05-01T10:20:00Z');
    assert.deepEqual(events, ['Warning CullingCheckFailed: Cannot tell whether the notebook is idle, so it is not culled: /notebook/team-a/nb/api/kernels answered 404']);
    // nobody listening at all
    const { client, check: checkAgain } = await setup({ idleMinutes: 1 });
    const pod = await client.get<Pod>(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' });
    await client.updateStatus({ ...pod, status: { ...pod.status, podIP: '127.0.0.3' } });
    clock.now = t0 + 60 * minute;
    assert.equal(await checkAgain(), 'unknown');
  });

  it('asks a server with a token with it, and says so when its Secret is gone', async () => {
    const { client, clock, check, events } = await setup({ tenancy: true, idleMinutes: 1 });
    const secret = await client.get(Kinds.Secret, { namespace: 'team-a', name: 'nb-notebook-token' });
    jupyter.token = Buffer.from((secret.data as { token: string }).token, 'base64').toString();
    jupyter.kernels = [{ id: 'k', last_activity: new Date(t0).toISOString(), execution_state: 'busy' }];
    assert.equal(await check(), 'active');
    await client.delete(Kinds.Secret, { namespace: 'team-a', name: 'nb-notebook-token' });
    clock.now = t0 + 60 * minute;
    assert.equal(await check(), 'unknown', 'never culled for a token it could not send');
    assert.deepEqual(events, ['Warning CullingCheckFailed: Cannot tell whether the notebook is idle, so it is not culled: notebook team-a/nb: the server\'s token is in Secret "nb-notebook-token", which is missing; the server cannot be reached without it']);
  });

  it('forgets a notebook whose Pod is gone', async () => {
    const { client, check, notebook } = await setup();
    await check();
    assert.ok((await notebook()).metadata.annotations?.[NotebookNames.lastActivity]);
    await client.delete(Kinds.Pod, { namespace: 'team-a', name: 'nb-0' }, { gracePeriodSeconds: 0 });
    assert.equal(await check(), 'no-pod');
    assert.equal((await notebook()).metadata.annotations?.[NotebookNames.lastActivity], undefined);
  });

  it('checks every period in its own task, and stops', async () => {
    const { client, notebook } = await setup({ idleMinutes: 0.001 });
    // a few milliseconds of period and idle time, on the real clock
    const culler = new NotebookCuller({ client, settings: { enableCulling: true, cullIdleTimeMinutes: 0.0005, idlenessCheckPeriodMinutes: 0.001 }, timeoutMs: 2000 });
    culler.start();
    const deadline = Date.now() + 5000;
    while (!(await notebook()).metadata.annotations?.[NotebookNames.stopped]) {
      assert.ok(Date.now() < deadline, 'culled within 5 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    await culler.stop();
  });
});
