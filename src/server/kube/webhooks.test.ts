import assert from 'node:assert/strict';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import type { KObject } from '../../api/meta.js';
import { crdsFor } from '../../store/kube/crds.js';
import { validatingWebhookConfiguration } from '../../store/kube/webhooks.js';
import { KeyUsage, createCertificate, newKeyPair, privateKeyPem, toPem } from '../../util/x509.js';
import { tuningWorkload } from '../../workloads/tuning/index.js';
import { registryOf } from '../workloads.js';
import { reviewAdmission, reviewConversion, startWebhookServer, type WebhookServer } from './webhooks.js';

const registry = registryOf([tuningWorkload]);

/** Katib's upstream test of its webhook (katib/test-e2e-testdata/invalid-experiment.yaml), in short */
const experiment = (algorithmName: string): KObject => ({
  apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name: 'invalid-experiment', namespace: 'kubeflow' },
  spec: {
    maxTrialCount: 13, objective: { type: 'minimize', goal: 0.001, objectiveMetricName: 'loss' }, algorithm: { algorithmName },
    parameters: [{ name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.01', max: '0.05' } }],
    trialTemplate: {
      primaryContainerName: 'training-container', trialParameters: [{ name: 'learningRate', reference: 'lr' }],
      trialSpec: { apiVersion: 'batch/v1', kind: 'Job', spec: { template: { spec: { containers: [{ name: 'training-container', image: 'python', command: ['python3', '--lr=${trialParameters.learningRate}'] }], restartPolicy: 'Never' } } } },
    },
  },
});

const admission = (object: unknown, operation = 'CREATE', oldObject?: unknown): Record<string, unknown> => ({
  apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
  request: { uid: 'u-1', kind: { group: 'kubeflow.org', version: 'v1beta1', kind: 'Experiment' }, operation, object, ...(oldObject ? { oldObject } : {}) },
});

const clusterQueueV1beta1 = {
  apiVersion: 'kueue.x-k8s.io/v1beta1', kind: 'ClusterQueue', metadata: { name: 'cq', uid: 'cq-uid', resourceVersion: '7' },
  spec: {
    namespaceSelector: {}, cohort: 'team',
    resourceGroups: [{ coveredResources: ['cpu'], flavors: [{ name: 'default', resources: [{ name: 'cpu', nominalQuota: '9' }] }] }],
  },
};

describe('the validating webhook', () => {
  it('refuses what Skiff\'s store refuses, with its 422 naming the field', () => {
    const review = reviewAdmission(registry, admission(experiment('invalid-algorithm'))) as { apiVersion: string; kind: string; response: { uid: string; allowed: boolean; status: { code: number; reason: string; message: string; details: { causes: { field: string }[] } } } };
    assert.equal(review.apiVersion, 'admission.k8s.io/v1');
    assert.equal(review.kind, 'AdmissionReview');
    assert.equal(review.response.uid, 'u-1');
    assert.equal(review.response.allowed, false);
    assert.equal(review.response.status.code, 422);
    assert.equal(review.response.status.reason, 'Invalid');
    assert.match(review.response.status.message, /^Experiment\.kubeflow\.org "invalid-experiment" is invalid: spec\.algorithm\.algorithmName/);
    assert.deepEqual(review.response.status.details.causes.map((c) => c.field), ['spec.algorithm.algorithmName']);
  });

  it('allows what Skiff\'s store allows, objects being deleted, and kinds that are not Skiff\'s', () => {
    const ok = (r: Record<string, unknown>): boolean => (r.response as { allowed: boolean }).allowed;
    assert.equal(ok(reviewAdmission(registry, admission(experiment('random')))), true);
    const bad = experiment('invalid-algorithm');
    assert.equal(ok(reviewAdmission(registry, admission({ ...bad, metadata: { ...bad.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, 'UPDATE', bad))), true);
    assert.equal(ok(reviewAdmission(registry, admission({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }))), true);
  });

  it('checks an update against the object it replaces', () => {
    const before = experiment('random');
    const changed = experiment('grid');
    const r = reviewAdmission(registry, admission(changed, 'UPDATE', before)) as { response: { allowed: boolean; status?: { message: string } } };
    // Katib's webhook: only the trial counts of an experiment may change
    assert.equal(r.response.allowed, false, JSON.stringify(r));
    assert.match(r.response.status?.message ?? "", /spec: Forbidden: only spec.parallelTrialCount, spec.maxTrialCount and spec.maxFailedTrialCount are editable/);
  });

  it('answers a review without a uid with a 400', () => {
    assert.throws(() => reviewAdmission(registry, { request: {} }), /request\.uid/);
  });
});

describe('the conversion webhook', () => {
  it('converts Kueue v1beta1 to v1beta2 and back, keeping metadata', () => {
    const up = reviewConversion(registry, { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'c-1', desiredAPIVersion: 'kueue.x-k8s.io/v1beta2', objects: [clusterQueueV1beta1] } }) as { kind: string; response: { uid: string; result: { status: string }; convertedObjects: KObject[] } };
    assert.equal(up.kind, 'ConversionReview');
    assert.equal(up.response.uid, 'c-1');
    assert.equal(up.response.result.status, 'Success');
    const v2 = up.response.convertedObjects[0] as KObject & { spec: Record<string, unknown> };
    assert.equal(v2.apiVersion, 'kueue.x-k8s.io/v1beta2');
    assert.deepEqual(v2.metadata, clusterQueueV1beta1.metadata);
    // v1beta2 has no spec.cohort: it is spec.cohortName
    assert.equal(v2.spec.cohortName, 'team');
    assert.equal(v2.spec.cohort, undefined);
    const down = reviewConversion(registry, { request: { uid: 'c-2', desiredAPIVersion: 'kueue.x-k8s.io/v1beta1', objects: [v2] } }) as { response: { convertedObjects: (KObject & { spec: Record<string, unknown> })[] } };
    const v1 = down.response.convertedObjects[0];
    assert.equal(v1?.apiVersion, 'kueue.x-k8s.io/v1beta1');
    assert.deepEqual(v1?.metadata, clusterQueueV1beta1.metadata);
    // what was written comes back, with v1beta1's defaults as the API server reads it in that version
    for (const [k, val] of Object.entries(clusterQueueV1beta1.spec)) assert.deepEqual(v1?.spec[k], val, k);
    assert.equal(v1?.spec.cohortName, undefined);
  });

  it('fails a review naming the object it cannot convert', () => {
    const r = reviewConversion(registry, { request: { uid: 'c-3', desiredAPIVersion: 'kueue.x-k8s.io/v1alpha9', objects: [clusterQueueV1beta1] } }) as { response: { result: { status: string; message: string } } };
    assert.equal(r.response.result.status, 'Failure');
    assert.match(r.response.result.message, /objects\[0\] \(cq\): cannot convert to kueue\.x-k8s\.io\/v1alpha9: ClusterQueue kueue\.x-k8s\.io\/v1alpha9 is not served/);
  });
});

describe('the registration', () => {
  const endpoint = { client: { url: 'https://127.0.0.1:9443' }, caPem: '-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n' };

  it('covers the CRD kinds Skiff validates, creates and updates, failing closed', () => {
    const config = validatingWebhookConfiguration(registry.all(), endpoint);
    const hook = config.webhooks[0] as { clientConfig: { url: string; caBundle: string }; rules: { apiGroups: string[]; apiVersions: string[]; resources: string[]; operations: string[] }[]; failurePolicy: string; sideEffects: string };
    assert.equal(hook.clientConfig.url, 'https://127.0.0.1:9443/validate');
    assert.equal(Buffer.from(hook.clientConfig.caBundle, 'base64').toString(), endpoint.caPem);
    assert.equal(hook.failurePolicy, 'Fail');
    // dry runs (kubectl --dry-run=server) are checked too
    assert.equal(hook.sideEffects, 'None');
    const rule = (g: string) => hook.rules.find((r) => r.apiGroups[0] === g);
    assert.deepEqual(rule('kubeflow.org')?.resources, ['experiments', 'suggestions', 'trials']);
    assert.deepEqual(rule('kueue.x-k8s.io')?.apiVersions, ['v1beta1', 'v1beta2']);
    assert.ok(rule('kueue.x-k8s.io')?.resources.includes('clusterqueues'));
    assert.deepEqual(rule('kueue.x-k8s.io')?.operations, ['CREATE', 'UPDATE']);
    // Kubernetes' own kinds are kube-apiserver's to check
    assert.equal(rule(''), undefined);
    assert.equal(hook.rules.some((r) => r.apiGroups.some((g) => g.endsWith('.k8s.io') && !g.endsWith('x-k8s.io'))), false);
  });

  it('makes Kueue\'s CRDs serve v1beta1 through the conversion webhook, stored as v1beta2', () => {
    const cq = crdsFor(registry.all(), endpoint).find((c) => c.metadata.name === 'clusterqueues.kueue.x-k8s.io');
    assert.ok(cq);
    assert.deepEqual(cq.spec.versions.map((v) => [v.name, v.served, v.storage]), [['v1beta2', true, true], ['v1beta1', true, false]]);
    assert.deepEqual(cq.spec.conversion, { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://127.0.0.1:9443/convert', caBundle: Buffer.from(endpoint.caPem).toString('base64') }, conversionReviewVersions: ['v1'] } });
    // without the webhook: v1beta2 only, as before
    const plain = crdsFor(registry.all()).find((c) => c.metadata.name === 'clusterqueues.kueue.x-k8s.io');
    assert.deepEqual(plain?.spec.versions.map((v) => v.name), ['v1beta2']);
    assert.deepEqual(plain?.spec.conversion, { strategy: 'None' });
    // a kind without converted versions keeps strategy None
    assert.deepEqual(crdsFor(registry.all(), endpoint).find((c) => c.metadata.name === 'experiments.kubeflow.org')?.spec.conversion, { strategy: 'None' });
  });
});

describe('the webhook server', () => {
  let server: WebhookServer;
  let caPem: string;

  before(async () => {
    const ca = newKeyPair();
    const now = Date.now();
    caPem = toPem(createCertificate({ subject: { commonName: 'test-ca' }, publicKey: ca.publicKey, selfSignKey: ca.privateKey, isCA: true, notBefore: new Date(now - 60_000), notAfter: new Date(now + 86_400_000), keyUsage: [KeyUsage.keyCertSign, KeyUsage.digitalSignature] }));
    const key = newKeyPair();
    const certPem = toPem(createCertificate({
      subject: { commonName: 'skiff-webhook' }, publicKey: key.publicKey, issuer: { subject: { commonName: 'test-ca' }, privateKey: ca.privateKey, publicKey: ca.publicKey },
      notBefore: new Date(now - 60_000), notAfter: new Date(now + 86_400_000), keyUsage: [KeyUsage.digitalSignature, KeyUsage.keyEncipherment], extKeyUsage: ['serverAuth'], ipAddresses: ['127.0.0.1'],
    }));
    server = await startWebhookServer({ registry, host: '127.0.0.1', port: 0, certPem, keyPem: privateKeyPem(key.privateKey), log: () => undefined });
  });
  after(() => server?.close());

  const post = (path: string, body: string, method = 'POST'): Promise<{ status: number; body: any }> => new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method, ca: caPem, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });

  it('answers reviews over HTTPS with a certificate the CA signed', async () => {
    const v = await post('/validate', JSON.stringify(admission(experiment('invalid-algorithm'))));
    assert.equal(v.status, 200);
    assert.equal(v.body.response.allowed, false);
    assert.equal(v.body.response.status.code, 422);
    const c = await post('/convert', JSON.stringify({ request: { uid: 'x', desiredAPIVersion: 'kueue.x-k8s.io/v1beta2', objects: [clusterQueueV1beta1] } }));
    assert.equal(c.body.response.convertedObjects[0].apiVersion, 'kueue.x-k8s.io/v1beta2');
  });

  it('answers what is not a review with the Status saying why', async () => {
    assert.deepEqual([(await post('/validate', '{not json')).status, (await post('/validate', '{}')).status, (await post('/nothing', '{}')).status, (await post('/validate', '', 'GET')).status], [400, 400, 404, 405]);
    assert.match((await post('/validate', '{not json')).body.message, /the review is not JSON/);
  });
});
