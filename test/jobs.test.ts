// batch/v1 Jobs end to end: the real server runs real processes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestServer, processesWith } from './harness.js';

const jobs = '/apis/batch/v1/namespaces/default/jobs';

function job(name: string, command: string[], spec: Record<string, unknown> = {}, podSpec: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command }], ...podSpec } }, ...spec },
  };
}

const cond = (j: any, type: string): any => j.status?.conditions?.find((c: any) => c.type === type && c.status === 'True');

describe('batch/v1 Jobs', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s.cleanup();
  });

  const finished = (name: string, type: 'Complete' | 'Failed', timeoutMs = 60_000) => s.until(`${name} ${type}`, async () => {
    const j = await s.get(`${jobs}/${name}`);
    return cond(j, type) ? j : undefined;
  }, timeoutMs);

  it('runs an Indexed Job: every index once, JOB_COMPLETION_INDEX set, logs through the CLI', async () => {
    await s.create(jobs, job('indexed', ['sh', '-c', 'echo "index $JOB_COMPLETION_INDEX on $(hostname)"'], { completions: 3, parallelism: 2, completionMode: 'Indexed' }));
    const j = await finished('indexed', 'Complete');
    assert.equal(j.status.succeeded, 3);
    assert.equal(j.status.completedIndexes, '0-2');
    assert.ok(j.status.completionTime);
    assert.ok(cond(j, 'SuccessCriteriaMet'));
    const pods = await s.get('/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3Dindexed');
    const lines = [];
    for (const p of pods.items) lines.push((await s.req('GET', `/api/v1/namespaces/default/pods/${p.metadata.name}/log`)).text.trim());
    assert.deepEqual(lines.sort(), ['index 0 on indexed-0', 'index 1 on indexed-1', 'index 2 on indexed-2']);
    const cli = await s.cli(['logs', 'job/indexed']);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /^index \d on indexed-\d\n$/);
    const wait = await s.cli(['wait', 'job/indexed', '--for=condition=Complete', '--timeout=5s']);
    assert.equal(wait.code, 0, wait.stderr);
  });

  it('fails a Job past backoffLimit, counting each failed pod once', async () => {
    await s.create(jobs, job('failing', ['sh', '-c', 'exit 3'], { backoffLimit: 2 }));
    const j = await finished('failing', 'Failed');
    assert.equal(j.status.failed, 3);
    assert.equal(cond(j, 'Failed').reason, 'BackoffLimitExceeded');
    const wait = await s.cli(['wait', 'job/failing', '--for=condition=Complete', '--timeout=5s']);
    assert.notEqual(wait.code, 0);
    assert.match(wait.stderr, /failed/i);
  });

  it('fails at once on an exit code a podFailurePolicy names', async () => {
    await s.create(jobs, job('policy', ['sh', '-c', 'exit 42'], { backoffLimit: 6, podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } }] } }));
    const j = await finished('policy', 'Failed');
    assert.equal(cond(j, 'Failed').reason, 'PodFailurePolicy');
    assert.equal(j.status.failed, 1);
  });

  it('stops a Job at activeDeadlineSeconds and leaves no process', async () => {
    const marker = `sleep 4${Math.floor(Math.random() * 1e6)}`;
    await s.create(jobs, job('deadline', ['sh', '-c', `${marker}`], { activeDeadlineSeconds: 1 }, { terminationGracePeriodSeconds: 1 }));
    const j = await finished('deadline', 'Failed');
    assert.equal(cond(j, 'Failed').reason, 'DeadlineExceeded');
    await s.until('no process', async () => processesWith(marker).length === 0, 10_000);
  });

  it('suspends and resumes', async () => {
    const marker = `sleep 5${Math.floor(Math.random() * 1e6)}`;
    await s.create(jobs, job('pausable', ['sh', '-c', `${marker}`], {}, { terminationGracePeriodSeconds: 1 }));
    await s.until('running', async () => processesWith(marker).length > 0);
    await s.req('PATCH', `${jobs}/pausable`, { spec: { suspend: true } }, { 'content-type': 'application/merge-patch+json' });
    const suspended = await s.until('suspended', async () => {
      const j = await s.get(`${jobs}/pausable`);
      return cond(j, 'Suspended') && !j.status.active ? j : undefined;
    });
    assert.equal(cond(suspended, 'Suspended').reason, 'JobSuspended');
    await s.until('process stopped', async () => processesWith(marker).length === 0, 10_000);
    await s.req('PATCH', `${jobs}/pausable`, { spec: { suspend: false } }, { 'content-type': 'application/merge-patch+json' });
    await s.until('resumed', async () => processesWith(marker).length > 0);
    const j = await s.get(`${jobs}/pausable`);
    assert.equal(j.status.conditions.find((c: any) => c.type === 'Suspended').status, 'False');
  });

  it('deleting a Job deletes its pods and their processes', async () => {
    const marker = `sleep 6${Math.floor(Math.random() * 1e6)}`;
    await s.create(jobs, job('doomed', ['sh', '-c', `${marker} & ${marker}`], { parallelism: 2, completions: 2 }, { terminationGracePeriodSeconds: 1 }));
    await s.until('running', async () => processesWith(marker).length >= 4);
    const del = await s.cli(['delete', 'job', 'doomed']);
    assert.equal(del.code, 0, del.stderr);
    await s.until('pods gone', async () => (await s.get('/api/v1/namespaces/default/pods?labelSelector=job-name%3Ddoomed')).items.length === 0);
    await s.until('no process', async () => processesWith(marker).length === 0, 10_000);
  });

  it('removes a finished Job after ttlSecondsAfterFinished', async () => {
    await s.create(jobs, job('short-lived', ['true'], { ttlSecondsAfterFinished: 1 }));
    await finished('short-lived', 'Complete');
    await s.until('job deleted', async () => (await s.req('GET', `${jobs}/short-lived`)).status === 404, 20_000);
  });
});
