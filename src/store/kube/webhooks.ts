// The webhooks Skiff registers on a cluster, so that what kubectl writes straight to its API server
// meets Skiff's own checks (src/server/kube/webhooks.ts serves them):
// - a ValidatingWebhookConfiguration whose rules cover every CRD kind Skiff validates (creates and
//   updates of the main resource; status writes are Skiff's controllers' and are not covered);
// - the conversion webhook of the CRDs whose versions Skiff converts (Kueue's v1beta1 <-> v1beta2),
//   set in their `spec.conversion` by crdsFor.
// Both trust one CA, kept in a Secret in Skiff's namespace so that every replica signs its own
// serving certificate with it and any of them can answer the Service.
import { X509Certificate } from 'node:crypto';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { KindDef } from '../../api/registry.js';
import { KeyUsage, createCertificate, keyPairFromPem, newKeyPair, privateKeyPem, toPem } from '../../util/x509.js';
import { clientConfigFor, managedBy, managedByLabel, specHash, specHashAnnotation } from './crds.js';
import type { WebhookEndpoint } from './crds.js';
import type { KubeHttp } from './http.js';
import { isBuiltInGroup } from './paths.js';

export { convertPath, clientConfigFor } from './crds.js';
export type { WebhookClientConfig, WebhookEndpoint } from './crds.js';

export const validatePath = '/validate';
export const webhookConfigurationName = 'skiff';
/** the name of the one webhook in it (a webhook name needs three segments) */
export const validatingWebhookName = 'objects.validate.skiff.dev';
export const webhookCaSecret = 'skiff-webhook-ca';

/** the Kubernetes-served check is kube-apiserver's own: Skiff covers the kinds it installs as CRDs and validates */
export function validatedKinds(defs: readonly KindDef[]): KindDef[] {
  return defs.filter((d) => !isBuiltInGroup(d.group) && d.validate !== undefined);
}

export interface ValidatingWebhookConfiguration {
  apiVersion: 'admissionregistration.k8s.io/v1';
  kind: 'ValidatingWebhookConfiguration';
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string>; resourceVersion?: string };
  webhooks: Record<string, unknown>[];
}

/**
 * One webhook whose rules name each validated kind's group, versions and plural (every served version:
 * Profile's and MPIJob's versions share a stored form without conversion, so the API server cannot
 * hand Skiff another version than the one written), creates and updates only.
 */
export function validatingWebhookConfiguration(defs: readonly KindDef[], endpoint: WebhookEndpoint): ValidatingWebhookConfiguration {
  const byGroup = new Map<string, { versions: Set<string>; resources: Set<string>; scopes: Set<boolean> }>();
  for (const d of validatedKinds(defs)) {
    const g = byGroup.get(d.group) ?? { versions: new Set(), resources: new Set(), scopes: new Set() };
    g.versions.add(d.version);
    g.resources.add(d.plural);
    byGroup.set(d.group, g);
  }
  const rules = [...byGroup].sort(([a], [b]) => a.localeCompare(b)).map(([group, g]) => ({
    apiGroups: [group], apiVersions: [...g.versions].sort(), resources: [...g.resources].sort(), operations: ['CREATE', 'UPDATE'], scope: '*',
  }));
  const webhooks = [{
    name: validatingWebhookName,
    clientConfig: clientConfigFor(endpoint, validatePath),
    rules,
    // as Kubeflow's operators register theirs: a write Skiff cannot check is refused, not let through
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    timeoutSeconds: 15,
  }];
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: webhookConfigurationName, labels: { [managedByLabel]: managedBy }, annotations: { [specHashAnnotation]: specHash(webhooks) } },
    webhooks,
  };
}

const vwcPath = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';

/** creates the configuration, or replaces Skiff's when it differs (a new address or CA, new kinds); returns whether it wrote */
export async function installValidatingWebhook(http: KubeHttp, config: ValidatingWebhookConfiguration): Promise<boolean> {
  // replicas starting together: a conflict is read again and written over, a few times
  for (let attempt = 0; ; attempt++) {
    let live: ValidatingWebhookConfiguration | undefined;
    try {
      live = await http.request<ValidatingWebhookConfiguration>('GET', `${vwcPath}/${config.metadata.name}`);
    } catch (e) {
      if (!(e instanceof ApiError && e.reason === StatusReason.NotFound)) throw e;
    }
    if (live && live.metadata.annotations?.[specHashAnnotation] === config.metadata.annotations[specHashAnnotation]) return false;
    try {
      if (live) await http.request('PUT', `${vwcPath}/${config.metadata.name}`, { body: { ...config, metadata: { ...config.metadata, resourceVersion: live.metadata.resourceVersion } } });
      else await http.request('POST', vwcPath, { body: config });
      return true;
    } catch (e) {
      if (!(attempt < 3 && e instanceof ApiError && (e.reason === StatusReason.Conflict || e.reason === StatusReason.AlreadyExists))) throw e;
    }
  }
}

