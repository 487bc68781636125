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
    conversion: { strategy: 'None' };
  };
}

const openSchema: SchemaNode = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

/**
 * The CRDs for every kind in `defs` that Kubernetes does not serve itself. Versions Skiff converts
 * (Kueue's v1beta1) are left out: Skiff's object client converts them to the stored version before
 * the cluster sees them, and a cluster without Kueue's conversion webhook could not.
 */
export function crdsFor(defs: readonly KindDef[]): CustomResourceDefinition[] {
  const byResource = new Map<string, KindDef[]>();
  for (const d of defs) {
    if (isBuiltInGroup(d.group) || d.conversion) continue;
    const k = `${d.plural}.${d.group}`;
    byResource.set(k, [...(byResource.get(k) ?? []), d]);
  }
  const catalog = schemaCatalog();
  const out: CustomResourceDefinition[] = [];
  for (const [name, group] of [...byResource].sort(([a], [b]) => a.localeCompare(b))) {
    const versions = [...group].sort((a, b) => compareVersions(a.version, b.version));
    const first = versions[0] as KindDef;
    // Several versions without a conversion share one stored form (as the local store keeps them):
    // upstream schemas that differ between versions would prune each other's fields, so those stay
    // open (MPIJob's v1 and v2beta1); versions whose upstream schema is the same (Profile's,
    // Notebook's) lose nothing by it and get it.
    const upstreams = versions.map((d) => catalog.crd(d.group, d.version, d.kind)?.schema);
    const shared = upstreams.every((u) => u !== undefined && JSON.stringify(u) === JSON.stringify(upstreams[0]));
    const spec: CustomResourceDefinition['spec'] = {
      group: first.group,
      names: { kind: first.kind, listKind: `${first.kind}List`, plural: first.plural, singular: first.singular, ...(first.shortNames?.length ? { shortNames: [...first.shortNames] } : {}) },
      scope: first.namespaced ? 'Namespaced' : 'Cluster',
      versions: versions.map((d, i): CrdVersionSpec => {
        const upstream = shared ? upstreams[i] : undefined;
        const v: CrdVersionSpec = { name: d.version, served: true, storage: i === 0, schema: { openAPIV3Schema: upstream ?? openSchema } };
        const sub: NonNullable<CrdVersionSpec['subresources']> = {};
        if (d.hasStatus) sub.status = {};
        if (d.scale) sub.scale = { ...d.scale };
        if (sub.status || sub.scale) v.subresources = sub;
        if (d.printerColumns?.length) {
          v.additionalPrinterColumns = d.printerColumns.map((c) => ({ name: c.name, type: c.type, jsonPath: c.jsonPath, ...(c.format ? { format: c.format } : {}), ...(c.description ? { description: c.description } : {}), ...(c.priority ? { priority: c.priority } : {}) }));
        }
        return v;
      }),
      conversion: { strategy: 'None' },
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
