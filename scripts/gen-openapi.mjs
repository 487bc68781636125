#!/usr/bin/env node
// Generates src/api/schemas/openapi.json: the OpenAPI schemas of every kind Skiff serves, as data.
//
//   - built-in kinds (core/v1, batch/v1, networking.k8s.io/v1, rbac.authorization.k8s.io/v1, and the kinds of requests and subresources: Eviction, Scale, access reviews):
//     the component schemas of Kubernetes' own published OpenAPI v3 documents
//     (k8s.io/kubernetes api/openapi-spec/v3, the module of the version below), kept whole (descriptions,
//     x-kubernetes-patch-merge-key/-strategy, x-kubernetes-list-type/-map-keys, group-version-kind),
//     pruned to what the served kinds reach;
//   - the query parameters of those documents' operations (dryRun, fieldValidation, labelSelector, …), as
//     kube-apiserver describes them, for the operations of Skiff's own OpenAPI documents;
//   - Kubeflow's kinds: the upstream CRDs (training-operator 1.9's kubeflow.org jobs, mpi-operator's
//     MPIJob v2beta1, KServe's serving.kserve.io kinds, Kueue's kueue.x-k8s.io kinds in v1beta1 and
//     v1beta2, the profile-controller's Profile in v1 and v1beta1, the notebook-controller's Notebook in
//     v1, v1beta1 and v1alpha1), each version's openAPIV3Schema and
//     additionalPrinterColumns, with every subtree that repeats stored once under `defs` and referenced as
//     {"$ref": "#/defs/<id>"} (src/api/openapi-schemas.ts inlines them again when it serves them).
//
//   node scripts/gen-openapi.mjs
//
// Inputs (the defaults are where this machine keeps them):
//   K8S_OPENAPI_DIR   k8s.io/kubernetes@v1.35.4/api/openapi-spec/v3 in the Go module cache (downloaded with
//                     `go mod download` when absent)
//   TRAINING_CRDS     a directory with kubeflow.org_{pytorch,tf,xgboost,paddle,jax,mpi}jobs.yaml
//                     (kubeflow/training-operator release-1.9, manifests/base/crds)
//   MPI_V2_CRD        kubeflow.org_mpijobs.yaml of kubeflow/mpi-operator (v2beta1)
//   KSERVE_CRDS       the conformance corpus's kserve/crd
//   KUEUE_CRDS        a directory with kueue.x-k8s.io_{resourceflavors,clusterqueues,cohorts,localqueues,
//                     workloadpriorityclasses}.yaml (default: the conformance corpus's kueue/crds)
//   KUEUE_WORKLOAD_CRD kueue.x-k8s.io_workloads.yaml of the same Kueue commit (the corpus leaves it out
//                     for its size; by default read from the kubernetes-sigs/kueue mirror at that commit)
//   PROFILE_CRD       kubeflow.org_profiles.yaml of kubeflow/dashboard's profile-controller (default: the
//                     conformance corpus's profiles/dashboard-repo/crd)
//   NOTEBOOK_CRD      kubeflow.org_notebooks.yaml of kubeflow/notebooks' notebook-controller (default: the
//                     conformance corpus's notebooks/crd)
//
// One addition to an upstream schema: Notebook's `spec.template` gets a PodTemplateSpec's `metadata`
// (labels and annotations), which Skiff copies onto the notebook's Pod; upstream's template has only
// `spec`, and without it the field would be pruned.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const K8S_VERSION = 'v1.35.4';
/** the Kueue commit the corpus's CRDs come from (shared/conformance/kueue/SOURCE.md) */
const KUEUE_COMMIT = 'ff69552e79ad21652c36caa97038382e55625cf7';
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const shared = [process.env.SKIFF_CONFORMANCE_DIR, join(repo, '..', 'shared', 'conformance'), '/work/shared/conformance'].find((d) => d && existsSync(d));

function k8sDir() {
  if (process.env.K8S_OPENAPI_DIR) return process.env.K8S_OPENAPI_DIR;
  const go = existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
  const info = JSON.parse(execFileSync(go, ['mod', 'download', '-json', `k8s.io/kubernetes@${K8S_VERSION}`], { cwd: '/tmp', encoding: 'utf8' }));
  return join(info.Dir, 'api', 'openapi-spec', 'v3');
}

// ---- built-in kinds ----------------------------------------------------------------------------

