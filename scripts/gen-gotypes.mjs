#!/usr/bin/env node
// Generates src/api/schemas/gotypes.json: the Go type of every field of the built-in kinds Skiff
// serves, as Go's reflect prints it (`int32`, `v1.PullPolicy`, `[]v1.ContainerPort`,
// `map[string]string`), read from k8s.io/api's and k8s.io/apimachinery's Go sources. kube-apiserver
// decodes a built-in kind's JSON body into these Go structs and, when a value does not fit, answers
// with encoding/json's UnmarshalTypeError, which names the field's Go type; the OpenAPI schemas do
// not carry it (an enum field is a named string type, `restartPolicy` a v1.RestartPolicy), so
// src/api/go-decode.ts reads it from here.
//
// Output: { structs: { <OpenAPI component name>: { <json field>: <Go type> } },
//           named: { <Go type>: <its underlying type> } } (only named types that are not structs).
//
// Sources (git mirrors, at the tag of the Kubernetes version the OpenAPI data comes from):
//   K8S_API_GIT           a git directory of kubernetes/api (default /work/.mirror/kubernetes+api/repo)
//   K8S_APIMACHINERY_GIT  a git directory of kubernetes/apimachinery (default /work/.mirror/kubernetes+apimachinery/repo)
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const openapi = JSON.parse(readFileSync(join(repo, 'src', 'api', 'schemas', 'openapi.json'), 'utf8'));
// k8s.io/api and apimachinery v0.X.Y are Kubernetes v1.X.Y
const tag = openapi.kubernetesVersion.replace(/^v1\./, 'v0.');
const apiGit = process.env.K8S_API_GIT ?? '/work/.mirror/kubernetes+api/repo';
const machineryGit = process.env.K8S_APIMACHINERY_GIT ?? '/work/.mirror/kubernetes+apimachinery/repo';

function git(dir, ...args) {
  return execFileSync('git', ['--git-dir', dir, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

/** the Go package a component lives in: its git mirror, directory and package name */
function packageOf(component) {
  let m = /^io\.k8s\.api\.([a-z.]+)\.(v[0-9a-z]+)\.\w+$/.exec(component);
  if (m) return { dir: apiGit, path: `${m[1].replace(/\./g, '/')}/${m[2]}`, name: m[2] };
  m = /^io\.k8s\.apimachinery\.pkg\.(.+)\.\w+$/.exec(component);
  if (m) return { dir: machineryGit, path: `pkg/${m[1].replace(/\./g, '/')}`, name: m[1].split('.').pop() };
  return undefined;
}

/** the package name an import alias stands for in Go's type names (metav1 "k8s.io/apimachinery/pkg/apis/meta/v1" is `v1`) */
const aliases = { metav1: 'v1', corev1: 'v1', v1: 'v1', resource: 'resource', types: 'types', intstr: 'intstr', runtime: 'runtime' };
const builtins = new Set(['string', 'bool', 'byte', 'int', 'int8', 'int16', 'int32', 'int64', 'uint', 'uint8', 'uint16', 'uint32', 'uint64', 'float32', 'float64', 'any']);

/** a Go type expression of a package's source, as reflect's Type.String() prints it */
function qualify(expr, pkg) {
  if (expr.startsWith('*')) return `*${qualify(expr.slice(1), pkg)}`;
  if (expr.startsWith('[]')) return `[]${qualify(expr.slice(2), pkg)}`;
  const map = /^map\[([^\]]+)\](.+)$/.exec(expr);
  if (map) return `map[${qualify(map[1], pkg)}]${qualify(map[2], pkg)}`;
  if (expr === 'byte') return 'uint8';
  if (expr === 'interface{}') return 'interface {}';
  if (builtins.has(expr)) return expr;
  const dot = expr.indexOf('.');
  if (dot > 0) return `${aliases[expr.slice(0, dot)] ?? expr.slice(0, dot)}${expr.slice(dot)}`;
  return `${pkg.name}.${expr}`;
}

const parsed = new Map();
/** a package's struct types (json fields and inlined embeds) and other named types */
function parsePackage(pkg) {
  const key = `${pkg.dir}:${pkg.path}`;
  if (parsed.has(key)) return parsed.get(key);
  const files = git(pkg.dir, 'ls-tree', '--name-only', tag, `${pkg.path}/`).split('\n')
    .filter((f) => f.endsWith('.go') && !f.endsWith('_test.go') && !/generated|zz_/.test(f));
  const structs = {};
  const named = {};
  for (const f of files) {
    const text = git(pkg.dir, 'show', `${tag}:${f}`);
    for (const m of text.matchAll(/^type (\w+) struct \{\n([\s\S]*?)^\}/gm)) {
      const fields = {};
      const inline = [];
      for (const line of m[2].split('\n')) {
        // `Name Type \`json:"name"\``, or an embedded struct with a json name (`metav1.ObjectMeta \`json:"metadata"\``)
        const field = /^\s+(?:\w+\s+)?([^\s`]+)\s+`json:"([^",]*)[^"]*"/.exec(line);
        if (field && field[2] && field[2] !== '-') fields[field[2]] = qualify(field[1], pkg);
        const embed = /^\s+([\w.]+)\s+`json:",inline"/.exec(line);
        if (embed) inline.push(embed[1]);
      }
      structs[m[1]] = { fields, inline };
    }
    for (const m of text.matchAll(/^type (\w+) ([^\s{]+)\s*(?:\/\/.*)?$/gm)) {
      if (m[2] !== 'struct' && m[2] !== 'interface') named[qualify(m[1], pkg)] = qualify(m[2], pkg);
    }
  }
  const out = { structs, named };
  parsed.set(key, out);
  return out;
}

/** every json field of a struct, its inlined embeds' included */
function fieldsOf(pkg, name) {
  const s = parsePackage(pkg).structs[name];
  if (!s) return undefined;
  const out = {};
  for (const e of s.inline) {
    if (e.includes('.')) continue; // metav1.TypeMeta: kind and apiVersion, strings
    Object.assign(out, fieldsOf(pkg, e) ?? {});
  }
  return Object.assign(out, s.fields);
}

const structs = {};
const named = {};
for (const component of Object.keys(openapi.schemas).sort()) {
  const pkg = packageOf(component);
  if (!pkg) continue;
  const fields = fieldsOf(pkg, component.split('.').pop());
  if (!fields) continue;
  structs[component] = fields;
  Object.assign(named, parsePackage(pkg).named);
}
// only the named types a field uses, underlying types resolved through other named types as Go keeps them
const used = {};
const visit = (t) => {
  const base = t.replace(/^(\*|\[\])+/, '');
  const map = /^map\[([^\]]+)\](.+)$/.exec(base);
  if (map) return void (visit(map[1]), visit(map[2]));
  if (named[base] && !used[base]) {
    used[base] = named[base];
    visit(named[base]);
  }
};
for (const fields of Object.values(structs)) for (const t of Object.values(fields)) visit(t);
const out = { kubernetesVersion: openapi.kubernetesVersion, structs, named: Object.fromEntries(Object.entries(used).sort(([a], [b]) => a.localeCompare(b))) };
const file = join(repo, 'src', 'api', 'schemas', 'gotypes.json');
writeFileSync(file, JSON.stringify(out) + '\n');
console.log(`wrote ${file}: ${Object.keys(structs).length} structs, ${Object.keys(out.named).length} named types (k8s.io/api ${tag})`);
