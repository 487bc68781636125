// Who the dashboard is signed in as. With tenancy on, Skiff answers 401 to a request without
// credentials: the dashboard then asks for a token (one line of the server's --token-auth-file, or
// an OIDC ID token), keeps it for this tab, and sends it with every request. Behind a trusted proxy
// that names the user, nothing is asked: the first request is already answered.
//
// The token is kept in sessionStorage, not localStorage: a Skiff token does not expire (a token
// file's lines live until the file changes), so it should not outlive the browser session on a
// shared machine, and it is not handed to every other tab of the origin; a link opened from the
// dashboard in a new tab still gets a copy of it (browsers copy sessionStorage to tabs they open).

export const TOKEN_KEY = 'skiff-token';
/** the protocol that carries a bearer token on a WebSocket, which browsers cannot give headers (kube's) */
export const TOKEN_PROTOCOL = 'base64url.bearer.authorization.k8s.io.';
/** the stream mux's protocol, sent beside the token's so the server has one to choose */
export const STREAMS_PROTOCOL = 'skiff.streams.v1';

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
}

/** the tab's session storage, or none (a browser that refuses storage: the token lasts the page) */
function storage(): Storage | undefined {
  try {
    return typeof sessionStorage === 'undefined' ? undefined : sessionStorage;
  } catch {
    return undefined;
  }
}

export function storedToken(store: Storage | undefined = storage()): string | undefined {
  return store?.getItem(TOKEN_KEY) || undefined;
}

export function storeToken(token: string | undefined, store: Storage | undefined = storage()): void {
  if (!store) return;
  if (token) store.setItem(TOKEN_KEY, token);
  else store.removeItem(TOKEN_KEY);
}

/** a pasted token as it is sent: without the `Bearer ` a user may have copied with it, or blanks */
export function cleanToken(input: string): string {
  return input.trim().replace(/^bearer\s+/i, '').trim();
}

/** the WebSocket protocols that carry `token` (base64url without padding: `=` may not appear in a protocol) */
export function wsProtocols(token: string | undefined): string[] | undefined {
  if (!token) return undefined;
  const bytes = new TextEncoder().encode(token);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  const b64 = btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  return [STREAMS_PROTOCOL, TOKEN_PROTOCOL + b64];
}

export type WhoAmI = { user: UserInfo } | { unauthorized: true; message: string };

/**
 * Who `token` (or, without one, whatever the browser's request carries: a proxy's user) is, from
 * kube's SelfSubjectReview (`kubectl auth whoami`). 401: not signed in. A server that does not serve
 * the review (an older Skiff) is taken to be single-user.
 */
export async function whoAmI(token: string | undefined, fetchFn: typeof fetch = fetch): Promise<WhoAmI> {
  const res = await fetchFn('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
  });
  const text = await res.text();
  let body: { message?: string; status?: { userInfo?: { username?: string; uid?: string; groups?: string[] } } } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    /* not JSON */
  }
  if (res.status === 401) return { unauthorized: true, message: body.message ?? 'Unauthorized' };
  const u = body.status?.userInfo;
  if (!res.ok || !u?.username) return { user: { username: '', groups: [] } };
  return { user: { username: u.username, ...(u.uid ? { uid: u.uid } : {}), groups: u.groups ?? [] } };
}

export interface KfamBinding {
  user?: { kind?: string; name?: string };
  referredNamespace?: string;
  RoleRef?: { kind?: string; name?: string };
  roleRef?: { kind?: string; name?: string };
}

/** the namespaces KFAM's bindings give `user`, sorted (the owner's own `admin` binding among them) */
export function namespacesOf(bindings: KfamBinding[], user: string): string[] {
  const out = new Set<string>();
  for (const b of bindings) if (b.user?.name === user && b.referredNamespace) out.add(b.referredNamespace);
  return [...out].sort();
}

export type ContributorRole = 'owner' | 'edit' | 'view';

/** `admin` (the owner's binding, made by the Profile), `kubeflow-edit`, `view`… in the dashboard's words */
export function roleOf(b: KfamBinding): ContributorRole | undefined {
  const r = (b.RoleRef ?? b.roleRef)?.name?.replace(/^kubeflow-/, '');
  return r === 'admin' ? 'owner' : r === 'edit' || r === 'view' ? r : undefined;
}

export interface Contributor {
  user: string;
  role: ContributorRole;
}

/** a namespace's people: the owner first, then contributors by name */
export function contributorsOf(bindings: KfamBinding[], namespace: string): Contributor[] {
  const out: Contributor[] = [];
  for (const b of bindings) {
    const role = roleOf(b);
    if (b.referredNamespace !== namespace || !b.user?.name || !role) continue;
    out.push({ user: b.user.name, role });
  }
  return out.sort((a, b) => (a.role === 'owner' ? 0 : 1) - (b.role === 'owner' ? 0 : 1) || a.user.localeCompare(b.user) || a.role.localeCompare(b.role));
}

/** what the contributor form would send, or why not: KFAM wants an email-like user and edit or view */
export function contributorProblem(email: string, existing: Contributor[]): string | undefined {
  const e = email.trim();
  if (!e) return 'Enter the contributor\'s email (their user name in Skiff).';
  if (/\s/.test(e)) return 'A user name has no spaces.';
  if (existing.some((c) => c.user === e && c.role === 'owner')) return `${e} owns this namespace already.`;
  return undefined;
}

/** headers for a request made outside the API client (artifact previews, inference tries) */
export function authHeaders(): Record<string, string> {
  const t = storedToken();
  return t ? { authorization: `Bearer ${t}` } : {};
}

/** where the server keeps the dashboard's token as the notebook servers' HttpOnly cookie */
export const NOTEBOOK_SESSION = '/notebook/_session';

/**
 * Gives the notebook servers the tab's token (or, with none, takes it back): a new tab opened on a
 * notebook cannot send an Authorization header, so the server sets an HttpOnly cookie that only the
 * notebook proxy believes. Best effort: without it, Connect answers 401 and the dashboard still works.
 */
export async function shareWithNotebooks(token: string | undefined, fetchFn: typeof fetch = fetch): Promise<void> {
  try {
    await fetchFn(NOTEBOOK_SESSION, token ? { method: 'POST', headers: { authorization: `Bearer ${token}` }, credentials: 'same-origin' } : { method: 'DELETE', credentials: 'same-origin' });
  } catch {
    /* the server is unreachable: the next sign-in tries again */
  }
}
