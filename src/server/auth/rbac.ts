// Kubernetes RBAC, evaluated as kube-apiserver's RBAC authorizer evaluates it
// (plugin/pkg/auth/authorizer/rbac): a request is allowed when some binding that names the user, one
// of their groups or their service account refers to a role with a rule matching the request.
// ClusterRoleBindings grant everywhere, RoleBindings in their own namespace; nothing denies.
// Members of system:masters are allowed everything before RBAC is asked, as kube-apiserver's
// privileged-group authorizer does. Policy is read from the informer cache, so authorize() never
// waits on the store.
import type { KObject } from '../../api/meta.js';
import { ClusterRoleBindingKind, ClusterRoleKind, RoleBindingKind, RoleKind } from '../../api/rbac.js';
import type { InformerCache } from '../../control/informer.js';
import type { Attributes, Authorizer, Decision, ResourceAttributes, SubjectRules, UserInfo } from './types.js';

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

interface RoleRef {
  apiGroup: string;
  kind: string;
  name: string;
}

/** where the authorizer reads policy: the informer cache in the server, a fixed list in tests */
export interface PolicySource {
  role(namespace: string, name: string): KObject | undefined;
  clusterRole(name: string): KObject | undefined;
  clusterRoleBindings(): KObject[];
  roleBindings(namespace: string): KObject[];
}

/** policy as the informers hold it: each kind is listed once and then followed by its watch */
export function informerPolicy(cache: InformerCache): PolicySource {
  return {
    role: (namespace, name) => cache.get(RoleKind, { namespace, name }),
    clusterRole: (name) => cache.get(ClusterRoleKind, { name }),
    clusterRoleBindings: () => cache.list(ClusterRoleBindingKind),
    roleBindings: (namespace) => cache.list(RoleBindingKind, { namespace }),
  };
}

/** policy from a fixed set of objects (tests, and answering "what would this policy allow") */
export function staticPolicy(objects: KObject[]): PolicySource {
  const of = (kind: string): KObject[] => objects.filter((o) => o.kind === kind);
  return {
    role: (namespace, name) => of('Role').find((o) => o.metadata.namespace === namespace && o.metadata.name === name),
    clusterRole: (name) => of('ClusterRole').find((o) => o.metadata.name === name),
    clusterRoleBindings: () => of('ClusterRoleBinding'),
    roleBindings: (namespace) => of('RoleBinding').filter((o) => o.metadata.namespace === namespace),
  };
}

export const mastersGroup = 'system:masters';
const saPrefix = 'system:serviceaccount:';

/** `system:serviceaccount:<ns>:<name>` split, or undefined for any other user name */
export function serviceAccountOf(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(saPrefix)) return undefined;
  const [namespace, name, ...more] = username.slice(saPrefix.length).split(':');
  if (!namespace || !name || more.length > 0) return undefined;
  return { namespace, name };
}

const has = (list: string[] | undefined, want: string): boolean => (list ?? []).some((x) => x === '*' || x === want);

// rule.resources against `pods` or `pods/log`: `*` matches all, `*/log` any resource's log subresource
function resourceMatches(rule: PolicyRule, r: ResourceAttributes): boolean {
  const combined = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
  return (rule.resources ?? []).some((x) => x === '*' || x === combined || (r.subresource !== undefined && r.subresource !== '' && x === `*/${r.subresource}`));
}

/** a URL rule is exact, `*`, or a prefix ending in `*` */
function urlMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some((u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))));
}

/** whether one rule allows the request, as rbac's RuleAllows decides */
export function ruleAllows(a: Attributes, rule: PolicyRule): boolean {
  if (a.nonResource) return has(rule.verbs, a.nonResource.verb) && urlMatches(rule, a.nonResource.path);
  const r = a.resource;
  if (!has(rule.verbs, r.verb) || !has(rule.apiGroups, r.apiGroup) || !resourceMatches(rule, r)) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (r.name !== undefined && names.includes(r.name));
}

