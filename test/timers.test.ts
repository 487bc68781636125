// Delays past 2^31-1 ms (Node's setTimeout limit) end to end: a Job with a 40-day deadline leaves the
// server idle, where Node's own timer would fire after 1 ms and the controller would spin on it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { TestServer, sleep } from './harness.js';

const jobs = '/apis/batch/v1/namespaces/default/jobs';

/** user + system CPU time of a process, in clock ticks (fields 14 and 15 of /proc/<pid>/stat) */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

describe('long timers', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s.cleanup();
  });

  it('a Job with a 40-day activeDeadlineSeconds keeps running and the server stays idle', async (t) => {
    await s.create(jobs, {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'forty-days' },
      spec: { activeDeadlineSeconds: 3456000, backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command: ['sleep', '3600'] }] } } },
    });
    await s.until('forty-days pod Running', async () => {
      const pods = await s.get('/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3Dforty-days');
      return pods.items.some((p: any) => p.status?.phase === 'Running') || undefined;
    });
    // the deadline is armed once the Job has a startTime; let the controller settle on it
    await s.until('forty-days startTime', async () => (await s.get(`${jobs}/forty-days`)).status?.startTime);
    await sleep(500);
    const pid = s.pid;
    assert.ok(pid, 'the server process has a pid');
    const hz = 100; // USER_HZ: Linux reports /proc times in 1/100 s on every platform Skiff runs on
    const t0 = process.hrtime.bigint();
    const before = cpuTicks(pid);
    await sleep(4000);
    const used = cpuTicks(pid) - before;
    const windowS = Number(process.hrtime.bigint() - t0) / 1e9;
    const share = used / hz / windowS;
    t.diagnostic(`server CPU over ${windowS.toFixed(1)} s: ${used} ticks (${(share * 100).toFixed(1)}% of a core)`);
    const j = await s.get(`${jobs}/forty-days`);
    assert.equal(j.status?.active, 1, `the Job is still active: ${JSON.stringify(j.status)}`);
    assert.ok(!j.status?.conditions?.some((c: any) => c.type === 'Failed' && c.status === 'True'), `no deadline failure: ${JSON.stringify(j.status)}`);
    assert.doesNotMatch(s.output, /TimeoutOverflowWarning/);
    // a controller woken every millisecond keeps a core busy; an idle server uses a few percent
    assert.ok(share < 0.2, `the server used ${(share * 100).toFixed(1)}% of a core over ${windowS.toFixed(1)} s with nothing to do`);
  });
});
