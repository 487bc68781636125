import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from './errors.js';
import { FieldSet, pathString } from './fieldset.js';
import { LAST_APPLIED_ANNOTATION, applyConfiguration, decodeManagedFields, managerFromUserAgent, recordUpdate } from './managed-fields.js';
import type { KindFields } from './managed-fields.js';
import type { KObject } from './meta.js';
import { schemaCatalog } from './openapi-schemas.js';
import { Shape, compare, merge, toFieldSet } from './structured-merge.js';

const catalog = schemaCatalog();
const kind = (group: string, version: string, k: string, builtin: boolean, hasStatus = true): KindFields => ({
  catalog,
  schema: catalog.kindSchema(group, version, k),
  apiVersion: group ? `${group}/${version}` : version,
  builtin,
  hasStatus,
});
const podKind = kind('', 'v1', 'Pod', true);
const svcKind = kind('', 'v1', 'Service', true);

function managed(obj: KObject): Record<string, any> {
  const out: Record<string, any> = {};
  for (const e of (obj.metadata as any).managedFields ?? []) out[`${e.manager}/${e.operation}`] = e.fieldsV1;
  return out;
}

function svc(labels: Record<string, string>, ports: unknown[], extra: Record<string, unknown> = {}): KObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'default', labels }, spec: { ports, ...extra } };
}

function conflictOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ApiError);
    return e;
  }
  assert.fail('expected a conflict');
}

describe('field sets', () => {
  it('read and write FieldsV1, with "." for a member that has children', () => {
    const json = { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"main"}': { '.': {}, 'f:image': {} } } } };
    const set = FieldSet.fromJSON(json) as FieldSet;
    assert.deepEqual(set.toJSON(), json);
    assert.ok(set.has(['f:metadata', 'f:labels']));
    assert.ok(!set.has(['f:metadata']));
    assert.deepEqual(set.paths().map(pathString), ['.metadata.labels', '.metadata.labels.app', '.spec.containers[name="main"]', '.spec.containers[name="main"].image']);
    assert.equal(FieldSet.fromJSON({ 'x:bad': {} }), undefined);
  });

  it('print keys and values as kube-apiserver does', () => {
    assert.equal(pathString(['f:spec', 'f:ports', 'k:{"port":80,"protocol":"TCP"}', 'f:name']), '.spec.ports[port=80,protocol="TCP"].name');
    assert.equal(pathString(['f:metadata', 'f:finalizers', 'v:"a"']), '.metadata.finalizers[="a"]');
  });

  it('union, difference and intersection', () => {
    const a = FieldSet.of(['f:a'], ['f:b', 'f:c']);
    const b = FieldSet.of(['f:b', 'f:c'], ['f:d']);
    assert.deepEqual(a.union(b).paths(), [['f:a'], ['f:b', 'f:c'], ['f:d']]);
    assert.deepEqual(a.difference(b).paths(), [['f:a']]);
    assert.deepEqual(a.intersection(b).paths(), [['f:b', 'f:c']]);
  });
});