/** whether a binding's subject is this user (a ServiceAccount subject defaults to the binding's namespace) */
export function subjectMatches(s: Subject, user: UserInfo, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return s.name === user.username;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNamespace;
      return ns !== '' && user.username === `${saPrefix}${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  // kube-apiserver's describeSubject writes a service account as name/namespace
  if (s.kind === 'ServiceAccount') return `${s.kind} "${s.name}/${s.namespace || bindingNamespace}"`;
  return `${s.kind} "${s.name}"`;
}

const rulesOf = (role: KObject | undefined): PolicyRule[] => (Array.isArray(role?.rules) ? (role.rules as PolicyRule[]) : []);
const subjectsOf = (binding: KObject): Subject[] => (Array.isArray(binding.subjects) ? (binding.subjects as Subject[]) : []);

/** a visitor sees each rule that applies with the words naming where it came from; true stops the walk */
type Visitor = (source: string, rule: PolicyRule) => boolean;

export class RbacAuthorizer implements Authorizer {
  constructor(private readonly policy: PolicySource) {}

  authorize(a: Attributes): Decision {
    if (a.user.groups.includes(mastersGroup)) return { allowed: true };
    let reason: string | undefined;
    const errors = this.visit(a.user, a.resource?.namespace, (source, rule) => {
      if (!ruleAllows(a, rule)) return false;
      reason = `RBAC: allowed by ${source}`;
      return true;
    });
    if (reason) return { allowed: true, reason };
    // RBAC has no opinion on what nothing grants; a missing role is worth saying
    return errors.length > 0 ? { allowed: false, reason: `RBAC: ${aggregate(errors)}` } : { allowed: false };
  }

  rulesFor(user: UserInfo, namespace: string): SubjectRules {
    const out: SubjectRules = { resourceRules: [], nonResourceRules: [], incomplete: false };
    const errors = this.visit(user, namespace || undefined, (_source, rule) => {
      if ((rule.resources ?? []).length > 0) {
        out.resourceRules.push({ verbs: rule.verbs, apiGroups: rule.apiGroups ?? [], resources: rule.resources ?? [], ...(rule.resourceNames?.length ? { resourceNames: rule.resourceNames } : {}) });
      }
      if ((rule.nonResourceURLs ?? []).length > 0) out.nonResourceRules.push({ verbs: rule.verbs, nonResourceURLs: rule.nonResourceURLs ?? [] });
      return false;
    });
    if (errors.length > 0) {
      out.incomplete = true;
      out.evaluationError = aggregate(errors);
    }
    return out;
  }

  /** walks the rules bound to the user: cluster-wide first, then the namespace's; returns what could not be resolved */
  private visit(user: UserInfo, namespace: string | undefined, visitor: Visitor): string[] {
    const errors: string[] = [];
    for (const b of this.policy.clusterRoleBindings()) {
      const subject = subjectsOf(b).find((s) => subjectMatches(s, user, ''));
      if (!subject) continue;
      const ref = b.roleRef as RoleRef;
      const role = ref.kind === 'ClusterRole' ? this.policy.clusterRole(ref.name) : undefined;
      if (!role) {
        errors.push(`clusterrole.rbac.authorization.k8s.io "${ref.name}" not found`);
        continue;
      }
      const source = `ClusterRoleBinding "${b.metadata.name}" of ClusterRole "${ref.name}" to ${describeSubject(subject, '')}`;
      for (const rule of rulesOf(role)) if (visitor(source, rule)) return errors;
    }
    if (namespace === undefined) return errors;
    for (const b of this.policy.roleBindings(namespace)) {
      const subject = subjectsOf(b).find((s) => subjectMatches(s, user, namespace));
      if (!subject) continue;
      const ref = b.roleRef as RoleRef;
      const role = ref.kind === 'Role' ? this.policy.role(namespace, ref.name) : this.policy.clusterRole(ref.name);
      if (!role) {
        errors.push(`${ref.kind.toLowerCase()}.rbac.authorization.k8s.io "${ref.name}" not found`);
        continue;
      }
      const source = `RoleBinding "${b.metadata.name}/${namespace}" of ${ref.kind} "${ref.name}" to ${describeSubject(subject, namespace)}`;
      for (const rule of rulesOf(role)) if (visitor(source, rule)) return errors;
    }
    return errors;
  }
}

/** several errors as Kubernetes' utilerrors aggregate prints them */
function aggregate(errors: string[]): string {
  return errors.length === 1 ? (errors[0] as string) : `[${errors.join(', ')}]`;
}
