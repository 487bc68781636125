import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ObjectKey } from '../../api/meta.js';
import { TransferTracker } from './transfers.js';

/** a promise and its resolve, for work a test ends */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const run: ObjectKey = { namespace: 'default', name: 'r' };

describe('transfer tracker', () => {
  it('runs at most `concurrency` transfers at once, queues the run when each ends, and keeps its outcome until forgotten', async () => {
    const ended: string[] = [];
    const t = new TransferTracker({ concurrency: 2, onEnd: (k) => ended.push(k.name) });
    const gates = [deferred(), deferred(), deferred()];
    let started = 0;
    for (const [i, g] of gates.entries()) {
      t.start(run, 'uid', `pod-${i}`, 'inputs', async () => {
        started++;
        await g.promise;
        if (i === 1) throw new Error('refused');
        return i;
      });
    }
    // a second start of a known transfer changes nothing
    t.start(run, 'uid', 'pod-0', 'inputs', async () => 99);
    await new Promise((r) => setImmediate(r));
    assert.equal(started, 2);
    assert.deepEqual(t.get('uid', 'pod-2', 'inputs'), { state: 'running' });
    assert.equal(t.get('uid', 'pod-0', 'outputs'), undefined, 'the other direction is another transfer');
    gates[0]?.resolve();
    gates[1]?.resolve();
    await new Promise((r) => setImmediate(r));
    assert.equal(started, 3);
    gates[2]?.resolve();
    await t.idle();
    assert.deepEqual(t.get('uid', 'pod-0', 'inputs'), { state: 'succeeded', value: 0 });
    assert.match((t.get('uid', 'pod-1', 'inputs') as { error: Error }).error.message, /refused/);
    assert.deepEqual(ended, ['r', 'r', 'r']);
    t.forget('uid', 'pod-0');
    assert.equal(t.get('uid', 'pod-0', 'inputs'), undefined);
    assert.equal(t.size, 2);
  });

  it('cancels a run\'s transfers: a running one is aborted and cleaned up, a waiting one never starts, neither queues the run', async () => {
    const ended: string[] = [];
    const t = new TransferTracker({ concurrency: 1, onEnd: (k) => ended.push(k.name) });
    const cleaned: string[] = [];
    let aborted = false;
    let waitingRan = false;
    t.start(run, 'uid', 'pod-a', 'outputs', (signal) => new Promise<void>((_resolve, reject) => {
      signal.addEventListener('abort', () => {
        aborted = true;
        reject(signal.reason as Error);
      });
    }), async () => {
      cleaned.push('pod-a');
    });
    t.start(run, 'uid', 'pod-b', 'inputs', async () => {
      waitingRan = true;
    }, async () => {
      cleaned.push('pod-b');
    });
    t.start({ namespace: 'default', name: 'other' }, 'uid-2', 'pod-c', 'inputs', async () => undefined);
    await new Promise((r) => setImmediate(r));
    t.cancelRun({ key: run });
    assert.equal(t.size, 1);
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(aborted, true);
    assert.equal(waitingRan, false);
    assert.deepEqual(cleaned.sort(), ['pod-a', 'pod-b']);
    assert.deepEqual(ended, ['other']);
  });
});
