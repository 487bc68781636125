import assert from 'node:assert/strict';
import { it } from 'node:test';
import { notebookSettings, parseDuration } from './config.js';

it('config durations: Go durations or milliseconds, errors naming the option', () => {
  assert.equal(parseDuration('1h30m', 'eventTTL'), 5_400_000);
  assert.equal(parseDuration('250ms', 'jobPodBackoff'), 250);
  assert.equal(parseDuration(1500, 'jobPodBackoff'), 1500);
  assert.throws(() => parseDuration('10 s', 'crashLoopBackoff'), /^Error: crashLoopBackoff: "10 s" is not a duration \(use e\.g\. 10s, 5m, 1h\)$/);
  assert.throws(() => parseDuration('-5s', 'eventTTL'), /^Error: eventTTL: "-5s" is not a duration/);
});

it('notebook culling: off by default, Kubeflow\'s environment variables, Skiff\'s config over them', () => {
  assert.deepEqual(notebookSettings(undefined, {}), { enableCulling: false, cullIdleTimeMinutes: 1440, idlenessCheckPeriodMinutes: 1 });
  assert.deepEqual(notebookSettings(undefined, { ENABLE_CULLING: 'true', CULL_IDLE_TIME: '0.1', IDLENESS_CHECK_PERIOD: '0.05' }), { enableCulling: true, cullIdleTimeMinutes: 0.1, idlenessCheckPeriodMinutes: 0.05 });
  assert.equal(notebookSettings(undefined, { ENABLE_CULLING: 'false' }).enableCulling, false);
  assert.deepEqual(notebookSettings({ enableCulling: false, cullIdleTimeMinutes: 60 }, { ENABLE_CULLING: 'true', CULL_IDLE_TIME: '5' }), { enableCulling: false, cullIdleTimeMinutes: 60, idlenessCheckPeriodMinutes: 1 });
  assert.throws(() => notebookSettings(undefined, { CULL_IDLE_TIME: 'a day' }), /^Error: CULL_IDLE_TIME: "a day" is not a positive number of minutes$/);
  assert.throws(() => notebookSettings({ idlenessCheckPeriodMinutes: 0 }, {}), /notebooks\.idlenessCheckPeriodMinutes: "0"/);
});
