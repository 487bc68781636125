// KFAM, Kubeflow's access-management API (components/access-management), which the central dashboard
// calls to list a user's namespaces and to add or remove contributors: /kfam/v1/bindings,
// /kfam/v1/profiles, /kfam/v1/role/clusteradmin. A contributor is a RoleBinding named
// `user-<escaped email>-clusterrole-<role>` to ClusterRole kubeflow-<role>, annotated `user` and
// `role`, as KFAM makes it. Unlike upstream, where anyone who reaches KFAM may change any namespace's
// bindings, a change here needs the namespace's owner or a cluster admin (system:masters).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason, isNotFound } from '../api/errors.js';
import type { KObject, StoredObject } from '../api/meta.js';
import { ProfileKind } from '../api/profiles.js';
import type { ProfileObject } from '../api/profiles.js';
import { ClusterRoleBindingKind, RoleBindingKind } from '../api/rbac.js';
import type { Client } from '../store/client.js';
import type { UserInfo } from './auth/types.js';
import { requestUser } from './auth/types.js';
import { readBody, send } from './body.js';

const rbacGroup = 'rbac.authorization.k8s.io';
const roles = ['admin', 'edit', 'view'] as const;
type Role = (typeof roles)[number];

export interface KfamSubject { kind?: string; name?: string; namespace?: string }
export interface KfamRoleRef { apiGroup?: string; kind?: string; name?: string }
export interface KfamBinding {
  user?: KfamSubject;
  referredNamespace?: string;
  RoleRef?: KfamRoleRef;
  /** the dashboard and hand-written clients also send it lower-cased */
  roleRef?: KfamRoleRef;
  status?: string;
}

/** `kubeflow-edit` and `edit` both name the edit role */
function roleOf(name: string | undefined): Role | undefined {
  const short = name?.replace(/^kubeflow-/, '');
  return roles.find((r) => r === short);
}

/** KFAM's getBindingName: kind, escaped name, role kind and role, joined and lower-cased */
export function bindingName(user: string, role: Role): string {
  return `user-${user.replace(/[^a-zA-Z0-9]/g, '-')}-clusterrole-${role}`.toLowerCase();
}

function isClusterAdmin(user: UserInfo): boolean {
  return user.groups.includes('system:masters');
}

export class Kfam {
  constructor(private readonly client: Client) {}

  handles(path: string): boolean {
    return path === '/kfam' || path.startsWith('/kfam/');
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL, path: string): Promise<void> {
    const method = req.method ?? 'GET';
    const caller = requestUser(req);
    if (path === '/kfam/v1/bindings') {
      if (method === 'GET') return send(res, 200, { bindings: await this.list(url.searchParams) });
      if (method === 'POST' || method === 'DELETE') {
        const b = await body<KfamBinding>(req);
        await (method === 'POST' ? this.addBinding(caller, b) : this.removeBinding(caller, b));
        return send(res, 200, {});
      }
    }
    if (path === '/kfam/v1/profiles' && method === 'POST') {
      await this.createProfile(caller, await body<ProfileObject>(req));
      return send(res, 200, {});
    }
    const profile = /^\/kfam\/v1\/profiles\/([^/]+)$/.exec(path)?.[1];
    if (profile && method === 'DELETE') {
      await this.ownerOrAdmin(caller, decodeURIComponent(profile));
      await this.client.delete(ProfileKind, { name: decodeURIComponent(profile) });
      return send(res, 200, {});
    }
    if (path === '/kfam/v1/role/clusteradmin' && method === 'GET') return send(res, 200, await this.queryClusterAdmin(caller, url.searchParams.get('user') ?? ''));
    throw new ApiError(StatusReason.NotFound, `the server could not find the requested resource (${method} ${path})`);
  }

  /** every binding KFAM made (or the Profile controller: the owner's `admin`), filtered as asked */
  async list(q: URLSearchParams): Promise<KfamBinding[]> {
    const user = q.get('user');
    const namespace = q.get('namespace');
    const role = q.get('role');
    const items = await this.client.listAll(RoleBindingKind, namespace ? { namespace } : {});
    const out: KfamBinding[] = [];
    for (const rb of items) {
      const a = rb.metadata.annotations ?? {};
      const r = roleOf(a.role);
      if (!a.user || !r) continue;
      if (user && a.user !== user) continue;
      if (role && roleOf(role) !== r) continue;
      out.push({ user: { kind: 'User', name: a.user }, referredNamespace: rb.metadata.namespace ?? '', RoleRef: { kind: 'ClusterRole', name: r }, status: 'Succeeded' });
    }
    return out;
  }

