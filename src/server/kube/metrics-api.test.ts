// The metrics API's numbers as metrics-server writes them: canonical quantities (Go's
// resource.Quantity) and metav1.Duration windows.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cpuQuantity, goDuration, memoryQuantity } from './metrics-api.js';

describe('metrics quantities', () => {
  it('writes CPU as the canonical decimal quantity of nanocores', () => {
    for (const [cores, q] of [[0, '0'], [0.000123456, '123456n'], [0.000001, '1u'], [0.12345, '123450u'], [0.5, '500m'], [0.96, '960m'], [1.5, '1500m'], [2, '2'], [20, '20'], [1500, '1500'], [3000, '3k']] as const) {
      assert.equal(cpuQuantity(cores), q, String(cores));
    }
  });
  it('writes memory in binary suffixes when exact, else in bytes', () => {
    for (const [bytes, q] of [[0, '0'], [512, '512'], [1024, '1Ki'], [12345 * 1024, '12345Ki'], [100 * 2 ** 20, '100Mi'], [1500, '1500'], [3 * 2 ** 30, '3Gi'], [1536 * 2 ** 20, '1536Mi']] as const) {
      assert.equal(memoryQuantity(bytes), q, String(bytes));
    }
  });
  it('writes windows as Go durations', () => {
    for (const [ms, d] of [[0, '0s'], [750, '750ms'], [1000, '1s'], [5000, '5s'], [10250, '10.25s'], [60500, '1m0.5s'], [3_600_000, '1h0m0s'], [3_723_004, '1h2m3.004s']] as const) {
      assert.equal(goDuration(ms), d, String(ms));
    }
  });
});
