// Runtime selection as KServe's controller does it, over Skiff's stock ClusterServingRuntimes and
// namespaced ServingRuntimes; the stock runtimes keep upstream's formats and protocols.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import YAML from 'yaml';
import { conformanceDir, corpusFiles } from '../../conformance-path.js';
import type { ClusterServingRuntime, InferenceService, ServingRuntime, ServingRuntimeSpec } from '../../api/serving.js';
import { lowestProtocol, renderRuntimeArgs, selectRuntime } from './runtimes.js';
import type { RuntimeSelection } from './runtimes.js';
import { makeClusterServingRuntime, makeInferenceService, makeServingRuntime } from './testing.js';
import { isInProcessRuntime, runtimeUnavailableReason, stockClusterServingRuntimes, UnavailableAnnotation } from './stock-runtimes.js';

const stock = stockClusterServingRuntimes();

function isvc(predictor: Record<string, unknown>, meta: Record<string, unknown> = {}): InferenceService {
  const o = makeInferenceService('iris', 'team').predictorSpec(predictor).defaulted();
  Object.assign(o.metadata, meta);
  return o;
}

function model(name: string, extra: Record<string, unknown> = {}, format: Record<string, unknown> = {}): InferenceService {
  return makeInferenceService('iris', 'team').model(name, { storageUri: 'gs://b/m', ...extra }, format).defaulted();
}

function picked(r: RuntimeSelection): string {
  return r.ok ? `${r.kind}/${r.runtime.metadata.name} ${r.protocol}` : r.reason;
}

function nsRuntime(name: string, spec: Partial<ServingRuntimeSpec>, created = '2024-01-01T00:00:00Z'): ServingRuntime {
  return makeServingRuntime(name, 'team').spec(spec).created(created).obj();
}

function clusterRuntime(name: string, spec: Partial<ServingRuntimeSpec>, created = '2024-01-01T00:00:00Z'): ClusterServingRuntime {
  return makeClusterServingRuntime(name).spec(spec).created(created).obj();
}

describe('runtime auto-selection over the stock runtimes', () => {
  it('sklearn without a protocol is v1: kserve-sklearnserver', () => {
    assert.equal(picked(selectRuntime(model('sklearn'), [], stock)), 'ClusterServingRuntime/kserve-sklearnserver v1');
  });

  it('sklearn with protocol v2: MLServer wins on priority', () => {
    assert.equal(picked(selectRuntime(model('sklearn', { protocolVersion: 'v2' }), [], stock)), 'ClusterServingRuntime/kserve-mlserver v2');
  });

  it('onnx without a protocol finds no runtime (Triton is v2-only)', () => {
    const r = selectRuntime(model('onnx'), [], stock);
    assert.equal(picked(r), 'NoSupportingRuntime');
    assert.match(r.ok ? '' : r.message, /No runtime found to support specified framework\/version/);
  });

  it('the legacy onnx key is defaulted to v2 and lands on Triton (served in process)', () => {
    const r = selectRuntime(isvc({ onnx: { storageUri: 'gs://b/m' } }), [], stock);
    assert.equal(picked(r), 'ClusterServingRuntime/kserve-tritonserver v2');
    assert.ok(r.ok && isInProcessRuntime(r.runtime.spec));
  });

  it('versions match as exact strings: xgboost "1" over v1 finds none; "2" finds xgbserver', () => {
    assert.equal(picked(selectRuntime(model('xgboost', {}, { version: '1' }), [], stock)), 'NoSupportingRuntime');
    assert.equal(picked(selectRuntime(model('xgboost', { protocolVersion: 'v1' }, { version: '1' }), [], stock)), 'NoSupportingRuntime');
    assert.equal(picked(selectRuntime(model('xgboost', {}, { version: '2' }), [], stock)), 'ClusterServingRuntime/kserve-xgbserver v1');
    assert.equal(picked(selectRuntime(model('sklearn', {}, { version: '1.2' }), [], stock)), 'NoSupportingRuntime');
  });

  it('pytorch: TorchServe; tensorflow: TF Serving, run by the model server in TensorFlow\'s environment', () => {
    assert.equal(picked(selectRuntime(model('pytorch'), [], stock)), 'ClusterServingRuntime/kserve-torchserve v1');
    const tf = selectRuntime(model('tensorflow'), [], stock);
    assert.equal(picked(tf), 'ClusterServingRuntime/kserve-tensorflow-serving v1');
    assert.ok(tf.ok);
    assert.equal(runtimeUnavailableReason(tf.runtime), undefined);
    assert.equal(tf.runtime.spec.containers[0]?.image, 'skiff/model-server-tensorflow');
    assert.ok(tf.runtime.spec.containers[0]?.args?.includes('--format=tensorflow'));
    assert.equal(picked(selectRuntime(model('tensorflow', { protocolVersion: 'v2' }), [], stock)), 'ClusterServingRuntime/kserve-tritonserver v2');
  });

  it('formats without autoSelect are invisible to auto-selection', () => {
    // Triton lists pytorch without autoSelect, the predictive server lists lightgbm without it
    assert.equal(picked(selectRuntime(model('pytorch', { protocolVersion: 'grpc-v2' }), [], stock)), 'ClusterServingRuntime/kserve-torchserve grpc-v2');
    assert.equal(picked(selectRuntime(model('lightgbm'), [], stock)), 'ClusterServingRuntime/kserve-lgbserver v1');
  });

  it('huggingface (legacy key → v2) picks the single-node server, not the multi-node one', () => {
    assert.equal(picked(selectRuntime(isvc({ huggingface: { storageUri: 'hf://o/m' } }), [], stock)), 'ClusterServingRuntime/kserve-huggingfaceserver v2');
    const multi = isvc({ model: { modelFormat: { name: 'huggingface' }, storageUri: 'pvc://c/m' }, workerSpec: { tensorParallelSize: 1 } });
    assert.equal(picked(selectRuntime(multi, [], stock)), 'ClusterServingRuntime/kserve-huggingfaceserver-multinode v1');
  });

  it('a runtime with no protocolVersions takes any protocol', () => {
    assert.equal(picked(selectRuntime(model('vLLM', { protocolVersion: 'grpc-v2' }), [], stock)), 'ClusterServingRuntime/kserve-vllmserver grpc-v2');
    assert.equal(picked(selectRuntime(model('vLLM'), [], stock)), 'ClusterServingRuntime/kserve-vllmserver v1');
  });

  it('a predictor without a model is an invalid spec for selection', () => {
    assert.equal(picked(selectRuntime(isvc({ containers: [{ name: 'c', image: 'x' }] }), [], stock)), 'InvalidPredictorSpec');
  });
});