/** the group-version documents to read, and the kinds of each that Skiff serves or accepts */
const builtins = [
  { file: 'api__v1_openapi.json', kinds: ['Pod', 'PodList', 'Namespace', 'NamespaceList', 'ConfigMap', 'ConfigMapList', 'Secret', 'SecretList', 'PersistentVolumeClaim', 'PersistentVolumeClaimList', 'Service', 'ServiceList', 'Node', 'NodeList', 'Event', 'EventList', 'Binding', 'Eviction', 'ServiceAccount', 'ServiceAccountList', 'TokenRequest'] },
  { file: 'apis__batch__v1_openapi.json', kinds: ['Job', 'JobList'] },
  { file: 'apis__authorization.k8s.io__v1_openapi.json', kinds: ['SelfSubjectAccessReview', 'SelfSubjectRulesReview', 'SubjectAccessReview', 'LocalSubjectAccessReview'] },
  { file: 'apis__networking.k8s.io__v1_openapi.json', kinds: ['NetworkPolicy', 'NetworkPolicyList'] },
  { file: 'apis__rbac.authorization.k8s.io__v1_openapi.json', kinds: ['Role', 'RoleList', 'ClusterRole', 'ClusterRoleList', 'RoleBinding', 'RoleBindingList', 'ClusterRoleBinding', 'ClusterRoleBindingList'] },
  { file: 'apis__authentication.k8s.io__v1_openapi.json', kinds: ['SelfSubjectReview'] },
  // autoscaling/v1 Scale is served as a subresource; Kubernetes' documents carry it with apps/v1
  { file: 'apis__apps__v1_openapi.json', kinds: ['Scale'] },
];
/** meta kinds every group-version document carries */
const metaKinds = ['io.k8s.apimachinery.pkg.apis.meta.v1.Status', 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions', 'io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent', 'io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList', 'io.k8s.apimachinery.pkg.apis.meta.v1.Patch'];

function refsIn(node, out) {
  if (Array.isArray(node)) for (const v of node) refsIn(v, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.add(v.replace('#/components/schemas/', ''));
      else refsIn(v, out);
    }
  }
  return out;
}

function builtinSchemas(dir) {
  const schemas = {};
  for (const { file, kinds } of builtins) {
    const doc = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const all = doc.components.schemas;
    const roots = Object.keys(all).filter((name) => {
      const gvks = all[name]['x-kubernetes-group-version-kind'] ?? [];
      return kinds.some((k) => name.endsWith(`.${k}`)) && gvks.length > 0;
    });
    const todo = [...roots, ...metaKinds.filter((m) => all[m])];
    while (todo.length) {
      const name = todo.pop();
      if (schemas[name] || !all[name]) continue;
      schemas[name] = all[name];
      for (const r of refsIn(all[name], new Set())) todo.push(r);
    }
  }
  return Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
}

/** every query parameter the built-in documents' operations take, by name, as kube-apiserver writes it */
function builtinParameters(dir) {
  const params = {};
  for (const { file } of builtins) {
    const doc = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    for (const item of Object.values(doc.paths)) {
      for (const op of [item, ...Object.values(item)]) {
        for (const prm of op?.parameters ?? []) if (prm.in === 'query' && !params[prm.name]) params[prm.name] = prm;
      }
    }
  }
  return Object.fromEntries(Object.entries(params).sort(([a], [b]) => a.localeCompare(b)));
}

// ---- CRDs --------------------------------------------------------------------------------------

function crdFiles() {
  const training = process.env.TRAINING_CRDS;
  const files = [];
  const trainingKinds = ['pytorchjobs', 'tfjobs', 'xgboostjobs', 'paddlejobs', 'jaxjobs', 'mpijobs'];
  for (const k of trainingKinds) {
    const f = training ? join(training, `kubeflow.org_${k}.yaml`) : undefined;
    files.push(f && existsSync(f) ? readFileSync(f, 'utf8') : gitShow('kubeflow+training-operator', 'release-1.9', `manifests/base/crds/kubeflow.org_${k}.yaml`));
  }
  const mpi = process.env.MPI_V2_CRD;
  files.push(mpi ? readFileSync(mpi, 'utf8') : gitShow('kubeflow+mpi-operator', 'HEAD', 'manifests/base/kubeflow.org_mpijobs.yaml'));
  const kserve = process.env.KSERVE_CRDS ?? join(shared, 'kserve', 'crd');
  for (const f of ['serving.kserve.io_inferenceservices.yaml', 'serving.kserve.io_servingruntimes.yaml', 'serving.kserve.io_clusterservingruntimes.yaml']) files.push(readFileSync(join(kserve, f), 'utf8'));
  const kueue = process.env.KUEUE_CRDS ?? join(shared, 'kueue', 'crds');
  for (const k of ['resourceflavors', 'clusterqueues', 'cohorts', 'localqueues', 'workloadpriorityclasses']) files.push(readFileSync(join(kueue, `kueue.x-k8s.io_${k}.yaml`), 'utf8'));
  const workloads = process.env.KUEUE_WORKLOAD_CRD;
  files.push(workloads ? readFileSync(workloads, 'utf8') : gitShow('kubernetes-sigs+kueue', KUEUE_COMMIT, 'config/components/crd/bases/kueue.x-k8s.io_workloads.yaml'));
  files.push(readFileSync(process.env.PROFILE_CRD ?? join(shared, 'profiles', 'dashboard-repo', 'crd', 'kubeflow.org_profiles.yaml'), 'utf8'));
  files.push(readFileSync(process.env.NOTEBOOK_CRD ?? join(shared, 'notebooks', 'crd', 'kubeflow.org_notebooks.yaml'), 'utf8'));
  return files;
}

