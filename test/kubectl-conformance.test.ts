// Every upstream example of a kind Skiff serves (../shared/conformance: Jobs, the training operator's
// and mpi-operator's jobs, KServe's InferenceServices and runtimes), through the real kubectl: what the
// API accepts, `kubectl apply --dry-run=server` and `kubectl apply --server-side --dry-run=server`
// accept; what it refuses, kubectl refuses too, naming the same field.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { apiVersionOf } from '../src/api/registry.js';
import { conformanceDir, corpusFiles } from '../src/conformance-path.js';
import { registryOf, workloads } from '../src/server/workloads.js';
import type { ServingDataPlane } from '../src/workloads/serving/data-plane.js';
import { TestServer } from './harness.js';

const corpus = conformanceDir();
const registry = registryOf(workloads({ dataPlane: {} as ServingDataPlane }));

interface Example {
  file: string;
  text: string;
  objs: any[];
}

/** the corpus files whose every document is an object of a kind Skiff serves */
function examples(): Example[] {
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

function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null).map(([k, x]) => [k, withoutNulls(x)]));
  return v;
}

describe('upstream examples through kubectl', { skip: !existsSync(corpus) && 'no ../shared/conformance here' }, () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
  });

  it('kubectl accepts what the API accepts and refuses what it refuses, naming the field', async (t) => {
    const all = examples();
    assert.ok(all.length >= 30, `only ${all.length} examples of served kinds found`);
    const namespaces = new Set(all.flatMap((e) => e.objs.map((o) => o.metadata?.namespace).filter(Boolean)));
    for (const ns of namespaces) await s.req('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    let accepted = 0;
    let refused = 0;
    let existing = 0;
    for (const ex of all) {
      // what the API says of each object, with kubectl's own default: strict field validation
      const verdicts = [];
      let exists = false;
      for (const o of ex.objs) {
        const def = registry.forObject(o.apiVersion, o.kind)!;
        const base = def.group ? `/apis/${def.group}/${def.version}` : `/api/${def.version}`;
        const ns = def.namespaced ? `/namespaces/${o.metadata?.namespace ?? 'default'}` : '';
        // the runtimes Skiff ships (kserve-sklearnserver, ...) are there already: applying one is a patch
        if (o.metadata?.name && (await s.req('GET', `${base}${ns}/${def.plural}/${o.metadata.name}`)).status === 200) exists = true;
        // as kubectl sends it: a key whose value is null (`resources:` left empty in an excerpt) is dropped
        verdicts.push(await s.req('POST', `${base}${ns}/${def.plural}?dryRun=All&fieldValidation=Strict`, withoutNulls(o)));
      }
      if (exists) {
        existing++;
        continue;
      }
      const ok = verdicts.every((v) => v.status === 201);
      // kubectl applies nothing that only has a generateName (as on a cluster): those are created
      const generated = ex.objs.some((o) => !o.metadata?.name && o.metadata?.generateName);
      const commands = generated ? [['create', '--dry-run=server', '-f', '-']] : [['apply', '--dry-run=server', '-f', '-'], ['apply', '--server-side', '--dry-run=server', '-f', '-']];
      for (const args of commands) {
        const r = await s.kubectl(args, ex.text);
        if (ok) {
          assert.equal(r.code, 0, `${ex.file}: kubectl ${args.join(' ')}: ${r.stderr}`);
        } else {
          assert.notEqual(r.code, 0, `${ex.file}: the API refuses it (${verdicts.map((v) => v.status).join(',')}) but kubectl ${args.join(' ')} succeeded`);
          const refused = verdicts.find((v) => v.status !== 201)!;
          const fields: string[] = (refused.body?.details?.causes ?? []).map((c: any) => String(c.field ?? '').replace(/^\./, '')).filter(Boolean);
          // kubectl refuses some files itself before they reach Skiff (a file Go's stricter YAML cannot
          // parse, an object without a name): as on a cluster; what reaches Skiff is refused by field
          const byServer = /Error from server/.test(r.stderr);
          if (fields.length && byServer) assert.ok(fields.some((f) => r.stderr.includes(f)), `${ex.file}: kubectl ${args.join(' ')} does not name ${fields.join(', ')}: ${r.stderr}`);
        }
      }
      if (ok) accepted++;
      else refused++;
    }
    t.diagnostic(`${all.length} files: ${accepted} accepted, ${refused} refused, ${existing} already there (Skiff's runtimes)`);
    assert.ok(accepted >= 20, `only ${accepted} examples accepted`);
  });
});