describe('objects by their schema', () => {
  const shape = new Shape(catalog, svcKind.schema);

  it('count the fields an applied configuration sets: list elements by their keys (defaults filling missing keys), map entries, leaves', () => {
    const set = toFieldSet(svc({ app: 'web' }, [{ name: 'http', port: 80 }]), shape);
    assert.deepEqual(set.paths().map(pathString), [
      '.apiVersion', '.kind', '.metadata.labels.app', '.metadata.name', '.metadata.namespace',
      '.spec.ports[port=80,protocol="TCP"]', '.spec.ports[port=80,protocol="TCP"].name', '.spec.ports[port=80,protocol="TCP"].port',
    ]);
  });

  it('merge list elements by key and leave live-only ones in place', () => {
    const live = svc({ app: 'web' }, [{ name: 'a', port: 1, protocol: 'TCP' }, { name: 'b', port: 2, protocol: 'TCP' }], { type: 'ClusterIP' });
    const out = merge(live, svc({ tier: 'x' }, [{ name: 'bb', port: 2 }, { name: 'c', port: 3 }]), shape) as any;
    assert.deepEqual(out.spec.ports, [{ name: 'a', port: 1, protocol: 'TCP' }, { name: 'bb', port: 2, protocol: 'TCP' }, { name: 'c', port: 3 }]);
    assert.deepEqual(out.metadata.labels, { app: 'web', tier: 'x' });
    assert.equal(out.spec.type, 'ClusterIP');
  });

  it('compare what was added, removed and modified', () => {
    const cmp = compare(svc({ app: 'web' }, [{ port: 1, name: 'a' }]), svc({ app: 'api', new: 'x' }, [{ port: 2 }]), shape);
    assert.deepEqual(cmp.modified.paths().map(pathString), ['.metadata.labels.app']);
    assert.deepEqual(cmp.added.paths().map(pathString), ['.metadata.labels.new', '.spec.ports[port=2,protocol="TCP"]', '.spec.ports[port=2,protocol="TCP"].port']);
    assert.deepEqual(cmp.removed.paths().map(pathString), ['.spec.ports[port=1,protocol="TCP"]', '.spec.ports[port=1,protocol="TCP"].name', '.spec.ports[port=1,protocol="TCP"].port']);
  });
});

