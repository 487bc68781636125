// The upstream examples kubectl applies in the conformance tests: every corpus file
// (../shared/conformance) whose every document is an object of a kind Skiff serves, and what the
// API says of each object. Shared by the test against Skiff's own store (kubectl-conformance) and
// the one against a real cluster with Skiff running on it (kubernetes-conformance).
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { apiVersionOf } from '../src/api/registry.js';
import { conformanceDir, corpusFiles } from '../src/conformance-path.js';
import { registryOf, workloads } from '../src/server/workloads.js';
import type { ServingDataPlane } from '../src/workloads/serving/data-plane.js';

export const corpus = conformanceDir();
export const registry = registryOf(workloads({ dataPlane: {} as ServingDataPlane }));

export interface Example {
  /** the path under the corpus */
  file: string;
  text: string;
  objs: any[];
}

/** the corpus files whose every document is an object of a kind Skiff serves */
export function examples(): Example[] {
  const out: Example[] = [];
  for (const file of corpusFiles(corpus)) {
    let objs: any[];
    try {
      objs = YAML.parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS()).filter((o) => o !== null && o !== undefined);
    } catch {
      continue;
    }
    if (objs.length === 0 || !objs.every((o) => typeof o === 'object' && typeof o.apiVersion === 'string' && typeof o.kind === 'string' && registry.forObject(o.apiVersion, o.kind))) continue;
    // objects of Skiff's own groups are not upstream Kubernetes kinds
    if (objs.some((o) => o.kind === 'Namespace' || apiVersionOf(registry.forObject(o.apiVersion, o.kind)!).startsWith('pipelines.'))) continue;
    out.push({ file: file.slice(corpus.length + 1), text: readFileSync(file, 'utf8'), objs });
  }
  return out;
}

/** as kubectl sends an object: a key whose value is null (`resources:` left empty in an excerpt) is dropped */
export function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null).map(([k, x]) => [k, withoutNulls(x)]));
  return v;
}

/** the API path of an object's collection, in its namespace (default when it names none) */
export function collectionPath(o: any): string {
  const def = registry.forObject(o.apiVersion, o.kind)!;
  const base = def.group ? `/apis/${def.group}/${def.version}` : `/api/${def.version}`;
  const ns = def.namespaced ? `/namespaces/${o.metadata?.namespace ?? 'default'}` : '';
  return `${base}${ns}/${def.plural}`;
}

/** kubectl applies nothing that only has a generateName (as on a cluster): such files are created */
export function kubectlCommands(ex: Example): string[][] {
  const generated = ex.objs.some((o) => !o.metadata?.name && o.metadata?.generateName);
  return generated ? [['create', '--dry-run=server', '-f', '-']] : [['apply', '--dry-run=server', '-f', '-'], ['apply', '--server-side', '--dry-run=server', '-f', '-']];
}

/** the fields a refusal's causes name (`.spec.x` as `spec.x`) */
export function causeFields(body: any): string[] {
  return (body?.details?.causes ?? []).map((c: any) => String(c.field ?? '').replace(/^\./, '')).filter(Boolean);
}
