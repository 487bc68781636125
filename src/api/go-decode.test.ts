import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crdTypeErrors } from './crd-schema.js';
import { goDecodeError } from './go-decode.js';

const pod = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'p' }): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'Pod', metadata, spec });

describe('decoding a built-in kind as kube-apiserver decodes it into Go structs', () => {
  it('names the JSON kind, the innermost struct, the JSON field path and the Go type, as encoding/json does', () => {
    assert.equal(goDecodeError('', 'v1', 'ConfigMap', { metadata: { name: 'c' }, data: { a: 1 } }), 'json: cannot unmarshal number into Go struct field ConfigMap.data of type string');
    assert.equal(goDecodeError('', 'v1', 'Pod', pod({ containers: [{ name: 'c', image: 'i', ports: [{ containerPort: '80' }] }] })),
      'json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32');
    assert.equal(goDecodeError('', 'v1', 'Service', { spec: { ports: [{ port: '80', targetPort: 'http' }] } }), 'json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32');
    assert.equal(goDecodeError('', 'v1', 'Pod', pod({}, { name: 'p', labels: { a: true } })), 'json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string');
  });

  it('prints Go types as reflect does: named types, slices, maps, and a pointer field by what it points to', () => {
    assert.equal(goDecodeError('', 'v1', 'Pod', pod({ restartPolicy: 1 })), 'json: cannot unmarshal number into Go struct field PodSpec.spec.restartPolicy of type v1.RestartPolicy');
    assert.equal(goDecodeError('', 'v1', 'Pod', pod({ containers: {} })), 'json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container');
    assert.equal(goDecodeError('', 'v1', 'Pod', pod({ containers: [{ name: 'c', command: 'ls' }] })), 'json: cannot unmarshal string into Go struct field Container.spec.containers.command of type []string');
    assert.equal(goDecodeError('', 'v1', 'Pod', pod({ securityContext: [] })), 'json: cannot unmarshal array into Go struct field PodSpec.spec.securityContext of type v1.PodSecurityContext');
    assert.equal(goDecodeError('', 'v1', 'Pod', pod({ nodeSelector: 'x' })), 'json: cannot unmarshal string into Go struct field PodSpec.spec.nodeSelector of type map[string]string');
    assert.equal(goDecodeError('', 'v1', 'Secret', { data: { a: 5 } }), 'json: cannot unmarshal number into Go struct field Secret.data of type []uint8');
    // metav1.Time decodes a Go string
    assert.equal(goDecodeError('', 'v1', 'Pod', pod({}, { creationTimestamp: 5 })), 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string');
  });

  it('words a number an integer field cannot hold with the number', () => {
    assert.equal(goDecodeError('', 'v1', 'Pod', pod({ activeDeadlineSeconds: 1.5 })), 'json: cannot unmarshal number 1.5 into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64');
    assert.equal(goDecodeError('batch', 'v1', 'Job', { spec: { parallelism: 3000000000 } }), 'json: cannot unmarshal number 3000000000 into Go struct field JobSpec.spec.parallelism of type int32');
  });

  it('reports the first value in document order, and leaves alone what fits, nulls, unknown fields and types that decode themselves', () => {
    assert.equal(goDecodeError('', 'v1', 'Pod', pod({ priority: 'x', restartPolicy: 1 })), 'json: cannot unmarshal string into Go struct field PodSpec.spec.priority of type int32');
    assert.equal(goDecodeError('', 'v1', 'Pod', pod({
      restartPolicy: 'Never', nodeName: null, bogus: 1,
      containers: [{ name: 'c', image: 'i', resources: { limits: { cpu: 0.5, memory: '1Gi' } }, ports: [{ containerPort: 80 }], livenessProbe: { httpGet: { port: 'http' } } }],
    }, { name: 'p', uid: '6b9a', labels: { a: 'b' }, creationTimestamp: null })), undefined);
    assert.equal(goDecodeError('', 'v1', 'Pod', pod({}, { uid: 1 })), 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.uid of type types.UID');
    assert.equal(goDecodeError('kubeflow.org', 'v1', 'PyTorchJob', { spec: 1 }), undefined, 'not a built-in kind');
  });
});

describe('a CRD kind\'s type errors, as kube-apiserver words its schema\'s', () => {
  it('names the field, the JSON type found and the type the schema wants', () => {
    const errs = crdTypeErrors('kubeflow.org', 'v1', 'PyTorchJob', { spec: { runPolicy: { backoffLimit: 'x' }, pytorchReplicaSpecs: { Master: { replicas: true } } }, status: { anything: 1 } });
    assert.deepEqual(errs.map((e) => `${e.field}: ${e.message}`), [
      'spec.runPolicy.backoffLimit: Invalid value: "string": spec.runPolicy.backoffLimit in body must be of type integer: "string"',
      'spec.pytorchReplicaSpecs.Master.replicas: Invalid value: "boolean": spec.pytorchReplicaSpecs.Master.replicas in body must be of type integer: "boolean"',
    ]);
    assert.deepEqual(crdTypeErrors('kubeflow.org', 'v1', 'Notebook', { spec: { template: { spec: { containers: [{ name: 'n', ports: [{ containerPort: '80' }] }] } } } }).map((e) => e.message),
      ['Invalid value: "string": spec.template.spec.containers[0].ports[0].containerPort in body must be of type integer: "string"']);
  });
});
