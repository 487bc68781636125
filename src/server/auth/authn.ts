// Who a request is from, with tenancy on: the authenticators kube-apiserver has, tried as it tries
// them. A bearer token (the Authorization header, or a WebSocket's `base64url.bearer.authorization.k8s.io.`
// protocol) is looked up in the --token-auth-file, or checked as one of Skiff's own service-account
// and kubeconfig tokens, or as an ID token of the configured OIDC issuer; without a token, a trusted
// proxy's `kubeflow-userid` header names the user, as in Kubeflow behind its gateway. A request with
// neither is `system:anonymous`; one whose token proves nothing is refused by the caller (401).
import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { tokenIssuer, type Identity, type ServiceAccountTokens } from '../kube/tokens.js';
import { podNetwork } from '../../substrate/local/network.js';
import type { UserInfo } from './types.js';

export const anonymousUser: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
const authenticated = 'system:authenticated';

// ---------------------------------------------------------------------------------------------
// --token-auth-file

/**
 * Records of a CSV file as Go's encoding/csv reads them (which kube-apiserver uses for its token
 * file): fields split by commas, a field in double quotes may hold commas, newlines and `""` for a
 * quote; blank lines are skipped; a quote inside an unquoted field is an error.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let i = 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    // a blank line is no record
    if (text[i] === '\n' || (text[i] === '\r' && text[i + 1] === '\n')) {
      i += text[i] === '\r' ? 2 : 1;
      line++;
      continue;
    }
    const record: string[] = [];
    for (;;) {
      let field = '';
      if (text[i] === '"') {
        const start = line;
        i++;
        for (;;) {
          if (i >= n) throw new Error(`line ${start}: a quoted field is not closed`);
          const c = text[i] as string;
          if (c === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (c === '\n') line++;
          // Go's reader turns \r\n inside a quoted field into \n
          if (c === '\r' && text[i + 1] === '\n') {
            i++;
            continue;
          }
          field += c;
          i++;
        }
        if (i < n && text[i] !== ',' && text[i] !== '\n' && !(text[i] === '\r' && text[i + 1] === '\n')) {
          throw new Error(`line ${line}: extraneous or missing " in quoted field`);
        }
      } else {
        while (i < n && text[i] !== ',' && text[i] !== '\n' && !(text[i] === '\r' && text[i + 1] === '\n')) {
          if (text[i] === '"') throw new Error(`line ${line}: bare " in non-quoted field`);
          field += text[i];
          i++;
        }
      }
      record.push(field);
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '\r') i++;
      if (text[i] === '\n') {
        i++;
        line++;
      }
      break;
    }
    records.push(record);
  }
  return records;
}

/**
 * kube-apiserver's --token-auth-file: `token,user,uid,"group1,group2"` a line. A record needs the
 * first three columns; an empty token is skipped and a repeated token's last record wins, as kube's
 * tokenfile authenticator does (it only warns of both).
 */
export function parseTokenFile(text: string, file = 'token file'): { users: Map<string, UserInfo>; warnings: string[] } {
  let records: string[][];
  try {
    records = parseCsv(text);
  } catch (e) {
    throw new Error(`${file}: ${(e as Error).message}`);
  }
  const users = new Map<string, UserInfo>();
  const warnings: string[] = [];
  records.forEach((r, i) => {
    if (r.length < 3) throw new Error(`token file '${file}' must have at least 3 columns (token, user name, user uid), found ${r.length}`);
    const [token = '', username = '', uid = ''] = r;
    if (token === '') return void warnings.push(`empty token has been found in token file '${file}', record number '${i + 1}'`);
    if (users.has(token)) warnings.push(`duplicate token has been found in token file '${file}', record number '${i + 1}'`);
    const groups = r.length >= 4 ? (r[3] as string).split(',').filter((g) => g !== '') : [];
    users.set(token, { username, ...(uid ? { uid } : {}), groups });
  });
  return { users, warnings };
}

// ---------------------------------------------------------------------------------------------
// OIDC ID tokens

