import assert from 'node:assert/strict';
import { it } from 'node:test';
import { makeRevision } from '../../workloads/serving/testing.js';
import { RevisionDispatcher } from './dispatch.js';

it('a closed dispatcher takes no replicas to probe and fails requests at once (a reconcile during shutdown starts no probe loop)', () => {
  const spec = makeRevision('digits').obj().spec;
  const d = new RevisionDispatcher(spec, 'default/digits-predictor-1', () => undefined, () => undefined);
  d.close('the server is stopping');
  // an address nothing listens on: an open dispatcher would probe it every 250 ms, forever
  d.setReplicas([{ name: 'digits-0', ip: '127.0.0.1' }]);
  assert.equal(d.replicas.size, 0);
  let failed: [number, string] | undefined;
  d.submit({ weight: 1, enqueuedAt: Date.now(), deadline: Date.now() + 1000, run: async () => undefined, fail: (s, m) => { failed = [s, m]; } });
  assert.deepEqual(failed, [503, 'the server is stopping']);
});
