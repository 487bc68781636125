// /proc parsing on a made-up /proc (the layouts the kernel writes), and the container trees built
// from it; the real /proc is read by usage.test.ts and the e2e test.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ProcFs, containerProcesses, parseStat } from './procfs.js';

const root = mkdtempSync(join(tmpdir(), 'skiff-procfs-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** a /proc/PID with a stat line (times in ticks), an optional stdout and smaps_rollup */
function proc(dir: string, pid: number, o: { comm?: string; ppid: number; sid?: number; utime?: number; stime?: number; cutime?: number; cstime?: number; state?: string; stdout?: string; pssKb?: number; rssKb?: number }): void {
  const d = join(dir, String(pid));
  mkdirSync(join(d, 'fd'), { recursive: true });
  // fields 3.. : state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
  const rest = [o.state ?? 'S', o.ppid, pid, o.sid ?? o.ppid, 0, -1, 0, 0, 0, 0, 0, o.utime ?? 0, o.stime ?? 0, o.cutime ?? 0, o.cstime ?? 0, 20, 0, 1, 0, 1000, 0, 0];
  writeFileSync(join(d, 'stat'), `${pid} (${o.comm ?? 'python3'}) ${rest.join(' ')}\n`);
  if (o.stdout) symlinkSync(o.stdout, join(d, 'fd', '1'));
  if (o.pssKb !== undefined) writeFileSync(join(d, 'smaps_rollup'), `00400000-7ffd4002f000 ---p 00000000 00:00 0 [rollup]\nRss:  ${(o.rssKb ?? o.pssKb) + 100} kB\nPss:  ${o.pssKb} kB\nPss_Anon: 1 kB\n`);
  if (o.rssKb !== undefined) writeFileSync(join(d, 'status'), `Name:\tpython3\nVmRSS:\t  ${o.rssKb} kB\n`);
}

describe('parseStat', () => {
  it('reads past a command name with spaces and parentheses', () => {
    const p = parseStat(42, '42 (a) b (c)) R 7 42 9 0 -1 0 0 0 0 0 150 50 30 20 20 0 1 0 1000 0 0\n');
    assert.deepEqual(p, { pid: 42, ppid: 7, sid: 9, state: 'R', cpuTicks: 250 });
  });
  it('gives nothing for a line it cannot read', () => {
    assert.equal(parseStat(1, 'garbage'), undefined);
    assert.equal(parseStat(1, '1 (x) S 0 1'), undefined);
  });
});

describe('ProcFs', () => {
  const dir = join(root, 'machine');
  mkdirSync(dir);
  writeFileSync(join(dir, 'stat'), 'cpu  1000 50 300 9000 200 10 20 5 40 0\ncpu0 500 25 150 4500 100 5 10 2 20 0\n');
  writeFileSync(join(dir, 'meminfo'), 'MemTotal:       16000000 kB\nMemFree:         4000000 kB\nMemAvailable:    9000000 kB\nInactive(file):  2000000 kB\n');
  proc(dir, 10, { ppid: 1, pssKb: 2048, rssKb: 4096 });
  proc(dir, 11, { ppid: 1, rssKb: 300 });
  proc(dir, 12, { ppid: 1 });
  const fs = new ProcFs(dir);

  it('reads the machine: busy CPU ticks (not idle or iowait) and the working set', () => {
    assert.equal(fs.nodeCpuTicks(), 1000 + 50 + 300 + 10 + 20 + 5);
    assert.equal(fs.nodeMemoryBytes(), (16000000 - 4000000 - 2000000) * 1024);
  });
  it('counts a process by its proportional set size, else its resident set', () => {
    assert.equal(fs.memoryBytes(10), 2048 * 1024);
    assert.equal(fs.memoryBytes(11), 300 * 1024);
    assert.equal(fs.memoryBytes(12), 0);
    assert.equal(fs.memoryBytes(999), 0);
  });
});

describe('containerProcesses', () => {
  const dir = join(root, 'trees');
  mkdirSync(dir);
  // container a: 100 -> 101 -> 102; container b: 200, whose skiff-pyfork had the zygote (300) fork
  // 301, a session of its own writing to b's pipe, with a child 302; 400 is someone else's
  proc(dir, 100, { ppid: 50, stdout: 'pipe:[1]' });
  proc(dir, 101, { ppid: 100, stdout: 'pipe:[1]' });
  proc(dir, 102, { ppid: 101, stdout: '/dev/null' });
  proc(dir, 200, { comm: 'skiff-pyfork', ppid: 60, stdout: 'pipe:[2]' });
  proc(dir, 300, { ppid: 1, sid: 300, stdout: '/dev/null' });
  proc(dir, 301, { ppid: 300, sid: 301, stdout: 'pipe:[2]' });
  proc(dir, 302, { ppid: 301, sid: 301, stdout: 'pipe:[2]' });
  proc(dir, 400, { ppid: 1, sid: 400, stdout: 'pipe:[3]' });
  const fs = new ProcFs(dir);

  it('gives each container its descendants and the sessions that write to its output', () => {
    const got = containerProcesses(fs, fs.processes(), new Map([['a', 100], ['b', 200], ['gone', 500]]));
    assert.deepEqual([...(got.get('a') ?? [])].sort(), [100, 101, 102]);
    assert.deepEqual([...(got.get('b') ?? [])].sort(), [200, 301, 302]);
    assert.deepEqual(got.get('gone'), []);
  });
});