export interface OidcOptions {
  /** --oidc-issuer-url: the `iss` every token must carry */
  issuerUrl: string;
  /** --oidc-client-id: an audience every token must carry */
  clientId: string;
  /** --oidc-username-claim (default `sub`) */
  usernameClaim?: string;
  /** --oidc-username-prefix: `-` for none; by default `<issuer>#` unless the claim is `email` */
  usernamePrefix?: string;
  /** --oidc-groups-claim: a string or a list of strings */
  groupsClaim?: string;
  /** --oidc-groups-prefix */
  groupsPrefix?: string;
  /** the issuer's keys as a JWKS document; without it they are found through the issuer's discovery document */
  jwksFile?: string;
  /** --oidc-signing-algs (default RS256, as kube-apiserver's) */
  signingAlgs?: string[];
}

export class OidcAuthenticator {
  private keys: JWTVerifyGetKey | undefined;
  private discovering: Promise<JWTVerifyGetKey> | undefined;

  constructor(readonly opts: OidcOptions, private readonly fetchJson: (url: string) => Promise<unknown> = defaultFetchJson) {
    if (!opts.issuerUrl) throw new Error('--oidc-issuer-url: an issuer is needed');
    if (!opts.clientId) throw new Error('--oidc-client-id: needed with --oidc-issuer-url');
    if (opts.jwksFile) {
      let doc: JSONWebKeySet;
      try {
        doc = JSON.parse(readFileSync(opts.jwksFile, 'utf8')) as JSONWebKeySet;
      } catch (e) {
        throw new Error(`--oidc-jwks-file ${opts.jwksFile}: ${(e as Error).message}`);
      }
      if (!doc || !Array.isArray(doc.keys)) throw new Error(`--oidc-jwks-file ${opts.jwksFile}: not a JWKS document ({"keys": [...]})`);
      this.keys = createLocalJWKSet(doc);
    } else if (!opts.issuerUrl.startsWith('https://')) {
      // kube-apiserver insists too: keys fetched over plain HTTP could be anyone's
      throw new Error(`--oidc-issuer-url ${opts.issuerUrl}: keys are fetched only from an https:// issuer (or give --oidc-jwks-file)`);
    }
  }

  /** the issuer's keys: the file's, or the `jwks_uri` of its discovery document (fetched once; again after a failure) */
  private getKeys(): Promise<JWTVerifyGetKey> {
    if (this.keys) return Promise.resolve(this.keys);
    this.discovering ??= (async () => {
      const doc = await this.fetchJson(`${this.opts.issuerUrl.replace(/\/$/, '')}/.well-known/openid-configuration`) as { issuer?: unknown; jwks_uri?: unknown };
      if (doc?.issuer !== this.opts.issuerUrl) throw new Error(`the discovery document names issuer ${JSON.stringify(doc?.issuer)}, not ${this.opts.issuerUrl}`);
      if (typeof doc.jwks_uri !== 'string') throw new Error('the discovery document has no jwks_uri');
      this.keys = createRemoteJWKSet(new URL(doc.jwks_uri));
      return this.keys;
    })();
    this.discovering.catch(() => (this.discovering = undefined));
    return this.discovering;
  }

  /** the user an ID token names; throws saying why it names nobody */
  async verify(token: string): Promise<UserInfo> {
    const keys = await this.getKeys();
    const { payload } = await jwtVerify(token, keys, { issuer: this.opts.issuerUrl, audience: this.opts.clientId, algorithms: this.opts.signingAlgs ?? ['RS256'] });
    return this.userOf(payload);
  }

  private userOf(c: JWTPayload): UserInfo {
    const claim = this.opts.usernameClaim ?? 'sub';
    const name = c[claim];
    if (typeof name !== 'string' || name === '') throw new Error(`oidc: the username claim ${JSON.stringify(claim)} is not a string`);
    // an unverified email names nobody (kube-apiserver checks email_verified only when it is present)
    if (claim === 'email' && c.email_verified !== undefined && c.email_verified !== true) throw new Error(`oidc: email ${JSON.stringify(name)} is not verified`);
    const prefix = this.opts.usernamePrefix === '-' ? '' : this.opts.usernamePrefix ?? (claim === 'email' ? '' : `${this.opts.issuerUrl}#`);
    const groups: string[] = [];
    if (this.opts.groupsClaim && c[this.opts.groupsClaim] !== undefined) {
      const g = c[this.opts.groupsClaim];
      const list = typeof g === 'string' ? [g] : Array.isArray(g) && g.every((x) => typeof x === 'string') ? (g as string[]) : undefined;
      if (!list) throw new Error(`oidc: the groups claim ${JSON.stringify(this.opts.groupsClaim)} is neither a string nor a list of strings`);
      for (const x of list) groups.push(`${this.opts.groupsPrefix ?? ''}${x}`);
    }
    return { username: `${prefix}${name}`, groups: [...groups, authenticated] };
  }
}

