// Every upstream example of a kind Skiff serves (../shared/conformance: Jobs, the training operator's
// and mpi-operator's jobs, KServe's InferenceServices and runtimes), through the real kubectl: what the
// API accepts, `kubectl apply --dry-run=server` and `kubectl apply --server-side --dry-run=server`
// accept; what it refuses, kubectl refuses too, naming the same field.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { causeFields, collectionPath, corpus, examples, kubectlCommands, withoutNulls } from './conformance-examples.js';
import { TestServer } from './harness.js';

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
        // the runtimes Skiff ships (kserve-sklearnserver, ...) are there already: applying one is a patch
        if (o.metadata?.name && (await s.req('GET', `${collectionPath(o)}/${o.metadata.name}`)).status === 200) exists = true;
        verdicts.push(await s.req('POST', `${collectionPath(o)}?dryRun=All&fieldValidation=Strict`, withoutNulls(o)));
      }
      if (exists) {
        existing++;
        continue;
      }
      const ok = verdicts.every((v) => v.status === 201);
      for (const args of kubectlCommands(ex)) {
        const r = await s.kubectl(args, ex.text);
        if (ok) {
          assert.equal(r.code, 0, `${ex.file}: kubectl ${args.join(' ')}: ${r.stderr}`);
        } else {
          assert.notEqual(r.code, 0, `${ex.file}: the API refuses it (${verdicts.map((v) => v.status).join(',')}) but kubectl ${args.join(' ')} succeeded`);
          const refused = verdicts.find((v) => v.status !== 201)!;
          const fields = causeFields(refused.body);
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
