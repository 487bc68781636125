// YAML on a command's critical path. `skiff run` reads a compiled pipeline (and a kubeconfig) before
// it can submit anything: with the `yaml` package that is about 90 ms of a cold process (loading the
// library, then parsing with code the JIT has not seen yet), with js-yaml about 25 ms. js-yaml reads
// the plain documents the kfp SDK and kubeconfigs are; `yaml` stays the reader of record, for
// everything else and for the errors, which it words with their line.
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type * as JsYaml from 'js-yaml';

const load = createRequire(import.meta.url);
let full: typeof Yaml | undefined;
let quick: typeof JsYaml | undefined;

/** the `yaml` package, loaded on first use */
export function yamlLibrary(): typeof Yaml {
  return (full ??= load('yaml') as typeof Yaml);
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
  quick ??= load('js-yaml') as typeof JsYaml;
  let docs: unknown[];
  try {
    docs = quick.loadAll(text, undefined, { schema: quick.CORE_SCHEMA });
  } catch {
    return undefined;
  }
  return docs.some(sharesNodes) ? undefined : docs;
}
