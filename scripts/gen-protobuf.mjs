#!/usr/bin/env node
// Generates src/api/schemas/protobuf.json: the protobuf messages of the built-in kinds Skiff serves,
// read from k8s.io/api's and k8s.io/apimachinery's generated.proto (field numbers, types, repeated and
// map fields) and types.go (the fields Go inlines into the JSON object). kubectl's typed clients send
// these kinds as protobuf (`kubectl create configmap`, `kubectl create secret`, `auth can-i`);
// src/server/kube/protobuf.ts decodes them with this table.
//
//   node scripts/gen-protobuf.mjs [GO_MOD_CACHE]
//
// GO_MOD_CACHE defaults to ~/go/pkg/mod, with k8s.io/api and k8s.io/apimachinery v0.35.4 in it
// (`go mod download k8s.io/api@v0.35.4 k8s.io/apimachinery@v0.35.4`).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const mod = process.argv[2] ?? join(homedir(), 'go', 'pkg', 'mod');
const api = join(mod, 'k8s.io', 'api@v0.35.4');
const machinery = join(mod, 'k8s.io', 'apimachinery@v0.35.4');
if (!existsSync(api) || !existsSync(machinery)) {
  console.error(`gen-protobuf: k8s.io/api and k8s.io/apimachinery v0.35.4 are not in ${mod}`);
  process.exit(1);
}

const packages = [
  { dir: join(api, 'core', 'v1') },
  { dir: join(api, 'batch', 'v1') },
  { dir: join(api, 'policy', 'v1') },
  { dir: join(api, 'authorization', 'v1') },
  { dir: join(api, 'authentication', 'v1') },
  { dir: join(machinery, 'pkg', 'apis', 'meta', 'v1') },
  { dir: join(machinery, 'pkg', 'runtime') },
  { dir: join(machinery, 'pkg', 'runtime', 'schema') },
  { dir: join(machinery, 'pkg', 'util', 'intstr') },
  { dir: join(machinery, 'pkg', 'api', 'resource') },
];

/** the kinds decoded: the served built-ins and the bodies kubectl's typed clients send with them */
const roots = [
  'k8s.io.api.core.v1.ConfigMap', 'k8s.io.api.core.v1.Secret', 'k8s.io.api.core.v1.Namespace', 'k8s.io.api.core.v1.Pod',
  'k8s.io.api.core.v1.Service', 'k8s.io.api.core.v1.Event', 'k8s.io.api.core.v1.Node', 'k8s.io.api.core.v1.PersistentVolumeClaim',
  'k8s.io.api.batch.v1.Job', 'k8s.io.api.policy.v1.Eviction',
  'k8s.io.api.authorization.v1.SelfSubjectAccessReview', 'k8s.io.api.authorization.v1.SelfSubjectRulesReview',
  'k8s.io.api.authentication.v1.SelfSubjectReview', 'k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions',
];

const scalars = new Set(['string', 'bytes', 'bool', 'int32', 'int64', 'uint32', 'uint64', 'double', 'float', 'fixed64', 'sfixed64', 'fixed32', 'sfixed32', 'sint32', 'sint64']);

const messages = {};
for (const { dir } of packages) {
  const proto = readFileSync(join(dir, 'generated.proto'), 'utf8').replace(/\/\/.*$/gm, '');
  const pkg = /^package\s+([\w.]+);/m.exec(proto)[1];
  // from the Go source: the fields inlined into the JSON object, and the pointer fields (whose zero
  // value was set on purpose, where a plain field's zero is only its default)
  const inline = {};
  const pointers = {};
  for (const file of ['types.go', 'meta.go', 'types_swagger_doc_generated.go']) {
    if (!existsSync(join(dir, file))) continue;
    let struct;
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const s = /^type (\w+) struct/.exec(line);
      if (s) struct = s[1];
      const f = /json:",inline".*protobuf:"[^"]*name=(\w+)/.exec(line);
      if (f && struct) (inline[struct] ??= []).push(f[1]);
      const p = /^\s*\w+\s+\*\S+\s+`.*protobuf:"[^"]*name=(\w+)/.exec(line);
      if (p && struct) (pointers[struct] ??= []).push(p[1]);
    }
  }
  const re = /message\s+(\w+)\s*\{([^{}]*)\}/g;
  let m;
  while ((m = re.exec(proto))) {
    const [, name, body] = m;
    const fields = {};
    for (const line of body.split(';')) {
      const t = line.trim();
      let f = /^map<\s*([\w.]+)\s*,\s*([\w.]+)\s*>\s+(\w+)\s*=\s*(\d+)/.exec(t);
      if (f) {
        fields[f[4]] = { name: f[3], map: [qualify(f[1], pkg), qualify(f[2], pkg)] };
        continue;
      }
      f = /^(optional|repeated|required)\s+([\w.]+)\s+(\w+)\s*=\s*(\d+)/.exec(t);
      if (f) {
        const field = { name: f[3], type: qualify(f[2], pkg) };
        if (f[1] === 'repeated') field.repeated = true;
        if ((inline[name] ?? []).includes(f[3])) field.inline = true;
        if ((pointers[name] ?? []).includes(f[3])) field.pointer = true;
        fields[f[4]] = field;
      }
    }
    messages[`${pkg}.${name}`] = fields;
  }
}

function qualify(type, pkg) {
  if (scalars.has(type)) return type;
  return type.startsWith('.') ? type.slice(1) : `${pkg}.${type}`;
}

// keep what the roots reach
const out = {};
const queue = [...roots];
while (queue.length) {
  const name = queue.pop();
  if (out[name] || scalars.has(name)) continue;
  const fields = messages[name];
  if (!fields) throw new Error(`gen-protobuf: no message ${name}`);
  out[name] = fields;
  for (const f of Object.values(fields)) {
    if (f.type) queue.push(f.type);
    if (f.map) queue.push(...f.map);
  }
}
const file = join(repo, 'src', 'api', 'schemas', 'protobuf.json');
writeFileSync(file, JSON.stringify({ source: 'k8s.io/api and k8s.io/apimachinery v0.35.4 generated.proto', roots, messages: Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b))) }) + '\n');
console.log(`gen-protobuf: ${Object.keys(out).length} messages → ${file}`);
