// Who a request is from and what it asks to do, as Kubernetes' authentication and authorization
// layers see them (k8s.io/apiserver's user.Info and authorizer.Attributes). Authentication finds the
// user of a request (src/server/auth/authn*.ts); authorization decides each request from the RBAC
// objects in the store (src/server/auth/rbac*.ts). Without tenancy every request is `localUser`, a
// cluster admin, as a kind or minikube kubeconfig's user is.
import type { IncomingMessage } from 'node:http';

/** a user as Kubernetes' user.Info: `system:serviceaccount:<ns>:<sa>` for a Pod's service account */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** what a request to a resource asks, as kube-apiserver's RequestInfo names it */
export interface ResourceAttributes {
  /** get, list, watch, create, update, patch, delete, deletecollection (and proxy, use, bind, escalate, impersonate) */
  verb: string;
  /** '' for the core group */
  apiGroup: string;
  /** the plural: `pods`, `experiments` */
  resource: string;
  /** `log`, `exec`, `portforward`, `status`, `scale`, … */
  subresource?: string;
  /** absent for cluster-scoped resources and for requests across all namespaces */
  namespace?: string;
  name?: string;
}

/** a request to a path that names no resource (`/healthz`, `/apis`, `/openapi/v3`, `/ui/`) */
export interface NonResourceAttributes {
  /** get, post, put, patch, delete, head */
  verb: string;
  path: string;
}

export type Attributes = { user: UserInfo } & ({ resource: ResourceAttributes; nonResource?: undefined } | { nonResource: NonResourceAttributes; resource?: undefined });

export interface Decision {
  allowed: boolean;
  /** why, in words a user can act on (RBAC: which binding allowed it) */
  reason?: string;
}

/** the rules a user has in a namespace, as SelfSubjectRulesReview answers them */
export interface SubjectRules {
  resourceRules: { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] }[];
  nonResourceRules: { verbs: string[]; nonResourceURLs?: string[] }[];
  incomplete: boolean;
  evaluationError?: string;
}

export interface Authorizer {
  authorize(a: Attributes): Decision;
  rulesFor(user: UserInfo, namespace: string): SubjectRules;
}

/** the one local user when tenancy is off */
export const localUser: UserInfo = { username: 'skiff-admin', groups: ['system:masters', 'system:authenticated'] };

/** what every caller may do when tenancy is off */
export const allowAll: Authorizer = {
  authorize: () => ({ allowed: true, reason: 'tenancy is off: every caller may do everything' }),
  rulesFor: () => ({ resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }], incomplete: false }),
};

const users = new WeakMap<IncomingMessage, UserInfo>();

/** set once by authentication, before the request is routed */
export function setRequestUser(req: IncomingMessage, user: UserInfo): void {
  users.set(req, user);
}

/** the request's user: `localUser` when authentication did not run (tenancy off) */
export function requestUser(req: IncomingMessage): UserInfo {
  return users.get(req) ?? localUser;
}
