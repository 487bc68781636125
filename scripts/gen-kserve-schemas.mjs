#!/usr/bin/env node
// Generates src/api/schemas/kserve.json: the openAPIV3Schemas of KServe's three CRDs
// (InferenceService v1beta1, ServingRuntime and ClusterServingRuntime v1alpha1), without their
// descriptions, with every subtree that repeats (PodSpec, Container, probes, volumes, ...) stored
// once under `$defs` and referenced as `{"$ref": "#/$defs/<id>"}`. src/api/structural-schema.ts
// validates objects against it.
//
//   node scripts/gen-kserve-schemas.mjs [CRD_DIR]
//
// CRD_DIR defaults to the conformance corpus's copy (shared/conformance/kserve/crd).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const crdDir = process.argv[2]
  ?? [process.env.SKIFF_CONFORMANCE_DIR && join(process.env.SKIFF_CONFORMANCE_DIR, 'kserve', 'crd'), join(repo, '..', 'shared', 'conformance', 'kserve', 'crd'), '/work/shared/conformance/kserve/crd']
    .find((d) => d && existsSync(d));
if (!crdDir || !existsSync(crdDir)) {
  console.error('gen-kserve-schemas: no CRD directory found (pass one as the first argument)');
  process.exit(1);
}

const roots = [
  { kind: 'InferenceService', file: 'serving.kserve.io_inferenceservices.yaml', version: 'v1beta1' },
  { kind: 'ServingRuntime', file: 'serving.kserve.io_servingruntimes.yaml', version: 'v1alpha1' },
  { kind: 'ClusterServingRuntime', file: 'serving.kserve.io_clusterservingruntimes.yaml', version: 'v1alpha1' },
];

/** the schema without descriptions, keys sorted so equal subtrees serialise equally */
function strip(node) {
  if (Array.isArray(node)) return node.map(strip);
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const key of Object.keys(node).sort()) {
    if (key === 'description') continue;
    // `properties` maps field names to schemas: a field may be called "description"
    if (key === 'properties') {
      const props = {};
      for (const name of Object.keys(node.properties).sort()) props[name] = strip(node.properties[name]);
      out.properties = props;
    } else {
      out[key] = strip(node[key]);
    }
  }
  return out;
}

const schemas = {};
for (const r of roots) {
  const crd = YAML.parse(readFileSync(join(crdDir, r.file), 'utf8'));
  const version = crd.spec.versions.find((v) => v.name === r.version && v.served);
  if (!version?.schema?.openAPIV3Schema) throw new Error(`${r.file}: no served ${r.version} schema`);
  schemas[r.kind] = strip(version.schema.openAPIV3Schema);
}

// Count every schema subtree (by its serialisation) across the three roots.
const counts = new Map();
function count(node) {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    node.forEach(count);
    return;
  }
  const text = JSON.stringify(node);
  counts.set(text, (counts.get(text) ?? 0) + 1);
  for (const [key, child] of Object.entries(node)) {
    if (key === 'properties') for (const p of Object.values(child)) count(p);
    else count(child);
  }
}
for (const s of Object.values(schemas)) count(s);

// Subtrees that repeat and are worth a reference become definitions, named after the field they
// were first seen under (`container`, `readinessProbe`, `tolerationsItem`, ...).
const minSize = 120;
const defs = {};
const idOf = new Map();
const usedIds = new Set();

function newId(hint) {
  const base = (hint || 'schema').replace(/[^A-Za-z0-9_]/g, '_');
  let id = base;
  for (let n = 2; usedIds.has(id); n++) id = `${base}${n}`;
  usedIds.add(id);
  return id;
}

function dedupe(node, hint, isRoot = false) {
  if (node === null || typeof node !== 'object') return node;
  if (Array.isArray(node)) return node.map((n) => dedupe(n, hint));
  const text = JSON.stringify(node);
  if (!isRoot && (counts.get(text) ?? 0) > 1 && text.length >= minSize) {
    let id = idOf.get(text);
    if (id === undefined) {
      id = newId(hint);
      idOf.set(text, id);
      defs[id] = dedupeBody(node, hint);
    }
    return { $ref: `#/$defs/${id}` };
  }
  return dedupeBody(node, hint);
}

function dedupeBody(node, hint) {
  const out = {};
  for (const [key, child] of Object.entries(node)) {
    if (key === 'properties') {
      const props = {};
      for (const [name, p] of Object.entries(child)) props[name] = dedupe(p, name);
      out.properties = props;
    } else if (key === 'items') {
      out.items = dedupe(child, `${hint}Item`);
    } else if (key === 'additionalProperties') {
      out.additionalProperties = dedupe(child, `${hint}Value`);
    } else {
      out[key] = dedupe(child, hint);
    }
  }
  return out;
}

const outRoots = {};
for (const [kind, s] of Object.entries(schemas)) outRoots[kind] = dedupe(s, kind, true);

const sortedDefs = {};
for (const id of Object.keys(defs).sort()) sortedDefs[id] = defs[id];

const source = {
  crds: roots.map((r) => `${r.file} (${r.version})`),
  generator: 'scripts/gen-kserve-schemas.mjs',
};
const out = { source, roots: outRoots, $defs: sortedDefs };
const outDir = join(repo, 'src', 'api', 'schemas');
mkdirSync(outDir, { recursive: true });
const text = JSON.stringify(out) + '\n';
writeFileSync(join(outDir, 'kserve.json'), text);
console.log(`wrote src/api/schemas/kserve.json: ${text.length} bytes, ${Object.keys(sortedDefs).length} definitions`);
