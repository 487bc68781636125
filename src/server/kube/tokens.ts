// Service-account tokens in the form kube-apiserver issues them (bound tokens: a JWT naming the
// namespace, service account and Pod), signed with the PKI's token key. Until tenancy arrives the API
// accepts any bearer token; `authenticate` is what it will call to learn who a request is from.
import { randomUUID, type KeyObject } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { JwtError, signJwt, verifyJwt } from '../../util/jwt.js';

/** the issuer and audience of tokens, as a cluster's default --service-account-issuer */
export const tokenIssuer = 'https://kubernetes.default.svc.cluster.local';

export interface TokenSubject {
  namespace: string;
  serviceAccount: string;
  serviceAccountUid?: string;
  pod?: { name: string; uid: string };
  node?: string;
  /** how long the token is good for (a Pod's: a year) */
  expirationSeconds?: number;
  audiences?: string[];
}

/** who a request is from */
export interface Identity {
  /** `system:serviceaccount:<ns>:<name>` or the user's name */
  user: string;
  groups: string[];
  serviceAccount?: { namespace: string; name: string; uid?: string };
  pod?: { name: string; uid: string };
}

// Kubernetes extends tokens given to Pods to a year (--service-account-extend-token-expiration), so a
// Pod that never re-reads its token file keeps working; Skiff writes the file once per Pod.
const podTokenSeconds = 365 * 24 * 3600;

export class ServiceAccountTokens {
  constructor(private readonly key: { privateKey: KeyObject; publicKey: KeyObject }) {}

  /** a token for a Pod's service account, bound to the Pod */
  issue(s: TokenSubject, nowSeconds = Math.floor(Date.now() / 1000)): string {
    const k8s: Record<string, unknown> = {
      namespace: s.namespace,
      serviceaccount: { name: s.serviceAccount, ...(s.serviceAccountUid ? { uid: s.serviceAccountUid } : {}) },
    };
    if (s.pod) k8s.pod = s.pod;
    if (s.node) k8s.node = { name: s.node };
    return signJwt({
      aud: s.audiences ?? [tokenIssuer], iss: tokenIssuer, sub: `system:serviceaccount:${s.namespace}:${s.serviceAccount}`,
      iat: nowSeconds, nbf: nowSeconds, exp: nowSeconds + (s.expirationSeconds ?? podTokenSeconds), jti: randomUUID(),
      'kubernetes.io': k8s,
    }, this.key.privateKey);
  }

  /** a token for a person: the kubeconfig's user (no expiry: it lasts as long as the signing key) */
  issueUser(user: string, groups: string[]): string {
    return signJwt({ iss: tokenIssuer, sub: user, 'skiff.io/groups': groups, iat: Math.floor(Date.now() / 1000), jti: randomUUID() }, this.key.privateKey);
  }

  /** the identity a token proves; throws JwtError when it proves none */
  verify(token: string, nowSeconds?: number): Identity {
    const c = verifyJwt(token, this.key.publicKey, nowSeconds);
    if (c.iss !== tokenIssuer) throw new JwtError(`token was issued by ${JSON.stringify(c.iss)}, not ${tokenIssuer}`);
    if (typeof c.sub !== 'string' || !c.sub) throw new JwtError('token has no subject');
    const k8s = c['kubernetes.io'] as { namespace?: string; serviceaccount?: { name?: string; uid?: string }; pod?: { name: string; uid: string } } | undefined;
    if (k8s?.namespace && k8s.serviceaccount?.name) {
      const sa = { namespace: k8s.namespace, name: k8s.serviceaccount.name, ...(k8s.serviceaccount.uid ? { uid: k8s.serviceaccount.uid } : {}) };
      return {
        user: c.sub, groups: ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`, 'system:authenticated'],
        serviceAccount: sa, ...(k8s.pod ? { pod: k8s.pod } : {}),
      };
    }
    const groups = Array.isArray(c['skiff.io/groups']) ? (c['skiff.io/groups'] as unknown[]).filter((g): g is string => typeof g === 'string') : [];
    return { user: c.sub, groups: [...groups, 'system:authenticated'] };
  }

  /** the identity of a request's bearer token: undefined without one; throws JwtError for a bad one */
  authenticate(req: IncomingMessage): Identity | undefined {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    return m ? this.verify(m[1] as string) : undefined;
  }
}
