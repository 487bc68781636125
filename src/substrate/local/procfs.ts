// What /proc says about processes and the machine, for the usage monitor. Containers here are process
// trees without a cgroup of their own, so their CPU and memory are summed over their processes; the
// machine's come from /proc/stat and /proc/meminfo. Only files are read: no process is started.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/** USER_HZ, the unit of CPU times in /proc: 100 on every architecture Linux gives user space */
export const CLOCK_TICKS = 100;

export interface ProcInfo {
  pid: number;
  ppid: number;
  /** the session: a process forked by the warm Python zygote leads its own */
  sid: number;
  state: string;
  /** user + system time of the process and of the children it has reaped, in clock ticks */
  cpuTicks: number;
}

/** One line of /proc/PID/stat; undefined when it does not parse. */
export function parseStat(pid: number, text: string): ProcInfo | undefined {
  // the command name (field 2) may hold spaces and parentheses: fields 3.. follow its last ')'
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const f = text.slice(close + 2).trim().split(' ');
  // f[0] is field 3 (state); utime, stime, cutime, cstime are fields 14-17
  const ticks = [11, 12, 13, 14].map((i) => Number(f[i]));
  const ppid = Number(f[1]);
  const sid = Number(f[3]);
  if (f.length < 15 || ticks.some((t) => !Number.isFinite(t)) || !Number.isFinite(ppid)) return undefined;
  return { pid, ppid, sid, state: f[0] ?? '', cpuTicks: ticks.reduce((a, b) => a + b, 0) };
}

export class ProcFs {
  constructor(readonly root = '/proc') {}

  private read(path: string): string | undefined {
    try {
      return readFileSync(`${this.root}/${path}`, 'latin1');
    } catch {
      return undefined;
    }
  }

  /** every process there is now (those that end while it reads are left out) */
  processes(): Map<number, ProcInfo> {
    const out = new Map<number, ProcInfo>();
    let names: string[];
    try {
      names = readdirSync(this.root);
    } catch {
      return out;
    }
    for (const name of names) {
      if (!/^\d+$/.test(name)) continue;
      const pid = Number(name);
      const text = this.read(`${name}/stat`);
      const info = text === undefined ? undefined : parseStat(pid, text);
      if (info) out.set(pid, info);
    }
    return out;
  }

  /** what the process's standard output is, e.g. `pipe:[1234]`; undefined if unreadable */
  stdout(pid: number): string | undefined {
    try {
      return readlinkSync(`${this.root}/${pid}/fd/1`);
    } catch {
      return undefined;
    }
  }

  /**
   * The memory a process holds, in bytes: its proportional set size (private pages, plus its share
   * of pages it shares), so processes forked from one parent, which share most of their pages, are
   * not counted once each; the resident set where smaps_rollup cannot be read.
   */
  memoryBytes(pid: number): number {
    const rollup = this.read(`${pid}/smaps_rollup`);
    const pss = rollup === undefined ? undefined : /^Pss:\s+(\d+) kB/m.exec(rollup)?.[1];
    if (pss !== undefined) return Number(pss) * 1024;
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(this.read(`${pid}/status`) ?? '')?.[1];
    return rss === undefined ? 0 : Number(rss) * 1024;
  }

  /** the CPU time the whole machine has spent outside idle and I/O wait since boot, in clock ticks */
  nodeCpuTicks(): number | undefined {
    const line = /^cpu\s+(.*)$/m.exec(this.read('stat') ?? '')?.[1];
    if (!line) return undefined;
    // user nice system idle iowait irq softirq steal (guest time is already within user)
    const v = line.trim().split(/\s+/).map(Number);
    const busy = [0, 1, 2, 5, 6, 7].reduce((a, i) => a + (v[i] ?? 0), 0);
    return Number.isFinite(busy) ? busy : undefined;
  }

  /**
   * The machine's working set, as cAdvisor computes a root cgroup's: memory in use (page cache
   * included) less the inactive file pages the kernel can drop first.
   */
  nodeMemoryBytes(): number | undefined {
    const info = this.read('meminfo');
    if (info === undefined) return undefined;
    const kb = (key: string): number | undefined => {
      const m = new RegExp(`^${key.replace(/[()]/g, '\\$&')}:\\s+(\\d+) kB`, 'm').exec(info);
      return m ? Number(m[1]) : undefined;
    };
    const total = kb('MemTotal');
    const free = kb('MemFree');
    if (total === undefined || free === undefined) return undefined;
    return Math.max(0, total - free - (kb('Inactive(file)') ?? 0)) * 1024;
  }
}

/**
 * The processes of each container, given each container's main process: its descendants, and the
 * sessions that write to the container's output without descending from it (a task the warm Python
 * zygote forked for the container's skiff-pyfork, which holds the container's pipes), with theirs.
 */
export function containerProcesses(fs: ProcFs, procs: Map<number, ProcInfo>, roots: Map<string, number>): Map<string, number[]> {
  const children = new Map<number, number[]>();
  for (const p of procs.values()) {
    const list = children.get(p.ppid);
    if (list) list.push(p.pid);
    else children.set(p.ppid, [p.pid]);
  }
  const owner = new Map<number, string>();
  const out = new Map<string, number[]>();
  const claim = (key: string, root: number): void => {
    const list = out.get(key) ?? [];
    out.set(key, list);
    const stack = [root];
    while (stack.length) {
      const pid = stack.pop() as number;
      if (owner.has(pid) || !procs.has(pid)) continue;
      owner.set(pid, key);
      list.push(pid);
      stack.push(...(children.get(pid) ?? []));
    }
  };
  const pipes = new Map<string, string>();
  for (const [key, pid] of roots) {
    out.set(key, []);
    claim(key, pid);
    const o = procs.has(pid) ? fs.stdout(pid) : undefined;
    // the same inode is the same end of the same pipe: inherited or passed, never a coincidence
    if (o?.startsWith('pipe:') || o?.startsWith('socket:')) pipes.set(o, key);
  }
  if (pipes.size) {
    for (const p of procs.values()) {
      if (p.sid !== p.pid || owner.has(p.pid)) continue;
      const o = fs.stdout(p.pid);
      const key = o === undefined ? undefined : pipes.get(o);
      if (key !== undefined) claim(key, p.pid);
    }
  }
  return out;
}
