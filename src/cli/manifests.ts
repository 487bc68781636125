/** Reading manifests: files, directories, stdin and URLs; multi-document YAML, JSON and Lists. */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { CliIO } from './io.js';
import type { KObject } from './types.js';

/** An object to act on, or a document that could not be used. */
export type ManifestEntry =
  | { source: string; object: KObject; error?: undefined }
  | { source: string; object?: undefined; error: string };

const MANIFEST_EXT = /\.(ya?ml|json)$/i;

type YamlModule = typeof import('yaml');
let yamlModule: Promise<YamlModule> | undefined;
/** `yaml` is loaded only when needed, to keep `skiff get` start-up fast. */
export function loadYaml(): Promise<YamlModule> {
  yamlModule ??= import('yaml');
  return yamlModule;
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** Line of a JSON.parse error, from its message (`... at position N` / `(line L column C)`). */
function jsonErrorLine(text: string, message: string): number | undefined {
  const lc = /line (\d+) column/.exec(message);
  if (lc) return Number(lc[1]);
  const pos = /position (\d+)/.exec(message);
  if (pos) return lineOf(text, Number(pos[1]));
  return undefined;
}

function expandObject(source: string, value: unknown, where: string, out: ManifestEntry[]): void {
  if (value === null || value === undefined) return; // empty document
  if (typeof value !== 'object' || Array.isArray(value)) {
    out.push({ source, error: `${source}: ${where} is not an object (got ${Array.isArray(value) ? 'a list' : typeof value})` });
    return;
  }
  const obj = value as KObject;
  if (typeof obj.kind === 'string' && obj.kind.endsWith('List') && Array.isArray(obj.items)) {
    (obj.items as unknown[]).forEach((item, i) => expandObject(source, item, `${where} item ${i + 1}`, out));
    return;
  }
  const missing = [!obj.apiVersion && 'apiVersion', !obj.kind && 'kind'].filter(Boolean);
  if (missing.length > 0) {
    out.push({ source, error: `${source}: ${where} has no ${missing.join(' and ')} set` });
    return;
  }
  out.push({ source, object: obj });
}

/**
 * Splits a manifest text into objects. `.json` sources are parsed as JSON; everything else as
 * multi-document YAML (which also reads JSON). Each bad document becomes an error entry
 * `FILE: invalid YAML at line L: ...`; the good ones are still returned.
 */
export async function parseManifests(text: string, source: string, json = false): Promise<ManifestEntry[]> {
  const out: ManifestEntry[] = [];
  if (json) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      const msg = (err as Error).message;
      const line = jsonErrorLine(text, msg);
      const clean = msg.replace(/\s*(?:in JSON )?at position \d+.*$/, '').replace(/\s*\(line \d+ column \d+\)/, '');
      out.push({ source, error: `${source}: invalid JSON${line ? ` at line ${line}` : ''}: ${clean}` });
      return out;
    }
    expandObject(source, value, 'the document', out);
    return out;
  }
  const YAML = await loadYaml();
  const docs = YAML.parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, i) => {
    const where = list.length > 1 ? `document ${i + 1}` : 'the document';
    const err = doc.errors[0];
    if (err) {
      const line = err.linePos?.[0]?.line;
      const msg = (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
      out.push({ source, error: `${source}: invalid YAML${line ? ` at line ${line}` : ''}: ${msg}` });
      return;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 1000 });
    } catch (e) {
      out.push({ source, error: `${source}: invalid YAML in ${where}: ${(e as Error).message.split('\n')[0]}` });
      return;
    }
    expandObject(source, value, where, out);
  });
  return out;
}

async function listDir(dir: string, recursive: boolean): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const files: string[] = [];
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (recursive) files.push(...(await listDir(p, true)));
    } else if (MANIFEST_EXT.test(e.name)) files.push(p);
  }
  return files;
}

/**
 * Reads every `-f` argument: `-` (stdin), an http(s) URL, a file, or a directory (its
 * .yaml/.yml/.json files, sorted; sub-directories only with `recursive`). Unreadable
 * arguments become error entries.
 */
export async function readManifests(args: string[], io: CliIO, recursive: boolean): Promise<ManifestEntry[]> {
  const out: ManifestEntry[] = [];
  for (const arg of args) {
    if (arg === '-') {
      out.push(...(await parseManifests(await io.readStdin(), 'STDIN')));
      continue;
    }
    if (/^https?:\/\//i.test(arg)) {
      try {
        const res = await fetch(arg);
        if (!res.ok) throw new Error(`HTTP ${res.status} ${res.statusText}`);
        out.push(...(await parseManifests(await res.text(), arg, /\.json$/i.test(new URL(arg).pathname))));
      } catch (err) {
        out.push({ source: arg, error: `${arg}: cannot download: ${(err as Error).message}` });
      }
      continue;
    }
    const path = resolve(io.cwd, arg);
    let files: string[];
    try {
      const st = await stat(path);
      files = st.isDirectory() ? await listDir(path, recursive) : [path];
      if (st.isDirectory() && files.length === 0) {
        out.push({ source: arg, error: `${arg}: no .yaml, .yml or .json files in this directory` });
        continue;
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      out.push({ source: arg, error: code === 'ENOENT' ? `the path "${arg}" does not exist` : `${arg}: ${(err as Error).message}` });
      continue;
    }
    for (const file of files) {
      const shown = file === path ? arg : join(arg, file.slice(path.length + 1));
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (err) {
        out.push({ source: shown, error: `${shown}: ${(err as Error).message}` });
        continue;
      }
      out.push(...(await parseManifests(text, shown, /\.json$/i.test(file))));
    }
  }
  return out;
}
