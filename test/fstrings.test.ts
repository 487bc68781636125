// SDK f-strings (`say(msg=f"side-{coin.output}-{seed}")`) reach the component resolved, in every shape
// kfp compiles them to: test/fixtures/fstrings/ holds the sources and the compiled YAML.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TestServer, repoRoot } from './harness.js';

const fixtures = join(repoRoot, 'test', 'fixtures', 'fstrings');
const python = join(repoRoot, '.venv', 'bin', 'python');

/** the text each `say` task printed and returned, by task path */
async function said(s: TestServer, file: string, params: string[] = []): Promise<Record<string, string>> {
  const r = await s.cli(['run', join(fixtures, file), ...params.flatMap((p) => ['-p', p]), '--watch']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const name = /run\.pipelines\.kubeflow\.org\/(\S+) created/.exec(r.stdout)?.[1] ?? '';
  const run = await s.get(`/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs/${name}`);
  assert.equal(run.status.state, 'SUCCEEDED', JSON.stringify(run.status));
  const out: Record<string, string> = {};
  for (const [path, t] of Object.entries<any>(run.status.tasks)) {
    const v = t.outputs?.parameters?.Output;
    if (/(^|\.)say(\b|$)/.test(path) && typeof v === 'string') out[path] = v;
  }
  return out;
}

describe('pipeline f-strings', { skip: !existsSync(python) && 'no .venv (run scripts/setup.sh)' }, () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s.cleanup();
  });

  it('over a pipeline parameter, an upstream output, and both', async () => {
    assert.deepEqual(Object.values(await said(s, 'fstring-param.yaml', ['seed=7'])), ['seed-7']);
    assert.deepEqual(Object.values(await said(s, 'fstring-output.yaml')), ['coin-heads']);
    assert.deepEqual(Object.values(await said(s, 'fstring-both.yaml', ['seed=3'])), ['side-tails-3']);
  });

  it('over a ParallelFor item, in a nested pipeline and in a dsl.If branch', async () => {
    assert.deepEqual(Object.values(await said(s, 'fstring-loop.yaml', ['prefix=p'])).sort(), ['p-a', 'p-b']);
    assert.deepEqual(Object.values(await said(s, 'fstring-nested.yaml', ['seed=2'])).sort(), ['branch-heads-2', 'inner-heads-tails']);
  });
});
