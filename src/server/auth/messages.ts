// The words kube-apiserver answers a refused request with (k8s.io/apiserver's responsewriters
// forbiddenMessage and apierrors.NewForbidden), in one place so every surface that refuses says it
// the same way and clients that parse or print it (kubectl, the Python client) see what a cluster says.
import { ApiError, StatusReason } from '../../api/errors.js';
import type { Attributes } from './types.js';

/** `User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"` */
export function forbiddenMessage(a: Attributes): string {
  const user = a.user.username;
  if (a.nonResource) return `User "${user}" cannot ${a.nonResource.verb} path "${a.nonResource.path}"`;
  const r = a.resource;
  const resource = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
  const where = r.namespace ? `in the namespace "${r.namespace}"` : 'at the cluster scope';
  return `User "${user}" cannot ${r.verb} resource "${resource}" in API group "${r.apiGroup}" ${where}`;
}

/**
 * The 403 a refused request gets: `pods "x" is forbidden: User …`, with the authorizer's reason
 * after a colon when it gave one. Details name the resource (not the subresource) as kube-apiserver's do.
 */
export function forbiddenError(a: Attributes, reason?: string): ApiError {
  const why = reason ? `${forbiddenMessage(a)}: ${reason}` : forbiddenMessage(a);
  if (a.nonResource) return new ApiError(StatusReason.Forbidden, `forbidden: ${why}`, {});
  const r = a.resource;
  const qualified = r.apiGroup ? `${r.resource}.${r.apiGroup}` : r.resource;
  const message = r.name ? `${qualified} "${r.name}" is forbidden: ${why}` : `${qualified} is forbidden: ${why}`;
  return new ApiError(StatusReason.Forbidden, message, { ...(r.name ? { name: r.name } : {}), ...(r.apiGroup ? { group: r.apiGroup } : {}), kind: r.resource });
}
