// Whole-GPU placement on a node configured with two GPUs (no GPU is needed: the config stands in for
// nvidia-smi). Pods get CUDA_VISIBLE_DEVICES; a third GPU Pod waits until one is free.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestServer, podManifest } from './harness.js';

const pods = '/api/v1/namespaces/default/pods';

describe('GPU placement', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start({ config: { node: { gpus: 2 } } });
  });
  after(async () => {
    await s.cleanup();
  });

  const gpuPod = (name: string, n: number, cmd: string): any => {
    const m = podManifest(name, ['sh', '-c', cmd]);
    m.spec.containers[0].resources = { limits: { 'nvidia.com/gpu': String(n) } };
    return m;
  };
  const log = async (name: string): Promise<string> => {
    await s.until(`${name} done`, async () => ['Succeeded', 'Failed'].includes((await s.get(`${pods}/${name}`)).status?.phase));
    return (await s.req('GET', `${pods}/${name}/log`)).text;
  };

  it('advertises the GPUs as node capacity', async () => {
    const node = await s.get('/api/v1/nodes/local');
    // HAMi's count: each card is split into 10 shares
    assert.equal(node.status.capacity['nvidia.com/gpu'], '20');
  });

  it('hands out distinct GPUs, hides them from Pods that asked for none, and queues the rest', async () => {
    await s.create(pods, gpuPod('gpu-a', 1, 'echo "[$CUDA_VISIBLE_DEVICES]"; sleep 1.5'));
    await s.create(pods, gpuPod('gpu-b', 1, 'echo "[$CUDA_VISIBLE_DEVICES]"; sleep 1.5'));
    await s.until('both running', async () => {
      const items = (await s.get(pods)).items.filter((p: any) => p.metadata.name.startsWith('gpu-'));
      return items.length === 2 && items.every((p: any) => p.status?.phase === 'Running');
    });
    await s.create(pods, gpuPod('gpu-c', 1, 'echo "[$CUDA_VISIBLE_DEVICES]"'));
    const waiting = await s.until('gpu-c pending', async () => {
      const p = await s.get(`${pods}/gpu-c`);
      return p.status?.conditions?.find((c: any) => c.type === 'PodScheduled' && c.status === 'False') ? p : undefined;
    });
    assert.match(waiting.status.conditions[0].message, /Insufficient nvidia.com\/gpu/);
    await s.create(pods, podManifest('no-gpu', ['sh', '-c', 'echo "[${CUDA_VISIBLE_DEVICES-unset}]"']));
    const seen = [await log('gpu-a'), await log('gpu-b')].sort();
    assert.deepEqual(seen, ['[0]\n', '[1]\n']);
    assert.match(await log('gpu-c'), /^\[[01]\]\n$/);
    assert.equal(await log('no-gpu'), '[]\n');
  });
});
