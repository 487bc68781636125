// kill -9 the server while Jobs run; start it again: every Job ends as it would have, no completion
// is counted twice, and no process is left running unowned.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { TestServer, processesWith, sleep } from './harness.js';

const jobs = '/apis/batch/v1/namespaces/default/jobs';

describe('crash recovery', () => {
  let s: TestServer | undefined;
  after(async () => {
    await s?.cleanup();
  });

  it('converges after kill -9 at arbitrary moments', async () => {
    s = await TestServer.start();
    const server = s;
    const record = mkdtempSync(join(tmpdir(), 'skiff-crash-'));
    const marker = `crash-marker-${Math.floor(Math.random() * 1e6)}`;
    const runOnce = (cmd: string): string => `echo "start $JOB_COMPLETION_INDEX$HOSTNAME" >> /record/runs; ${cmd}`;
    const mk = (name: string, spec: Record<string, unknown>, cmd: string): unknown => ({
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name },
      spec: {
        ...spec,
        template: { spec: {
          restartPolicy: 'Never',
          volumes: [{ name: 'record', hostPath: { path: record } }],
          containers: [{ name: 'main', image: 'python', command: ['sh', '-c', runOnce(cmd), marker], volumeMounts: [{ name: 'record', mountPath: '/record' }] }],
        } },
      },
    });
    await server.create(jobs, mk('steady', { completions: 6, parallelism: 3, completionMode: 'Indexed' }, 'sleep 1.5'));
    await server.create(jobs, mk('doomed', { backoffLimit: 1 }, 'sleep 1; exit 1'));
    for (const pause of [900, 1400]) {
      await sleep(pause);
      await server.crash();
      await sleep(300);
      await server.launch();
    }
    const done = async (name: string, type: string): Promise<any> => server.until(`${name} ${type}`, async () => {
      const j = await server.get(`${jobs}/${name}`);
      return j.status?.conditions?.some((c: any) => c.type === type && c.status === 'True') ? j : undefined;
    }, 90_000);
    const steady = await done('steady', 'Complete');
    assert.equal(steady.status.succeeded, 6);
    assert.equal(steady.status.completedIndexes, '0-5');
    assert.equal(steady.status.failed ?? 0, 0);
    const doomed = await done('doomed', 'Failed');
    assert.equal(doomed.status.failed, 2);
    // each index of the steady job ran exactly once: containers were adopted, not restarted
    const runs = readFileSync(join(record, 'runs'), 'utf8').trim().split('\n').filter((l) => l.includes('steady'));
    assert.equal(runs.length, 6, runs.join('\n'));
    assert.equal(new Set(runs).size, 6);
    await server.req('DELETE', `${jobs}/steady`);
    await server.req('DELETE', `${jobs}/doomed`);
    await server.until('no pods', async () => (await server.get('/api/v1/namespaces/default/pods')).items.length === 0);
    await server.until('no processes', async () => processesWith(marker).length === 0, 10_000);
  });
});
