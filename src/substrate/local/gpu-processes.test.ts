// nvidia-smi's per-process answers: compute-apps' memory, pmon's SM utilisation, joined on the card;
// empty answers, [N/A] and `-` included. The sampler itself runs against a made-up nvidia-smi on PATH.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { GpuInfo } from '../../scheduler/node.js';
import { GpuSampler, gpuProcesses, parseComputeApps, parsePmon } from './gpu-processes.js';

const cards: GpuInfo[] = [
  { index: 0, uuid: 'GPU-aaa', name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559 },
  { index: 1, uuid: 'GPU-bbb', name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559 },
];

describe('compute-apps', () => {
  it('reads pid, card and memory; [N/A] memory is left out, not zero', () => {
    assert.deepEqual(parseComputeApps('1234, GPU-aaa, 1024\n5678, GPU-bbb, [N/A]\n'), [
      { pid: 1234, uuid: 'GPU-aaa', memoryUsedMiB: 1024 },
      { pid: 5678, uuid: 'GPU-bbb' },
    ]);
  });

  it('an empty answer (no process on any card) and lines that are not processes give nothing', () => {
    assert.deepEqual(parseComputeApps(''), []);
    assert.deepEqual(parseComputeApps('\n'), []);
    assert.deepEqual(parseComputeApps('No running processes found\n[N/A], GPU-aaa, 10\n'), []);
  });
});

describe('pmon', () => {
  const classic = [
    '# gpu        pid  type    sm   mem   enc   dec   command',
    '# Idx          #   C/G     %     %     %     %   name',
    '    0       1234     C    45    20     -     -   python',
    '    1          -     -     -     -     -     -   -',
  ].join('\n');

  it('reads the card, the pid and sm by the header; an idle card\'s line of `-` is no process', () => {
    assert.deepEqual(parsePmon(classic), [{ index: 0, pid: 1234, smPercent: 45 }]);
  });

  it('`-` in sm is a process with no kernel in the sample', () => {
    assert.deepEqual(parsePmon('# gpu pid type sm mem enc dec command\n 0 99 C - - - - python\n'), [{ index: 0, pid: 99 }]);
  });

  it('finds the columns by name when a driver adds some, and assumes the usual order without a header', () => {
    const newer = '# gpu         pid   type     sm    mem    enc    dec    jpg    ofa    command\n# Idx           #    C/G      %      %      %      %      %      %    name\n    0        777     C      12      3      -      -      -      -    python3\n';
    assert.deepEqual(parsePmon(newer), [{ index: 0, pid: 777, smPercent: 12 }]);
    assert.deepEqual(parsePmon('# type pid gpu sm\n C 5 1 30\n'), [{ index: 1, pid: 5, smPercent: 30 }]);
    assert.deepEqual(parsePmon('    1   42   C   7   0   -   -   a.out\n'), [{ index: 1, pid: 42, smPercent: 7 }]);
    assert.deepEqual(parsePmon(''), []);
  });
});

describe('joining the two on the card', () => {
  it('memory from compute-apps by UUID, utilisation from pmon by index; a MIG or unknown UUID is left out', () => {
    const apps = parseComputeApps('10, GPU-aaa, 500\n11, GPU-bbb, 700\n12, MIG-xyz, 100\n');
    const pmon = parsePmon('# gpu pid type sm\n0 10 C 40\n1 11 C -\n1 13 G 5\n');
    assert.deepEqual(gpuProcesses(cards, apps, pmon), [
      { pid: 10, index: 0, uuid: 'GPU-aaa', modelName: 'NVIDIA H100 80GB HBM3', memoryUsedMiB: 500, smPercent: 40 },
      { pid: 11, index: 1, uuid: 'GPU-bbb', modelName: 'NVIDIA H100 80GB HBM3', memoryUsedMiB: 700 },
      // a graphics process is in pmon only
      { pid: 13, index: 1, uuid: 'GPU-bbb', modelName: 'NVIDIA H100 80GB HBM3', smPercent: 5 },
    ]);
    assert.deepEqual(gpuProcesses(cards, apps.slice(0, 1), undefined), [{ pid: 10, index: 0, uuid: 'GPU-aaa', modelName: 'NVIDIA H100 80GB HBM3', memoryUsedMiB: 500 }]);
  });
});

describe('the sampler against a made-up nvidia-smi', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-smi-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const withSmi = async <T>(script: string, f: () => Promise<T>): Promise<T> => {
    writeFileSync(join(dir, 'nvidia-smi'), `#!/bin/sh\n${script}\n`);
    chmodSync(join(dir, 'nvidia-smi'), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `${dir}:${path ?? ''}`;
    try {
      return await f();
    } finally {
      process.env.PATH = path;
    }
  };

  it('asks for the cards, the compute apps and pmon, and says the utilisation is per process', async () => {
    const s = new GpuSampler({ cards });
    const got = await withSmi(`case "$*" in
  *query-gpu*) echo "0, 60, 1500"; echo "1, 0, 0";;
  *query-compute-apps*) echo "4321, GPU-aaa, 1500";;
  pmon*) echo "# gpu pid type sm mem enc dec command"; echo "# Idx # C/G % % % % name"; echo "0 4321 C 55 10 - - python";;
esac`, () => s.sample());
    assert.deepEqual(got, {
      cards: [{ index: 0, gpuPercent: 60, memoryUsedMiB: 1500 }, { index: 1, gpuPercent: 0, memoryUsedMiB: 0 }],
      processes: [{ pid: 4321, index: 0, uuid: 'GPU-aaa', modelName: 'NVIDIA H100 80GB HBM3', memoryUsedMiB: 1500, smPercent: 55 }],
      perProcess: true,
    });
  });

  it('without pmon the sample says so, and pmon is no longer asked after failures in a row', async () => {
    const s = new GpuSampler({ cards, pmonGiveUpAfter: 2 });
    const script = `case "$*" in
  *query-gpu*) echo "0, 60, 1500";;
  *query-compute-apps*) echo "4321, GPU-aaa, 1500";;
  pmon*) echo "pmon asked" >> ${join(dir, 'pmon.log')}; exit 6;;
esac`;
    const first = await withSmi(script, () => s.sample());
    assert.equal(first.perProcess, false);
    assert.deepEqual(first.processes.map((p) => [p.pid, p.memoryUsedMiB, p.smPercent]), [[4321, 1500, undefined]]);
    await withSmi(script, () => s.sample());
    assert.equal(s.pmonInUse, false);
    await withSmi(script, () => s.sample());
    assert.equal(readFileSync(join(dir, 'pmon.log'), 'utf8').trim().split('\n').length, 2);
  });

  it('no nvidia-smi at all: an empty sample', async () => {
    const s = new GpuSampler({ cards });
    const path = process.env.PATH;
    process.env.PATH = dir.replace(/$/, '-none');
    try {
      assert.deepEqual(await s.sample(), { cards: [], processes: [], perProcess: false });
    } finally {
      process.env.PATH = path;
    }
  });
});
