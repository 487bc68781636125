import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { after, every, MAX_TIMEOUT_MS, sleep } from './timers.js';

describe('timers', () => {
  it('a real delay past 2^31-1 ms does not fire early, and Node gives no overflow warning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on('warning', onWarning);
    let fired = false;
    const t = after(MAX_TIMEOUT_MS + 1000, () => (fired = true));
    // Node's own setTimeout would have fired this after 1 ms
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(fired, false);
    assert.equal(t.pending, true);
    t.clear();
    assert.equal(t.pending, false);
    process.off('warning', onWarning);
    assert.deepEqual(warnings.filter((w) => w === 'TimeoutOverflowWarning'), []);
  });

  it('chains long delays until the whole delay has passed (mock clock)', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    try {
      const fired: string[] = [];
      const forty = 40 * 24 * 3600 * 1000;
      after(forty, () => fired.push('40d'));
      after(3 * MAX_TIMEOUT_MS + 7, () => fired.push('3max'));
      after(1000, () => fired.push('1s'));
      mock.timers.tick(1000);
      assert.deepEqual(fired, ['1s']);
      mock.timers.tick(MAX_TIMEOUT_MS);
      assert.deepEqual(fired, ['1s']);
      mock.timers.tick(forty - MAX_TIMEOUT_MS - 1001);
      assert.deepEqual(fired, ['1s']);
      mock.timers.tick(1);
      assert.deepEqual(fired, ['1s', '40d']);
      mock.timers.tick(3 * MAX_TIMEOUT_MS + 6 - forty);
      assert.deepEqual(fired, ['1s', '40d']);
      mock.timers.tick(1);
      assert.deepEqual(fired, ['1s', '40d', '3max']);
    } finally {
      mock.timers.reset();
    }
  });

  it('a cleared long timer never fires, even mid-chain', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    try {
      let fired = false;
      const t = after(2 * MAX_TIMEOUT_MS, () => (fired = true));
      mock.timers.tick(MAX_TIMEOUT_MS + 5);
      assert.equal(t.pending, true);
      t.clear();
      mock.timers.tick(2 * MAX_TIMEOUT_MS);
      assert.equal(fired, false);
    } finally {
      mock.timers.reset();
    }
  });

  it('every() repeats until cleared, for periods past 2^31-1 ms too', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    try {
      let n = 0;
      const period = MAX_TIMEOUT_MS + 500;
      const t = every(period, () => n++);
      mock.timers.tick(period - 1);
      assert.equal(n, 0);
      mock.timers.tick(1);
      assert.equal(n, 1);
      mock.timers.tick(period);
      assert.equal(n, 2);
      t.clear();
      mock.timers.tick(3 * period);
      assert.equal(n, 2);
    } finally {
      mock.timers.reset();
    }
  });

  it('sleep resolves after its delay and rejects when aborted', async () => {
    const order: string[] = [];
    const short = sleep(5).then(() => order.push('slept'));
    const ac = new AbortController();
    const long = sleep(MAX_TIMEOUT_MS * 2, { signal: ac.signal }).then(
      () => order.push('long resolved'),
      (e: Error) => order.push(`aborted: ${e.message}`),
    );
    await short;
    ac.abort(new Error('stop'));
    await long;
    assert.deepEqual(order, ['slept', 'aborted: stop']);
  });
});
