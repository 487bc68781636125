// Tenancy end to end with Skiff's own policy: a token file, RBAC deciding every request, a Profile
// per team (its namespace and the owner's kubeflow-admin binding made by the Profile controller) and
// a contributor added through KFAM. Each user drives kubectl with their own token.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { startSkiff, type Skiff } from '../src/server/main.js';
import { clientsPython, kubectlBin, pollUntil, runProgram, tokenKubeconfig } from './harness.js';


const skip = !existsSync(kubectlBin) || !existsSync(clientsPython) ? 'the clients\' environment (.venv-clients) is not set up' : false;

describe('tenancy with RBAC, Profiles and KFAM', { skip, timeout: 240_000 }, () => {
  let skiff: Skiff;
  let dir: string;
  const kubeconfigOf = (token: string): string => tokenKubeconfig(join(dir, 'data'), join(dir, `kubeconfig-${token}`), token, 'default');
  const kubectl = (who: string, args: string[], stdin?: string): ReturnType<typeof runProgram> =>
    who === 'admin'
      ? runProgram(kubectlBin, args, { KUBECONFIG: join(dir, 'data', 'kubeconfig'), HOME: dir }, stdin)
      : runProgram(kubectlBin, args, { KUBECONFIG: kubeconfigOf(`${who}-token`), HOME: dir }, stdin);
  const profile = (name: string, owner: string): string => YAML.stringify({ apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name }, spec: { owner: { kind: 'User', name: owner } } });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skiff-tenancy-'));
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, 'alice-token,alice@example.com,1001\nbob-token,bob@example.com,1002\ncarol-token,carol@example.com,1003\n');
    skiff = await startSkiff({ dataDir: join(dir, 'data'), port: 0, tokenAuthFile: tokens, pythonZygote: false });
    for (const [name, owner] of [['team-a', 'alice@example.com'], ['team-b', 'bob@example.com']] as const) {
      const r = await kubectl('admin', ['apply', '-f', '-'], profile(name, owner));
      assert.equal(r.code, 0, r.stderr);
    }
    await pollUntil('the owners\' bindings', async () => {
      const r = await kubectl('admin', ['get', 'rolebindings', '-A', '-o', 'name']);
      return (r.stdout.match(/namespaceadmin/gi) ?? []).length === 2 || undefined;
    });
  });
  after(async () => {
    await skiff?.stop({ containers: 'stop' });
    rmSync(dir, { recursive: true, force: true });
  });

  it('an owner works in their namespace and is refused the other team\'s, in kube\'s words', async () => {
    const cm = await kubectl('alice', ['-n', 'team-a', 'create', 'configmap', 'notes', '--from-literal=k=v']);
    assert.equal(cm.code, 0, cm.stderr);
    const mine = await kubectl('alice', ['-n', 'team-a', 'get', 'configmaps', '-o', 'name']);
    assert.match(mine.stdout, /configmap\/notes/);
    const theirs = await kubectl('alice', ['-n', 'team-b', 'get', 'configmaps']);
    assert.notEqual(theirs.code, 0);
    assert.match(theirs.stderr, /configmaps is forbidden: User "alice@example.com" cannot list resource "configmaps" in API group "" in the namespace "team-b"/);
    const all = await kubectl('alice', ['get', 'pods', '-A']);
    assert.match(all.stderr, /pods is forbidden: User "alice@example.com" cannot list resource "pods" in API group "" at the cluster scope/);
    const canI = await kubectl('alice', ['auth', 'can-i', 'create', 'pytorchjobs.kubeflow.org', '-n', 'team-a']);
    assert.equal(canI.stdout.trim(), 'yes');
    const cannot = await kubectl('alice', ['auth', 'can-i', 'create', 'pods', '-n', 'team-b']);
    assert.equal(cannot.stdout.trim(), 'no');
    // Skiff's pipeline objects as resources: `skiff run --watch` and `kubectl get runs -w` watch them
    for (const verb of ['watch', 'create']) {
      const r = await kubectl('alice', ['auth', 'can-i', verb, 'runs.pipelines.kubeflow.org', '-n', 'team-a']);
      assert.equal(r.stdout.trim(), 'yes', verb);
    }
    const tasks = await kubectl('alice', ['auth', 'can-i', 'watch', 'runtasks.pipelines.kubeflow.org', '-n', 'team-a']);
    assert.equal(tasks.stdout.trim(), 'yes');
  });

  it('a contributor added through KFAM can view, not edit; only the owner may add one', async () => {
    const binding = { user: { kind: 'User', name: 'carol@example.com' }, referredNamespace: 'team-a', roleRef: { kind: 'ClusterRole', name: 'kubeflow-view' } };
    const post = (token: string): Promise<Response> => fetch(`${skiff.url}/kfam/v1/bindings`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(binding) });
    assert.equal((await post('bob-token')).status, 403);
    assert.equal((await kubectl('carol', ['-n', 'team-a', 'get', 'configmaps'])).code === 0, false);
    const ok = await post('alice-token');
    assert.equal(ok.status, 200, await ok.text());
    await pollUntil('carol may view team-a', async () => ((await kubectl('carol', ['-n', 'team-a', 'get', 'configmaps', '-o', 'name'])).stdout.includes('configmap/notes') ? true : undefined));
    const write = await kubectl('carol', ['-n', 'team-a', 'delete', 'configmap', 'notes']);
    assert.match(write.stderr, /configmaps "notes" is forbidden: User "carol@example.com" cannot delete resource "configmaps" in API group "" in the namespace "team-a"/);
  });
});
