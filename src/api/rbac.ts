// rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding, ClusterRoleBinding, validated as
// kube-apiserver validates them (a binding's roleRef cannot change; subjects name a User, Group or
// ServiceAccount). What they allow is decided in src/server/auth/.
import type { KObject } from './meta.js';
import type { KindDef } from './registry.js';
import { Validator } from './validation.js';

const group = 'rbac.authorization.k8s.io';

function validateRules(v: Validator, rules: unknown, clusterScoped: boolean): void {
  if (rules === undefined || rules === null) return;
  if (!v.array('rules', rules)) return;
  rules.forEach((r: unknown, i: number) => {
    const at = `rules[${i}]`;
    if (!v.object(at, r, true)) return;
    const verbs = r.verbs as unknown;
    if (!Array.isArray(verbs) || verbs.length === 0) v.required(`${at}.verbs`, 'verbs must contain at least one value');
    else v.stringArray(`${at}.verbs`, verbs);
    for (const f of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) v.stringArray(`${at}.${f}`, r[f]);
    const hasResources = Array.isArray(r.resources) && r.resources.length > 0;
    const hasUrls = Array.isArray(r.nonResourceURLs) && r.nonResourceURLs.length > 0;
    if (hasUrls && !clusterScoped) v.invalid(`${at}.nonResourceURLs`, r.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs');
    if (hasUrls && hasResources) v.invalid(`${at}.nonResourceURLs`, r.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs');
    if (hasResources && !Array.isArray(r.apiGroups)) v.required(`${at}.apiGroups`, 'resource rules must supply at least one api group');
    if (!hasResources && !hasUrls) v.required(`${at}.resources`, 'resource rules must supply at least one resource');
  });
}

function validateBinding(v: Validator, obj: KObject, old: KObject | undefined, clusterScoped: boolean): void {
  const ref = obj.roleRef as Record<string, unknown> | undefined;
  if (v.object('roleRef', ref, true) && ref) {
    if (ref.apiGroup !== group) v.notSupported('roleRef.apiGroup', ref.apiGroup, [group]);
    const kinds = clusterScoped ? ['ClusterRole'] : ['Role', 'ClusterRole'];
    if (!kinds.includes(ref.kind as string)) v.notSupported('roleRef.kind', ref.kind, kinds);
    if (typeof ref.name !== 'string' || !ref.name) v.required('roleRef.name');
  }
  if (old && JSON.stringify(old.roleRef) !== JSON.stringify(obj.roleRef)) v.invalid('roleRef', obj.roleRef, 'cannot change roleRef');
  const subjects = obj.subjects as unknown;
  if (subjects === undefined || subjects === null || !v.array('subjects', subjects)) return;
  subjects.forEach((s: unknown, i: number) => {
    const at = `subjects[${i}]`;
    if (!v.object(at, s, true)) return;
    if (typeof s.name !== 'string' || !s.name) v.required(`${at}.name`);
    switch (s.kind) {
      case 'ServiceAccount':
        if (s.apiGroup !== undefined && s.apiGroup !== '') v.notSupported(`${at}.apiGroup`, s.apiGroup, ['']);
        if (clusterScoped && !s.namespace) v.required(`${at}.namespace`);
        break;
      case 'User':
      case 'Group':
        if (s.apiGroup !== group) v.notSupported(`${at}.apiGroup`, s.apiGroup, [group]);
        break;
      default:
        v.notSupported(`${at}.kind`, s.kind, ['ServiceAccount', 'User', 'Group']);
    }
  });
}

export const RoleKind: KindDef = {
  group, version: 'v1', kind: 'Role', plural: 'roles', singular: 'role', namespaced: true, hasStatus: false,
  validate(obj) {
    const v = new Validator();
    validateRules(v, obj.rules, false);
    return v.errors;
  },
};

export const ClusterRoleKind: KindDef = {
  group, version: 'v1', kind: 'ClusterRole', plural: 'clusterroles', singular: 'clusterrole', namespaced: false, hasStatus: false,
  validate(obj) {
    const v = new Validator();
    validateRules(v, obj.rules, true);
    const agg = obj.aggregationRule as Record<string, unknown> | undefined;
    if (agg !== undefined && v.object('aggregationRule', agg, true) && agg) {
      if (!Array.isArray(agg.clusterRoleSelectors) || agg.clusterRoleSelectors.length === 0) v.required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil');
    }
    return v.errors;
  },
};

export const RoleBindingKind: KindDef = {
  group, version: 'v1', kind: 'RoleBinding', plural: 'rolebindings', singular: 'rolebinding', namespaced: true, hasStatus: false,
  validate(obj, old) {
    const v = new Validator();
    validateBinding(v, obj, old, false);
    return v.errors;
  },
};

export const ClusterRoleBindingKind: KindDef = {
  group, version: 'v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', singular: 'clusterrolebinding', namespaced: false, hasStatus: false,
  validate(obj, old) {
    const v = new Validator();
    validateBinding(v, obj, old, true);
    return v.errors;
  },
};

export const rbacKinds: KindDef[] = [RoleKind, ClusterRoleKind, RoleBindingKind, ClusterRoleBindingKind];
