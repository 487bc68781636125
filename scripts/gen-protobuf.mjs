#!/usr/bin/env node
// Generates src/api/schemas/protobuf.json: how to read the protobuf bodies clients send for Kubernetes'
// own kinds (`application/vnd.kubernetes.protobuf`, kubectl's typed commands), as data.
//
// Inputs are the generated.proto files of k8s.io/api and k8s.io/apimachinery (the messages and field
// numbers) and the Go types beside them (types.go and friends: each field's JSON name, `omitempty`,
// pointer or value, `json:",inline"`), because a protobuf body must become the object the same client
// would have sent as JSON, and that object is Go's JSON encoding of the struct the message fills.
//
//   node scripts/gen-protobuf.mjs
//
// The modules come from the Go module cache (fetched with `go mod download` when absent).
//
// Output: { kinds: { "<apiVersion>/<Kind>": "<message>" }, messages: { "<message>": { f: [[number, json,
// type, flags], …], list?: true } } }. Message names drop the `k8s.io.api.` / `k8s.io.apimachinery.pkg.`
// prefixes. A type is a scalar (string, int32, int64, bool, double, float, bytes…), a message name, or
// `map<K,V>`. Flags: r repeated, p a Go pointer (absent stays absent), o omitempty, z omitzero, i inline
// (its fields are the parent's). `list` marks a message that is a named Go slice (its one field is `items`).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const API_VERSION = 'v0.35.4';
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(repo, 'src', 'api', 'schemas', 'protobuf.json');

/** by apiVersion, the kinds whose bodies Skiff reads: the served built-in kinds and the request kinds clients post */
const ROOTS = {
  'v1': ['Namespace', 'Pod', 'ConfigMap', 'Secret', 'PersistentVolumeClaim', 'Service', 'Node', 'Event', 'Binding', 'ServiceAccount', 'Endpoints'],
  'batch/v1': ['Job'],
  'policy/v1': ['Eviction'],
  'authorization.k8s.io/v1': ['SelfSubjectAccessReview', 'SubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview'],
  'authentication.k8s.io/v1': ['TokenRequest', 'TokenReview', 'SelfSubjectReview'],
  'autoscaling/v1': ['Scale'],
};
/** options every group-version takes as a body (registered in each by metav1.AddToGroupVersion) */
const META_KINDS = ['DeleteOptions', 'CreateOptions', 'UpdateOptions', 'PatchOptions'];

function moduleDir(mod) {
  const go = existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
  const info = JSON.parse(execFileSync(go, ['mod', 'download', '-json', `${mod}@${API_VERSION}`], { cwd: '/tmp', encoding: 'utf8' }));
  return info.Dir;
}

const apiDir = moduleDir('k8s.io/api');
const machineryDir = moduleDir('k8s.io/apimachinery');

/** proto package → its directory (proto and Go sources) */
const packages = {
  'k8s.io.api.core.v1': join(apiDir, 'core', 'v1'),
  'k8s.io.api.batch.v1': join(apiDir, 'batch', 'v1'),
  'k8s.io.api.policy.v1': join(apiDir, 'policy', 'v1'),
  'k8s.io.api.authorization.v1': join(apiDir, 'authorization', 'v1'),
  'k8s.io.api.authentication.v1': join(apiDir, 'authentication', 'v1'),
  'k8s.io.api.autoscaling.v1': join(apiDir, 'autoscaling', 'v1'),
  'k8s.io.apimachinery.pkg.apis.meta.v1': join(machineryDir, 'pkg', 'apis', 'meta', 'v1'),
  'k8s.io.apimachinery.pkg.runtime': join(machineryDir, 'pkg', 'runtime'),
  'k8s.io.apimachinery.pkg.runtime.schema': join(machineryDir, 'pkg', 'runtime', 'schema'),
  'k8s.io.apimachinery.pkg.util.intstr': join(machineryDir, 'pkg', 'util', 'intstr'),
  'k8s.io.apimachinery.pkg.api.resource': join(machineryDir, 'pkg', 'api', 'resource'),
};
const groupVersionPackage = {
  'v1': 'k8s.io.api.core.v1',
  'batch/v1': 'k8s.io.api.batch.v1',
  'policy/v1': 'k8s.io.api.policy.v1',
  'authorization.k8s.io/v1': 'k8s.io.api.authorization.v1',
  'authentication.k8s.io/v1': 'k8s.io.api.authentication.v1',
  'autoscaling/v1': 'k8s.io.api.autoscaling.v1',
};

