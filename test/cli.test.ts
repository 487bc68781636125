// The skiff CLI against the real server: tables, apply/delete of files, and one clear line for bad input.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TestServer, runCli } from './harness.js';

describe('skiff CLI', () => {
  let s: TestServer;
  const dir = mkdtempSync(join(tmpdir(), 'skiff-cli-'));
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says what to do when the server is down, without a stack trace', async () => {
    const r = await runCli(['get', 'pods'], { SKIFF_SERVER: 'http://127.0.0.1:9' });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /^error: cannot reach the Skiff server at http:\/\/127\.0\.0\.1:9 .*skiff up/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
    assert.doesNotMatch(r.stderr, /at .*\.js:\d+/);
  });

  it('applies multi-document YAML, is idempotent, and deletes by file', async () => {
    const file = join(dir, 'two.yaml');
    writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\ndata:\n  a: "1"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n');
    const first = await s.cli(['apply', '-f', file]);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, 'configmap/one created\nconfigmap/two created\n');
    const again = await s.cli(['apply', '-f', file]);
    assert.equal(again.stdout, 'configmap/one unchanged\nconfigmap/two unchanged\n');
    const table = await s.cli(['get', 'cm']);
    assert.match(table.stdout, /^NAME\s+DATA\s+AGE\n/);
    assert.match(table.stdout, /\none\s+1\s+\d+s\n/);
    const json = JSON.parse((await s.cli(['get', 'configmap', 'one', '-o', 'json'])).stdout);
    assert.equal(json.data.a, '1');
    const del = await s.cli(['delete', '-f', file]);
    assert.equal(del.code, 0, del.stderr);
    assert.match(del.stdout, /configmap "one" deleted/);
  });

  it('gives one line naming the object and field for an invalid object, and goes on with the rest', async () => {
    const file = join(dir, 'mixed.yaml');
    writeFileSync(file, [
      'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: bad\nspec:\n  parallelism: -2\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: x, command: ["true"]}]',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine',
    ].join('\n---\n'));
    const r = await s.cli(['apply', '-f', file]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Job.batch "bad" is invalid: spec.parallelism/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
    assert.match(r.stdout, /configmap\/fine created/);
  });

  it('reports invalid YAML with its line, and unknown kinds', async () => {
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [oops\n');
    const r = await s.cli(['apply', '-f', file]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /broken\.yaml.*line \d+/);
    const k = await s.cli(['get', 'flurbs']);
    assert.equal(k.code, 1);
    assert.match(k.stderr, /the server doesn't have a resource type "flurbs"/);
    const v = await s.cli(['get', 'pods', '--bogus-flag']);
    assert.equal(v.code, 1);
    assert.match(v.stderr, /bogus-flag/);
  });

  it('waits with a timeout and exits non-zero when it runs out', async () => {
    const r = await s.cli(['wait', 'configmap/fine', '--for=condition=Ready', '--timeout=1s']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /timed out/);
  });

  it('prints its version and the server version', async () => {
    const r = await s.cli(['version']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Client.*\n.*Server/s);
  });
});
