// Where the upstream conformance corpus is: next to the repository (`../shared/conformance`) in a
// working checkout, or wherever SKIFF_CONFORMANCE_DIR says; a clone elsewhere on this machine finds
// the machine's copy.
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** the repository root (this file is compiled to dist/src/) */
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export function conformanceDir(): string {
  const candidates = [process.env['SKIFF_CONFORMANCE_DIR'], join(repo, '..', 'shared', 'conformance'), '/work/shared/conformance'];
  return candidates.find((c): c is string => !!c && existsSync(c)) ?? join(repo, '..', 'shared', 'conformance');
}

/** The corpus files under `dir` whose names match `pattern` (YAML by default), sorted; none when `dir` is missing. */
export function corpusFiles(dir: string, pattern = /\.ya?ml$/): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? corpusFiles(join(dir, e.name), pattern) : pattern.test(e.name) ? [join(dir, e.name)] : []))
    .sort();
}
