// Where a kind's objects live on a Kubernetes API server.
import type { ResourceRef } from '../store.js';

/** Kubernetes' own API groups: served by kube-apiserver itself, never by a CRD Skiff installs. */
export function isBuiltInGroup(group: string): boolean {
  return group === '' || !group.includes('.') || group.endsWith('.k8s.io');
}

function groupPath(res: Pick<ResourceRef, 'group' | 'version'>): string {
  return res.group ? `/apis/${res.group}/${res.version}` : `/api/${res.version}`;
}

/** the collection: all namespaces' when `namespace` is absent */
export function collectionPath(res: ResourceRef, namespace?: string): string {
  return res.namespaced && namespace
    ? `${groupPath(res)}/namespaces/${encodeURIComponent(namespace)}/${res.plural}`
    : `${groupPath(res)}/${res.plural}`;
}

export function objectPath(res: ResourceRef, namespace: string | undefined, name: string, subresource?: string): string {
  return `${collectionPath(res, res.namespaced ? namespace : undefined)}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}`;
}

/** `pytorchjobs.kubeflow.org`, `pods`: the name RBAC and messages use */
export function qualifiedResource(res: Pick<ResourceRef, 'group' | 'plural'>): string {
  return res.group ? `${res.plural}.${res.group}` : res.plural;
}

/**
 * Kubernetes' version priority (GA before beta before alpha, then the higher number): the order
 * kubectl prefers versions in, and the version a CRD with several stores in.
 */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [0, 0, 0];
    const level = m[2] === 'alpha' ? 1 : m[2] === 'beta' ? 2 : 3;
    return [level, Number(m[1]), Number(m[3] ?? 0)];
  };
  const [la, ma, na] = rank(a);
  const [lb, mb, nb] = rank(b);
  return lb - la || mb - ma || nb - na || a.localeCompare(b);
}
