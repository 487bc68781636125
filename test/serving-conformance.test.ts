// KServe's own InferenceService and ServingRuntime YAMLs (samples, website docs, benchmarks,
// stock runtimes) through Skiff's defaulting and validation: every v1beta1 InferenceService the
// corpus's SOURCE.md lists as schema-invalid is rejected naming the offending field, every other one
// is accepted, and every runtime is accepted.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import YAML from 'yaml';
import { defaultRegistry } from '../src/api/index.js';
import type { KObject } from '../src/api/meta.js';
import { conformanceDir, corpusFiles } from '../src/conformance-path.js';
import { selectRuntime } from '../src/workloads/serving/runtimes.js';
import { stockClusterServingRuntimes } from '../src/workloads/serving/stock-runtimes.js';
import type { InferenceService } from '../src/api/serving.js';

const root = join(conformanceDir(), 'kserve');
const files = corpusFiles(root);
const skip = files.length === 0 ? `the KServe corpus is not at ${root}` : false;
const registry = defaultRegistry();

interface Doc {
  file: string;
  index: number;
  obj: KObject;
}

/** every document of every corpus YAML file that parses (files with template placeholders do not) */
function documents(): Doc[] {
  const out: Doc[] = [];
  for (const path of files) {
    const file = relative(root, path);
    let docs: YAML.Document.Parsed[];
    try {
      docs = YAML.parseAllDocuments(readFileSync(path, 'utf8'));
    } catch {
      continue;
    }
    if (!Array.isArray(docs) || docs.some((d) => d.errors.length > 0)) continue;
    docs.forEach((d, index) => {
      const obj = d.toJS() as unknown;
      if (obj && typeof obj === 'object' && !Array.isArray(obj) && typeof (obj as any).apiVersion === 'string') out.push({ file, index, obj: obj as KObject });
    });
  }
  return out;
}

/** SOURCE.md's schema-invalid InferenceServices: path (under the corpus's kserve/) → the field the rejection must name */
const invalid: Record<string, string> = {
  'samples/explanation/alibi/cifar10/cifar10.yaml': 'spec.explainer.alibi',
  'samples/explanation/alibi/income/income.yaml': 'spec.explainer.alibi',
  'samples/explanation/alibi/moviesentiment/moviesentiment.yaml': 'spec.explainer.alibi',
  'samples/explanation/alibi/moviesentiment/moviesentiment2.yaml': 'spec.explainer.alibi',
  'website-extracted/yaml/model-serving__predictive-inference__explainers__alibi__image-explainer__image-explainer-01.yaml': '.cpu',
  'website-extracted/yaml/model-serving__predictive-inference__explainers__alibi__tabular-explainer__tabular-explainer-01.yaml': '.cpu',
  'website-extracted/yaml/model-serving__predictive-inference__explainers__alibi__text-explainer__text-explainer-01.yaml': '.cpu',
  'website-extracted/yaml/model-serving__predictive-inference__explainers__alibi__text-explainer__text-explainer-02.yaml': '.cpu',
  'samples/rollout-strategy/rollout-strategy-example.yaml': 'spec.transformer.custom',
  'website-extracted/yaml/model-serving__predictive-inference__rollout-strategies__rollout-strategy-standard-01.yaml': 'spec.transformer.custom',
  'samples/v1beta1/torchserve/v1/bloom/bloom-560m.yaml': 'spec.nodeName',
  'website-extracted/yaml/model-serving__predictive-inference__autoscaling__kpa-autoscaler-02.yaml': 'scaleMetric',
  'website-extracted/yaml/model-serving__predictive-inference__autoscaling__keda-autoscaler-02.yaml': 'authenticationRef',
  'website-extracted/yaml/model-serving__predictive-inference__logger__blob-storage-logger-01.yaml': 'predictor',
  'website-extracted/yaml/model-serving__predictive-inference__logger__request-header-logger-01.yaml': 'predictor',
};

