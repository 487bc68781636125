// Every upstream example of a kind Skiff serves (../shared/conformance: Jobs, the training operator's
// and mpi-operator's jobs, KServe's InferenceServices and runtimes), through the real kubectl: what the
// API accepts, `kubectl apply --dry-run=server` and `kubectl apply --server-side --dry-run=server`
// accept; what it refuses, kubectl refuses too, naming the same field.
//
// The files the API accepts go to kubectl as a user applies a folder of manifests (`-f DIR`), one
// kubectl per mode; kubectl then applies each object and must succeed for every one of them. Each
// file the API refuses gets a kubectl of its own, so that what it prints is that file's refusal.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Example } from './conformance-examples.js';
import { causeFields, collectionPath, corpus, examples, kubectlCommands, withoutNulls } from './conformance-examples.js';
import { TestServer } from './harness.js';

describe('upstream examples through kubectl', { skip: !existsSync(corpus) && 'no ../shared/conformance here' }, () => {
  let s: TestServer;
  let dir: string;
  before(async () => {
    s = await TestServer.start();
    dir = mkdtempSync(join(tmpdir(), 'skiff-kubectl-conformance-'));
  });
  after(async () => {
    await s?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('kubectl accepts what the API accepts and refuses what it refuses, naming the field', async (t) => {
    const all = examples();
    assert.ok(all.length >= 30, `only ${all.length} examples of served kinds found`);
    const namespaces = new Set(all.flatMap((e) => e.objs.map((o) => o.metadata?.namespace).filter(Boolean)));
    for (const ns of namespaces) await s.req('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    const accepted: Example[] = [];
    const refused: { ex: Example; fields: string[] }[] = [];
    let existing = 0;
    for (const ex of all) {
      // what the API says of each object, with kubectl's own default: strict field validation
      const verdicts = [];
      let exists = false;
      for (const o of ex.objs) {
        // the runtimes Skiff ships (kserve-sklearnserver, ...) are there already: applying one is a patch
        if (o.metadata?.name && (await s.req('GET', `${collectionPath(o)}/${o.metadata.name}`)).status === 200) exists = true;
        verdicts.push(await s.req('POST', `${collectionPath(o)}?dryRun=All&fieldValidation=Strict`, withoutNulls(o)));
      }
      if (exists) existing++;
      else if (verdicts.every((v) => v.status === 201)) accepted.push(ex);
      else refused.push({ ex, fields: causeFields(verdicts.find((v) => v.status !== 201)!.body) });
    }

    // what the API accepts: one folder per command kubectl would be given (apply, or create for
    // objects that only have a generateName), applied whole; every object in it is applied
    const groups = new Map<string, { args: string[]; dir: string; files: Map<string, Example>; objects: number }>();
    for (const ex of accepted) {
      for (const args of kubectlCommands(ex)) {
        const key = args.join(' ');
        let g = groups.get(key);
        if (!g) {
          g = { args, dir: mkdtempSync(join(dir, 'group-')), files: new Map(), objects: 0 };
          groups.set(key, g);
        }
        const name = `${ex.file.replace(/[^\w.-]+/g, '__')}`;
        writeFileSync(join(g.dir, name), ex.text);
        g.files.set(join(g.dir, name), ex);
        g.objects += ex.objs.length;
      }
    }
    for (const g of groups.values()) {
      const args = g.args.map((a) => (a === '-' ? g.dir : a));
      const r = await s.kubectl(args);
      if (r.code !== 0) {
        // name the files: kubectl quotes a file's path in its error, except for server-side apply; there,
        // each file again on its own finds which
        const named = [...g.files.keys()].filter((f) => r.stderr.includes(f)).map((f) => g.files.get(f)!.file);
        const alone = named.length ? named : (await Promise.all([...g.files.values()].map(async (ex) => ((await s.kubectl(g.args, ex.text)).code !== 0 ? ex.file : '')))).filter(Boolean);
        assert.fail(`kubectl ${g.args.join(' ')} refuses what the API accepts: ${alone.join(', ')}\n${r.stderr.slice(0, 4000)}`);
      }
      const done = r.stdout.split('\n').filter((l) => /\(server dry run\)$/.test(l)).length;
      assert.equal(done, g.objects, `kubectl ${args.join(' ')} applied ${done} of the ${g.objects} objects in ${g.files.size} files:\n${r.stdout.slice(0, 4000)}`);
      t.diagnostic(`kubectl ${args.join(' ')}: ${g.files.size} files, ${g.objects} objects`);
    }

    // what the API refuses, a file at a time
    for (const { ex, fields } of refused) {
      for (const args of kubectlCommands(ex)) {
        const r = await s.kubectl(args, ex.text);
        assert.notEqual(r.code, 0, `${ex.file}: the API refuses it but kubectl ${args.join(' ')} succeeded`);
        // kubectl refuses some files itself before they reach Skiff (a file Go's stricter YAML cannot
        // parse, an object without a name): as on a cluster; what reaches Skiff is refused by field
        const byServer = /Error from server/.test(r.stderr);
        if (fields.length && byServer) assert.ok(fields.some((f) => r.stderr.includes(f)), `${ex.file}: kubectl ${args.join(' ')} does not name ${fields.join(', ')}: ${r.stderr}`);
      }
    }
    t.diagnostic(`${all.length} files: ${accepted.length} accepted, ${refused.length} refused, ${existing} already there (Skiff's runtimes)`);
    assert.ok(accepted.length >= 20, `only ${accepted.length} examples accepted`);
  });
});
