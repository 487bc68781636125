// The builders make jobs the API accepts as they are and that render to the Pods they describe.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Kinds, defaultRegistry } from '../../api/index.js';
import { Client } from '../../store/client.js';
import { SqliteStore } from '../../store/sqlite/store.js';
import { trainingKindFor } from './render.js';
import { makeJAXJob, makeMPIJob, makeMPIJobV2, makePaddleJob, makePyTorchJob, makeTFJob, makeXGBoostJob } from './testing.js';
import type { TrainingJob } from './types.js';

describe('training builders', () => {
  const cases: [string, (n: string) => TrainingJob, number][] = [
    ['PyTorchJob', makePyTorchJob, 2], ['TFJob', makeTFJob, 2], ['XGBoostJob', makeXGBoostJob, 2], ['PaddleJob', makePaddleJob, 2],
    ['JAXJob', makeJAXJob, 2], ['MPIJob v1', makeMPIJob, 2], ['MPIJob v2beta1', makeMPIJobV2, 2],
  ];
  for (const [what, make, pods] of cases) {
    it(`${what}: accepted by the API, and renders ${pods} Pods`, async () => {
      const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
      await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
      const stored = (await client.create(make('j'))) as TrainingJob;
      const kind = trainingKindFor(stored.apiVersion, stored.kind);
      assert.ok(kind, `${stored.apiVersion} ${stored.kind} has a kind`);
      assert.equal(kind.render(stored).replicas.length, pods);
    });
  }

  it('takes the replicas, restart policy and runPolicy it is given', async () => {
    const job = makePyTorchJob('p', { replicas: { Master: { restartPolicy: 'ExitCode' }, Worker: { replicas: 3, cpu: '500m' } }, runPolicy: { backoffLimit: 2 } });
    const specs = job.spec['pytorchReplicaSpecs'] as Record<string, { replicas: number; restartPolicy: string; template: { spec: { containers: { resources?: unknown }[] } } }>;
    assert.equal(specs.Master?.restartPolicy, 'ExitCode');
    assert.equal(specs.Worker?.replicas, 3);
    assert.deepEqual(specs.Worker?.template.spec.containers[0]?.resources, { requests: { cpu: '500m' } });
    assert.deepEqual(job.spec.runPolicy, { backoffLimit: 2 });
    assert.ok(Kinds.PyTorchJob);
  });
});
