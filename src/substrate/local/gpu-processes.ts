// Which processes use the node's real GPU cards, and how much, from nvidia-smi: each card's use
// (`--query-gpu`), each process's framebuffer memory (`--query-compute-apps`) and each process's SM
// utilisation (`pmon`, one one-second sample). The usage monitor (usage.ts) maps the pids to the
// containers whose process trees hold them, as it does for CPU and memory.
//
// pmon is the slow one (it samples for a second) and the one a driver may lack or refuse (a vGPU
// guest, MIG): when it fails the sample says so, and the monitor splits each card's utilisation among
// the containers on it instead. After a few failures in a row it is no longer asked.
import { execFile } from 'node:child_process';
import type { GpuInfo } from '../../scheduler/node.js';
import type { GpuCardSample } from '../substrate.js';
import { parseGpuSamples } from './capacity.js';

/** One line of `--query-compute-apps=pid,gpu_uuid,used_memory`. */
export interface ComputeApp {
  pid: number;
  uuid: string;
  /** absent where the driver answers [N/A] (no privilege to see it, some vGPU and MIG setups) */
  memoryUsedMiB?: number;
}

/** One process line of `nvidia-smi pmon -s u`. */
export interface PmonProcess {
  index: number;
  pid: number;
  /** absent where pmon prints `-`: no kernel of the process ran in the sample */
  smPercent?: number;
}

/** A process on a card, with what is known of its use. */
export interface GpuProcessUse {
  pid: number;
  index: number;
  uuid: string;
  modelName: string;
  memoryUsedMiB?: number;
  smPercent?: number;
}

/** One sample of the node's real cards and of the processes on them. */
export interface GpuSample {
  cards: GpuCardSample[];
  processes: GpuProcessUse[];
  /** whether pmon answered: the processes' smPercent are measured (a process without one was idle) */
  perProcess: boolean;
}

const number = (s: string | undefined): number | undefined => {
  const t = s?.trim();
  if (!t || !/^-?\d+(\.\d+)?$/.test(t)) return undefined;
  return Number(t);
};

/** `pid, gpu_uuid, used_memory` lines (csv, noheader, nounits); a line without a pid or card is left out */
export function parseComputeApps(out: string): ComputeApp[] {
  return out.split('\n').flatMap((line) => {
    const [pidText, uuidText, memText] = line.split(',');
    const pid = number(pidText);
    const uuid = uuidText?.trim() ?? '';
    if (pid === undefined || !Number.isInteger(pid) || pid <= 0 || !uuid) return [];
    const mem = number(memText);
    return [{ pid, uuid, ...(mem !== undefined ? { memoryUsedMiB: mem } : {}) }];
  });
}

/**
 * `nvidia-smi pmon -c 1 -s u`: two `#` header lines (the names, `gpu pid type sm mem enc dec ...
 * command`, then their units), then a line per process per card; a card without processes has a line
 * of `-`. The columns are found by the header's names, since drivers have added some (jpg, ofa)
 * between releases; without a header the long-standing order (gpu, pid, type, sm) is assumed.
 */
export function parsePmon(out: string): PmonProcess[] {
  let col = { gpu: 0, pid: 1, sm: 3 };
  const rows: PmonProcess[] = [];
  for (const raw of out.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    if (line.startsWith('#')) {
      const names = line.slice(1).trim().split(/\s+/).map((n) => n.toLowerCase());
      if (names.includes('pid') && names.includes('gpu')) {
        col = { gpu: names.indexOf('gpu'), pid: names.indexOf('pid'), sm: names.indexOf('sm') };
      }
      continue;
    }
    const f = line.split(/\s+/);
    const index = number(f[col.gpu]);
    const pid = number(f[col.pid]);
    if (index === undefined || pid === undefined || !Number.isInteger(index) || !Number.isInteger(pid) || pid <= 0) continue;
    const sm = col.sm >= 0 ? number(f[col.sm]) : undefined;
    rows.push({ index, pid, ...(sm !== undefined ? { smPercent: sm } : {}) });
  }
  return rows;
}

