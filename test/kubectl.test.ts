// The real kubectl against `skiff up`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestServer } from './harness.js';

describe('kubectl', () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start();
  });
  after(async () => {
    await s?.cleanup();
  });

  it('lists namespaces and reads the server version', async () => {
    const v = await s.kubectl(['version', '-o', 'json']);
    assert.equal(v.code, 0, v.stderr);
    assert.match(JSON.parse(v.stdout).serverVersion.gitVersion, /^v/);
    const ns = await s.kubectl(['get', 'namespaces', '-o', 'name']);
    assert.equal(ns.code, 0, ns.stderr);
    assert.match(ns.stdout, /namespace\/default/);
  });
});