export interface WebhookCa {
  caPem: string;
  /** a serving certificate for these names and addresses, signed by the CA: PEM of the certificate and its key */
  serving(dnsNames: string[], ipAddresses: string[]): { certPem: string; keyPem: string };
}

const day = 24 * 3600 * 1000;
const caSubject = { commonName: 'skiff-webhook-ca' };

interface SecretObject { metadata: { resourceVersion?: string }; data?: Record<string, string> }

/**
 * The webhooks' CA from the Secret in `namespace` (made there, and the namespace too, by the first
 * replica to start): every replica signs its own serving certificate with it.
 */
export async function webhookCa(http: KubeHttp, namespace: string): Promise<WebhookCa> {
  const secretPath = `/api/v1/namespaces/${namespace}/secrets`;
  const read = async (): Promise<{ certPem: string; keyPem: string } | undefined> => {
    try {
      const s = await http.request<SecretObject>('GET', `${secretPath}/${webhookCaSecret}`);
      const cert = s.data?.['ca.crt'];
      const key = s.data?.['ca.key'];
      if (!cert || !key) throw new Error(`Secret ${namespace}/${webhookCaSecret} lacks ca.crt or ca.key: delete it and Skiff makes a new one`);
      return { certPem: Buffer.from(cert, 'base64').toString(), keyPem: Buffer.from(key, 'base64').toString() };
    } catch (e) {
      if (e instanceof ApiError && e.reason === StatusReason.NotFound) return undefined;
      throw e;
    }
  };
  let ca = await read();
  if (!ca) {
    try {
      await http.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } });
    } catch (e) {
      if (!(e instanceof ApiError && (e.reason === StatusReason.AlreadyExists || e.reason === StatusReason.Conflict))) throw e;
    }
    const pair = newKeyPair();
    const now = Date.now();
    const certPem = toPem(createCertificate({
      subject: caSubject, publicKey: pair.publicKey, selfSignKey: pair.privateKey, isCA: true,
      notBefore: new Date(now - 3600_000), notAfter: new Date(now + 10 * 365 * day),
      keyUsage: [KeyUsage.digitalSignature, KeyUsage.keyCertSign, KeyUsage.cRLSign],
    }));
    const keyPem = privateKeyPem(pair.privateKey);
    try {
      await http.request('POST', secretPath, {
        body: {
          apiVersion: 'v1', kind: 'Secret', type: 'Opaque',
          metadata: { name: webhookCaSecret, namespace, labels: { [managedByLabel]: managedBy } },
          data: { 'ca.crt': Buffer.from(certPem).toString('base64'), 'ca.key': Buffer.from(keyPem).toString('base64') },
        },
      });
      ca = { certPem, keyPem };
    } catch (e) {
      // another replica made it first: its CA is everyone's
      if (!(e instanceof ApiError && (e.reason === StatusReason.AlreadyExists || e.reason === StatusReason.Conflict))) throw e;
      ca = await read();
      if (!ca) throw new Error(`Secret ${namespace}/${webhookCaSecret} was made and is gone again`);
    }
  }
  const caPair = keyPairFromPem(ca.keyPem);
  const caCert = new X509Certificate(ca.certPem);
  if (!caCert.checkPrivateKey(caPair.privateKey)) throw new Error(`Secret ${namespace}/${webhookCaSecret}: ca.key is not the key of ca.crt`);
  const caPem = ca.certPem;
  return {
    caPem,
    serving(dnsNames, ipAddresses) {
      const pair = newKeyPair();
      const now = Date.now();
      const certPem = toPem(createCertificate({
        subject: { commonName: dnsNames[0] ?? ipAddresses[0] ?? 'skiff-webhook' }, publicKey: pair.publicKey,
        issuer: { subject: caSubject, privateKey: caPair.privateKey, publicKey: caPair.publicKey },
        notBefore: new Date(now - 3600_000), notAfter: new Date(now + 365 * day),
        keyUsage: [KeyUsage.digitalSignature, KeyUsage.keyEncipherment], extKeyUsage: ['serverAuth'],
        dnsNames, ipAddresses,
      }));
      return { certPem, keyPem: privateKeyPem(pair.privateKey) };
    },
  };
}