describe('runtime auto-selection ordering', () => {
  const sk = (priority?: number, protocols: ServingRuntimeSpec['protocolVersions'] = ['v1']): Partial<ServingRuntimeSpec> => ({
    supportedModelFormats: [{ name: 'sklearn', version: '1', autoSelect: true, ...(priority !== undefined ? { priority } : {}) }],
    protocolVersions: protocols,
  });

  it('a namespaced runtime beats cluster ones regardless of priority', () => {
    const ns = [nsRuntime('mine', sk(undefined))];
    const cluster = [clusterRuntime('theirs', sk(100)), ...stock];
    assert.equal(picked(selectRuntime(model('sklearn'), ns, cluster)), 'ServingRuntime/mine v1');
  });

  it('namespaced runtimes of another namespace do not count', () => {
    const other: ServingRuntime = { ...nsRuntime('mine', sk(5)), metadata: { name: 'mine', namespace: 'elsewhere' } };
    assert.equal(picked(selectRuntime(model('sklearn'), [other], stock)), 'ClusterServingRuntime/kserve-sklearnserver v1');
  });

  it('higher priority first; without priority last', () => {
    const rs = [nsRuntime('a-none', sk(undefined)), nsRuntime('b-low', sk(1)), nsRuntime('c-high', sk(3))];
    assert.equal(picked(selectRuntime(model('sklearn'), rs, [])), 'ServingRuntime/c-high v1');
    assert.equal(picked(selectRuntime(model('sklearn'), [rs[0] as ServingRuntime, rs[1] as ServingRuntime], [])), 'ServingRuntime/b-low v1');
  });

  it('equal priority: lowest protocol, then newest, then name', () => {
    const v2first = nsRuntime('a', sk(1, ['v2', 'v1']));
    const grpcOnly = nsRuntime('b', { ...sk(1, ['grpc-v1']), protocolVersions: ['grpc-v1', 'v1'] });
    assert.equal(picked(selectRuntime(model('sklearn'), [grpcOnly, v2first], [])), 'ServingRuntime/a v1');
    const older = nsRuntime('old', sk(1), '2023-01-01T00:00:00Z');
    const newer = nsRuntime('new', sk(1), '2024-06-01T00:00:00Z');
    assert.equal(picked(selectRuntime(model('sklearn'), [older, newer], [])), 'ServingRuntime/new v1');
    const x = nsRuntime('x', sk(1));
    const y = nsRuntime('y', sk(1));
    assert.equal(picked(selectRuntime(model('sklearn'), [y, x], [])), 'ServingRuntime/x v1');
  });

  it('no protocol set means v1: a v2-only runtime does not match; the chosen runtime\'s lowest protocol is used', () => {
    const v2only = clusterRuntime('v2only', sk(1, ['v2']));
    assert.equal(picked(selectRuntime(model('sklearn'), [], [v2only])), 'NoSupportingRuntime');
    const both = clusterRuntime('both', sk(1, ['v2', 'grpc-v2', 'v1']));
    // no protocol: the chosen runtime's lowest
    assert.equal(picked(selectRuntime(model('sklearn'), [], [both])), 'ClusterServingRuntime/both v1');
    assert.equal(lowestProtocol(both.spec), 'v1');
  });

  it('skips disabled and multi-model runtimes', () => {
    const rs = [nsRuntime('off', { ...sk(9), disabled: true }), nsRuntime('mm', { ...sk(9), multiModel: true })];
    assert.equal(picked(selectRuntime(model('sklearn'), rs, stock)), 'ClusterServingRuntime/kserve-sklearnserver v1');
  });

  it('a model without a version matches any version; with a version only that exact string', () => {
    const rt = nsRuntime('v', { supportedModelFormats: [{ name: 'sklearn', version: '1.3', autoSelect: true }], protocolVersions: ['v1'] });
    assert.equal(picked(selectRuntime(model('sklearn'), [rt], [])), 'ServingRuntime/v v1');
    assert.equal(picked(selectRuntime(model('sklearn', {}, { version: '1.3' }), [rt], [])), 'ServingRuntime/v v1');
    assert.equal(picked(selectRuntime(model('sklearn', {}, { version: '1' }), [rt], [])), 'NoSupportingRuntime');
  });
});

