// YAML on a command's critical path. `skiff run` reads a compiled pipeline (and a kubeconfig) before
// it can submit anything: parsing with the `yaml` package takes about 60 ms in a cold process (code
// the JIT has not seen yet), with js-yaml about 10 ms. js-yaml reads the plain documents the kfp SDK
// and kubeconfigs are; `yaml` stays the reader of record, for everything else and for the errors,
// which it words with their line. Both are plain ES modules: the dashboard's bundle shares this file.
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import * as Yaml from 'yaml';

/** the `yaml` package */
export function yamlLibrary(): typeof Yaml {
  return Yaml;
}

/** whether some object or array is reached twice: an alias (js-yaml shares the node it names) */
function sharesNodes(root: unknown): boolean {
  const seen = new Set<object>();
  const stack: unknown[] = [root];
  while (stack.length) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (seen.has(v)) return true;
    seen.add(v);
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push(child);
  }
  return false;
}

/**
 * The documents of `text` as js-yaml reads them with YAML 1.2's core schema (the `yaml` package's
 * default: no timestamps, no merge keys), or undefined when the text is not for this quick reader:
 * js-yaml refuses it, or it uses aliases (left to `yaml`, which limits how far they may expand).
 * The caller then reads it with `yaml`.
 */
export function quickYamlDocuments(text: string): unknown[] | undefined {
  let docs: unknown[];
  try {
    docs = loadAll(text, undefined, { schema: CORE_SCHEMA });
  } catch {
    return undefined;
  }
  return docs.some(sharesNodes) ? undefined : docs;
}
