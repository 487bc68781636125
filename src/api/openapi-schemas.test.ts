import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crdComponentName, schemaCatalog } from './openapi-schemas.js';

describe('schema catalogue', () => {
  const c = schemaCatalog();

  it('finds built-in kinds by group-version-kind and reads their patch metadata', () => {
    assert.equal(c.componentOf('', 'v1', 'Pod'), 'io.k8s.api.core.v1.Pod');
    assert.equal(c.componentOf('batch', 'v1', 'Job'), 'io.k8s.api.batch.v1.Job');
    const pod = c.kindSchema('', 'v1', 'Pod');
    const containers = c.field(c.field(pod, 'spec'), 'containers');
    assert.equal(containers?.['x-kubernetes-patch-merge-key'], 'name');
    assert.equal(containers?.['x-kubernetes-patch-strategy'], 'merge');
    const ports = c.field(c.items(containers), 'ports');
    assert.equal(ports?.['x-kubernetes-patch-merge-key'], 'containerPort');
    assert.deepEqual(ports?.['x-kubernetes-list-map-keys'], ['containerPort', 'protocol']);
    // a Job's pod template reaches the same PodSpec
    const tmpl = c.field(c.field(c.kindSchema('batch', 'v1', 'Job'), 'spec'), 'template');
    assert.equal(c.field(c.field(tmpl, 'spec'), 'containers')?.['x-kubernetes-patch-merge-key'], 'name');
  });

  it('has the upstream CRDs of the Kubeflow kinds, with descriptions and printer columns', () => {
    const pt = c.crd('kubeflow.org', 'v1', 'PyTorchJob');
    assert.ok(pt);
    assert.equal(pt.plural, 'pytorchjobs');
    assert.ok(pt.additionalPrinterColumns?.some((col) => col.name === 'State'));
    const specs = c.field(c.field(pt.schema, 'spec'), 'pytorchReplicaSpecs');
    assert.match(String(specs?.description), /PyTorch/);
    assert.ok(c.crd('kubeflow.org', 'v2beta1', 'MPIJob'));
    assert.ok(c.kindSchema('serving.kserve.io', 'v1beta1', 'InferenceService'));
    assert.equal(crdComponentName('serving.kserve.io', 'v1beta1', 'InferenceService'), 'io.kserve.serving.v1beta1.InferenceService');
  });
});
