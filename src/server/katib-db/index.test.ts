import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { defaultRegistry } from '../../api/index.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { KatibDbManagerService, startKatibDbManager, type KatibDbManager } from './index.js';

const store = new SqliteStore({ file: ':memory:' });
const client = new Client(store, defaultRegistry());
const dirs = [mkdtempSync(join(tmpdir(), 'skiff-katib-db-')), mkdtempSync(join(tmpdir(), 'skiff-katib-db-'))];
const open: KatibDbManager[] = [];
after(async () => {
  for (const m of open) await m.close();
  await store.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function start(dataDir: string): Promise<KatibDbManager> {
  const m = await startKatibDbManager({ client, dataDir });
  assert.ok(m);
  open.push(m);
  return m;
}

/** the health check, over a fresh connection */
function healthy(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const session = connect(`http://${address}`);
    session.on('error', () => resolve(false));
    const req = session.request({ ':method': 'POST', ':path': '/grpc.health.v1.Health/Check', 'content-type': 'application/grpc' });
    req.on('trailers', (t) => {
      session.close();
      resolve(t['grpc-status'] === '0');
    });
    req.on('error', () => resolve(false));
    req.resume();
    req.end(Buffer.alloc(5));
  });
}

test('two servers on one machine each get Katib\'s port on an address of their own, and keep it across restarts', { skip: process.platform !== 'linux' && 'only Linux routes all of 127/8 to loopback' }, async () => {
  const a = await start(dirs[0] as string);
  const b = await start(dirs[1] as string);
  assert.equal(a.port, KatibDbManagerService.port);
  assert.equal(b.port, KatibDbManagerService.port);
  assert.equal(a.podsUseDefault, true);
  assert.notEqual(a.host, b.host);
  assert.equal(await healthy(a.address), true);
  assert.equal(await healthy(b.address), true);
  assert.deepEqual(JSON.parse(readFileSync(join(dirs[0] as string, 'katib-db-manager.json'), 'utf8')), { host: a.host, port: a.port });

  // running Pods' hosts files name the old address: a restart takes it again
  await a.close();
  open.splice(open.indexOf(a), 1);
  const again = await start(dirs[0] as string);
  assert.equal(again.address, a.address);
  assert.equal(await healthy(again.address), true);
});
