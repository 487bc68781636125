// Per-container GPU use on /metrics under dcgm-exporter's names, on a node whose "real" cards are a
// made-up nvidia-smi on the server's PATH (no GPU is needed): it answers discovery, the cards' use,
// the compute apps (the running Pod's process, found by a marker in its command line) and pmon. The
// same figures reach the Pod's usage history and its page's charts.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openUi } from './browser.js';
import { TestServer, podManifest } from './harness.js';

const pods = '/api/v1/namespaces/default/pods';
const marker = `skiff-gpu-marker-${process.pid}`;
const model = 'NVIDIA H100 80GB HBM3';

// the process holding the card is the newest with the marker: the Pod's own shell, not a sandbox
// wrapper whose arguments carry it too
const fakeSmi = (dir: string): string => `#!/bin/sh
pid=$(pgrep -n -f ${marker})
case "$*" in
  *--query-gpu=index,uuid,name,memory.total*) echo "0, GPU-11111111-aaaa, ${model}, 81559"; echo "1, GPU-22222222-bbbb, ${model}, 81559";;
  *--query-gpu=index,utilization.gpu,memory.used*) echo "0, 63, 1300"; echo "1, [N/A], 0";;
  *--query-compute-apps*) [ -n "$pid" ] && echo "$pid, GPU-11111111-aaaa, 1234";;
  pmon*)
    [ -e ${join(dir, 'no-pmon')} ] && { echo "pmon is not supported" >&2; exit 3; }
    echo "# gpu        pid  type    sm   mem   enc   dec   command"
    echo "# Idx          #   C/G     %     %     %     %   name"
    [ -n "$pid" ] && echo "    0 $pid     C    42    10     -     -   sh"
    echo "    1          -     -     -     -     -     -   -";;
  *) exit 9;;
esac
exit 0
`;

describe('GPU use per Pod on /metrics (a simulated nvidia-smi)', () => {
  let s: TestServer;
  let dir: string;
  let path: string | undefined;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skiff-fake-smi-'));
    writeFileSync(join(dir, 'nvidia-smi'), fakeSmi(dir));
    chmodSync(join(dir, 'nvidia-smi'), 0o755);
    path = process.env.PATH;
    // the server inherits it, and finds the made-up cards as a real node would
    process.env.PATH = `${dir}:${path ?? ''}`;
    s = await TestServer.start({ config: { metricsResolution: '500ms' } });
  });
  after(async () => {
    process.env.PATH = path;
    await s.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const series = (text: string, name: string, pod: string): { labels: string; value: number } | undefined => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`pod="${pod}"`));
    const m = line && /^\w+\{(.*)\} (\S+)$/.exec(line);
    return m ? { labels: m[1] as string, value: Number(m[2]) } : undefined;
  };

  it("serves the Pod's framebuffer memory and SM utilisation with dcgm-exporter's labels", async () => {
    const node = await s.get('/api/v1/nodes/local');
    assert.equal(node.status.capacity['nvidia.com/gpu'], '20', 'the made-up cards were discovered');
    const m = podManifest('gpu-user', ['sh', '-c', 'while :; do sleep 1; done', marker]);
    m.spec.containers[0].resources = { limits: { 'nvidia.com/gpu': '1' } };
    await s.create(pods, m);
    const fb = await s.until('a GPU sample of the Pod', async () => series((await s.req('GET', '/metrics')).text, 'DCGM_FI_DEV_FB_USED', 'gpu-user'), 30_000);
    assert.equal(fb.value, 1234);
    assert.equal(fb.labels, `gpu="0",UUID="GPU-11111111-aaaa",modelName="${model}",Hostname="local",container="main",namespace="default",pod="gpu-user"`);
    // pmon's figure for the Pod's process. The made-up nvidia-smi finds the process anew on each call
    // (the newest carrying the marker); a sample whose compute-apps and pmon calls fall either side of
    // a change of that process, as the Pod starts, names two pids and reads as an idle process (0)
    const util = await s.until("pmon's figure for the Pod's process", async () => {
      const u = series((await s.req('GET', '/metrics')).text, 'DCGM_FI_DEV_GPU_UTIL', 'gpu-user');
      return u?.value === 42 ? u : undefined;
    }, 10_000);
    assert.equal(util.labels, fb.labels);
  });

  it("carries the GPU use into the Pod's usage history, and its page charts it", async () => {
    const h = await s.until('a history sample with the card', async () => {
      const r = await s.req('GET', `/skiff/v1/namespaces/default/pods/gpu-user/usage`);
      return r.body.samples?.find((x: any) => x.containers[0]?.gpus?.[0]?.gpuPercent === 42);
    }, 10_000);
    assert.deepEqual(h.containers[0].gpus, [{ index: 0, memoryMiB: 1234, gpuPercent: 42, gpuPercentSource: 'process' }]);
    const ui = await openUi(s);
    try {
      await ui.open('/ui/default/pods/gpu-user');
      const mem = ui.page.getByRole('figure', { name: /^GPU memory/ });
      await mem.waitFor({ timeout: 60_000 });
      assert.match(await mem.innerText(), /GPU memory · now 1\.21 GiB/);
      assert.match(await ui.page.getByRole('figure', { name: /^GPU utilisation/ }).innerText(), /GPU utilisation · now 42%/);
      await ui.page.getByRole('heading', { name: 'CPU, memory and GPU' }).waitFor();
      await ui.shot('pod-usage-gpu');
    } finally {
      await ui.close();
    }
  });

  it("without pmon, the card's utilisation is the Pod's (it is alone on the card)", async () => {
    writeFileSync(join(dir, 'no-pmon'), '');
    const util = await s.until("the card's figure", async () => {
      const u = series((await s.req('GET', '/metrics')).text, 'DCGM_FI_DEV_GPU_UTIL', 'gpu-user');
      return u?.value === 63 ? u : undefined;
    }, 20_000);
    assert.match(util.labels, /gpu="0",UUID="GPU-11111111-aaaa"/);
    assert.equal(series((await s.req('GET', '/metrics')).text, 'DCGM_FI_DEV_FB_USED', 'gpu-user')?.value, 1234);
  });
});
