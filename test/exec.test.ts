// `skiff exec` end to end: commands run inside a real Pod's container (its environment, working
// directory, hostname and PID namespace), stream their output back and exit with the command's
// code; and the MPI rsh agent built on it lets mpirun in one Pod start ranks in two others.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kubexecScript, launcherEnv, WORKER_IDLE_COMMAND } from '../src/workloads/training/exec-agent.js';
import { TestServer, podManifest } from './harness.js';

const pods = '/api/v1/namespaces/default/pods';

describe('skiff exec', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s.cleanup();
  });

  const running = (name: string) => s.until(`${name} running`, async () => {
    const p = await s.get(`${pods}/${name}`);
    return p.status?.phase === 'Running' ? p : undefined;
  });

  it('runs a command in the container: its env, working directory, hostname and PID namespace; output and exit code come back', async () => {
    await s.create(pods, podManifest('target', ['sleep', '120'], {
      hostname: 'box',
      containers: [{ name: 'main', image: 'python', command: ['sleep', '120'], workingDir: '/tmp', env: [{ name: 'GREETING', value: 'hi from the pod' }] }],
    }));
    const pod = await running('target');
    const r = await s.cli(['exec', 'target', '--', 'sh', '-c', 'echo "$GREETING|$(pwd)|$(hostname)|$$|$POD_IP"; echo oops >&2; exit 7']);
    assert.equal(r.code, 7, r.stderr);
    const [greeting, cwd, host, pid, ip] = r.stdout.trim().split('|');
    assert.equal(greeting, 'hi from the pod');
    assert.equal(cwd, '/tmp');
    assert.equal(host, 'box');
    assert.equal(ip, pod.status.podIP);
    // inside the Pod's own PID namespace: pid 1 is the sandbox's init, the container's command is 2
    assert.ok(Number(pid) < 50, `pid ${pid} is not in the pod's PID namespace`);
    assert.match(r.stderr, /oops/);
  });

  it('passes stdin with -i, picks a container with -c, and refuses what it cannot enter', async () => {
    await s.create(pods, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'duo' },
      spec: { restartPolicy: 'Never', containers: [
        { name: 'a', image: 'python', command: ['sleep', '120'], env: [{ name: 'WHO', value: 'a' }] },
        { name: 'b', image: 'python', command: ['sleep', '120'], env: [{ name: 'WHO', value: 'b' }] },
      ] },
    });
    await running('duo');
    const b = await s.cli(['exec', 'duo', '-c', 'b', '--', 'sh', '-c', 'echo $WHO']);
    assert.equal(b.stdout.trim(), 'b');
    const first = await s.cli(['exec', 'duo', '--', 'sh', '-c', 'echo $WHO']);
    assert.equal(first.stdout.trim(), 'a');
    const piped = await s.cli(['exec', '-i', 'duo', '--', 'sh', '-c', 'tr a-z A-Z'], 'shout\n');
    assert.equal(piped.stdout, 'SHOUT\n');
    const bad = await s.cli(['exec', 'duo', '-c', 'nope', '--', 'true']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /container nope is not valid/);
    await s.create(pods, podManifest('finished', ['true']));
    await s.until('finished done', async () => (await s.get(`${pods}/finished`)).status?.phase === 'Succeeded');
    const done = await s.cli(['exec', 'finished', '--', 'true']);
    assert.notEqual(done.code, 0);
    assert.match(done.stderr, /completed pod/);
    // the raw endpoint: framed output, then the exit status
    const res = await fetch(`${s.url}${pods}/duo/exec?command=sh&command=-c&command=printf+abc&container=a`, { method: 'POST' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/vnd.skiff.exec.v1');
    const buf = Buffer.from(await res.arrayBuffer());
    assert.deepEqual([buf[0], buf.readUInt32BE(1), buf.subarray(5, 8).toString()], [1, 3, 'abc']);
    assert.equal(buf[8], 3);
    assert.deepEqual(JSON.parse(buf.subarray(13).toString()), { exitCode: 0 });
  });

  it('is the rsh agent of mpirun: a launcher Pod starts MPI ranks in two worker Pods', async () => {
    await s.create('/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mx-config' },
      data: { 'kubexec.sh': kubexecScript({ namespace: 'default' }), hostfile: 'mx-worker-0 slots=1\nmx-worker-1 slots=1\n' },
    });
    const volumes = [{ name: 'mpi', configMap: { name: 'mx-config', defaultMode: 0o555 } }];
    const volumeMounts = [{ name: 'mpi', mountPath: '/etc/mpi' }];
    for (const i of [0, 1]) {
      await s.create(pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: `mx-worker-${i}` }, spec: { restartPolicy: 'Never', volumes, containers: [{ name: 'mpi', image: 'python', command: [...WORKER_IDLE_COMMAND], volumeMounts }] } });
    }
    const program = 'from mpi4py import MPI; c = MPI.COMM_WORLD; import socket; print("rank", c.Get_rank(), socket.gethostname(), "sum", c.allreduce(c.Get_rank()), flush=True)';
    await s.create(pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'mx-launcher' }, spec: { restartPolicy: 'Never', volumes, containers: [
      { name: 'mpi', image: 'python', command: ['mpirun', '-np', '2', 'python3', '-c', program], env: launcherEnv(), volumeMounts },
    ] } });
    const launcher = await s.until('launcher done', async () => {
      const p = await s.get(`${pods}/mx-launcher`);
      return ['Succeeded', 'Failed'].includes(p.status?.phase) ? p : undefined;
    }, 90_000);
    const log = (await s.cli(['logs', 'mx-launcher'])).stdout;
    assert.equal(launcher.status.phase, 'Succeeded', log);
    assert.match(log, /rank 0 mx-worker-0 sum 1/);
    assert.match(log, /rank 1 mx-worker-1 sum 1/);
  });
});
