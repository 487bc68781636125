// Before Skiff uses a cluster: that its API server answers, that Skiff's credentials may do what the
// store does with every kind it serves, and that the CRDs for Skiff's and Kubeflow's kinds are there at
// Skiff's version. Everything is checked before anything is written, so a refusal leaves the cluster
// as it was: never half-installed.
import { ApiError, StatusReason } from '../../api/errors.js';
import type { KindDef } from '../../api/registry.js';
import { isPlainObject } from '../../util/objects.js';
import type { CustomResourceDefinition } from './crds.js';
import { crdsFor, managedBy, managedByLabel, specHashAnnotation } from './crds.js';
import type { KubeHttp } from './http.js';
import { UnreachableError } from './http.js';
import { qualifiedResource } from './paths.js';
import type { WebhookEndpoint } from './crds.js';
import { installValidatingWebhook, validatingWebhookConfiguration, webhookCa, webhookCaSecret } from './webhooks.js';
import type { WebhookCa } from './webhooks.js';

/** Why Skiff cannot use this cluster, in words that name the server, the object or the permission. */
export class ClusterSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClusterSetupError';
  }
}

const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

export interface ClusterInfo {
  /** kube-apiserver's gitVersion */
  version: string;
  /** CRDs created or upgraded (names) */
  installed: string[];
  /** where the cluster calls this replica's webhooks, when it serves them */
  webhooks?: WebhookEndpoint;
}

/** Answers, version and credentials: a ClusterSetupError saying which fails. */
export async function probeCluster(http: KubeHttp): Promise<string> {
  const where = `${http.conn.server} (${http.conn.source})`;
  try {
    const v = await http.request<{ gitVersion?: string }>('GET', '/version', { timeoutMs: 10_000 });
    // /version is open to everyone: ask something that needs the credentials too
    await http.request('GET', '/api', { timeoutMs: 10_000 });
    return v?.gitVersion ?? 'unknown';
  } catch (e) {
    if (e instanceof UnreachableError) throw new ClusterSetupError(e.message);
    if (e instanceof ApiError && e.code === 401) throw new ClusterSetupError(`the Kubernetes API server at ${where} refused the credentials: ${e.message}`);
    if (e instanceof ApiError) throw new ClusterSetupError(`the Kubernetes API server at ${where} answered ${e.code}: ${e.message}`);
    throw e;
  }
}

export interface AccessNeed {
  group: string;
  resource: string;
  subresource?: string;
  verb: string;
  /** asked in this namespace only (a Role there suffices); else in every namespace */
  namespace?: string;
}

/**
 * What the store does with each kind, in the order the start-up check asks: the RBAC Skiff's
 * credentials need (deploy/kubernetes's ClusterRole grants these, and a test holds the two together).
 */