/** a file of an upstream repository mirrored under /work/.mirror */
function gitShow(mirror, rev, path) {
  const dir = `/work/.mirror/${mirror}/repo`;
  if (!existsSync(dir)) throw new Error(`gen-openapi: ${path} of ${mirror}: set the environment variable for it (see the header)`);
  return execFileSync('git', ['--git-dir', dir, 'show', `${rev}:${path}`], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

/** keys sorted, so that equal subtrees serialise equally */
function canonical(node) {
  if (Array.isArray(node)) return node.map(canonical);
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const k of Object.keys(node).sort()) out[k] = canonical(node[k]);
  return out;
}

/** replaces subtrees that occur more than once (and are worth it) by references into defs */
function dedupe(roots) {
  const counts = new Map();
  const count = (node) => {
    if (node === null || typeof node !== 'object') return;
    const text = JSON.stringify(node);
    if (text.length > 400) counts.set(text, (counts.get(text) ?? 0) + 1);
    for (const v of Object.values(node)) count(v);
  };
  for (const r of roots) count(r);
  const defs = {};
  const replace = (node) => {
    if (node === null || typeof node !== 'object') return node;
    const text = JSON.stringify(node);
    if ((counts.get(text) ?? 0) > 1) {
      const id = createHash('sha1').update(text).digest('hex').slice(0, 12);
      if (!defs[id]) {
        defs[id] = null;
        defs[id] = replaceChildren(node);
      }
      return { $ref: `#/defs/${id}` };
    }
    return replaceChildren(node);
  };
  const replaceChildren = (node) => {
    if (Array.isArray(node)) return node.map(replace);
    const out = {};
    for (const [k, v] of Object.entries(node)) out[k] = replace(v);
    return out;
  };
  return { roots: roots.map(replaceChildren), defs };
}

/** the template metadata Skiff's Notebook keeps (see the header): labels and annotations, as an ObjectMeta has them */
const notebookTemplateMetadata = {
  description: "Standard object's metadata: the labels and annotations are copied onto the notebook's Pod. An addition of Skiff's to the notebook-controller's schema.",
  properties: {
    annotations: { additionalProperties: { type: 'string' }, description: 'Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata.', type: 'object' },
    labels: { additionalProperties: { type: 'string' }, description: 'Map of string keys and values that can be used to organize and categorize (scope and select) objects.', type: 'object' },
  },
  type: 'object',
};

function withSkiffAdditions(crd, schema) {
  if (crd.spec.group === 'kubeflow.org' && crd.spec.names.kind === 'Notebook') {
    const template = schema?.properties?.spec?.properties?.template;
    if (!template?.properties) throw new Error('gen-openapi: the Notebook CRD has no spec.template properties');
    template.properties.metadata = notebookTemplateMetadata;
  }
  return schema;
}

function crds() {
  const entries = [];
  for (const text of crdFiles()) {
    const crd = YAML.parse(text);
    for (const v of crd.spec.versions) {
      if (v.served === false) continue;
      withSkiffAdditions(crd, v.schema?.openAPIV3Schema);
      entries.push({
        group: crd.spec.group,
        version: v.name,
        kind: crd.spec.names.kind,
        plural: crd.spec.names.plural,
        scope: crd.spec.scope,
        ...(v.additionalPrinterColumns ? { additionalPrinterColumns: v.additionalPrinterColumns } : {}),
        ...(v.subresources ? { subresources: v.subresources } : {}),
        schema: canonical(v.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }),
      });
    }
  }
  const { roots, defs } = dedupe(entries.map((e) => e.schema));
  entries.forEach((e, i) => { e.schema = roots[i]; });
  return { crds: entries, defs };
}

const dir = k8sDir();
const out = { kubernetesVersion: K8S_VERSION, schemas: builtinSchemas(dir), parameters: builtinParameters(dir), ...crds() };
const file = join(repo, 'src', 'api', 'schemas', 'openapi.json');
writeFileSync(file, JSON.stringify(out) + '\n');
console.log(`wrote ${file}: ${Object.keys(out.schemas).length} built-in schemas, ${out.crds.length} CRD versions, ${Object.keys(out.defs).length} shared subtrees, ${(JSON.stringify(out).length / 1024).toFixed(0)} KiB`);