describe('managed fields of updates', () => {
  it('a create owns every field it set, with "." on new maps and list elements, nothing of status or the server\'s metadata', () => {
    const pod: KObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', labels: { app: 'x' } }, spec: { containers: [{ name: 'main', image: 'python' }] }, status: { phase: 'Pending' } };
    recordUpdate(podKind, undefined, pod, 'kubectl-create');
    assert.deepEqual(managed(pod), {
      'kubectl-create/Update': {
        'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
        'f:spec': { 'f:containers': { 'k:{"name":"main"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
      },
    });
    const entry = (pod.metadata as any).managedFields[0];
    assert.equal(entry.apiVersion, 'v1');
    assert.equal(entry.fieldsType, 'FieldsV1');
    assert.match(entry.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('a custom kind\'s create owns its spec as a whole too, as for any unstructured object', () => {
    const k = kind('kubeflow.org', 'v1', 'PyTorchJob', false);
    const job: KObject = { apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name: 'j' }, spec: { runPolicy: { cleanPodPolicy: 'None' } } };
    recordUpdate(k, undefined, job, 'kubectl-create');
    assert.deepEqual(managed(job)['kubectl-create/Update']['f:spec'], { '.': {}, 'f:runPolicy': { '.': {}, 'f:cleanPodPolicy': {} } });
  });

  it('a later update takes the fields it changed away from their earlier manager; a write that changes nothing keeps the record as it was', () => {
    const created = svc({ app: 'web' }, [{ name: 'http', port: 80, protocol: 'TCP' }]);
    recordUpdate(svcKind, undefined, created, 'creator');
    const scaled = structuredClone(created);
    (scaled.metadata.labels as any).app = 'api';
    recordUpdate(svcKind, created, scaled, 'editor');
    const m = managed(scaled);
    // the labels map itself stays the creator's: a member without children is written `{}`
    assert.deepEqual(m['creator/Update']['f:metadata'], { 'f:labels': {} });
    assert.deepEqual(m['editor/Update'], { 'f:metadata': { 'f:labels': { 'f:app': {} } } });
    const again = structuredClone(scaled);
    recordUpdate(svcKind, scaled, again, 'editor');
    assert.deepEqual((again.metadata as any).managedFields, (scaled.metadata as any).managedFields);
  });

  it('a write may set managedFields, or clear them with an empty list', () => {
    const created = svc({ app: 'web' }, []);
    recordUpdate(svcKind, undefined, created, 'creator');
    const cleared = structuredClone(created);
    (cleared.metadata as any).managedFields = [];
    recordUpdate(svcKind, created, cleared, 'editor');
    assert.equal((cleared.metadata as any).managedFields, undefined);
    const set = structuredClone(created);
    (set.metadata as any).managedFields = [{ manager: 'someone', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } } } }];
    recordUpdate(svcKind, created, set, 'editor');
    assert.deepEqual(Object.keys(managed(set)), ['someone/Apply']);
  });

  it('keeps at most ten Update managers, folding the oldest into ancient-changes', () => {
    let obj = svc({}, []);
    recordUpdate(svcKind, undefined, obj, 'creator');
    for (let i = 0; i < 11; i++) {
      const next = structuredClone(obj);
      (next.metadata.labels as any)[`l${i}`] = 'x';
      recordUpdate(svcKind, obj, next, `writer-${String(i).padStart(2, '0')}`);
      obj = next;
    }
    const names = Object.keys(managed(obj)).sort();
    assert.equal(names.length, 10);
    assert.ok(names.includes('ancient-changes/Update'));
    assert.ok(names.includes('writer-10/Update'));
    const ancient = managed(obj)['ancient-changes/Update']['f:metadata']['f:labels'];
    assert.ok(Object.keys(ancient).length >= 2, 'the folded managers\' fields are kept');
  });

  it('names the manager after the client program when the request names none', () => {
    assert.equal(managerFromUserAgent('kubectl/v1.37.1 (linux/amd64) kubernetes/f78e722'), 'kubectl');
    assert.equal(managerFromUserAgent('OpenAPI-Generator/35.0.0/python'), 'OpenAPI-Generator');
    assert.equal(managerFromUserAgent(undefined), '');
  });
});

describe('server-side apply', () => {
  const base = (): KObject => svc({ app: 'web', tier: 'a' }, [{ name: 'http', port: 80, targetPort: 8080 }, { name: 'm', port: 9090 }]);

  it('creates, owns what it applied, and on re-apply removes what it no longer applies', () => {
    const created = applyConfiguration(svcKind, undefined, base(), 'ops', false).object;
    assert.deepEqual(Object.keys(managed(created)), ['ops/Apply']);
    const next = svc({ app: 'web' }, [{ name: 'http', port: 80, targetPort: 8081 }]);
    const { object, changed } = applyConfiguration(svcKind, created, next, 'ops', false);
    assert.ok(changed);
    assert.deepEqual(object.metadata.labels, { app: 'web' });
    assert.deepEqual((object.spec as any).ports, [{ name: 'http', port: 80, targetPort: 8081 }]);
    const noop = applyConfiguration(svcKind, object, next, 'ops', false);
    assert.equal(noop.changed, false);
  });

  it('keeps a field it stopped applying while another manager owns it, and fields set by others', () => {
    const created = applyConfiguration(svcKind, undefined, base(), 'ops', false).object;
    const labelled = structuredClone(created);
    (labelled.metadata.labels as any).extra = '1';
    labelled.spec.type = 'ClusterIP';
    recordUpdate(svcKind, created, labelled, 'kubectl-label');
    const shared = applyConfiguration(svcKind, labelled, base(), 'other', false).object;
    const { object } = applyConfiguration(svcKind, shared, svc({ app: 'web' }, [{ name: 'http', port: 80, targetPort: 8080 }]), 'ops', false);
    assert.deepEqual(object.metadata.labels, { app: 'web', tier: 'a', extra: '1' });
    assert.equal((object.spec as any).ports.length, 2);
    assert.equal(object.spec.type, 'ClusterIP');
  });

  it('conflicts with another manager\'s field, naming it and the field, unless forced', () => {
    const created = applyConfiguration(svcKind, undefined, base(), 'ops', false).object;
    const changed = svc({ app: 'web', tier: 'b' }, [{ name: 'http', port: 80, targetPort: 8080 }, { name: 'm', port: 9090 }]);
    const e = conflictOf(() => applyConfiguration(svcKind, created, changed, 'other', false));
    assert.equal(e.code, 409);
    assert.equal(e.reason, 'Conflict');
    assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "ops": .metadata.labels.tier');
    assert.deepEqual(e.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "ops"', field: '.metadata.labels.tier' }]);
    const forced = applyConfiguration(svcKind, created, changed, 'other', true).object;
    assert.equal(forced.metadata.labels?.tier, 'b');
    assert.equal(managed(forced)['ops/Apply']['f:metadata']['f:labels']['f:tier'], undefined);
    assert.deepEqual(managed(forced)['other/Apply']['f:metadata']['f:labels']['f:tier'], {});
  });

  it('after an update changed an applied field, the next apply conflicts with that updater "using" its version', () => {
    const created = applyConfiguration(svcKind, undefined, base(), 'ops', false).object;
    const edited = structuredClone(created);
    (edited.spec as any).ports[0].targetPort = 9999;
    (edited.metadata.labels as any).tier = 'z';
    recordUpdate(svcKind, created, edited, 'kubectl-edit');
    const e = conflictOf(() => applyConfiguration(svcKind, edited, base(), 'ops', false));
    assert.equal(e.message, 'Apply failed with 2 conflicts: conflicts with "kubectl-edit" using v1:\n- .metadata.labels.tier\n- .spec.ports[port=80,protocol="TCP"].targetPort');
    assert.deepEqual(e.details.causes?.map((c) => c.field), ['.metadata.labels.tier', '.spec.ports[port=80,protocol="TCP"].targetPort']);
  });

  it('lists conflicts with several managers by manager', () => {
    const created = applyConfiguration(svcKind, undefined, svc({ a: '1' }, []), 'ops', false).object;
    const edited = structuredClone(created);
    (edited.metadata.labels as any).b = '2';
    recordUpdate(svcKind, created, edited, 'editor');
    const e = conflictOf(() => applyConfiguration(svcKind, edited, svc({ a: 'x', b: 'y' }, []), 'third', false));
    assert.equal(e.message, 'Apply failed with 2 conflicts: conflicts with "editor" using v1:\n- .metadata.labels.b\nconflicts with "ops":\n- .metadata.labels.a');
  });

  it('lets kubectl take over, without conflicts, the fields its last-applied annotation set, and keeps that annotation current', () => {
    const file = base();
    const csa = structuredClone(file);
    csa.metadata.annotations = { [LAST_APPLIED_ANNOTATION]: JSON.stringify(file) };
    recordUpdate(svcKind, undefined, csa, 'kubectl-client-side-apply');
    const changed = svc({ app: 'web', tier: 'b' }, [{ name: 'http', port: 80, targetPort: 8080 }, { name: 'm', port: 9090 }]);
    const { object } = applyConfiguration(svcKind, csa, changed, 'kubectl', false);
    assert.equal(object.metadata.labels?.tier, 'b');
    assert.equal(JSON.parse(object.metadata.annotations?.[LAST_APPLIED_ANNOTATION] ?? '{}').metadata.labels.tier, 'b');
    // another manager gets no such pass
    assert.equal(conflictOf(() => applyConfiguration(svcKind, csa, changed, 'ops', false)).code, 409);
  });

  it('refuses a configuration it cannot type, as kube-apiserver words it', () => {
    const untyped = (k: KindFields, obj: KObject): ApiError => {
      try {
        applyConfiguration(k, undefined, obj, 'ops', false);
      } catch (e) {
        assert.ok(e instanceof ApiError);
        assert.equal(e.code, 500);
        return e;
      }
      assert.fail('expected an error');
    };
    const pod: KObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a' }, { name: 'a' }] } };
    assert.equal(untyped(podKind, pod).message, 'failed to create typed patch object (/v1, Kind=Pod): .spec.containers: duplicate entries for key [name="a"]');
    // a custom kind's list keys have no defaults: an element without its key cannot be placed
    const job: KObject = { apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name: 'j' }, spec: { pytorchReplicaSpecs: { Master: { template: { spec: { containers: [{ image: 'x' }] } } } } } };
    assert.equal(untyped(kind('kubeflow.org', 'v1', 'PyTorchJob', false), job).message, 'failed to create typed patch object (kubeflow.org/v1, Kind=PyTorchJob): .spec.pytorchReplicaSpecs.Master.template.spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)');
  });

  it('decodes only well-formed managedFields', () => {
    assert.equal(decodeManagedFields('nope'), undefined);
    assert.equal(decodeManagedFields([{ manager: 'a', operation: 'Patch', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} }]), undefined);
    assert.equal(decodeManagedFields([{ manager: 'a', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} }])?.size, 1);
  });
});
