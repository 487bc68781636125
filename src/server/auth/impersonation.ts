// User impersonation (`kubectl --as alice --as-group g`), as kube-apiserver's impersonation filter:
// the Impersonate-User, Impersonate-Group, Impersonate-Uid and Impersonate-Extra-<key> headers ask to
// act as someone else, and each part is checked against the real user's `impersonate` permission
// (users, groups, serviceaccounts in core; uids and userextras in authentication.k8s.io).
import type { IncomingMessage } from 'node:http';
import { ApiError, StatusReason } from '../../api/errors.js';
import { forbiddenError } from './messages.js';
import { serviceAccountOf } from './rbac.js';
import type { Authorizer, ResourceAttributes, UserInfo } from './types.js';

const decided = new WeakMap<IncomingMessage, UserInfo>();

function values(req: IncomingMessage, header: string): string[] {
  // distinct, so a group whose name holds a comma is not split
  return (req.headersDistinct[header] ?? []).filter((v) => v !== '');
}

/**
 * The user a request acts as: `user` itself when it asks to impersonate no one, else the user it
 * names, once `user` is found allowed to impersonate each part. Refusals are kube-apiserver's 403
 * (`users "alice" is forbidden: User "bob" cannot impersonate resource "users" …`). Deciding twice
 * for one request gives the first answer, so the request path and a handler may both call it.
 */
export function impersonate(req: IncomingMessage, user: UserInfo, authorizer: Authorizer): UserInfo {
  const seen = decided.get(req);
  if (seen) return seen;
  const username = values(req, 'impersonate-user')[0];
  const groups = values(req, 'impersonate-group');
  const uid = values(req, 'impersonate-uid')[0];
  const extra: Record<string, string[]> = {};
  for (const h of Object.keys(req.headersDistinct)) {
    if (!h.startsWith('impersonate-extra-')) continue;
    extra[decodeURIComponent(h.slice('impersonate-extra-'.length)).toLowerCase()] = values(req, h);
  }
  if (username === undefined) {
    if (groups.length > 0 || uid !== undefined || Object.keys(extra).length > 0) {
      throw new ApiError(StatusReason.BadRequest, 'requested impersonation of groups, a uid or extra fields without impersonating a user: set Impersonate-User too');
    }
    return user;
  }
  const check = (resource: Omit<ResourceAttributes, 'verb'>): void => {
    const a = { user, resource: { verb: 'impersonate', ...resource } };
    const d = authorizer.authorize(a);
    if (!d.allowed) throw forbiddenError(a, d.reason);
  };
  const sa = serviceAccountOf(username);
  if (sa) check({ apiGroup: '', resource: 'serviceaccounts', namespace: sa.namespace, name: sa.name });
  else check({ apiGroup: '', resource: 'users', name: username });
  for (const g of groups) check({ apiGroup: '', resource: 'groups', name: g });
  if (uid !== undefined) check({ apiGroup: 'authentication.k8s.io', resource: 'uids', name: uid });
  for (const [key, vals] of Object.entries(extra)) for (const v of vals) check({ apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: key, name: v });
  // a service account's groups follow from its name when none are asked for
  const asGroups = groups.length > 0 || !sa ? [...groups] : ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`];
  const implied = username === 'system:anonymous' ? 'system:unauthenticated' : 'system:authenticated';
  if (!asGroups.includes(implied)) asGroups.push(implied);
  const as: UserInfo = { username, groups: asGroups, ...(uid !== undefined ? { uid } : {}), ...(Object.keys(extra).length > 0 ? { extra } : {}) };
  decided.set(req, as);
  return as;
}
