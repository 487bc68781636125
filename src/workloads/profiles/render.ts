// What a Profile makes in its namespace, as Kubeflow's profile-controller makes it: the owner's
// `namespaceAdmin` RoleBinding to kubeflow-admin, the `default-editor` and `default-viewer`
// ServiceAccounts bound to kubeflow-edit and kubeflow-view, and `kf-resource-quota` from
// spec.resourceQuotaSpec. Every object is controlled by the Profile, so deleting it takes them along.
import type { KObject, StoredObject } from '../../api/meta.js';
import { ownerRefTo } from '../../api/meta.js';
import type { ProfileObject, ProfileSubject } from '../../api/profiles.js';

const rbacGroup = 'rbac.authorization.k8s.io';

export const ProfileNames = {
  ownerBinding: 'namespaceAdmin',
  quota: 'kf-resource-quota',
  editor: 'default-editor',
  viewer: 'default-viewer',
  finalizer: 'profile-finalizer',
  admin: 'kubeflow-admin',
  edit: 'kubeflow-edit',
  view: 'kubeflow-view',
} as const;

/** The labels every profile namespace gets (upstream's namespace-labels.yaml with the manifests' additions). */
export const defaultNamespaceLabels: Readonly<Record<string, string>> = {
  'istio-injection': 'enabled',
  'app.kubernetes.io/part-of': 'kubeflow-profile',
  'katib.kubeflow.org/metrics-collector-injection': 'enabled',
  'serving.kubeflow.org/inferenceservice': 'enabled',
  'pipelines.kubeflow.org/enabled': 'true',
  'pod-security.kubernetes.io/enforce': 'baseline',
};

/**
 * Namespace labels after adding the defaults: a label already there is never overwritten, and a
 * default whose value is "" removes the label (upstream's setNamespaceLabels).
 */
export function withDefaultLabels(labels: Record<string, string> | undefined, defaults: Readonly<Record<string, string>> = defaultNamespaceLabels): Record<string, string> {
  const out = { ...(labels ?? {}) };
  for (const [k, v] of Object.entries(defaults)) {
    if (v === '') delete out[k];
    else if (!(k in out)) out[k] = v;
  }
  return out;
}

/** a subject as RBAC stores it: a User or Group gets rbac.authorization.k8s.io, as the API defaults it */
export function rbacSubject(s: ProfileSubject): ProfileSubject {
  if (s.kind === 'ServiceAccount') return { kind: s.kind, name: s.name, ...(s.namespace ? { namespace: s.namespace } : {}) };
  return { kind: s.kind, apiGroup: s.apiGroup || rbacGroup, name: s.name };
}

export function renderNamespace(profile: StoredObject & ProfileObject): KObject {
  return {
    apiVersion: 'v1', kind: 'Namespace',
    metadata: {
      name: profile.metadata.name,
      annotations: { owner: profile.spec?.owner?.name ?? '' },
      labels: withDefaultLabels({}),
      ownerReferences: [ownerRefTo(profile)],
    },
  };
}

/** the objects inside the namespace, without the quota (see renderQuota) */
export function renderNamespaced(profile: StoredObject & ProfileObject): KObject[] {
  const ns = profile.metadata.name;
  const owner = profile.spec?.owner;
  const ownerRefs = [ownerRefTo(profile)];
  const binding = (name: string, role: string, subject: ProfileSubject, annotations?: Record<string, string>): KObject => ({
    apiVersion: `${rbacGroup}/v1`, kind: 'RoleBinding',
    metadata: { name, namespace: ns, ownerReferences: ownerRefs, ...(annotations ? { annotations } : {}) },
    roleRef: { apiGroup: rbacGroup, kind: 'ClusterRole', name: role },
    subjects: [subject],
  });
  const sa = (name: string): KObject => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns, ownerReferences: ownerRefs } });
  return [
    sa(ProfileNames.editor),
    sa(ProfileNames.viewer),
    binding(ProfileNames.editor, ProfileNames.edit, { kind: 'ServiceAccount', name: ProfileNames.editor, namespace: ns }),
    binding(ProfileNames.viewer, ProfileNames.view, { kind: 'ServiceAccount', name: ProfileNames.viewer, namespace: ns }),
    ...(owner ? [binding(ProfileNames.ownerBinding, ProfileNames.admin, rbacSubject(owner), { user: owner.name, role: 'admin' })] : []),
  ];
}

/** the ResourceQuota, or undefined when spec.resourceQuotaSpec.hard is empty (and any quota must go) */
export function renderQuota(profile: StoredObject & ProfileObject): KObject | undefined {
  const spec = profile.spec?.resourceQuotaSpec;
  if (!spec?.hard || Object.keys(spec.hard).length === 0) return undefined;
  return {
    apiVersion: 'v1', kind: 'ResourceQuota',
    metadata: { name: ProfileNames.quota, namespace: profile.metadata.name, ownerReferences: [ownerRefTo(profile)] },
    spec,
  };
}