describe('explicit runtime', () => {
  it('namespaced first, then cluster', () => {
    const ns = [nsRuntime('kserve-sklearnserver', { supportedModelFormats: [{ name: 'sklearn' }], protocolVersions: ['v1'] })];
    assert.equal(picked(selectRuntime(model('sklearn', { runtime: 'kserve-sklearnserver' }), ns, stock)), 'ServingRuntime/kserve-sklearnserver v1');
    assert.equal(picked(selectRuntime(model('sklearn', { runtime: 'kserve-sklearnserver' }), [], stock)), 'ClusterServingRuntime/kserve-sklearnserver v1');
  });

  it('missing: RuntimeNotRecognized', () => {
    const r = selectRuntime(model('sklearn', { runtime: 'nope' }), [], stock);
    assert.equal(picked(r), 'RuntimeNotRecognized');
    assert.match(r.ok ? '' : r.message, /nope/);
  });

  it('disabled: RuntimeDisabled', () => {
    const cluster = [clusterRuntime('off', { supportedModelFormats: [{ name: 'sklearn' }], disabled: true })];
    assert.equal(picked(selectRuntime(model('sklearn', { runtime: 'off' }), [], cluster)), 'RuntimeDisabled');
  });

  it('wrong format or protocol: NoSupportingRuntime', () => {
    const wrongFormat = selectRuntime(model('xgboost', { runtime: 'kserve-sklearnserver' }), [], stock);
    assert.equal(picked(wrongFormat), 'NoSupportingRuntime');
    assert.match(wrongFormat.ok ? '' : wrongFormat.message, /framework\/version/);
    const wrongProtocol = selectRuntime(model('sklearn', { runtime: 'kserve-mlserver', protocolVersion: 'v1' }), [], stock);
    assert.equal(picked(wrongProtocol), 'NoSupportingRuntime');
    assert.match(wrongProtocol.ok ? '' : wrongProtocol.message, /protocol version v1/);
  });

  it('counts formats without autoSelect, and takes the runtime lowest protocol when none is set', () => {
    assert.equal(picked(selectRuntime(model('pytorch', { runtime: 'kserve-tritonserver' }), [], stock)), 'ClusterServingRuntime/kserve-tritonserver v2');
    assert.equal(picked(selectRuntime(model('sklearn', { runtime: 'kserve-predictiveserver' }), [], stock)), 'ClusterServingRuntime/kserve-predictiveserver v1');
    assert.equal(picked(selectRuntime(model('sklearn', { runtime: 'kserve-mlserver' }), [], stock)), 'ClusterServingRuntime/kserve-mlserver v2');
  });
});

