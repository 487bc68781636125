// What the serving controllers render and report, without a server: a component's Revision spec
// (runtime, server kind, scaling, the hash that decides when a new revision is due), a replica's Pod,
// KServe's canary rule and the InferenceService's conditions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ComponentStatus, InferenceServiceStatus } from '../../api/serving.js';
import { buildRevision, pinRegistryVersion, renderReplicaPod, renderRevision, storageSpecUri } from './render.js';
import { canaryTraffic, componentCondition, setServiceConditions } from './status.js';
import { stockClusterServingRuntimes } from './stock-runtimes.js';
import { makeInferenceService, makeRevision } from './testing.js';

const runtimes = { namespaced: [], cluster: stockClusterServingRuntimes() };
const gw = '127.0.0.1:9000';

describe('buildRevision', () => {
  it('an sklearn model runs on Skiff\'s model server through kserve-sklearnserver, scaled as the annotations say', () => {
    const isvc = makeInferenceService('iris').annotation('autoscaling.knative.dev/window', '2s').annotation('autoscaling.knative.dev/target', '5').maxReplicas(3).stored();
    const spec = buildRevision(isvc, 'predictor', runtimes, gw);
    assert.equal(spec.failure, undefined);
    assert.equal(spec.serverKind, 'skiff');
    assert.equal(spec.runtime, 'kserve-sklearnserver');
    assert.equal(spec.runtimeKind, 'ClusterServingRuntime');
    assert.equal(spec.protocol, 'v1');
    assert.equal(spec.storageUri, 'gs://bucket/model');
    assert.deepEqual([spec.minReplicas, spec.maxReplicas, spec.windowSeconds, spec.scaleTarget, spec.scaleMetric], [1, 3, 2, 5, 'concurrency']);
    const main = spec.podTemplate?.spec.containers[0];
    assert.equal(main?.name, 'kserve-container');
    assert.ok(main?.args?.includes('--model_name=iris'), String(main?.args));
  });

  it('a SavedModel runs on the model server in TensorFlow\'s environment: through TF Serving (v1) and through Triton (v2)', () => {
    for (const [protocol, runtime] of [[undefined, 'kserve-tensorflow-serving'], ['v2', 'kserve-tritonserver']] as const) {
      const spec = buildRevision(makeInferenceService('tf').model('tensorflow', { storageUri: 'pvc://m/tf', ...(protocol ? { protocolVersion: protocol } : {}) }).stored(), 'predictor', runtimes, gw);
      assert.equal(spec.failure, undefined, runtime);
      assert.equal(spec.runtime, runtime);
      assert.equal(spec.serverKind, 'skiff', runtime);
      assert.equal(spec.protocol, protocol ?? 'v1');
      const main = spec.podTemplate?.spec.containers[0];
      assert.equal(main?.image, 'skiff/model-server-tensorflow', runtime);
      assert.deepEqual(main?.command, ['skiff-model-server']);
      assert.deepEqual(main?.args, ['--model_name=tf', '--model_dir=/mnt/models', '--http_port=8080', '--format=tensorflow']);
    }
  });

  it('canaryTrafficPercent does not make a new revision; any other change does', () => {
    const base = makeInferenceService('iris');
    const h = (b: typeof base): string => buildRevision(b.stored(), 'predictor', runtimes, gw).specHash;
    assert.equal(h(base.clone().canaryTrafficPercent(10)), h(base));
    assert.notEqual(h(base.clone().minReplicas(2)), h(base));
  });

  it('what cannot run is a revision with its failure: no runtime, or a storage key not in storage-config', () => {
    const none = buildRevision(makeInferenceService('x').model('onnx', { storageUri: 'gs://b/m' }).stored(), 'predictor', runtimes, gw);
    assert.equal(none.failure?.reason, 'NoSupportingRuntime');
    const storage = buildRevision(makeInferenceService('y').model('sklearn', { storage: { key: 'nope', path: 'm' } }).stored(), 'predictor', runtimes, gw);
    assert.deepEqual(storage.failure, { reason: 'ModelLoadFailed', message: 'storage key "nope" is not in secret storage-config' });
    assert.throws(() => storageSpecUri({ key: 'k' }, { k: Buffer.from('{"type":"azure"}').toString('base64') }), /storage key "k": type "azure" is not one Skiff reads/);
  });

  it('an alias URI\'s version is pinned into the revision: another version is another hash; an alias naming nothing cannot run', () => {
    const built = buildRevision(makeInferenceService('iris').model('sklearn', { storageUri: 'model-registry://iris@production' }).stored(), 'predictor', runtimes, gw);
    assert.equal(built.storageUri, 'model-registry://iris@production');
    const v1 = pinRegistryVersion(built, { modelVersionId: '4' });
    const v2 = pinRegistryVersion(built, { modelVersionId: '7' });
    assert.equal(v1.registryVersionId, '4');
    assert.equal(v1.failure, undefined);
    assert.notEqual(v1.specHash, v2.specHash);
    assert.equal(pinRegistryVersion(built, { modelVersionId: '4' }).specHash, v1.specHash);
    const none = pinRegistryVersion(built, 'registered model "iris" has no alias "production"');
    assert.deepEqual(none.failure, { reason: 'ModelLoadFailed', message: 'storageUri model-registry://iris@production: registered model "iris" has no alias "production"' });
    assert.equal(none.registryVersionId, undefined);
    assert.notEqual(none.specHash, v1.specHash);
  });

  it('a transformer is told where its predictor is, through the gateway', () => {
    const isvc = makeInferenceService('iris').containers('transformer', { name: 'kserve-container', image: 'my/transformer' }).stored();
    const spec = buildRevision(isvc, 'transformer', runtimes, gw);
    assert.equal(spec.serverKind, 'custom');
    const args = spec.podTemplate?.spec.containers[0]?.args ?? [];
    assert.deepEqual(args, ['--model_name', 'iris', '--predictor_host', `${gw}/serving/default/iris-predictor`, '--http_port', '8080']);
  });
});

