// One describe block's server and scratch directory, and `apply` as a user runs it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import YAML from 'yaml';
import { TestServer, type ServerOptions } from './harness.js';

/** A server and a scratch directory for the tests of one describe block (started before them, removed
 *  after), and `apply`, which writes an object to a file there and runs `skiff apply -f` on it, as a
 *  user would. Call it inside the describe. */
export function serverWithWorkdir(prefix: string, opts: ServerOptions = {}): { readonly s: TestServer; readonly work: string; apply<T extends { metadata: { name: string } }>(obj: T): Promise<void> } {
  let server: TestServer | undefined;
  let dir = '';
  before(async () => {
    server = await TestServer.start(opts);
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  after(async () => {
    await server?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const env = {
    get s(): TestServer {
      if (!server) throw new Error('the server starts before the tests');
      return server;
    },
    get work(): string {
      return dir;
    },
    async apply<T extends { metadata: { name: string } }>(obj: T): Promise<void> {
      const file = join(dir, `${obj.metadata.name}.yaml`);
      writeFileSync(file, YAML.stringify(obj));
      const r = await env.s.cli(['apply', '-f', file]);
      assert.equal(r.code, 0, r.stderr);
    },
  };
  return env;
}