export function accessNeeds(defs: readonly KindDef[]): AccessNeed[] {
  const needs: AccessNeed[] = [];
  const crd = { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' };
  for (const verb of ['get', 'list', 'create', 'update']) needs.push({ ...crd, verb });
  // the validating webhook Skiff registers (src/store/kube/webhooks.ts), made or upgraded at start
  for (const verb of ['get', 'create', 'update']) needs.push({ group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations', verb });
  const seen = new Set<string>();
  for (const d of defs) {
    if (d.conversion) continue;
    const k = `${d.group}/${d.plural}`;
    if (seen.has(k)) continue;
    seen.add(k);
    for (const verb of ['get', 'list', 'watch', 'create', 'update', 'delete']) needs.push({ group: d.group, resource: d.plural, verb });
    if (d.hasStatus) needs.push({ group: d.group, resource: d.plural, subresource: 'status', verb: 'update' });
  }
  return needs;
}

/** The leader Lease the replicas elect their leader on, in its own namespace (a Role there suffices). */
export function leaseAccessNeeds(namespace: string): AccessNeed[] {
  return ['get', 'create', 'update'].map((verb) => ({ group: 'coordination.k8s.io', resource: 'leases', verb, namespace }));
}

/** The webhooks' CA, a Secret in Skiff's namespace (made with the namespace by the first replica). */
export function webhookAccessNeeds(namespace: string): AccessNeed[] {
  return ['get', 'create'].map((verb) => ({ group: '', resource: 'secrets', verb, namespace }));
}

/** What the store does with each kind (and `extra`), asked of the cluster's authorizer as the credentials' user. */
export async function checkAccess(http: KubeHttp, defs: readonly KindDef[], extra: readonly AccessNeed[] = []): Promise<void> {
  const needs = [...accessNeeds(defs), ...extra];
  const denied: [number, string][] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < needs.length) {
      const i = next++;
      const n = needs[i] as AccessNeed;
      const review = await http.request<{ status?: { allowed?: boolean } }>('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { group: n.group, resource: n.resource, verb: n.verb, ...(n.subresource ? { subresource: n.subresource } : {}), ...(n.namespace ? { namespace: n.namespace } : {}) } } },
      });
      if (!review.status?.allowed) denied.push([i, `${n.verb} ${qualifiedResource({ group: n.group, plural: n.resource })}${n.subresource ? `/${n.subresource}` : ''}${n.namespace ? ` in namespace ${n.namespace}` : ''}`]);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  if (denied.length) {
    // in the order asked, so the same refusal reads the same every time
    const shown = denied.sort((a, b) => a[0] - b[0]).slice(0, 12).map(([, d]) => d).join(', ');
    throw new ClusterSetupError(`RBAC on ${http.conn.server} refuses what Skiff needs (${http.conn.source}): ${shown}${denied.length > 12 ? ` and ${denied.length - 12} more` : ''}; bind its user to a role that allows them (cluster-admin does)`);
  }
}

type LiveCrd = CustomResourceDefinition & { metadata: CustomResourceDefinition['metadata'] & { resourceVersion: string }; status?: { conditions?: { type: string; status: string; message?: string }[] } };

/**
 * Creates the CRDs that are missing and upgrades Skiff's own that differ; a CRD someone else installed
 * is used as it is when it serves every version Skiff needs, and refused otherwise (before any write).
 */
export async function installCrds(http: KubeHttp, defs: readonly KindDef[], log: (m: string) => void, timeoutMs = 120_000, conversion?: WebhookEndpoint): Promise<string[]> {
  const wanted = crdsFor(defs, conversion);
  const plan: { crd: CustomResourceDefinition; live?: LiveCrd }[] = [];
  const problems: string[] = [];
  for (const crd of wanted) {
    let live: LiveCrd | undefined;
    try {
      live = await http.request<LiveCrd>('GET', `${crdPath}/${crd.metadata.name}`);
    } catch (e) {
      if (!(e instanceof ApiError && e.reason === StatusReason.NotFound)) throw e;
    }
    if (!live) plan.push({ crd });
    else if (live.metadata.labels?.[managedByLabel] !== managedBy) {
      const served = new Set((live.spec?.versions ?? []).filter((v) => v.served).map((v) => v.name));
      const missing = crd.spec.versions.map((v) => v.name).filter((v) => !served.has(v));
      if (missing.length) problems.push(`CRD ${crd.metadata.name} is already installed by someone else and does not serve ${missing.join(', ')} (it serves ${[...served].join(', ') || 'nothing'}): remove it, or let Skiff manage it by labelling it ${managedByLabel}=${managedBy}`);
      else log(`kubernetes: using CRD ${crd.metadata.name} as installed (not managed by Skiff)`);
    } else if (live.metadata.annotations?.[specHashAnnotation] !== crd.metadata.annotations[specHashAnnotation]) {
      plan.push({ crd, live });
    }
  }
  if (problems.length) throw new ClusterSetupError(problems.join('; '));
  for (const { crd, live } of plan) {
    let current = live;
    // replicas starting together may write the same CRD (with their own webhook address): a conflict
    // is read again and written over, a few times
    for (let attempt = 0; ; attempt++) {
      try {
        if (current) await http.request('PUT', `${crdPath}/${crd.metadata.name}`, { body: { ...crd, metadata: { ...crd.metadata, resourceVersion: current.metadata.resourceVersion } } });
        else await http.request('POST', crdPath, { body: crd });
        break;
      } catch (e) {
        if (attempt < 3 && e instanceof ApiError && (e.reason === StatusReason.Conflict || e.reason === StatusReason.AlreadyExists)) {
          current = await http.request<LiveCrd>('GET', `${crdPath}/${crd.metadata.name}`);
          continue;
        }
        throw new ClusterSetupError(`cannot ${live ? 'upgrade' : 'create'} CRD ${crd.metadata.name}: ${(e as Error).message}`);
      }
    }
  }
  // served once Established (and its names accepted)
  const deadline = Date.now() + timeoutMs;
  for (const { crd } of plan) {
    for (;;) {
      const live = await http.request<LiveCrd>('GET', `${crdPath}/${crd.metadata.name}`);
      const conds = live.status?.conditions ?? [];
      const established = conds.some((c) => c.type === 'Established' && c.status === 'True');
      const refused = conds.find((c) => c.type === 'NamesAccepted' && c.status === 'False');
      if (refused) throw new ClusterSetupError(`CRD ${crd.metadata.name}: names not accepted: ${refused.message ?? ''}`);
      if (established) break;
      if (Date.now() > deadline) throw new ClusterSetupError(`CRD ${crd.metadata.name} was not Established within ${timeoutMs / 1000}s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return plan.map((p) => p.crd.metadata.name);
}

/**
 * The webhooks Skiff serves on a cluster: `namespace` keeps their CA, and `serve` starts the HTTPS
 * listener with a certificate the CA signs and says where the API server reaches it.
 */
export interface WebhookSetup {
  namespace: string;
  serve(ca: WebhookCa): Promise<WebhookEndpoint>;
}

/** Probe, access, CRDs (and the webhooks): what `skiff up --kubeconfig` does before its store starts. */
export async function prepareCluster(http: KubeHttp, defs: readonly KindDef[], log: (m: string) => void, extraAccess: readonly AccessNeed[] = [], webhooks?: WebhookSetup): Promise<ClusterInfo> {
  const version = await probeCluster(http);
  await checkAccess(http, defs, [...extraAccess, ...(webhooks ? webhookAccessNeeds(webhooks.namespace) : [])]);
  let endpoint: WebhookEndpoint | undefined;
  if (webhooks) {
    let ca: WebhookCa;
    try {
      ca = await webhookCa(http, webhooks.namespace);
    } catch (e) {
      throw new ClusterSetupError(`cannot read or make the webhooks' CA (Secret ${webhooks.namespace}/${webhookCaSecret}): ${(e as Error).message}`);
    }
    endpoint = await webhooks.serve(ca);
  }
  const installed = await installCrds(http, defs, log, 120_000, endpoint);
  if (endpoint) await registerValidatingWebhook(http, defs, endpoint, log);
  return { version, installed, ...(endpoint ? { webhooks: endpoint } : {}) };
}

/** the ValidatingWebhookConfiguration at `endpoint`, created or upgraded in place */
export async function registerValidatingWebhook(http: KubeHttp, defs: readonly KindDef[], endpoint: WebhookEndpoint, log: (m: string) => void): Promise<void> {
  const config = validatingWebhookConfiguration(defs, endpoint);
  try {
    if (await installValidatingWebhook(http, config)) log(`kubernetes: ValidatingWebhookConfiguration ${config.metadata.name} registered at ${'url' in endpoint.client ? endpoint.client.url : `service ${endpoint.client.service.namespace}/${endpoint.client.service.name}`} (failurePolicy Fail)`);
  } catch (e) {
    throw new ClusterSetupError(`cannot register ValidatingWebhookConfiguration ${config.metadata.name}: ${(e as Error).message}`);
  }
}

export function isClusterSetupError(e: unknown): e is ClusterSetupError {
  return e instanceof ClusterSetupError || (isPlainObject(e) && (e as { name?: unknown }).name === 'ClusterSetupError');
}