const short = (full) => full.replace(/^k8s\.io\.api\./, '').replace(/^k8s\.io\.apimachinery\.pkg\./, '');

// ------------------------------------------------------------------ .proto

const scalars = new Set(['string', 'bytes', 'bool', 'int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64', 'double', 'float']);

/** message name → { fields: [{ number, name, type, repeated }] } for one package */
function parseProto(pkg, text) {
  const messages = new Map();
  const body = text.replace(/\/\/[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '');
  const qualify = (t) => (scalars.has(t) ? t : t.startsWith('.') ? t.slice(1) : `${pkg}.${t}`);
  for (const m of body.matchAll(/message\s+(\w+)\s*\{([^}]*)\}/g)) {
    const fields = [];
    for (const line of m[2].split(';')) {
      const s = line.trim();
      if (!s) continue;
      let f = /^(optional|repeated|required)\s+([\w.]+)\s+(\w+)\s*=\s*(\d+)/.exec(s);
      if (f) {
        fields.push({ number: Number(f[4]), name: f[3], type: qualify(f[2]), repeated: f[1] === 'repeated' });
        continue;
      }
      f = /^map<\s*([\w.]+)\s*,\s*([\w.]+)\s*>\s+(\w+)\s*=\s*(\d+)/.exec(s);
      if (f) {
        fields.push({ number: Number(f[4]), name: f[3], type: `map<${qualify(f[1])},${qualify(f[2])}>`, repeated: false });
        continue;
      }
      throw new Error(`${pkg}.${m[1]}: cannot read the field "${s}"`);
    }
    messages.set(`${pkg}.${m[1]}`, { fields });
  }
  return messages;
}

// ------------------------------------------------------------------ Go types

/**
 * Go struct name → Map(proto field number → { json, omitempty, pointer, inline }), and the names of
 * Go types that are slices (a message standing for one wraps its elements in `items`).
 */
function parseGo(dir) {
  const structs = new Map();
  const sliceTypes = new Set();
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.go') || file.endsWith('_test.go') || file.startsWith('generated.') || file.startsWith('zz_')) continue;
    const text = readFileSync(join(dir, file), 'utf8');
    for (const m of text.matchAll(/^type (\w+) \[\]/gm)) sliceTypes.add(m[1]);
    for (const m of text.matchAll(/^type (\w+) struct \{\n([\s\S]*?)^\}/gm)) {
      const fields = new Map();
      for (const line of m[2].split('\n')) {
        const tagAt = line.indexOf('`');
        if (tagAt < 0) continue;
        const head = line.slice(0, tagAt).trim().split(/\s+/);
        const tag = line.slice(tagAt + 1, line.lastIndexOf('`'));
        const pb = /protobuf:"([^"]*)"/.exec(tag);
        if (!pb) continue;
        const number = Number(pb[1].split(',')[1]);
        if (!Number.isInteger(number)) continue;
        const json = /json:"([^"]*)"/.exec(tag)?.[1] ?? '';
        const [jsonName = '', ...opts] = json.split(',');
        const goType = head.length >= 2 ? head[1] : head[0];
        fields.set(number, {
          json: jsonName,
          omitempty: opts.includes('omitempty'),
          omitzero: opts.includes('omitzero'),
          inline: opts.includes('inline') || (head.length === 1 && jsonName === ''),
          pointer: goType.startsWith('*'),
          skip: jsonName === '-',
        });
      }
      structs.set(m[1], fields);
    }
  }
  return { structs, sliceTypes };
}

