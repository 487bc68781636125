import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseManifests, readManifests } from './manifests.js';
import { resolveIO } from './io.js';

const JOB = 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pi\n';

void test('multi-document YAML: empty documents are skipped', async () => {
  const text = `---\n${JOB}---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: "1"\n---\n`;
  const entries = await parseManifests(text, 'x.yaml');
  assert.deepEqual(entries.map((e) => e.object?.kind), ['Job', 'ConfigMap']);
  assert.equal(entries[1]?.object?.data && (entries[1].object.data as Record<string, string>).a, '1');
});

void test('List kinds are expanded', async () => {
  const text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }, { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'b' } }] });
  const fromJson = await parseManifests(text, 'l.json', true);
  assert.deepEqual(fromJson.map((e) => e.object?.metadata?.name), ['a', 'b']);
  const fromYaml = await parseManifests(text, 'STDIN');
  assert.deepEqual(fromYaml.map((e) => e.object?.metadata?.name), ['a', 'b']);
});

void test('bad YAML names the file and line; other documents survive', async () => {
  const text = `${JOB}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [oops\n---\n${JOB}`;
  const entries = await parseManifests(text, 'bad.yaml');
  assert.equal(entries.length, 3);
  assert.equal(entries[0]?.object?.kind, 'Job');
  assert.match(entries[1]?.error ?? '', /^bad\.yaml: invalid YAML at line \d+: /);
  assert.doesNotMatch(entries[1]?.error ?? '', /\n/);
  assert.equal(entries[2]?.object?.kind, 'Job');
});

void test('bad JSON names the file and line', async () => {
  const entries = await parseManifests('{\n  "kind": "Job",\n  oops\n}', 'bad.json', true);
  assert.match(entries[0]?.error ?? '', /^bad\.json: invalid JSON at line 3: /);
});

void test('documents must be objects with apiVersion and kind', async () => {
  const entries = await parseManifests('- a\n- b\n---\nmetadata:\n  name: x\n', 'f.yaml');
  assert.match(entries[0]?.error ?? '', /document 1 is not an object/);
  assert.match(entries[1]?.error ?? '', /document 2 has no apiVersion and kind set/);
});

void test('directories: sorted manifest files, recursion only with -R; stdin', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'skiff-cli-'));
  try {
    await writeFile(join(dir, 'b.yaml'), JOB.replace('name: pi', 'name: b'));
    await writeFile(join(dir, 'a.yml'), JOB.replace('name: pi', 'name: a'));
    await writeFile(join(dir, 'c.json'), JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }));
    await writeFile(join(dir, 'notes.txt'), 'ignored');
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'd.yaml'), JOB.replace('name: pi', 'name: d'));
    const io = resolveIO({ cwd: dir, readStdin: async () => JOB.replace('name: pi', 'name: stdin') });
    const flat = await readManifests(['.'], io, false);
    assert.deepEqual(flat.map((e) => e.object?.metadata?.name), ['a', 'b', 'c']);
    const deep = await readManifests([dir], io, true);
    assert.deepEqual(deep.map((e) => e.object?.metadata?.name), ['a', 'b', 'c', 'd']);
    const stdin = await readManifests(['-'], io, false);
    assert.equal(stdin[0]?.object?.metadata?.name, 'stdin');
    const missing = await readManifests(['nope.yaml'], io, false);
    assert.match(missing[0]?.error ?? '', /the path "nope.yaml" does not exist/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
