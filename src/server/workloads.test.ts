// The server serves the kinds its workloads declare; clients (the CLI, tests) name kinds through
// api/'s defaultRegistry(). The two must agree, or a kind would be known to one side only.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultRegistry } from '../api/index.js';
import { apiVersionOf } from '../api/registry.js';
import type { ServingDataPlane } from '../workloads/serving/data-plane.js';
import { dryRenderer, registryOf, workloads } from './workloads.js';

const list = workloads({ dataPlane: {} as ServingDataPlane });
const ids = (defs: { kind: string; group: string; version: string }[]): string[] => defs.map((d) => `${apiVersionOf(d as never)}/${d.kind}`).sort();

describe('the workload list', () => {
  it('serves exactly the kinds api/ knows', () => {
    assert.deepEqual(ids(registryOf(list).all()), ids(defaultRegistry().all()));
  });

  it('names each workload once', () => {
    const names = list.map((w) => w.name);
    assert.deepEqual([...new Set(names)], names);
  });

  it('dry-renders through the workload that owns the kind, and nothing for the rest', () => {
    const render = dryRenderer(list);
    const job = {
      apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob',
      metadata: { name: 'p', namespace: 'default', uid: 'u', resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { pytorchReplicaSpecs: { Master: { replicas: 1, restartPolicy: 'OnFailure', template: { spec: { containers: [{ name: 'pytorch', image: 'x', command: ['true'], ports: [{ name: 'pytorchjob-port', containerPort: 23456 }] }] } } } } },
    };
    const items = render(job as never);
    assert.ok(items.some((o) => o.kind === 'Pod' && o.metadata.name === 'p-master-0'), JSON.stringify(items.map((o) => o.metadata.name)));
    assert.deepEqual(render({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default', uid: 'u', resourceVersion: '1', creationTimestamp: '' } } as never), []);
  });
});