// ------------------------------------------------------------------ closure

const allMessages = new Map();
const goInfo = new Map();
for (const [pkg, dir] of Object.entries(packages)) {
  for (const [name, msg] of parseProto(pkg, readFileSync(join(dir, 'generated.proto'), 'utf8'))) allMessages.set(name, msg);
  goInfo.set(pkg, parseGo(dir));
}

/** messages the decoder reads by their own rules (src/api/protobuf.ts), not field by field */
const special = new Set([
  'k8s.io.apimachinery.pkg.apis.meta.v1.Time',
  'k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime',
  'k8s.io.apimachinery.pkg.apis.meta.v1.Duration',
  'k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1',
  'k8s.io.apimachinery.pkg.api.resource.Quantity',
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString',
  'k8s.io.apimachinery.pkg.runtime.RawExtension',
]);

const kinds = {};
const wanted = [];
for (const [gv, names] of Object.entries(ROOTS)) {
  const pkg = groupVersionPackage[gv];
  for (const kind of [...names, ...META_KINDS]) {
    const full = META_KINDS.includes(kind) ? `k8s.io.apimachinery.pkg.apis.meta.v1.${kind}` : `${pkg}.${kind}`;
    if (!allMessages.has(full)) throw new Error(`no message ${full} for ${gv}/${kind}`);
    kinds[`${gv}/${kind}`] = short(full);
    wanted.push(full);
  }
}
for (const kind of META_KINDS) kinds[`meta.k8s.io/v1/${kind}`] = short(`k8s.io.apimachinery.pkg.apis.meta.v1.${kind}`);

const messages = {};
const seen = new Set();
while (wanted.length) {
  const name = wanted.pop();
  if (seen.has(name) || special.has(name)) continue;
  seen.add(name);
  const msg = allMessages.get(name);
  if (!msg) throw new Error(`no message ${name}`);
  const pkg = name.slice(0, name.lastIndexOf('.'));
  const goName = name.slice(pkg.length + 1);
  const go = goInfo.get(pkg);
  const struct = go?.structs.get(goName);
  const isList = go?.sliceTypes.has(goName) ?? false;
  const f = [];
  for (const field of msg.fields) {
    const info = struct?.get(field.number);
    if (!struct && !isList) throw new Error(`no Go struct for ${name}`);
    if (info?.skip && goName !== 'FieldsV1') continue;
    const types = field.type.startsWith('map<') ? field.type.slice(4, -1).split(',') : [field.type];
    for (const t of types) if (!scalars.has(t)) wanted.push(t);
    const type = field.type.startsWith('map<') ? `map<${types.map((t) => (scalars.has(t) ? t : short(t))).join(',')}>` : scalars.has(field.type) ? field.type : short(field.type);
    let flags = field.repeated ? 'r' : '';
    if (info?.pointer) flags += 'p';
    if (info?.omitempty) flags += 'o';
    if (info?.omitzero) flags += 'z';
    if (info?.inline) flags += 'i';
    f.push([field.number, info?.inline ? '' : info?.json || field.name, type, flags]);
  }
  messages[short(name)] = isList ? { f, list: true } : { f };
}

const sorted = Object.fromEntries(Object.keys(messages).sort().map((k) => [k, messages[k]]));
const doc = {
  source: `k8s.io/api@${API_VERSION}, k8s.io/apimachinery@${API_VERSION} (generated.proto and Go types; scripts/gen-protobuf.mjs)`,
  kinds,
  messages: sorted,
};
// one message per line: small in git, readable in a diff
const text = `{\n  "source": ${JSON.stringify(doc.source)},\n  "kinds": ${JSON.stringify(kinds)},\n  "messages": {\n${Object.entries(sorted).map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(',\n')}\n  }\n}\n`;
writeFileSync(out, text);
console.log(`wrote ${out}: ${Object.keys(kinds).length} kinds, ${Object.keys(sorted).length} messages`);