/**
 * Documents SOURCE.md counts as schema-valid that Skiff rejects, with the field named and why:
 * fragments of documentation pages. (`model-registry://`, which upstream serves through a
 * ClusterStorageContainer, Skiff resolves through its own registry.)
 */
const deviations: Record<string, string> = {
  // `apiVersion` and `kind` only: KServe's webhook rejects it too (no predictor implementation)
  'website-extracted/yaml/developer-guide__contribution-01.yaml': 'spec.predictor',
  'website-extracted/yaml/developer-guide__contribution-02.yaml': 'spec.predictor',
};
/** runtime documents whose containers the page elides (`...`): the CRD requires spec.containers */
const runtimeDeviations: Record<string, string> = {
  'website-extracted/yaml/concepts__resources__servingruntime-04.yaml': 'spec.containers',
  'website-extracted/yaml/concepts__resources__servingruntime-06.yaml': 'spec.containers',
  'website-extracted/yaml/concepts__resources__servingruntime-07.yaml': 'spec.containers',
};

function admit(obj: KObject): { errors: { field: string; message: string }[]; obj: KObject } {
  const def = registry.forObject(obj.apiVersion, obj.kind);
  assert.ok(def, `${obj.apiVersion} ${obj.kind} is registered`);
  const o = structuredClone(obj);
  o.metadata ??= {};
  if (def.namespaced) o.metadata.namespace ??= 'default';
  def.default?.(o);
  return { errors: def.validate?.(o) ?? [], obj: o };
}

describe('KServe corpus: InferenceServices', { skip }, () => {
  const docs = skip ? [] : documents();
  const isvcs = docs.filter((d) => d.obj.apiVersion === 'serving.kserve.io/v1beta1' && d.obj.kind === 'InferenceService');

  it('finds the corpus InferenceServices (215 valid and 15 invalid per SOURCE.md)', () => {
    assert.equal(isvcs.length, 230, `v1beta1 InferenceService documents: ${isvcs.length}`);
    for (const file of Object.keys(invalid)) assert.ok(isvcs.some((d) => d.file === file), `${file} is in the corpus`);
  });

  it('rejects the 15 schema-invalid documents, naming the field', () => {
    let rejected = 0;
    for (const [file, want] of Object.entries(invalid)) {
      let inFile = 0;
      for (const d of isvcs.filter((x) => x.file === file)) {
        const { errors } = admit(d.obj);
        if (errors.length === 0) continue;
        assert.ok(errors.some((e) => e.field.includes(want)), `${d.file}#${d.index}: an error names ${want}: ${JSON.stringify(errors)}`);
        inFile++;
      }
      assert.ok(inFile > 0, `${file} is rejected`);
      rejected += inFile;
    }
    assert.equal(rejected, 15);
  });

  it('accepts every other document except the known deviations, and defaulting them again changes nothing', () => {
    const failures: string[] = [];
    let accepted = 0;
    let deviating = 0;
    for (const d of isvcs) {
      const { errors, obj } = admit(d.obj);
      if (errors.length === 0) accepted++;
      else if (deviations[d.file] !== undefined) {
        assert.ok(errors.some((e) => e.field === deviations[d.file]), `${d.file}: ${JSON.stringify(errors)}`);
        deviating++;
      } else if (invalid[d.file] === undefined) {
        failures.push(`${d.file}#${d.index}: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`);
      }
      const again = structuredClone(obj);
      registry.forObject(obj.apiVersion, obj.kind)?.default?.(again);
      assert.deepEqual(again, obj, `${d.file}#${d.index}: defaulting is idempotent`);
    }
    assert.deepEqual(failures, []);
    assert.equal(deviating, Object.keys(deviations).length);
    assert.equal(accepted, 215 - deviating);
  });

  it('leaves no legacy framework key after defaulting; legacy onnx and triton get protocol v2', () => {
    const legacy = ['sklearn', 'xgboost', 'tensorflow', 'pytorch', 'triton', 'onnx', 'huggingface', 'pmml', 'lightgbm', 'paddle'];
    let rewritten = 0;
    for (const d of isvcs.filter((x) => invalid[x.file] === undefined && deviations[x.file] === undefined)) {
      const before = (d.obj.spec as any)?.predictor ?? {};
      const p = (admit(d.obj).obj as InferenceService).spec.predictor;
      for (const k of legacy) assert.equal((p as any)[k], undefined, `${d.file}: predictor.${k} was rewritten`);
      const key = legacy.find((k) => before[k] !== undefined);
      if (key === undefined) continue;
      rewritten++;
      assert.equal(p.model?.modelFormat.name, key, d.file);
      if (['onnx', 'triton', 'huggingface'].includes(key)) assert.equal(p.model?.protocolVersion, before[key].protocolVersion ?? 'v2', d.file);
    }
    assert.ok(rewritten > 20, `legacy predictors: ${rewritten}`);
  });

  it('selects the runtimes the research predicts for the classic samples', () => {
    const stock = stockClusterServingRuntimes();
    const pickFor = (file: string): string => {
      const d = isvcs.find((x) => x.file === file);
      assert.ok(d, file);
      const r = selectRuntime(admit(d.obj).obj as InferenceService, [], stock);
      return r.ok ? r.runtime.metadata.name ?? '' : r.reason;
    };
    assert.equal(pickFor('samples/v1beta1/sklearn/v1/sklearn.yaml'), 'kserve-sklearnserver');
    assert.equal(pickFor('samples/v1beta1/sklearn/v2/sklearn.yaml'), 'kserve-mlserver');
    assert.equal(pickFor('samples/v1beta1/onnx/onnx.yaml'), 'kserve-tritonserver');
    assert.equal(pickFor('samples/v1beta1/xgboost/xgboost.yaml'), 'kserve-mlserver');
    assert.equal(pickFor('samples/v1beta1/torchserve/v1/torchserve.yaml'), 'kserve-torchserve');
  });
});

