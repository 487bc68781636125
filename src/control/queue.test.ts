import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WorkQueue } from './queue.js';

describe('work queue', () => {
  it('dedupes keys waiting in the queue', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('a');
    q.add('b');
    assert.equal(q.length, 2);
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
  });

  it('never hands out a key twice at once, and re-runs it once if it changed meanwhile', async () => {
    const q = new WorkQueue();
    q.add('a');
    const k = await q.get();
    q.add('a');
    q.add('a');
    assert.equal(q.length, 0, 'in flight: not queued again yet');
    q.done(k as string);
    assert.equal(q.length, 1);
    assert.equal(await q.get(), 'a');
  });

  it('keeps the earliest due time of delayed adds', async () => {
    const q = new WorkQueue();
    q.addAfter('a', 10_000);
    q.addAfter('a', 5);
    q.addAfter('b', 200);
    // the queue's timers do not hold the process open; this does while the test waits
    const alive = setInterval(() => {}, 1000);
    try {
      // 'a' comes before 'b' only if its 5 ms add won over the 10 s one
      assert.equal(await q.get(), 'a');
      assert.equal(await q.get(), 'b');
    } finally {
      clearInterval(alive);
      q.shutdown();
    }
  });

  it('backs off exponentially per key and forgets on success', () => {
    const q = new WorkQueue({ baseMs: 5, maxMs: 40 });
    assert.deepEqual([q.addRateLimited('a'), q.addRateLimited('a'), q.addRateLimited('a'), q.addRateLimited('a'), q.addRateLimited('a')], [5, 10, 20, 40, 40]);
    q.forget('a');
    assert.equal(q.addRateLimited('a'), 5);
    q.shutdown();
  });
});