  private parse(b: KfamBinding): { user: string; namespace: string; role: Role } {
    const ref = b.RoleRef ?? b.roleRef;
    const user = b.user?.name;
    if (!user) throw new ApiError(StatusReason.BadRequest, 'binding.user.name is required');
    if (!b.referredNamespace) throw new ApiError(StatusReason.BadRequest, 'binding.referredNamespace is required');
    if (ref?.kind !== undefined && ref.kind !== 'ClusterRole') throw new ApiError(StatusReason.BadRequest, `binding.RoleRef.kind: Unsupported value: "${ref.kind}": supported values: "ClusterRole"`);
    const role = roleOf(ref?.name);
    // the owner's admin binding belongs to the Profile; contributors edit or view
    if (role !== 'edit' && role !== 'view') throw new ApiError(StatusReason.BadRequest, `binding.RoleRef.name: Unsupported value: "${ref?.name ?? ''}": supported values: "kubeflow-edit", "kubeflow-view"`);
    return { user, namespace: b.referredNamespace, role };
  }

  /** the namespace's Profile, when the caller owns it or is a cluster admin; 403 otherwise */
  private async ownerOrAdmin(caller: UserInfo, namespace: string): Promise<StoredObject & ProfileObject> {
    let profile: StoredObject & ProfileObject;
    try {
      profile = await this.client.get<ProfileObject>(ProfileKind, { name: namespace });
    } catch (e) {
      if (isNotFound(e)) throw new ApiError(StatusReason.NotFound, `profiles.kubeflow.org "${namespace}" not found`, { name: namespace, group: 'kubeflow.org', kind: 'profiles' });
      throw e;
    }
    if (!isClusterAdmin(caller) && profile.spec?.owner?.name !== caller.username) {
      throw new ApiError(StatusReason.Forbidden, `User "${caller.username}" cannot change the contributors of namespace "${namespace}": only its owner or a cluster admin may`, { name: namespace, kind: 'rolebindings', group: rbacGroup });
    }
    return profile;
  }

  async addBinding(caller: UserInfo, b: KfamBinding): Promise<void> {
    const { user, namespace, role } = this.parse(b);
    await this.ownerOrAdmin(caller, namespace);
    const rb: KObject = {
      apiVersion: `${rbacGroup}/v1`, kind: 'RoleBinding',
      metadata: { name: bindingName(user, role), namespace, annotations: { user, role } },
      roleRef: { apiGroup: rbacGroup, kind: 'ClusterRole', name: `kubeflow-${role}` },
      subjects: [{ apiGroup: rbacGroup, kind: 'User', name: user }],
    };
    try {
      await this.client.create(rb);
    } catch (e) {
      if (!(e instanceof ApiError && e.reason === StatusReason.AlreadyExists)) throw e;
    }
  }

  async removeBinding(caller: UserInfo, b: KfamBinding): Promise<void> {
    const { user, namespace, role } = this.parse(b);
    await this.ownerOrAdmin(caller, namespace);
    try {
      await this.client.delete(RoleBindingKind, { namespace, name: bindingName(user, role) });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  async createProfile(caller: UserInfo, p: ProfileObject): Promise<void> {
    const owner = p.spec?.owner;
    // a user registers a namespace for themself; only a cluster admin makes one for someone else
    if (!isClusterAdmin(caller) && owner?.name !== caller.username) {
      throw new ApiError(StatusReason.Forbidden, `User "${caller.username}" cannot create a profile owned by "${owner?.name ?? ''}"`, { name: p.metadata?.name ?? '', group: 'kubeflow.org', kind: 'profiles' });
    }
    await this.client.create({ ...p, apiVersion: 'kubeflow.org/v1', kind: 'Profile' });
  }

  /** whether `user` is bound to cluster-admin (or is the caller and in system:masters) */
  async queryClusterAdmin(caller: UserInfo, user: string): Promise<boolean> {
    if (user === caller.username && isClusterAdmin(caller)) return true;
    const bindings = await this.client.listAll(ClusterRoleBindingKind);
    return bindings.some((b) => (b.roleRef as KfamRoleRef | undefined)?.name === 'cluster-admin'
      && ((b.subjects ?? []) as KfamSubject[]).some((s) => s.kind === 'User' && s.name === user));
  }
}

async function body<T>(req: IncomingMessage): Promise<T> {
  const buf = await readBody(req);
  try {
    const v = JSON.parse(buf.toString('utf8')) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not an object');
    return v as T;
  } catch (e) {
    throw new ApiError(StatusReason.BadRequest, `the request body is not a JSON object: ${(e as Error).message}`);
  }
}

