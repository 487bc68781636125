// `skiff apply --dry-run=server -o yaml -f job.yaml` against the real API server on an in-memory
// store: the defaulted job, then a List of the Pods (and Services, ConfigMaps) it would create;
// nothing is stored.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { Kinds, defaultRegistry } from '../../api/index.js';
import type { KObject, StoredObject } from '../../api/meta.js';
import { main } from '../../cli/main.js';
import { conformanceDir } from '../../conformance-path.js';
import { App } from '../../server/app.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { trainingWorkload } from './index.js';

describe('apply --dry-run=server renders a training job', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-dry-'));
  const registry = defaultRegistry();
  const client = new Client(new SqliteStore({ file: ':memory:' }), registry);
  let server: Server;
  let url = '';

  before(async () => {
    for (const name of ['default', 'kubeflow']) await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    const app = new App({
      client, registry, version: 'test', ready: () => true,
      logs: { logs: async () => { throw new Error('no logs here'); } },
      dryRender: (obj: StoredObject) => trainingWorkload.dryRender?.(obj) ?? [],
    } as unknown as ConstructorParameters<typeof App>[0]);
    server = createServer(app.handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  async function skiff(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await main([...argv, '--server', url], {
      stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {}, cwd: dir, now: () => Date.now(), readStdin: async () => '',
    });
    return { code, stdout, stderr };
  }

  it('prints the defaulted job, then its Pods and Services, and stores nothing', async () => {
    copyFileSync(join(conformanceDir(), 'training/pytorch/simple.yaml'), join(dir, 'job.yaml'));
    const r = await skiff(['apply', '--dry-run=server', '-o', 'yaml', '-f', 'job.yaml']);
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    const docs = parseAllDocuments(r.stdout).map((d) => d.toJS() as KObject);
    assert.equal(docs.length, 2);
    const [job, list] = docs as [KObject, KObject];
    assert.equal(job.kind, 'PyTorchJob');
    assert.equal(job.spec.runPolicy.cleanPodPolicy, 'None');
    assert.equal(job.metadata.namespace, 'kubeflow');
    assert.equal(list.kind, 'List');
    const items = list.items as KObject[];
    assert.deepEqual(items.map((o) => `${o.kind}/${o.metadata.name}`), [
      'Pod/pytorch-simple-master-0', 'Pod/pytorch-simple-worker-0', 'Service/pytorch-simple-master-0', 'Service/pytorch-simple-worker-0',
    ]);
    const worker = items[1]!;
    assert.ok(worker.spec.containers[0].env.some((e: { name: string; value: string }) => e.name === 'RANK' && e.value === '1'));
    assert.equal(worker.spec.initContainers[0].name, 'init-pytorch');
    assert.equal((await client.list(Kinds.PyTorchJob)).items.length, 0, 'a dry run stores nothing');
    assert.equal((await client.list(Kinds.Pod)).items.length, 0);
  });

  it('says so without -o; rejects an invalid job naming the field', async () => {
    writeFileSync(join(dir, 'xgb.yaml'), 'apiVersion: kubeflow.org/v1\nkind: XGBoostJob\nmetadata: {name: x}\nspec:\n  xgbReplicaSpecs:\n    Worker: {template: {spec: {containers: [{name: xgboost, image: i}]}}}\n');
    const bad = await skiff(['apply', '--dry-run=server', '-f', 'xgb.yaml']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /spec\.xgbReplicaSpecs\.Master/);
    const ok = await skiff(['apply', '--dry-run=server', '-f', join(conformanceDir(), 'training/mpi-operator/v2beta1/pi/pi.yaml')]);
    assert.equal(ok.stdout, 'mpijob.kubeflow.org/pi created (server dry run)\n');
    const yaml = await skiff(['apply', '--dry-run=server', '-o', 'yaml', '-f', join(conformanceDir(), 'training/mpi-operator/v2beta1/pi/pi.yaml')]);
    const list = parseAllDocuments(yaml.stdout).map((d) => d.toJS() as KObject)[1]!;
    assert.deepEqual((list.items as KObject[]).map((o) => `${o.kind}/${o.metadata.name}`), ['Pod/pi-launcher', 'Pod/pi-worker-0', 'Pod/pi-worker-1', 'Service/pi', 'ConfigMap/pi-config', 'ServiceAccount/pi-launcher', 'Role/pi-launcher', 'RoleBinding/pi-launcher']);
  });
});
