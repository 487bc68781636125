// Pipelines compiled by the kfp SDK, run by the real server through `skiff run`.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TestServer, repoRoot } from './harness.js';
import { conformanceDir } from '../src/conformance-path.js';

const corpus = join(conformanceDir(), 'kfp', 'pipelines', 'valid');

describe('pipeline runs', { skip: !existsSync(corpus) && 'no ../shared/conformance here' }, () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s.cleanup();
  });

  it('runs a nested pipeline of lightweight Python components with artifacts to SUCCEEDED', async () => {
    const r = await s.cli(['run', join(corpus, 'essential', 'pipeline_with_outputs.yaml'), '-p', 'msg=hello', '--watch']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /run\.pipelines\.kubeflow\.org\/\S+ created/);
    assert.match(r.stdout, /SUCCEEDED/);
    const runs = await s.get('/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs');
    const run = runs.items[0];
    assert.equal(run.status.state, 'SUCCEEDED');
    assert.ok(Object.values(run.status.tasks).every((t: any) => t.state === 'SUCCEEDED'));
    // the server's columns for Runs (src/api/pipelines.ts), which `skiff get` prints as kubectl does
    const table = await s.cli(['get', 'runs']);
    assert.match(table.stdout, /^NAME\s+STATE\s+STARTED\s+FINISHED\s+AGE\n/);
    assert.match(table.stdout, new RegExp(`${run.metadata.name}\\s+SUCCEEDED(\\s+(\\d+[smhdy])+){3}\\n`));
  });

  it('runs the demo pipeline: an artifact, a condition with a skipped branch, a OneOf output', async () => {
    const file = join(repoRoot, 'examples', 'pipelines', 'word_count.yaml');
    const long = await s.cli(['run', file, '--watch']);
    assert.equal(long.code, 0, long.stdout + long.stderr);
    assert.match(long.stdout, /SKIPPED/);
    assert.match(long.stdout, /output Output = "9 words: a long text"/);
    const short = await s.cli(['run', file, '-p', 'long_at=50', '--watch']);
    assert.match(short.stdout, /output Output = "9 words: a short text"/);
    const name = /run\.pipelines\.kubeflow\.org\/(\S+) created/.exec(short.stdout)?.[1] ?? '';
    const logs = await s.cli(['logs', `run/${name}`, '--task', 'report-2']);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /9 words: a short text/);
  });

  it('fails a run whose task fails, naming the task, and exits non-zero', async () => {
    const r = await s.cli(['run', join(corpus, 'failing', 'fail_v2.yaml'), '--watch']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /FAILED/);
  });

  it('rejects a parameter of the wrong type before anything runs', async () => {
    const r = await s.cli(['run', join(corpus, 'essential', 'pipeline_with_outputs.yaml'), '-p', 'nope=1']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /spec\.parameters\.nope/);
  });
});