describe('renderRevision and renderReplicaPod', () => {
  it('the Revision is owned by its InferenceService and named as Knative names it', () => {
    const isvc = makeInferenceService('iris').stored();
    const rev = renderRevision(isvc, { ...buildRevision(isvc, 'predictor', runtimes, gw), number: 3 });
    assert.equal(rev.metadata.name, 'iris-predictor-00003');
    assert.equal(rev.metadata.ownerReferences?.[0]?.uid, isvc.metadata.uid);
  });

  it('a replica mounts its model at /mnt/models and carries Knative\'s environment', () => {
    const isvc = makeInferenceService('iris').stored();
    const rev = { ...renderRevision(isvc, { ...buildRevision(isvc, 'predictor', runtimes, gw), number: 1 }), metadata: { ...makeRevision('iris').obj().metadata } };
    const pod = renderReplicaPod(rev, { kind: 'host', path: '/data/models/iris' });
    const main = pod.spec.containers[0];
    assert.match(pod.metadata.name ?? '', /^iris-predictor-00001-deployment-[0-9a-f]{5}$/);
    assert.equal(pod.spec.restartPolicy, 'Always');
    assert.deepEqual(pod.spec.volumes?.find((v) => v.name === 'kserve-provision-location')?.hostPath, { path: '/data/models/iris' });
    assert.deepEqual(main?.volumeMounts?.find((m) => m.mountPath === '/mnt/models'), { name: 'kserve-provision-location', mountPath: '/mnt/models', readOnly: true });
    assert.equal(main?.env?.find((e) => e.name === 'K_REVISION')?.value, 'iris-predictor-00001');
    assert.equal(pod.metadata.labels?.['serving.kserve.io/inferenceservice'], 'iris');
  });
});

describe('status', () => {
  it('KServe\'s canary rule: the new revision gets its percent, promotion moves latestRolledoutRevision', () => {
    const isvc = makeInferenceService('iris').canaryTrafficPercent(20).stored();
    const cs: ComponentStatus = { latestRolledoutRevision: 'iris-predictor-00001' };
    const ready = makeRevision('iris', 2).ready().obj();
    assert.deepEqual(canaryTraffic(isvc, 'predictor', cs, ready, ready.metadata.name as string), [
      { revisionName: 'iris-predictor-00002', percent: 20, tag: 'latest' },
      { revisionName: 'iris-predictor-00001', percent: 80, tag: 'prev' },
    ]);
    const promoted = makeInferenceService('iris').stored();
    assert.deepEqual(canaryTraffic(promoted, 'predictor', cs, ready, ready.metadata.name as string), [{ revisionName: 'iris-predictor-00002', percent: 100 }]);
    assert.deepEqual(cs, { latestRolledoutRevision: 'iris-predictor-00002', previousRolledoutRevision: 'iris-predictor-00001' });
  });

  it('Ready is False with the first component\'s reason until every component serves and is routed', () => {
    const status: InferenceServiceStatus = {};
    const loading = componentCondition('predictor', makeRevision('iris').obj());
    setServiceConditions(status, [loading], false);
    assert.deepEqual(status.conditions?.map((c) => [c.type, c.status, c.reason]), [
      ['PredictorReady', 'Unknown', 'RevisionLoading'], ['IngressReady', 'False', 'ComponentNotReady'], ['Ready', 'False', 'RevisionLoading'],
    ]);
    setServiceConditions(status, [componentCondition('predictor', makeRevision('iris').ready().obj())], true);
    assert.deepEqual(status.conditions?.map((c) => [c.type, c.status, c.reason]), [['PredictorReady', 'True', undefined], ['IngressReady', 'True', undefined], ['Ready', 'True', undefined]]);
    const failed = componentCondition('predictor', makeRevision('iris').failure('NoSupportingRuntime', 'no runtime for onnx').obj());
    assert.deepEqual([failed.status, failed.reason, failed.message], ['False', 'NoSupportingRuntime', 'no runtime for onnx']);
  });
});
