import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Client } from '../store/client.js';
import { Manager } from './controller.js';

void it('starts and stops its runnables with its controllers, and never before start(): a standby replica runs no clock that writes', async () => {
  // no controller is added, so no informer ever asks the client for anything
  const m = new Manager({} as Client);
  const seen: string[] = [];
  const runnable = (name: string) => ({ start: () => void seen.push(`start ${name}`), stop: async () => void seen.push(`stop ${name}`) });
  m.addRunnable(runnable('culler'));
  assert.deepEqual(seen, []);
  assert.equal(m.running, false);
  m.start();
  m.start();
  assert.equal(m.running, true);
  // one added after start starts at once
  m.addRunnable(runnable('late'));
  assert.deepEqual(seen, ['start culler', 'start late']);
  await m.stop();
  assert.deepEqual(seen, ['start culler', 'start late', 'stop culler', 'stop late']);
});