describe('renderRuntimeArgs', () => {
  const obj = { metadata: { name: 'iris', namespace: 'team', labels: { modelClass: 'mlserver_sklearn.SKLearnModel' }, annotations: { 'example.com/x': 'y', modelFormat: 'sklearn' } } };
  it('renders name, namespace, labels and annotations', () => {
    assert.equal(renderRuntimeArgs('--model_name={{.Name}}', obj), '--model_name=iris');
    assert.equal(renderRuntimeArgs('{{ .Namespace }}/{{.Name}}', obj), 'team/iris');
    assert.equal(renderRuntimeArgs('{{.Labels.modelClass}}', obj), 'mlserver_sklearn.SKLearnModel');
    assert.equal(renderRuntimeArgs('--f={{.Annotations.modelFormat}}', obj), '--f=sklearn');
    assert.equal(renderRuntimeArgs('{{index .Annotations "example.com/x"}}', obj), 'y');
    assert.equal(renderRuntimeArgs('{{.Labels.missing}}', obj), '<no value>');
    assert.equal(renderRuntimeArgs('--model_dir=/mnt/models', obj), '--model_dir=/mnt/models');
  });
});

describe('stock ClusterServingRuntimes', () => {
  it('are labelled managed-by skiff and have a kserve-container', () => {
    assert.equal(stock.length, 14);
    for (const r of stock) {
      assert.equal(r.metadata.labels?.['app.kubernetes.io/managed-by'], 'skiff');
      assert.equal(r.spec.containers[0]?.name, 'kserve-container');
    }
  });

  it('model servers run skiff-model-server with KServe arguments, --format for single-format runtimes', () => {
    const args = (name: string): string[] => stock.find((r) => r.metadata.name === name)?.spec.containers[0]?.args ?? [];
    const base = ['--model_name={{.Name}}', '--model_dir=/mnt/models', '--http_port=8080'];
    assert.deepEqual(args('kserve-sklearnserver'), [...base, '--format=sklearn']);
    assert.deepEqual(args('kserve-xgbserver'), [...base, '--format=xgboost']);
    assert.deepEqual(args('kserve-torchserve'), [...base, '--format=pytorch']);
    assert.deepEqual(args('kserve-mlserver'), [...base, '--output_name=predict']);
    assert.deepEqual(args('kserve-predictiveserver'), base);
    for (const n of ['kserve-sklearnserver', 'kserve-xgbserver', 'kserve-torchserve', 'kserve-mlserver', 'kserve-predictiveserver']) {
      const c = stock.find((r) => r.metadata.name === n)?.spec.containers[0];
      assert.equal(c?.image, 'skiff/model-server');
      assert.deepEqual(c?.command, ['skiff-model-server']);
      assert.equal(runtimeUnavailableReason(stock.find((r) => r.metadata.name === n) as ClusterServingRuntime), undefined);
    }
  });

  it('unavailable runtimes say why', () => {
    for (const n of ['kserve-huggingfaceserver', 'kserve-huggingfaceserver-multinode', 'kserve-lgbserver', 'kserve-pmmlserver', 'kserve-paddleserver', 'kserve-autogluonserver', 'kserve-vllmserver']) {
      const r = stock.find((x) => x.metadata.name === n);
      assert.equal(r?.spec.containers[0]?.image, 'skiff/unavailable', n);
      assert.match(r?.metadata.annotations?.[UnavailableAnnotation] ?? '', new RegExp(`^${n} is not available on Skiff: .+`));
    }
  });

  it('fresh copies each call', () => {
    const a = stockClusterServingRuntimes();
    (a[0] as ClusterServingRuntime).spec.disabled = true;
    assert.equal(stockClusterServingRuntimes()[0]?.spec.disabled, undefined);
  });

  const dir = join(conformanceDir(), 'kserve', 'runtimes');
  const files = corpusFiles(dir).filter((f) => !f.endsWith('kustomization.yaml'));
  it('match upstream formats, autoSelect, priorities and protocols', { skip: files.length === 0 ? `no corpus at ${dir}` : false }, () => {
    const installed = new Set<string>((YAML.parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as { resources: string[] }).resources.map((r) => r.replace(/\.yaml$/, '')));
    assert.deepEqual([...installed].sort(), stock.map((r) => r.metadata.name).sort());
    for (const file of files) {
      const up = YAML.parse(readFileSync(file, 'utf8')) as ClusterServingRuntime;
      const name = up.metadata.name as string;
      const mine = stock.find((r) => r.metadata.name === name);
      if (!installed.has(name)) {
        assert.equal(mine, undefined, `${name} is not in upstream's default install`);
        continue;
      }
      assert.ok(mine, name);
      assert.deepEqual(mine.spec.supportedModelFormats, up.spec.supportedModelFormats, `${name} formats`);
      assert.deepEqual(mine.spec.protocolVersions, up.spec.protocolVersions, `${name} protocols`);
      assert.equal(mine.spec.multiModel, up.spec.multiModel, `${name} multiModel`);
      assert.equal(!!mine.spec.workerSpec, !!up.spec.workerSpec, `${name} workerSpec`);
      assert.equal(mine.metadata.annotations?.['serving.kserve.io/server-type'], up.metadata.annotations?.['serving.kserve.io/server-type']);
    }
  });
});
