// The CustomResourceDefinitions that make a cluster serve Skiff's kinds: Kubeflow's upstream schemas
// where Skiff carries them (src/api/schemas/openapi.json: the Training Operator's, KServe's, Kueue's,
// Profile's, Notebook's), an open schema for the rest (Skiff's own kinds, KFP's, Katib's, whose
// upstream CRDs are open too, and MPIJob's two versions), with the subresources and printer columns
// Skiff's kind table declares. Skiff validates every write
// itself before the cluster sees it, so an open schema loses no checking; an upstream one adds the
// cluster's own for kubectl users who write to the cluster directly.
import { createHash } from 'node:crypto';
import type { KindDef } from '../../api/registry.js';
import { schemaCatalog } from '../../api/openapi-schemas.js';
import type { SchemaNode } from '../../api/openapi-schemas.js';
import { compareVersions, isBuiltInGroup } from './paths.js';

export const managedByLabel = 'app.kubernetes.io/managed-by';
export const managedBy = 'skiff';
/** the hash of the spec Skiff wrote: a CRD whose hash differs from the one Skiff would write is upgraded */
export const specHashAnnotation = 'skiff.dev/crd-spec-hash';

export interface CrdVersionSpec {
  name: string;
  served: boolean;
  storage: boolean;
  schema: { openAPIV3Schema: SchemaNode };
  subresources?: { status?: Record<string, never>; scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string } };
  additionalPrinterColumns?: { name: string; type: string; jsonPath: string; format?: string; description?: string; priority?: number }[];
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string>; resourceVersion?: string };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames?: string[] };
    scope: 'Namespaced' | 'Cluster';
    versions: CrdVersionSpec[];
    conversion: { strategy: 'None' } | { strategy: 'Webhook'; webhook: { clientConfig: Record<string, unknown>; conversionReviewVersions: string[] } };
  };
}

/** where the API server calls Skiff's webhooks: a URL outside the cluster, the Service in it */
export type WebhookClientConfig = { url: string } | { service: { namespace: string; name: string; port: number } };

export interface WebhookEndpoint {
  /** the base of the webhooks' address: `url` without a path, or the Service (a path is added per webhook) */
  client: WebhookClientConfig;
  /** PEM of the CA that signs every replica's serving certificate */
  caPem: string;
}

export const convertPath = '/convert';

/** a client config for one path of the endpoint, as the API server takes it (caBundle base64) */
export function clientConfigFor(endpoint: WebhookEndpoint, path: string): Record<string, unknown> {
  const caBundle = Buffer.from(endpoint.caPem).toString('base64');
  if ('url' in endpoint.client) return { url: `${endpoint.client.url.replace(/\/$/, '')}${path}`, caBundle };
  return { service: { ...endpoint.client.service, path }, caBundle };
}

const openSchema: SchemaNode = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

/**
 * The CRDs for every kind in `defs` that Kubernetes does not serve itself. Versions Skiff converts
 * (Kueue's v1beta1) are served by the cluster through Skiff's conversion webhook at `conversion`
 * (src/server/kube/webhooks.ts), stored in the version they convert to; without it they are left out
 * (Skiff's object client converts them before the cluster sees them; kubectl pointed at the cluster
 * could not use them).
 */
export function crdsFor(defs: readonly KindDef[], conversion?: WebhookEndpoint): CustomResourceDefinition[] {
  const byResource = new Map<string, KindDef[]>();
  for (const d of defs) {
    if (isBuiltInGroup(d.group) || (d.conversion && !conversion)) continue;
    const k = `${d.plural}.${d.group}`;
    byResource.set(k, [...(byResource.get(k) ?? []), d]);
  }
  const catalog = schemaCatalog();
  const out: CustomResourceDefinition[] = [];
  for (const [name, group] of [...byResource].sort(([a], [b]) => a.localeCompare(b))) {
    const versions = [...group].sort((a, b) => compareVersions(a.version, b.version));
    const stored = versions.filter((d) => !d.conversion);
    const first = stored[0] as KindDef;
    const converted = versions.some((d) => d.conversion);
    // Several versions without a conversion share one stored form (as the local store keeps them):
    // upstream schemas that differ between versions would prune each other's fields, so those stay
    // open (MPIJob's v1 and v2beta1); versions whose upstream schema is the same (Profile's,
    // Notebook's) lose nothing by it and get it.
    // Versions converted by the webhook are stored apart and keep their own upstream schemas.
    const upstreams = versions.map((d) => catalog.crd(d.group, d.version, d.kind)?.schema);
    const unconverted = upstreams.filter((_, i) => !versions[i]?.conversion);
    const shared = unconverted.every((u) => u !== undefined && JSON.stringify(u) === JSON.stringify(unconverted[0]));
    const spec: CustomResourceDefinition['spec'] = {
      group: first.group,
      names: { kind: first.kind, listKind: `${first.kind}List`, plural: first.plural, singular: first.singular, ...(first.shortNames?.length ? { shortNames: [...first.shortNames] } : {}) },
      scope: first.namespaced ? 'Namespaced' : 'Cluster',
      versions: versions.map((d, i): CrdVersionSpec => {
        const upstream = d.conversion || shared ? upstreams[i] : undefined;
        const v: CrdVersionSpec = { name: d.version, served: true, storage: d === first, schema: { openAPIV3Schema: upstream ?? openSchema } };
        const sub: NonNullable<CrdVersionSpec['subresources']> = {};
        if (d.hasStatus) sub.status = {};
        if (d.scale) sub.scale = { ...d.scale };
        if (sub.status || sub.scale) v.subresources = sub;
        if (d.printerColumns?.length) {
          v.additionalPrinterColumns = d.printerColumns.map((c) => ({ name: c.name, type: c.type, jsonPath: c.jsonPath, ...(c.format ? { format: c.format } : {}), ...(c.description ? { description: c.description } : {}), ...(c.priority ? { priority: c.priority } : {}) }));
        }
        return v;
      }),
      conversion: converted && conversion
        ? { strategy: 'Webhook', webhook: { clientConfig: clientConfigFor(conversion, convertPath), conversionReviewVersions: ['v1'] } }
        : { strategy: 'None' },
    };
    out.push({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name, labels: { [managedByLabel]: managedBy }, annotations: { [specHashAnnotation]: specHash(spec) } },
      spec,
    });
  }
  return out;
}

export function specHash(spec: unknown): string {
  return createHash('sha256').update(JSON.stringify(spec)).digest('hex').slice(0, 32);
}
