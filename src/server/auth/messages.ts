// The words kube-apiserver answers a refused request with (k8s.io/apiserver's responsewriters
// forbiddenMessage and apierrors.NewForbidden, and the authentication filter's 401), so kubectl and
// the Kubernetes clients print what they print against a cluster:
//   Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"
import { ApiError, StatusReason } from '../../api/errors.js';
import type { Attributes } from './types.js';

/** `User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"` */
export function forbiddenMessage(a: Attributes): string {
  const user = a.user.username;
  if (!a.resource) return `User ${JSON.stringify(user)} cannot ${a.nonResource.verb} path ${JSON.stringify(a.nonResource.path)}`;
  const r = a.resource;
  const resource = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
  const where = r.namespace ? `in the namespace ${JSON.stringify(r.namespace)}` : 'at the cluster scope';
  return `User ${JSON.stringify(user)} cannot ${r.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(r.apiGroup)} ${where}`;
}

/**
 * The 403 for a refused request, as apierrors.NewForbidden builds it: the message is prefixed by the
 * resource (qualified by its group, without the subresource) and the name when there is one, and the
 * details carry {name, group, kind} with the plural as the kind. `reason` is the authorizer's, when
 * it gave one.
 */
export function forbidden(a: Attributes, reason?: string): ApiError {
  const msg = reason ? `${forbiddenMessage(a)}: ${reason}` : forbiddenMessage(a);
  if (!a.resource) return new ApiError(StatusReason.Forbidden, `forbidden: ${msg}`);
  const r = a.resource;
  const qualified = r.apiGroup ? `${r.resource}.${r.apiGroup}` : r.resource;
  const head = r.name ? `${qualified} ${JSON.stringify(r.name)} is forbidden` : `${qualified} is forbidden`;
  const details = { ...(r.name ? { name: r.name } : {}), ...(r.apiGroup ? { group: r.apiGroup } : {}), ...(r.resource ? { kind: r.resource } : {}) };
  return new ApiError(StatusReason.Forbidden, `${head}: ${msg}`, details);
}

/** kube-apiserver's answer to a request whose credentials prove nothing: no details at all */
export class UnauthorizedError extends ApiError {
  constructor() {
    super(StatusReason.Unauthorized, 'Unauthorized');
  }

  override toStatus(): Record<string, unknown> {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };
  }
}

/** the same 403, by the name the review and impersonation code use */
export const forbiddenError = forbidden;