describe('KServe corpus: ServingRuntimes and other kinds', { skip }, () => {
  const docs = skip ? [] : documents();

  it('accepts every ServingRuntime and ClusterServingRuntime (but fragments without containers)', () => {
    const runtimes = docs.filter((d) => d.obj.apiVersion === 'serving.kserve.io/v1alpha1' && (d.obj.kind === 'ServingRuntime' || d.obj.kind === 'ClusterServingRuntime'));
    assert.ok(runtimes.length >= 16, `runtime documents: ${runtimes.length}`);
    const failures: string[] = [];
    for (const d of runtimes) {
      const { errors } = admit(d.obj);
      const known = runtimeDeviations[d.file];
      if (known !== undefined) assert.ok(errors.some((e) => e.field === known), `${d.file}: ${JSON.stringify(errors)}`);
      else if (errors.length) failures.push(`${d.file}#${d.index}: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`);
    }
    assert.deepEqual(failures, []);
  });

  it('the stock runtimes Skiff installs pass the same validation', () => {
    for (const r of stockClusterServingRuntimes()) assert.deepEqual(admit(r).errors, [], r.metadata.name);
  });

  it('serves no kind for legacy InferenceService API versions', () => {
    const legacy = docs.filter((d) => d.obj.kind === 'InferenceService' && d.obj.apiVersion !== 'serving.kserve.io/v1beta1');
    assert.ok(legacy.length > 0);
    for (const d of legacy) {
      assert.ok(['serving.kserve.io/v1alpha2', 'serving.kubeflow.org/v1beta1', 'serving.kubeflow.org/v1alpha2'].includes(d.obj.apiVersion), `${d.file}: ${d.obj.apiVersion}`);
      assert.equal(registry.forObject(d.obj.apiVersion, d.obj.kind), undefined, `${d.obj.apiVersion} is not served`);
    }
  });
});
