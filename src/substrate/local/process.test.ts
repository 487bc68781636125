// Real processes, no mocks: the shim, sh, sleep and (where it works here) bubblewrap.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { adopt, bwrapAvailable, launch, shimPath, type ContainerProcess, type ExitInfo, type LaunchSpec } from './process.js';

const repo = fileURLToPath(new URL('../../../../', import.meta.url));
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/root' };
let base = '';
let runs = 0;

before(() => {
  execFileSync('bash', [path.join(repo, 'scripts/build-native.sh')], { stdio: 'inherit' });
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-process-test-'));
});
after(async () => {
  fs.rmSync(base, { recursive: true, force: true });
  // Nothing any test started may outlive it (give exits in flight a moment).
  const leaked = () => markers.flatMap((m) => processesWith(['sleep', m]));
  for (let i = 0; i < 100 && leaked().length; i++) await sleep(20);
  const left = leaked();
  for (const pid of left) {
    // bwrap's pid 1 of a leaked sandbox sits above the sleep; kill both
    const ppid = Number(/PPid:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    for (const p of [pid, ppid]) if (p > 1) try { process.kill(p, 'SIGKILL'); } catch { /* gone */ }
  }
  assert.deepEqual(left, [], 'leaked processes');
});

function spec(argv: string[], extra: Partial<LaunchSpec> = {}): LaunchSpec {
  const n = ++runs;
  return { stateDir: path.join(base, `run-${n}`), logFile: path.join(base, `run-${n}.log`), argv, env, ...extra };
}

/** exited() does not keep the event loop alive (by design); this does, and bounds the wait. */
async function exitOf(p: ContainerProcess, ms = 15_000): Promise<ExitInfo> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no exit within ${ms}ms (${p.stateDir})`)), ms);
  });
  try {
    return await Promise.race([p.exited(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

function logEntries(file: string): { ts: string; stream: string; tag: string; content: string }[] {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  return text.split('\n').filter(Boolean).map((l) => {
    const m = /^(\S+) (stdout|stderr) ([FP]) (.*)$/s.exec(l);
    assert.ok(m, `not a CRI log line: ${JSON.stringify(l)}`);
    return { ts: m[1] ?? '', stream: m[2] ?? '', tag: m[3] ?? '', content: m[4] ?? '' };
  });
}

const logHas = (file: string, content: string) => () => logEntries(file).some((e) => e.content === content);

/** pids of live (non-zombie) processes whose command line is exactly argv */
function processesWith(argv: string[]): number[] {
  const want = argv.join('\0') + '\0';
  const found: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (fs.readFileSync(`/proc/${d}/cmdline`, 'utf8') === want) found.push(Number(d));
    } catch { /* gone */ }
  }
  return found;
}

/** a per-run unique sleep argument, so a leaked process is ours and found by it */
const markers: string[] = [];
function marker(): string {
  const m = String(100000 + Math.floor(Math.random() * 800000));
  markers.push(m);
  return m;
}

void describe('launch', () => {
  void test('captures stdout and stderr in CRI format, in order, with timestamps', async () => {
    const s = spec(['sh', '-c', 'echo out1; sleep 0.2; echo err1 >&2; sleep 0.2; echo out2; printf "no newline"']);
    const p = await launch(s);
    assert.ok(p.pid > 0);
    assert.ok(!Number.isNaN(Date.parse(p.startedAt)));
    const exit = await exitOf(p);
    assert.equal(exit.exitCode, 0);
    assert.equal(exit.reason, 'Completed');
    assert.match(exit.finishedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    const entries = logEntries(s.logFile);
    assert.deepEqual(entries.map((e) => [e.stream, e.tag, e.content]), [
      ['stdout', 'F', 'out1'], ['stderr', 'F', 'err1'], ['stdout', 'F', 'out2'], ['stdout', 'P', 'no newline'],
    ]);
    for (const e of entries) assert.match(e.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    const ts = entries.map((e) => e.ts);
    assert.deepEqual([...ts].sort(), ts, 'timestamps do not go backwards');
    assert.ok(ts[0]! >= p.startedAt.replace('Z', ''), 'logged after the start');
    assert.equal(JSON.parse(fs.readFileSync(path.join(s.stateDir, 'pid'), 'utf8')), p.pid);
  });

  void test('splits a line longer than 16 KiB into P chunks', async () => {
    const s = spec(['sh', '-c', 'head -c 40000 /dev/zero | tr "\\0" x; echo']);
    await exitOf(await launch(s));
    const entries = logEntries(s.logFile);
    assert.deepEqual(entries.map((e) => [e.tag, e.content.length]), [['P', 16384], ['P', 16384], ['F', 40000 - 2 * 16384]]);
  });

  void test('exit codes 0 and 3', async () => {
    const ok = await exitOf(await launch(spec(['true'])));
    assert.deepEqual([ok.exitCode, ok.signal, ok.reason], [0, 0, 'Completed']);
    const bad = await exitOf(await launch(spec(['sh', '-c', 'exit 3'])));
    assert.deepEqual([bad.exitCode, bad.signal, bad.reason], [3, 0, 'Error']);
  });

  void test('runs in a process group of its own within the spawner\'s session (Ctrl-C misses it; one scheduler autogroup)', async () => {
    const m = marker();
    const s = spec(['sleep', m]);
    const p = await launch(s);
    try {
      const shimPid = (JSON.parse(fs.readFileSync(path.join(s.stateDir, 'meta.json'), 'utf8')) as { shimPid: number }).shimPid;
      // /proc/PID/stat: fields after the command are state, ppid, pgrp, session
      const stat = (pid: number): string[] => fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
      const [, , pgrp, session] = stat(shimPid);
      assert.equal(Number(pgrp), shimPid, 'the shim leads its own process group');
      assert.equal(session, stat(process.pid)[3], 'and stays in the spawner\'s session');
      assert.notEqual(pgrp, stat(process.pid)[2]);
    } finally {
      p.signal('SIGKILL');
      await exitOf(p);
    }
  });

  void test('uses exactly the given environment and working directory', async () => {
    const dir = fs.mkdtempSync(path.join(base, 'cwd-'));
    const s = spec(['sh', '-c', 'echo "$FOO|$USER|$(pwd)"'], { env: { PATH: env.PATH, FOO: 'bar' }, cwd: dir });
    await exitOf(await launch(s));
    assert.equal(logEntries(s.logFile)[0]?.content, `bar||${dir}`);
  });

  void test('SIGTERM lets a process that traps it exit on its own terms', async () => {
    const m = marker();
    const s = spec(['sh', '-c', `trap "echo bye; exit 0" TERM; echo ready; sleep ${m} & wait`]);
    const p = await launch(s);
    await until(logHas(s.logFile, 'ready'), 'ready');
    // The sleep is forked after "ready": signal only once it exists, or it could miss the signal.
    await until(() => processesWith(['sleep', m]).length === 1, 'the sleep');
    p.signal('SIGTERM');
    const exit = await exitOf(p);
    assert.deepEqual([exit.exitCode, exit.reason], [0, 'Completed']);
    assert.ok(logEntries(s.logFile).some((e) => e.content === 'bye'));
    await until(() => processesWith(['sleep', m]).length === 0, 'the sleep to be gone (it got SIGTERM too)');
  });

  void test('SIGTERM to a process without a handler reads as exit code 143', async () => {
    const m = marker();
    const p = await launch(spec(['sleep', m]));
    await until(() => processesWith(['sleep', m]).length === 1, 'the sleep');
    p.signal('SIGTERM');
    const exit = await exitOf(p);
    assert.deepEqual([exit.exitCode, exit.signal, exit.reason], [143, 15, 'Error']);
  });

  void test('SIGKILL kills the whole tree (137) and leaves no process behind', async () => {
    const m = marker();
    const p = await launch(spec(['sh', '-c', `sleep ${m} & sleep ${m}`]));
    await until(() => processesWith(['sleep', m]).length === 2, 'both sleeps');
    p.signal('SIGKILL');
    const exit = await exitOf(p);
    assert.deepEqual([exit.exitCode, exit.signal], [137, 9]);
    await until(() => processesWith(['sleep', m]).length === 0, 'no sleep left');
    p.signal('SIGKILL'); // a no-op once exited
  });

  void test('stops draining 2s after the exit when a grandchild holds the pipes', async () => {
    const m = marker();
    const s = spec(['sh', '-c', `(setsid sleep ${m} &); echo parent done`]);
    const t0 = Date.now();
    const exit = await exitOf(await launch(s));
    assert.equal(exit.exitCode, 0);
    assert.ok(Date.now() - t0 >= 1900, 'waited for the drain period');
    // the exit was reported while the grandchild still held the pipes: the drain did not wait for it
    assert.equal(processesWith(['sleep', m]).length, 1, 'but not for the grandchild');
    assert.ok(logEntries(s.logFile).some((e) => e.content === 'parent done'));
    for (const pid of processesWith(['sleep', m])) process.kill(pid, 'SIGKILL');
  });

  void test('a command that is not on PATH is a StartError, not a crash', async () => {
    const p = await launch(spec(['skiff-no-such-command-xyz', 'arg']));
    assert.equal(p.pid, 0);
    const exit = await exitOf(p);
    assert.equal(exit.reason, 'StartError');
    assert.equal(exit.exitCode, 127);
    assert.match(exit.message ?? '', /skiff-no-such-command-xyz.*not found/);
    p.signal('SIGTERM'); // nothing to signal, and no error
  });

  void test('an exec that fails in the shim is a StartError with its reason', async () => {
    const script = path.join(base, 'bad-interpreter.sh');
    fs.writeFileSync(script, '#!/skiff/no/such/interpreter\necho hi\n', { mode: 0o755 });
    const p = await launch(spec([script]));
    const exit = await exitOf(p);
    assert.equal(exit.reason, 'StartError');
    assert.equal(exit.exitCode, 127);
    assert.equal(exit.message, `exec "${script}": No such file or directory`);
  });

  void test('a missing working directory is a StartError', async () => {
    const exit = await exitOf(await launch(spec(['true'], { cwd: '/skiff/no/such/dir' })));
    assert.equal(exit.reason, 'StartError');
    assert.match(exit.message ?? '', /\/skiff\/no\/such\/dir/);
  });

  void test('a reused state directory does not report the previous run', async () => {
    const s = spec(['sh', '-c', 'exit 4']);
    await exitOf(await launch(s));
    const again = await exitOf(await launch({ ...s, argv: ['true'] }));
    assert.equal(again.exitCode, 0);
  });
});

void describe('adopt', () => {
  void test('a container survives its server; the next server adopts it, signals it and gets its exit', async () => {
    // The "server" is a separate node process that launches the container and exits at once.
    const s = spec(['sh', '-c', `trap "echo term; exit 9" TERM; echo up; while :; do sleep 0.05; done`]);
    const mod = new URL('./process.js', import.meta.url).href;
    const code = `const { launch } = await import(${JSON.stringify(mod)});
      const p = await launch(${JSON.stringify(s)}); console.log(p.pid); process.exit(0);`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
    const pid = Number(out.trim());
    assert.ok(pid > 0);
    await until(logHas(s.logFile, 'up'), 'the container to run');

    const p = adopt(s.stateDir);
    assert.ok('exited' in p, 'still running, so a ContainerProcess');
    assert.equal(p.pid, pid);
    assert.equal(p.stateDir, path.resolve(s.stateDir));
    p.signal('SIGTERM');
    const exit = await exitOf(p);
    assert.deepEqual([exit.exitCode, exit.reason], [9, 'Error']);
    assert.ok(logEntries(s.logFile).some((e) => e.content === 'term'));
  });

  void test('adopting a container launched here, by its state directory', async () => {
    const s = spec(['sh', '-c', 'sleep 0.3; exit 5']);
    const first = await launch(s);
    const p = adopt(s.stateDir);
    assert.ok('exited' in p);
    assert.equal(p.pid, first.pid);
    const exit = await exitOf(p);
    assert.equal(exit.exitCode, 5);
  });

  void test('after the exit, adopt returns the ExitInfo', async () => {
    const s = spec(['sh', '-c', 'exit 6']);
    await exitOf(await launch(s));
    const info = adopt(s.stateDir);
    assert.ok(!('exited' in info));
    assert.deepEqual([info.exitCode, info.reason], [6, 'Error']);
    const start = adopt(spec(['skiff-no-such-command-xyz']).stateDir); // nothing there at all
    assert.ok(!('exited' in start) && start.reason === 'Unknown');
  });

  void test('a StartError is still a StartError when adopted', async () => {
    const s = spec(['skiff-no-such-command-xyz']);
    await exitOf(await launch(s));
    const info = adopt(s.stateDir);
    assert.ok(!('exited' in info));
    assert.equal(info.reason, 'StartError');
  });

  void test('processes that vanished without an exit file are Unknown', async () => {
    const s = spec(['sleep', marker()]);
    const p = await launch(s);
    const meta = JSON.parse(fs.readFileSync(path.join(s.stateDir, 'meta.json'), 'utf8')) as { shimPid: number };
    // Kill the shim first, so no exit file is written, then the container.
    process.kill(meta.shimPid, 'SIGKILL');
    const exited = p.exited();
    await sleep(50);
    const adopted = adopt(s.stateDir);
    assert.ok('exited' in adopted, 'the container outlives its shim');
    process.kill(-p.pid, 'SIGKILL');
    for (const info of [await exitOf(p), await exitOf(adopted)]) {
      assert.equal(info.reason, 'Unknown');
      assert.equal(info.exitCode, 137);
    }
    assert.equal((await exited).reason, 'Unknown');
    const later = adopt(s.stateDir);
    assert.ok(!('exited' in later) && later.reason === 'Unknown');
  });

  void test('a run its server left before any shim started is claimed: a shim that comes later runs nothing', () => {
    const s = spec(['sh', '-c', 'echo ran > "$0"', path.join(base, 'late-ran')]);
    fs.mkdirSync(s.stateDir, { recursive: true }); // what launch() had made when its server died
    const info = adopt(s.stateDir);
    assert.ok(!('exited' in info));
    assert.deepEqual([info.reason, info.neverStarted], ['Unknown', true]);
    assert.match(fs.readFileSync(path.join(s.stateDir, 'claim'), 'utf8'), /^server \d+/);
    const late = spawnSync(shimPath(), [s.stateDir, s.logFile, '--', ...s.argv], { env, encoding: 'utf8' });
    assert.equal(late.status, 125, late.stderr);
    assert.match(late.stderr, /claim: File exists/);
    assert.ok(!fs.existsSync(path.join(base, 'late-ran')), 'the late shim ran the command');
    assert.ok(!fs.existsSync(path.join(s.stateDir, 'pid')));
  });

  void test('a run a shim claimed but has no pid for yet: adopt waits for the pid', () => {
    const s = spec(['true']);
    fs.mkdirSync(s.stateDir, { recursive: true });
    // a stand-in shim: it claims the run, writes its pid a moment later, and runs a while
    const shim = spawn('sh', ['-c', 'echo "shim $$" > claim; sleep 0.3; echo $$ > pid.tmp; mv pid.tmp pid; exec sleep 5'], { cwd: s.stateDir, stdio: 'ignore' });
    try {
      const claimed = Date.now() + 5000;
      while (!fs.existsSync(path.join(s.stateDir, 'claim')) && Date.now() < claimed) spawnSync('sleep', ['0.02']);
      const found = adopt(s.stateDir);
      assert.ok('exited' in found, JSON.stringify(found));
      assert.equal(found.pid, shim.pid);
    } finally {
      shim.kill('SIGKILL');
    }
  });

  void test('a pid reused by another process is not mistaken for the container', () => {
    const s = spec(['true']);
    fs.mkdirSync(s.stateDir, { recursive: true });
    // Our own pid, but with a start time that is not ours.
    fs.writeFileSync(path.join(s.stateDir, 'meta.json'), JSON.stringify({
      shimPid: process.pid, shimStartTime: '1', pid: process.pid, pidStartTime: '1', startedAt: new Date().toISOString(),
      sandboxed: false, logFile: s.logFile, logOffset: 0,
    }));
    const info = adopt(s.stateDir);
    assert.ok(!('exited' in info) && info.reason === 'Unknown');
  });
});

void describe('shim', () => {
  void test('shimPath points at the built binary and SKIFF_SHIM overrides it', () => {
    assert.equal(shimPath(), path.join(repo, 'build/skiff-shim'));
    assert.ok(fs.existsSync(shimPath()));
    process.env.SKIFF_SHIM = '/x/y';
    try { assert.equal(shimPath(), '/x/y'); } finally { delete process.env.SKIFF_SHIM; }
  });

  void test('a missing shim rejects launch with a hint', async () => {
    process.env.SKIFF_SHIM = path.join(base, 'no-shim');
    try {
      await assert.rejects(launch(spec(['true'])), /build-native/);
    } finally {
      delete process.env.SKIFF_SHIM;
    }
  });

  void test('SIGTERM to the shim is forwarded; the shim waits for the child', async () => {
    const s = spec(['sh', '-c', 'trap "sleep 0.2; echo late; exit 2" TERM; echo ready; while :; do sleep 0.05; done']);
    const p = await launch(s);
    await until(logHas(s.logFile, 'ready'), 'ready');
    const meta = JSON.parse(fs.readFileSync(path.join(s.stateDir, 'meta.json'), 'utf8')) as { shimPid: number };
    process.kill(meta.shimPid, 'SIGTERM');
    const exit = await exitOf(p);
    assert.equal(exit.exitCode, 2);
    assert.ok(logEntries(s.logFile).some((e) => e.content === 'late'), 'output after the signal is still logged');
  });
});

void describe('sandbox', { skip: !bwrapAvailable() && 'bwrap does not work here' }, () => {
  void test('bind mounts at new mount points, hostname, hosts file; the host is left alone', async () => {
    const src = fs.mkdtempSync(path.join(base, 'vol-'));
    fs.writeFileSync(path.join(src, 'file'), 'from the volume\n');
    const ro = fs.mkdtempSync(path.join(base, 'ro-'));
    const hosts = path.join(base, 'hosts');
    fs.writeFileSync(hosts, '10.1.2.3 skiff-peer\n');
    const name = `skiff-test-${marker()}`;
    const target = `/mnt/${name}`;
    const script = [
      `cat ${target}/file`,
      'hostname',
      'cat /etc/hosts',
      `touch /ro/x 2>/dev/null && echo ro-writable || echo ro-readonly`,
      `echo data > ${target}/out && echo rw-ok`,
      't=$(mktemp) && echo tmp-ok && rm "$t"',
      'echo x > /dev/shm/skiff-x && echo shm-ok',
      'echo "pid $$"',
      `ls /mnt/${name}/deeper/still >/dev/null && echo nested-ok`,
    ].join('; ');
    const deeper = fs.mkdtempSync(path.join(base, 'deeper-'));
    const s = spec(['sh', '-c', script], {
      sandbox: {
        binds: [
          { source: src, target },
          { source: ro, target: '/ro', readOnly: true },
          { source: deeper, target: `${target}/deeper/still` },
        ],
        hostname: 'skiff-pod-1',
        hostsFile: hosts,
      },
    });
    const exit = await exitOf(await launch(s));
    const lines = logEntries(s.logFile).map((e) => e.content);
    assert.equal(exit.exitCode, 0, lines.join('\n'));
    assert.deepEqual(lines, ['from the volume', 'skiff-pod-1', '10.1.2.3 skiff-peer', 'ro-readonly', 'rw-ok', 'tmp-ok', 'shm-ok',
      'pid 2', 'nested-ok']);
    assert.equal(fs.readFileSync(path.join(src, 'out'), 'utf8'), 'data\n', 'writes reach the volume');
    assert.ok(!fs.existsSync(target), 'no mount point created on the host');
    assert.ok(!fs.existsSync('/ro'), 'no mount point created on the host');
    assert.ok(fs.existsSync(path.join(src, 'deeper/still')), 'a mount point inside a volume is made in the volume');
  });

  void test('SIGTERM: a trapping workload exits on its own terms, also under bwrap', async () => {
    const m = marker();
    const s = spec(['sh', '-c', `trap "echo bye; exit 7" TERM; echo ready; sleep ${m} & wait`], { sandbox: { binds: [] } });
    const p = await launch(s);
    await until(logHas(s.logFile, 'ready'), 'ready');
    p.signal('SIGTERM');
    const exit = await exitOf(p);
    assert.deepEqual([exit.exitCode, exit.reason], [7, 'Error']);
    assert.ok(logEntries(s.logFile).some((e) => e.content === 'bye'));
    await until(() => processesWith(['sleep', m]).length === 0, 'no sleep left');
  });

  void test('SIGTERM without a handler is 143, SIGKILL is 137 and kills the tree, under bwrap', async () => {
    const t = marker();
    const term = await launch(spec(['sleep', t], { sandbox: { binds: [] } }));
    await until(() => processesWith(['sleep', t]).length === 1, 'the sleep');
    term.signal('SIGTERM');
    assert.equal((await exitOf(term)).exitCode, 143);

    const m = marker();
    const kill = await launch(spec(['sh', '-c', `sleep ${m} & sleep ${m}`], { sandbox: { binds: [] } }));
    await until(() => processesWith(['sleep', m]).length === 2, 'both sleeps');
    kill.signal('SIGKILL');
    assert.equal((await exitOf(kill)).exitCode, 137);
    await until(() => processesWith(['sleep', m]).length === 0, 'no sleep left');
  });

  void test('SIGTERM right after launch, before the workload runs, still stops it and leaks nothing', async () => {
    for (let i = 0; i < 5; i++) {
      const m = marker();
      const p = await launch(spec(['sleep', m], { sandbox: { binds: [] } }));
      p.signal('SIGTERM');
      // 143 if the workload was already running; 137 if bwrap was still setting up (killed outright)
      assert.ok([137, 143].includes((await exitOf(p, 5000)).exitCode));
      await until(() => processesWith(['sleep', m]).length === 0, 'no sleep left');
    }
  });

  void test('when the main process exits, the rest of the sandbox goes with it', async () => {
    const m = marker();
    const exit = await exitOf(await launch(spec(['sh', '-c', `sleep ${m} & exit 0`], { sandbox: { binds: [] } })));
    assert.equal(exit.exitCode, 0);
    await until(() => processesWith(['sleep', m]).length === 0, 'no sleep left');
  });

  void test('commands are looked up through the mounts; failures are StartErrors', async () => {
    const bin = fs.mkdtempSync(path.join(base, 'bin-'));
    fs.writeFileSync(path.join(bin, 'hello-skiff'), '#!/bin/sh\necho hello from the volume\n', { mode: 0o755 });
    fs.writeFileSync(path.join(bin, 'broken-skiff'), '#!/skiff/no/such/interpreter\n', { mode: 0o755 });
    const sandbox = { binds: [{ source: bin, target: '/opt/skiff-tools', readOnly: true }] };
    const e2 = { PATH: `/opt/skiff-tools:${env.PATH}` };
    const s = spec(['hello-skiff'], { env: e2, sandbox });
    const ok = await exitOf(await launch(s));
    assert.equal(ok.exitCode, 0);
    assert.deepEqual(logEntries(s.logFile).map((e) => e.content), ['hello from the volume']);

    const missing = await exitOf(await launch(spec(['skiff-no-such-command-xyz'], { env: e2, sandbox })));
    assert.equal(missing.reason, 'StartError');
    const broken = await exitOf(await launch(spec(['broken-skiff'], { env: e2, sandbox })));
    assert.equal(broken.reason, 'StartError');
    assert.match(broken.message ?? '', /^bwrap: .*broken-skiff/);
    const badSource = await exitOf(await launch(spec(['true'], { sandbox: { binds: [{ source: path.join(base, 'nope'), target: '/opt/x' }] } })));
    assert.equal(badSource.reason, 'StartError');
    assert.match(badSource.message ?? '', /^bwrap: /);
  });

  void test('adopting a sandboxed container', async () => {
    const s = spec(['sh', '-c', 'sleep 0.2; exit 3'], { sandbox: { binds: [] } });
    await launch(s);
    const p = adopt(s.stateDir);
    assert.ok('exited' in p);
    assert.equal((await exitOf(p)).exitCode, 3);
  });

  void test('works for a non-root user too', { skip: process.getuid?.() !== 0 && 'needs root to switch users' }, (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-nonroot-'));
    fs.chmodSync(dir, 0o777);
    const vol = path.join(dir, 'vol');
    fs.mkdirSync(vol, { mode: 0o777 });
    fs.chmodSync(vol, 0o777);
    fs.writeFileSync(path.join(vol, 'file'), 'nonroot\n', { mode: 0o644 });
    const mod = new URL('./process.js', import.meta.url).href;
    const s = { stateDir: path.join(dir, 'st'), logFile: path.join(dir, 'log'), argv: ['sh', '-c', 'cat /mnt/skiff-nonroot/file; hostname; id -u'],
      env, sandbox: { binds: [{ source: vol, target: '/mnt/skiff-nonroot' }], hostname: 'nonroot-pod' } };
    const code = `const { launch, bwrapAvailable } = await import(${JSON.stringify(mod)});
      if (!bwrapAvailable()) { console.log('no-bwrap'); process.exit(0); }
      const p = await launch(${JSON.stringify(s)}); const t = setInterval(() => {}, 1000);
      console.log(JSON.stringify(await p.exited())); clearInterval(t);`;
    const r = spawnSync('setpriv', ['--reuid', '65534', '--regid', '65534', '--clear-groups', process.execPath, '--input-type=module', '-e', code],
      { encoding: 'utf8', cwd: '/' });
    try {
      if (r.error || r.status !== 0) {
        assert.fail(`could not run as nobody: ${r.error?.message ?? r.stderr}`);
      }
      if (r.stdout.trim() === 'no-bwrap') return void t.skip('unprivileged bwrap is not allowed here');
      assert.equal((JSON.parse(r.stdout) as ExitInfo).exitCode, 0, fs.readFileSync(s.logFile, 'utf8'));
      assert.deepEqual(logEntries(s.logFile).map((e) => e.content), ['nonroot', 'nonroot-pod', '65534']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

void describe('sandbox without bwrap', () => {
  void test('runs the command directly and ignores the mounts', async () => {
    process.env.SKIFF_NO_BWRAP = '1';
    try {
      assert.equal(bwrapAvailable(), false);
      const s = spec(['sh', '-c', 'echo $$; test -e /mnt/skiff-not-mounted || echo not-mounted'],
        { sandbox: { binds: [{ source: base, target: '/mnt/skiff-not-mounted' }], hostname: 'x' } });
      const p = await launch(s);
      assert.equal((await exitOf(p)).exitCode, 0);
      const lines = logEntries(s.logFile).map((e) => e.content);
      assert.deepEqual(lines, [String(p.pid), 'not-mounted']);
    } finally {
      delete process.env.SKIFF_NO_BWRAP;
    }
  });
});
