import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../api/errors.js';
import type { KindDef } from '../../api/registry.js';
import { acceptsOnlyProtobuf, refuseProtobufOnlyAccept } from './protobuf.js';

const configMap = { group: '', version: 'v1', kind: 'ConfigMap' } as KindDef;
const pytorchJob = { group: 'kubeflow.org', version: 'v1', kind: 'PyTorchJob' } as KindDef;

describe('protobuf in Accept', () => {
  it('is "only protobuf" when every range the client would take is protobuf', () => {
    assert.ok(acceptsOnlyProtobuf('application/vnd.kubernetes.protobuf'));
    assert.ok(acceptsOnlyProtobuf('application/vnd.kubernetes.protobuf;stream=watch'));
    assert.ok(acceptsOnlyProtobuf('application/vnd.kubernetes.protobuf, application/json;q=0'));
    assert.ok(!acceptsOnlyProtobuf('application/vnd.kubernetes.protobuf,application/json'), "client-go's default");
    assert.ok(!acceptsOnlyProtobuf('application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io,application/json'));
    assert.ok(!acceptsOnlyProtobuf('*/*'));
    assert.ok(!acceptsOnlyProtobuf(''));
    assert.ok(!acceptsOnlyProtobuf(undefined));
  });

  it('is refused 406, in the words kube-apiserver uses for the kind, except for logs and exec', () => {
    const refused = (def: KindDef, sub?: string): ApiError | undefined => {
      try {
        refuseProtobufOnlyAccept('application/vnd.kubernetes.protobuf', def, sub);
      } catch (e) {
        assert.ok(e instanceof ApiError);
        return e;
      }
      return undefined;
    };
    assert.equal(refused(configMap)?.code, 406);
    assert.equal(refused(configMap)?.message, 'only the following media types are accepted: application/json, application/yaml');
    assert.equal(refused(pytorchJob)?.message, 'object *unstructured.Unstructured does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message');
    assert.equal(refused({ ...configMap, kind: 'Pod' }, 'log'), undefined);
    assert.doesNotThrow(() => refuseProtobufOnlyAccept('application/vnd.kubernetes.protobuf,application/json', configMap));
  });
});
