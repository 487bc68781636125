import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { UiFiles } from '../ui.js';
import { KfpApiService, isKfpApiPath, startKfpInClusterService } from './in-cluster.js';

describe('KFP\'s in-cluster Service', () => {
  it('answers KFP\'s REST API only, as ml-pipeline\'s HTTP port does', () => {
    for (const p of ['/apis/v2beta1/healthz', '/apis/v1beta1/runs?page_size=1', '/apis/v2beta1', '/apis/v2beta1?x=1']) assert.ok(isKfpApiPath(p), p);
    for (const p of ['/api/v1/namespaces', '/apis/kubeflow.org/v1/pytorchjobs', '/apis/v2beta10/runs', '/ui/', '/', undefined]) assert.ok(!isKfpApiPath(p), String(p));
  });

  it('listens on port 8888 at the first free host, hands the API on and refuses the rest', async (t) => {
    // another process holding 8888 on the first host: the next one is taken
    const holder = createServer();
    const held = await new Promise<boolean>((resolve) => {
      holder.once('error', () => resolve(false));
      holder.listen(KfpApiService.port, '127.0.0.3', () => resolve(true));
    });
    if (!held) return t.skip('port 8888 of 127.0.0.3 is in use here');
    try {
      const seen: string[] = [];
      const svc = await startKfpInClusterService({
        hosts: ['127.0.0.3', '127.0.0.4'],
        handler: (req, res) => {
          seen.push(req.url ?? '');
          res.end('{}');
        },
      });
      if (!svc) return t.skip('port 8888 of 127.0.0.4 is in use here');
      try {
        assert.deepEqual([svc.host, svc.port], ['127.0.0.4', 8888]);
        assert.equal((await fetch('http://127.0.0.4:8888/apis/v2beta1/healthz')).status, 200);
        const other = await fetch('http://127.0.0.4:8888/api/v1/namespaces');
        assert.equal(other.status, 404);
        assert.match(await other.text(), /not part of KFP's API/);
        assert.deepEqual(seen, ['/apis/v2beta1/healthz']);
      } finally {
        await svc.close();
      }
    } finally {
      await new Promise((r) => holder.close(r));
    }
  });

  it('/pipeline/ (where Kubeflow serves KFP\'s UI, and so where the links of an in-cluster kfp.Client() point) is the dashboard', () => {
    const ui = new UiFiles('/nonexistent');
    for (const p of ['/pipeline', '/pipeline/', '/', '/ui/']) assert.ok(ui.handles(p), p);
    assert.ok(!ui.handles('/pipelines/upload'));
  });
});