async function defaultFetchJson(url: string): Promise<unknown> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return res.json();
}

// ---------------------------------------------------------------------------------------------
// trusted proxies

/** the peer's address as a plain IPv4 address when it is an IPv4-mapped IPv6 one */
function plainAddress(a: string | undefined): string | undefined {
  if (!a) return undefined;
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  return m ? m[1] : a;
}

/** a set of CIDRs (`10.0.0.0/8`, `::1/128`, or a single address) */
export class AddressSet {
  private readonly list = new BlockList();
  readonly size: number;

  constructor(readonly cidrs: string[]) {
    for (const c of cidrs) {
      const [addr = '', bits] = c.trim().split('/');
      const family = isIP(addr);
      if (family === 0) throw new Error(`${JSON.stringify(c)} is not an address or a CIDR`);
      const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
      if (!/^\d+$/.test(bits ?? '0') || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) throw new Error(`${JSON.stringify(c)}: the prefix length is not valid`);
      this.list.addSubnet(addr, prefix, family === 4 ? 'ipv4' : 'ipv6');
    }
    this.size = cidrs.length;
  }

  has(address: string | undefined): boolean {
    const a = plainAddress(address);
    const family = a ? isIP(a) : 0;
    if (!a || family === 0) return false;
    return this.list.check(a, family === 4 ? 'ipv4' : 'ipv6');
  }
}

const pods = new AddressSet([podNetwork]);

// ---------------------------------------------------------------------------------------------

export interface AuthnOptions {
  /** --token-auth-file */
  tokenAuthFile?: string;
  oidc?: OidcOptions;
  /** --trusted-proxy: peers whose user header is believed */
  trustedProxies?: string[];
  /** the header naming the user (Kubeflow's USERID_HEADER, default `kubeflow-userid`) */
  userIdHeader?: string;
  /** what the header's value starts with before the user's name (USERID_PREFIX, default empty) */
  userIdPrefix?: string;
  /** the header naming the user's groups, comma-separated (default `kubeflow-groups`, as Kubeflow 1.9's gateway sets it) */
  groupsHeader?: string;
  /**
   * Whether a request came from a Pod, beyond the Pod addresses this knows: Skiff's Pod-facing
   * listeners. A Pod's header is never believed, whatever its address.
   */
  fromPod?: (req: IncomingMessage) => boolean;
}

export type AuthnResult =
  | { user: UserInfo; anonymous?: false }
  | { user: UserInfo; anonymous: true }
  /** credentials that prove nothing: the request is answered 401 unless its path is open to all */
  | { failure: string };

/** the WebSocket subprotocol clients put a bearer token in when they cannot set headers */
const wsTokenProtocol = 'base64url.bearer.authorization.k8s.io.';

// ---------------------------------------------------------------------------------------------
// the notebook cookie

/**
 * A browser's navigation to a notebook (a new tab, JupyterLab's own requests and WebSockets) cannot
 * carry an Authorization header, so the dashboard has the server keep its token in an HttpOnly cookie
 * scoped to `/notebook/`. It is believed there only: a cookie rides along on every request to the
 * origin, so accepting it on the API would let any page the user visits act as them (request forgery).
 */
export const notebookCookie = 'skiff-notebook-token';
/** where the dashboard POSTs its token (Authorization header) to get the cookie, and DELETEs it */
export const notebookSessionPath = '/notebook/_session';

/**
 * Whether a request's cookie may name its user: its path is under `/notebook/` as the proxy routes it
 * (the raw path) and as a URL resolves it (dot segments, `%2e`), so `/notebook/../api/` is not.
 */
