// kill -9 the server while Jobs run; start it again: every Job ends as it would have, no completion
// is counted twice, and no process is left running unowned.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { TestServer, processesWith, repoRoot, sleep } from './harness.js';

const jobs = '/apis/batch/v1/namespaces/default/jobs';

describe('crash recovery', () => {
  let s: TestServer | undefined;
  after(async () => {
    await s?.cleanup();
  });

  it('converges after kill -9 at arbitrary moments', async (t) => {
    s = await TestServer.start();
    const server = s;
    const record = mkdtempSync(join(tmpdir(), 'skiff-crash-'));
    t.after(() => rmSync(record, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));
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

  it('starts again, once, a container whose start the server died in', async (t) => {
    s ??= await TestServer.start();
    const server = s;
    const record = mkdtempSync(join(tmpdir(), 'skiff-crash-'));
    t.after(() => rmSync(record, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));
    // a shim that comes late: the server asked for it, then died before it wrote the container's pid
    const late = join(record, 'late-shim');
    writeFileSync(late, `#!/bin/sh\nsleep 4\nexec ${join(repoRoot, 'build', 'skiff-shim')} "$@"\n`, { mode: 0o755 });
    await server.crash();
    await server.launch({ env: { SKIFF_SHIM: late } });
    const pods = '/api/v1/namespaces/default/pods';
    await server.create(pods, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'started-in-a-crash' },
      spec: {
        restartPolicy: 'Never',
        volumes: [{ name: 'record', hostPath: { path: record } }],
        containers: [{ name: 'main', image: 'python', command: ['sh', '-c', 'echo ran >> /record/runs; sleep 1'], volumeMounts: [{ name: 'record', mountPath: '/record' }] }],
      },
    });
    await server.until('the late shim to be asked for', async () => processesWith(late).length > 0, 30_000);
    await server.crash();
    await server.launch();
    const pod = await server.until('the Pod to end', async () => {
      const p = await server.get(`${pods}/started-in-a-crash`);
      return ['Succeeded', 'Failed'].includes(p.status?.phase) ? p : undefined;
    }, 60_000);
    assert.equal(pod.status.phase, 'Succeeded', JSON.stringify(pod.status));
    assert.equal(pod.status.containerStatuses[0].restartCount, 0);
    // the late shim finds the run claimed by the server that started the container again: it runs nothing
    await server.until('the late shim to give up', async () => processesWith(late).length === 0, 30_000);
    await sleep(500);
    assert.deepEqual(readFileSync(join(record, 'runs'), 'utf8').trim().split('\n'), ['ran'], 'the command ran once');
    await server.req('DELETE', `${pods}/started-in-a-crash`);
  });

  it('finishes a 20-task pipeline run after three kill -9s, running no task twice', async (t) => {
    const python = join(repoRoot, '.venv', 'bin', 'python');
    assert.ok(existsSync(python), 'scripts/setup.sh makes .venv');
    const dir = mkdtempSync(join(tmpdir(), 'skiff-crash-run-'));
    t.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));
    const compiled = join(dir, 'chain.yaml');
    execFileSync(python, [join(repoRoot, 'test', 'fixtures', 'recorded_chain.py'), compiled]);
    const log = join(dir, 'steps.log');
    const server = await TestServer.start();
    try {
      const submitted = await server.cli(['run', compiled, '-p', `log=${log}`]);
      assert.equal(submitted.code, 0, submitted.stderr);
      const name = /run\.pipelines\.kubeflow\.org\/(\S+) created/.exec(submitted.stdout)?.[1] ?? '';
      for (const pause of [1200, 1500, 1500]) {
        await sleep(pause);
        await server.crash();
        await sleep(300);
        await server.launch();
      }
      const run = await server.until('run finished', async () => {
        const r = await server.get(`/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs/${name}`);
        return ['SUCCEEDED', 'FAILED'].includes(r.status?.state) ? r : undefined;
      }, 90_000);
      assert.equal(run.status.state, 'SUCCEEDED', JSON.stringify(run.status));
      assert.equal(run.status.outputs.parameters.Output, 20);
      const steps = readFileSync(log, 'utf8').trim().split('\n');
      assert.deepEqual(steps, Array.from({ length: 20 }, (_, i) => String(i)), 'every step ran exactly once');
      // one Pod per task, each recorded once: no task started twice and no output was recorded twice
      const pods = (await server.get(`/api/v1/namespaces/default/pods?labelSelector=pipelines.kubeflow.org/run=${name}`)).items;
      assert.equal(pods.length, 20);
      const tasks = Object.entries(run.status.tasks as Record<string, { state: string; podName?: string }>);
      assert.equal(tasks.length, 20);
      assert.equal(new Set(tasks.map(([, t]) => t.podName)).size, 20);
    } finally {
      await server.cleanup();
    }
  });
});
