import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from './errors.js';
import { defaultRegistry } from './index.js';
import { Client } from '../store/client.js';
import { SqliteStore } from '../store/sqlite/store.js';
import { parseQuantity } from './quantity.js';

async function client(): Promise<Client> {
  const c = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
  await c.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  return c;
}

function fields(e: unknown): string[] {
  assert.ok(e instanceof ApiError, String(e));
  return (e.details.causes ?? []).map((c) => c.field);
}

const job = (spec: Record<string, unknown>, name = 'pi') => ({
  apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: 'default' },
  spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command: ['true'] }] } }, ...spec },
});

describe('validation', () => {
  it('parses quantities', () => {
    assert.equal(parseQuantity('500m'), 0.5);
    assert.equal(parseQuantity('2'), 2);
    assert.equal(parseQuantity('1Gi'), 2 ** 30);
    assert.equal(parseQuantity('1e3'), 1000);
    assert.equal(parseQuantity('abc'), undefined);
  });

  it('names the field of a negative parallelism and writes nothing', async () => {
    const c = await client();
    await assert.rejects(c.create(job({ parallelism: -1 })), (e) => {
      assert.equal((e as ApiError).code, 422);
      assert.deepEqual(fields(e), ['spec.parallelism']);
      assert.match((e as ApiError).message, /Job.batch "pi" is invalid: spec.parallelism/);
      return true;
    });
    assert.equal((await c.list(defaultRegistry().forObject('batch/v1', 'Job')!)).items.length, 0);
  });

  it('rejects names that are not DNS-1123', async () => {
    const c = await client();
    await assert.rejects(c.create(job({}, 'Bad_Name')), (e) => fields(e).includes('metadata.name'));
  });

  it('rejects a Job whose pods would restart Always, and podFailurePolicy rules without a matcher', async () => {
    const c = await client();
    const always = job({});
    (always.spec.template as any).spec.restartPolicy = 'Always';
    await assert.rejects(c.create(always), (e) => fields(e).includes('spec.template.spec.restartPolicy'));
    await assert.rejects(c.create(job({ podFailurePolicy: { rules: [{ action: 'FailJob' }] } })), (e) => fields(e).includes('spec.podFailurePolicy.rules[0]'));
    await assert.rejects(c.create(job({ podFailurePolicy: { rules: [{ action: 'Explode', onExitCodes: { operator: 'In', values: [1] } }] } })), (e) => fields(e).includes('spec.podFailurePolicy.rules[0].action'));
    await assert.rejects(c.create(job({ completionMode: 'Indexed' , completions: undefined, parallelism: 2 })), (e) => fields(e).includes('spec.completions'));
  });

  it('reports mistyped fields with their path', async () => {
    const c = await client();
    await assert.rejects(c.create(job({ completions: 'three' })), (e) => fields(e).includes('spec.completions'));
    const bad = job({});
    (bad.spec.template as any).spec.containers[0].env = [{ name: '1BAD', value: 'x' }];
    (bad.spec.template as any).spec.containers[0].resources = { requests: { cpu: 'lots' } };
    await assert.rejects(c.create(bad), (e) => {
      assert.deepEqual(fields(e).sort(), ['spec.template.spec.containers[0].env[0].name', 'spec.template.spec.containers[0].resources.requests[cpu]']);
      return true;
    });
  });

  it('defaults a Pod\'s empty securityContext as the API server does, and updates a Pod stored without one', async () => {
    const c = await client();
    const pods = defaultRegistry().forObject('v1', 'Pod')!;
    const p = await c.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'sc', namespace: 'default' }, spec: { containers: [{ name: 'main', image: 'python' }] } });
    assert.deepEqual(p.spec.securityContext, {});
    // as a Pod written before the default was: the next change of its labels is no change of its spec
    const { securityContext: _, ...bare } = p.spec;
    await c.store.update(pods, { ...p, spec: bare });
    const old = await c.get(pods, { namespace: 'default', name: 'sc' });
    assert.equal(old.spec.securityContext, undefined);
    const relabelled = await c.update({ ...old, metadata: { ...old.metadata, labels: { a: 'b' } } });
    assert.deepEqual(relabelled.spec.securityContext, {});
    assert.equal(relabelled.metadata.labels?.a, 'b');
  });

  it('applies Job defaults as the API server does', async () => {
    const c = await client();
    const j = await c.create(job({}));
    assert.equal(j.spec.parallelism, 1);
    assert.equal(j.spec.completions, 1);
    assert.equal(j.spec.backoffLimit, 6);
    assert.equal(j.spec.completionMode, 'NonIndexed');
    assert.equal(j.spec.template.metadata.labels['batch.kubernetes.io/job-name'], 'pi');
    assert.equal(j.spec.selector.matchLabels['batch.kubernetes.io/controller-uid'], j.metadata.uid);
  });

  it('refuses unknown kinds and versions with a hint', async () => {
    const c = await client();
    await assert.rejects(c.create({ apiVersion: 'batch/v2', kind: 'Job', metadata: { name: 'x' } }), /no kind "Job" is registered for version "batch\/v2" \(served versions: batch\/v1\)/);
  });

  it('refuses objects in namespaces that do not exist', async () => {
    const c = await client();
    await assert.rejects(c.create({ ...job({}), metadata: { name: 'x', namespace: 'nope' } }), /namespaces "nope" not found/);
  });
});

describe('projected and downwardAPI volumes', () => {
  const pod = (volumes: unknown[]) => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' },
    spec: { containers: [{ name: 'main', image: 'python', command: ['true'] }], volumes },
  });

  it('accepts the volume the ServiceAccount admission plugin adds, and a downwardAPI volume', async () => {
    const c = await client();
    await c.create(pod([
      { name: 'kube-api-access-x', projected: { defaultMode: 420, sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ] } },
      { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
    ]) as never);
  });

  it('refuses a short-lived token, an absolute path, two kinds in one source and an item with no reference, naming the fields', async () => {
    const c = await client();
    await assert.rejects(c.create(pod([
      { name: 'a', projected: { sources: [{ serviceAccountToken: { expirationSeconds: 60, path: '/token' } }, { secret: { name: 's' }, configMap: { name: 'c' } }, { clusterTrustBundle: {} }] } },
      { name: 'b', downwardAPI: { items: [{ path: 'x' }] } },
    ]) as never), (e: unknown) => {
      assert.deepEqual(fields(e), [
        'spec.volumes[0].projected.sources[0].serviceAccountToken.path',
        'spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds',
        'spec.volumes[0].projected.sources[1]',
        'spec.volumes[0].projected.sources[2].clusterTrustBundle',
        'spec.volumes[1].downwardAPI.items[0]',
      ]);
      return true;
    });
  });
});