export function cookiePath(url: string): boolean {
  const raw = url.split('?')[0] ?? '';
  if (!raw.startsWith('/notebook/')) return false;
  let resolved: string;
  try {
    resolved = new URL(raw, 'http://skiff.local').pathname;
  } catch {
    return false;
  }
  return resolved.startsWith('/notebook/');
}

/** the value of cookie `name` in a Cookie header (the first, as browsers send the most specific path first) */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim()) || undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** the notebook cookie's token, on the paths where it counts */
export function notebookCookieToken(req: IncomingMessage): string | undefined {
  if (!cookiePath(req.url ?? '/')) return undefined;
  return cookieValue(req.headers.cookie, notebookCookie);
}

/** The authenticators of a tenant server, in kube-apiserver's order. */
export class Authenticator {
  private readonly tokens = new Map<string, UserInfo>();
  private readonly oidc: OidcAuthenticator | undefined;
  private readonly proxies: AddressSet;
  /** Skiff's own tokens (Pods' service accounts, the kubeconfig's user): known once the in-cluster endpoint is up */
  serviceAccounts: ServiceAccountTokens | undefined;
  /** as kube-apiserver checks a bound token: why it no longer holds (its Pod or service account is gone
   *  or was made anew), or undefined while it does */
  boundObjectsGone: ((id: Identity) => string | undefined) | undefined;
  readonly warnings: string[] = [];

  constructor(readonly opts: AuthnOptions) {
    if (opts.tokenAuthFile) {
      let text: string;
      try {
        text = readFileSync(opts.tokenAuthFile, 'utf8');
      } catch (e) {
        throw new Error(`--token-auth-file: ${(e as Error).message}`);
      }
      const { users, warnings } = parseTokenFile(text, opts.tokenAuthFile);
      for (const [t, u] of users) this.tokens.set(t, { ...u, groups: [...u.groups, authenticated] });
      this.warnings.push(...warnings);
    }
    this.oidc = opts.oidc ? new OidcAuthenticator(opts.oidc) : undefined;
    try {
      this.proxies = new AddressSet(opts.trustedProxies ?? []);
    } catch (e) {
      throw new Error(`--trusted-proxy: ${(e as Error).message}`);
    }
  }

  /** users in the token file */
  get tokenUsers(): number {
    return this.tokens.size;
  }

  /** how the server knows its users, for the start-up banner */
  describe(): string {
    const ways: string[] = [];
    if (this.opts.tokenAuthFile) ways.push(`tokens from ${this.opts.tokenAuthFile} (${this.tokens.size} user${this.tokens.size === 1 ? '' : 's'})`);
    if (this.oidc) ways.push(`OIDC ID tokens from ${this.oidc.opts.issuerUrl} for client ${this.oidc.opts.clientId}`);
    if (this.proxies.size) ways.push(`the ${this.opts.userIdHeader ?? 'kubeflow-userid'} header from ${this.proxies.cidrs.join(', ')}`);
    ways.push('service-account tokens and the kubeconfig\'s token');
    return ways.join('; ');
  }

  /** the bearer token of a request, as kube-apiserver's bearertoken and websocket authenticators find it */
  static bearerToken(req: IncomingMessage): string | undefined {
    const auth = (req.headers.authorization ?? '').trim();
    if (auth) {
      // `Bearer <token>`: anything else (Basic, a bare token) carries no token
      const parts = auth.split(' ');
      if (parts.length >= 2 && (parts[0] as string).toLowerCase() === 'bearer' && parts[1]) return parts[1];
      return undefined;
    }
    const protocols = req.headers['sec-websocket-protocol'];
    if (typeof protocols === 'string' && (req.headers.upgrade ?? '').toLowerCase() === 'websocket') {
      const list = protocols.split(',').map((p) => p.trim());
      const p = list.find((x) => x.startsWith(wsTokenProtocol));
      if (p) {
        // the token's protocol is no protocol the server speaks: it is taken out, as kube-apiserver does
        const rest = list.filter((x) => !x.startsWith(wsTokenProtocol));
        if (rest.length) req.headers['sec-websocket-protocol'] = rest.join(', ');
        else delete req.headers['sec-websocket-protocol'];
        try {
          const t = Buffer.from(p.slice(wsTokenProtocol.length), 'base64url').toString('utf8');
          return t || undefined;
        } catch {
          return undefined;
        }
      }
    }
    return undefined;
  }

