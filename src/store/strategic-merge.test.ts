import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { schemaCatalog } from '../api/openapi-schemas.js';
import { StrategicMergeError, strategicMergePatch } from './strategic-merge.js';

const catalog = schemaCatalog();
const podSchema = catalog.kindSchema('', 'v1', 'Pod');
const svcSchema = catalog.kindSchema('', 'v1', 'Service');

const smpPod = (original: unknown, patch: unknown): any => strategicMergePatch(original, patch, podSchema, catalog);

function pod(containers: unknown[], extra: Record<string, unknown> = {}): any {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers, ...extra } };
}

describe('strategic merge patch', () => {
  it('merges containers by name, env by name and ports by containerPort, keeping what the patch does not name', () => {
    const live = pod([
      { name: 'main', image: 'python', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], ports: [{ containerPort: 8080, protocol: 'TCP' }], terminationMessagePath: '/dev/termination-log' },
      { name: 'side', image: 'busybox' },
    ], { nodeName: 'skiff-node' });
    const out = smpPod(live, { spec: { containers: [{ name: 'main', env: [{ name: 'B', value: '22' }, { name: 'C', value: '3' }], ports: [{ containerPort: 9090 }] }] } });
    assert.deepEqual(out.spec.containers.map((c: any) => c.name), ['main', 'side']);
    const main = out.spec.containers[0];
    assert.deepEqual(main.env, [{ name: 'A', value: '1' }, { name: 'B', value: '22' }, { name: 'C', value: '3' }]);
    // without $setElementOrder a new element goes before the live ones, as Kubernetes orders it
    assert.deepEqual(main.ports, [{ containerPort: 9090 }, { containerPort: 8080, protocol: 'TCP' }]);
    assert.equal(main.image, 'python');
    assert.equal(main.terminationMessagePath, '/dev/termination-log');
    assert.equal(out.spec.nodeName, 'skiff-node');
    assert.deepEqual(live.spec.containers[0].env.length, 2, 'the original is not modified');
  });

  it('replaces lists without a merge strategy (a container\'s command and args)', () => {
    const out = smpPod(pod([{ name: 'main', image: 'x', command: ['a', 'b'], args: ['1'] }]), { spec: { containers: [{ name: 'main', command: ['c'] }] } });
    assert.deepEqual(out.spec.containers[0].command, ['c']);
    assert.deepEqual(out.spec.containers[0].args, ['1']);
  });

  it('deletes a key given null and a list element given $patch: delete', () => {
    const live = pod([{ name: 'main', image: 'x', workingDir: '/w' }, { name: 'side', image: 'y' }]);
    live.metadata.labels = { a: '1', b: '2' };
    const out = smpPod(live, { metadata: { labels: { a: null } }, spec: { containers: [{ name: 'main', workingDir: null }, { name: 'side', $patch: 'delete' }] } });
    assert.deepEqual(out.metadata.labels, { b: '2' });
    assert.deepEqual(out.spec.containers, [{ name: 'main', image: 'x' }]);
  });

  it('replaces a whole list or map given $patch: replace', () => {
    const live = pod([{ name: 'main', image: 'x' }, { name: 'side', image: 'y' }], { nodeSelector: { a: '1', b: '2' } });
    const out = smpPod(live, { spec: { containers: [{ name: 'only', image: 'z' }, { $patch: 'replace' }], nodeSelector: { c: '3', $patch: 'replace' } } });
    assert.deepEqual(out.spec.containers, [{ name: 'only', image: 'z' }]);
    assert.deepEqual(out.spec.nodeSelector, { c: '3' });
  });

  it('empties a map given $patch: delete inside it', () => {
    const out = smpPod(pod([{ name: 'main', image: 'x' }], { nodeSelector: { a: '1' } }), { spec: { nodeSelector: { $patch: 'delete' } } });
    assert.deepEqual(out.spec.nodeSelector, {});
  });

  it('unions primitive lists with a merge strategy and removes values named in $deleteFromPrimitiveList', () => {
    const live = pod([{ name: 'main', image: 'x' }]);
    live.metadata.finalizers = ['a', 'b'];
    const added = smpPod(live, { metadata: { finalizers: ['b', 'c'] } });
    assert.deepEqual(added.metadata.finalizers, ['a', 'b', 'c']);
    const removed = smpPod(added, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a', 'c'] } });
    assert.deepEqual(removed.metadata.finalizers, ['b']);
  });

  it('orders a merged list as $setElementOrder says, live-only elements keeping their place', () => {
    const live = pod([{ name: 'a', image: '1' }, { name: 'b', image: '2' }, { name: 'c', image: '3' }]);
    const out = smpPod(live, { spec: { '$setElementOrder/containers': [{ name: 'c' }, { name: 'a' }], containers: [{ name: 'a', image: '11' }] } });
    // a live-only element stays ahead of the ordered ones that came after it in the live list
    assert.deepEqual(out.spec.containers.map((c: any) => `${c.name}=${c.image}`), ['b=2', 'c=3', 'a=11']);
    // an element the order lists but the live object lacks is added where the order puts it
    const grown = smpPod(live, { spec: { '$setElementOrder/containers': [{ name: 'a' }, { name: 'new' }, { name: 'b' }, { name: 'c' }], containers: [{ name: 'new', image: 'n' }] } });
    assert.deepEqual(grown.spec.containers.map((c: any) => c.name), ['a', 'new', 'b', 'c']);
  });

  it('keeps only the keys $retainKeys names (a volume switching its source)', () => {
    const live = pod([{ name: 'main', image: 'x' }], { volumes: [{ name: 'data', emptyDir: {} }] });
    const out = smpPod(live, { spec: { volumes: [{ name: 'data', $retainKeys: ['hostPath', 'name'], hostPath: { path: '/d' } }] } });
    assert.deepEqual(out.spec.volumes, [{ name: 'data', hostPath: { path: '/d' } }]);
    assert.throws(() => smpPod(live, { spec: { volumes: [{ name: 'data', $retainKeys: ['name'], hostPath: { path: '/d' } }] } }), (e: unknown) => e instanceof StrategicMergeError && e.status === 400 && e.message === 'invalid patch format of retainKeys');
  });

  it('merges Service ports by port, keeping a protocol the server defaulted', () => {
    const live = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }, { name: 'm', port: 9090, protocol: 'TCP' }] } };
    const out = strategicMergePatch(live, { spec: { '$setElementOrder/ports': [{ port: 80 }, { port: 9191 }], ports: [{ name: 'prom', port: 9191 }, { $patch: 'delete', port: 9090 }] } }, svcSchema, catalog) as any;
    assert.deepEqual(out.spec.ports, [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }, { name: 'prom', port: 9191 }]);
  });

  it('applies kubectl\'s three-way patch: a changed env var, a removed one, an added port, a controller\'s field untouched', () => {
    const live = pod([{ name: 'main', image: 'python', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], ports: [{ containerPort: 8080, protocol: 'TCP' }], imagePullPolicy: 'Always' }], { schedulerName: 'default-scheduler' });
    const patch = {
      spec: {
        '$setElementOrder/containers': [{ name: 'main' }],
        containers: [{
          '$setElementOrder/env': [{ name: 'A' }, { name: 'C' }],
          '$setElementOrder/ports': [{ containerPort: 8080 }, { containerPort: 9090 }],
          name: 'main',
          env: [{ name: 'C', value: '3' }, { $patch: 'delete', name: 'B' }],
          ports: [{ containerPort: 9090 }],
        }],
      },
    };
    const out = smpPod(live, patch);
    assert.equal(out.spec.containers.length, 1);
    assert.deepEqual(out.spec.containers[0].env, [{ name: 'A', value: '1' }, { name: 'C', value: '3' }]);
    assert.deepEqual(out.spec.containers[0].ports, [{ containerPort: 8080, protocol: 'TCP' }, { containerPort: 9090 }]);
    assert.equal(out.spec.containers[0].imagePullPolicy, 'Always');
    assert.equal(out.spec.schedulerName, 'default-scheduler');
  });

  it('adds a list the live object lacks with its directives stripped', () => {
    const out = smpPod(pod([{ name: 'main', image: 'x' }]), { spec: { containers: [{ name: 'main', env: [{ name: 'A', value: '1' }, { name: 'Z', $patch: 'delete' }] }] } });
    assert.deepEqual(out.spec.containers[0].env, [{ name: 'A', value: '1' }]);
  });

  it('refuses what Kubernetes refuses, with its messages', () => {
    const live = pod([{ name: 'main', image: 'x' }]);
    const refused = (patch: unknown, status: number, message: string | RegExp): void => {
      assert.throws(() => smpPod(live, patch), (e: unknown) => {
        assert.ok(e instanceof StrategicMergeError);
        assert.equal(e.status, status);
        if (typeof message === 'string') assert.equal(e.message, message);
        else assert.match(e.message, message);
        return true;
      });
    };
    refused([{ op: 'add' }], 400, 'json: cannot unmarshal array into Go value of type map[string]interface {}');
    refused({ spec: { containers: [{ image: 'y' }] } }, 500, 'map: map[image:y] does not contain declared merge key: name');
    refused({ spec: { containers: [{ name: 'main', $patch: 'explode' }] } }, 500, 'unknown patch type: explode in map: map[$patch:explode name:main]');
    refused({ spec: { '$setElementOrder/containers': [{ name: 'a' }], containers: [{ name: 'b', image: 'y' }] } }, 400, 'invalid patch format of setElementOrder list');
    const internal = new StrategicMergeError('map: map[] does not contain declared merge key: name', 500).toApiError();
    assert.equal(internal.code, 500);
    assert.deepEqual(internal.toStatus(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'map: map[] does not contain declared merge key: name', code: 500 });
  });
});