/** Joins the two process lists on the card: compute-apps names cards by UUID, pmon by index. */
export function gpuProcesses(cards: GpuInfo[], apps: ComputeApp[], pmon: PmonProcess[] | undefined): GpuProcessUse[] {
  const byUuid = new Map(cards.map((c) => [c.uuid, c]));
  const byIndex = new Map(cards.map((c) => [c.index, c]));
  const out = new Map<string, GpuProcessUse>();
  for (const a of apps) {
    // a MIG instance's UUID names no whole card: left out, as its card's index is not known here
    const card = byUuid.get(a.uuid);
    if (!card) continue;
    const k = `${card.index}/${a.pid}`;
    const seen = out.get(k);
    if (seen) {
      if (a.memoryUsedMiB !== undefined) seen.memoryUsedMiB = (seen.memoryUsedMiB ?? 0) + a.memoryUsedMiB;
      continue;
    }
    out.set(k, { pid: a.pid, index: card.index, uuid: card.uuid, modelName: card.name, ...(a.memoryUsedMiB !== undefined ? { memoryUsedMiB: a.memoryUsedMiB } : {}) });
  }
  for (const p of pmon ?? []) {
    const card = byIndex.get(p.index);
    if (!card) continue;
    const k = `${card.index}/${p.pid}`;
    // a graphics process is in pmon only: it counts too, without a memory figure
    const u = out.get(k) ?? { pid: p.pid, index: card.index, uuid: card.uuid, modelName: card.name };
    if (p.smPercent !== undefined) u.smPercent = (u.smPercent ?? 0) + p.smPercent;
    out.set(k, u);
  }
  return [...out.values()];
}

/** runs nvidia-smi; undefined when it is missing, fails or takes too long */
function nvidiaSmi(args: string[], timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('nvidia-smi', args, { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 }, (err, stdout) => resolve(err ? undefined : stdout));
  });
}

export interface GpuSamplerOptions {
  /** the node's real cards, as discovery found them */
  cards: GpuInfo[];
  /** the limit on each of the card and process queries */
  timeoutMs?: number;
  /** the limit on pmon, which samples for a second before it answers */
  pmonTimeoutMs?: number;
  /** failures in a row after which pmon is no longer asked */
  pmonGiveUpAfter?: number;
}

/** Samples the real cards and their processes; one sample at a time is the caller's rule (usage.ts). */
export class GpuSampler {
  private pmonFailures = 0;

  constructor(private readonly opts: GpuSamplerOptions) {}

  /** whether pmon is still asked */
  get pmonInUse(): boolean {
    return this.pmonFailures < (this.opts.pmonGiveUpAfter ?? 3);
  }

  /** the queries run one after another, so a sample never has more than one nvidia-smi running */
  async sample(): Promise<GpuSample> {
    const t = this.opts.timeoutMs ?? 5000;
    const cardsOut = await nvidiaSmi(['--query-gpu=index,utilization.gpu,memory.used', '--format=csv,noheader,nounits'], t);
    const appsOut = await nvidiaSmi(['--query-compute-apps=pid,gpu_uuid,used_memory', '--format=csv,noheader,nounits'], t);
    let pmon: PmonProcess[] | undefined;
    if (this.pmonInUse) {
      const out = await nvidiaSmi(['pmon', '-c', '1', '-s', 'u'], this.opts.pmonTimeoutMs ?? 5000);
      if (out === undefined) this.pmonFailures++;
      else {
        this.pmonFailures = 0;
        pmon = parsePmon(out);
      }
    }
    return {
      cards: cardsOut === undefined ? [] : parseGpuSamples(cardsOut),
      processes: gpuProcesses(this.opts.cards, appsOut === undefined ? [] : parseComputeApps(appsOut), pmon),
      perProcess: pmon !== undefined,
    };
  }
}