  /** whether a request came from a Pod: its address, or one of the listeners only Pods use */
  isFromPod(req: IncomingMessage): boolean {
    return pods.has(req.socket?.remoteAddress) || (this.opts.fromPod?.(req) ?? false);
  }

  async authenticate(req: IncomingMessage): Promise<AuthnResult> {
    const token = Authenticator.bearerToken(req) ?? notebookCookieToken(req);
    if (token !== undefined) {
      try {
        return { user: await this.byToken(token) };
      } catch (e) {
        return { failure: (e as Error).message };
      }
    }
    const viaProxy = this.byHeader(req);
    if (viaProxy) return { user: viaProxy };
    return { user: anonymousUser, anonymous: true };
  }

  /** the user a bearer token names, for surfaces that are not HTTP/1 requests (Katib's gRPC DBManager); throws when it names nobody */
  userOfToken(token: string): Promise<UserInfo> {
    return this.byToken(token);
  }

  private async byToken(token: string): Promise<UserInfo> {
    const fromFile = this.tokens.get(token);
    if (fromFile) return fromFile;
    // a JWT: who issued it says which authenticator can check it
    let claims: JWTPayload;
    try {
      claims = decodeJwt(token);
    } catch {
      throw new Error('invalid bearer token');
    }
    if (claims.iss === tokenIssuer && this.serviceAccounts) {
      // Skiff's tokens are for its API: one requested for another audience (TokenRequest's audiences) is not
      const aud = claims.aud === undefined ? undefined : Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      if (aud && !aud.includes(tokenIssuer)) throw new Error('token audiences do not include the API server');
      const id = this.serviceAccounts.verify(token);
      const gone = this.boundObjectsGone?.(id);
      if (gone) throw new Error(`token has been invalidated: ${gone}`);
      const extra: Record<string, string[]> = {};
      if (id.pod) {
        extra['authentication.kubernetes.io/pod-name'] = [id.pod.name];
        extra['authentication.kubernetes.io/pod-uid'] = [id.pod.uid];
      }
      if (typeof claims.jti === 'string') extra['authentication.kubernetes.io/credential-id'] = [`JTI=${claims.jti}`];
      return { username: id.user, ...(id.serviceAccount?.uid ? { uid: id.serviceAccount.uid } : {}), groups: id.groups, ...(Object.keys(extra).length ? { extra } : {}) };
    }
    if (this.oidc && claims.iss === this.oidc.opts.issuerUrl) return this.oidc.verify(token);
    throw new Error('invalid bearer token');
  }

  /** the user a trusted proxy names, when this request came through one (and not from a Pod) */
  private byHeader(req: IncomingMessage): UserInfo | undefined {
    if (this.proxies.size === 0) return undefined;
    const name = (this.opts.userIdHeader ?? 'kubeflow-userid').toLowerCase();
    const raw = req.headers[name];
    if (typeof raw !== 'string' || raw === '') return undefined;
    if (!this.proxies.has(req.socket?.remoteAddress) || this.isFromPod(req)) return undefined;
    const prefix = this.opts.userIdPrefix ?? '';
    if (!raw.startsWith(prefix)) return undefined;
    const username = raw.slice(prefix.length).trim();
    if (!username) return undefined;
    const g = req.headers[(this.opts.groupsHeader ?? 'kubeflow-groups').toLowerCase()];
    const groups = typeof g === 'string' ? g.split(',').map((x) => x.trim()).filter((x) => x !== '') : [];
    return { username, groups: [...groups, authenticated] };
  }
}

/** paths every caller may reach, signed in or not: health, version, and the dashboard's files (its sign-in
 *  page), with `/pipeline/`, which only sends a browser there (the links an in-cluster kfp.Client() prints) */
export function isOpenPath(path: string): boolean {
  if (['/healthz', '/readyz', '/livez'].some((p) => path === p || path.startsWith(`${p}/`))) return true;
  if (path === '/version' || path === '/version/') return true;
  return path === '/' || path === '/ui' || path.startsWith('/ui/') || path === '/pipeline' || path === '/pipeline/';
}
