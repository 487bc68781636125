// serviceaccounts/token: a TokenRequest answered with a signed token for the ServiceAccount, as
// `kubectl create token` and client libraries ask kube-apiserver for one.
import { ApiError, StatusReason } from '../../api/errors.js';
import type { StoredObject } from '../../api/meta.js';
import { isPlainObject } from '../../util/objects.js';
import type { ServiceAccountTokens } from './tokens.js';

/** kube-apiserver's bounds on spec.expirationSeconds */
const minSeconds = 600;
const maxSeconds = 2 ** 32;
const defaultSeconds = 3600;

export function tokenRequest(tokens: ServiceAccountTokens | undefined, sa: StoredObject, body: unknown, now = new Date()): Record<string, unknown> {
  if (!tokens) throw new ApiError(StatusReason.InternalError, 'this server has no service-account signing key (its in-cluster endpoint did not start)');
  const req = isPlainObject(body) ? body : {};
  const spec = isPlainObject(req.spec) ? req.spec : {};
  const seconds = spec.expirationSeconds === undefined || spec.expirationSeconds === null ? defaultSeconds : Number(spec.expirationSeconds);
  if (!Number.isInteger(seconds) || seconds < minSeconds || seconds > maxSeconds) {
    throw ApiError.invalid('TokenRequest', 'authentication.k8s.io', sa.metadata.name, [{ field: 'spec.expirationSeconds', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(spec.expirationSeconds)}: may not specify a duration less than 10 minutes` }]);
  }
  const audiences = Array.isArray(spec.audiences) && spec.audiences.length ? spec.audiences.map(String) : undefined;
  const namespace = sa.metadata.namespace ?? 'default';
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const token = tokens.issue({ namespace, serviceAccount: sa.metadata.name, serviceAccountUid: sa.metadata.uid, expirationSeconds: seconds, ...(audiences ? { audiences } : {}) }, nowSeconds);
  return {
    kind: 'TokenRequest', apiVersion: 'authentication.k8s.io/v1',
    metadata: { name: sa.metadata.name, namespace, creationTimestamp: null },
    spec: { audiences: audiences ?? ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: seconds, boundObjectRef: spec.boundObjectRef ?? null },
    status: { token, expirationTimestamp: new Date((nowSeconds + seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') },
  };
}
