// The review APIs clients ask before acting: `kubectl auth can-i` (SelfSubjectAccessReview,
// SelfSubjectRulesReview for --list), `kubectl auth whoami` (SelfSubjectReview), and the reviews a
// service asks about someone else (SubjectAccessReview; LocalSubjectAccessReview in a namespace, what
// Kubeflow's web apps and KFP's API server send). Answers come from the Authorizer given (RBAC in the
// server); the user is the request's, or the one it impersonates when it may.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../../api/errors.js';
import type { FieldError } from '../../api/errors.js';
import { parseBody, readBody, send } from '../body.js';
import { writeOptions } from './options.js';
import { impersonate } from '../auth/impersonation.js';
import { requestUser } from '../auth/types.js';
import type { Attributes, Authorizer, UserInfo } from '../auth/types.js';

interface ReviewResource {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced?: boolean;
}

/** the review resources, for discovery documents: create-only, as kube-apiserver lists them */
export const reviewResources: ReviewResource[] = [
  { group: 'authorization.k8s.io', version: 'v1', plural: 'selfsubjectaccessreviews', kind: 'SelfSubjectAccessReview' },
  { group: 'authorization.k8s.io', version: 'v1', plural: 'selfsubjectrulesreviews', kind: 'SelfSubjectRulesReview' },
  { group: 'authorization.k8s.io', version: 'v1', plural: 'subjectaccessreviews', kind: 'SubjectAccessReview' },
  { group: 'authorization.k8s.io', version: 'v1', plural: 'localsubjectaccessreviews', kind: 'LocalSubjectAccessReview', namespaced: true },
  { group: 'authentication.k8s.io', version: 'v1', plural: 'selfsubjectreviews', kind: 'SelfSubjectReview' },
];

type Spec = Record<string, any>;

/** a review's resourceAttributes or nonResourceAttributes as the authorizer's attributes */
function attributesOf(kind: string, group: string, spec: Spec, user: UserInfo): Attributes {
  // kube-apiserver's validation: exactly one of resourceAttributes and nonResourceAttributes
  if (spec.resourceAttributes && spec.nonResourceAttributes) {
    throw ApiError.invalid(kind, group, '', [{ field: 'spec.nonResourceAttributes', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(spec.nonResourceAttributes)}: cannot be specified in combination with resourceAttributes` }]);
  }
  if (!spec.resourceAttributes && !spec.nonResourceAttributes) {
    throw ApiError.invalid(kind, group, '', [{ field: 'spec.resourceAttributes', type: 'FieldValueInvalid', message: 'Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified' }]);
  }
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  if (spec.nonResourceAttributes) {
    const n = spec.nonResourceAttributes as Spec;
    return { user, nonResource: { verb: str(n.verb), path: str(n.path) } };
  }
  const r = spec.resourceAttributes as Spec;
  return {
    user,
    resource: {
      verb: str(r.verb), apiGroup: str(r.group), resource: str(r.resource),
      ...(str(r.subresource) ? { subresource: str(r.subresource) } : {}),
      ...(str(r.namespace) ? { namespace: str(r.namespace) } : {}),
      ...(str(r.name) ? { name: str(r.name) } : {}),
    },
  };
}

function accessStatus(authorizer: Authorizer, a: Attributes): Record<string, unknown> {
  const d = authorizer.authorize(a);
  return { allowed: d.allowed, ...(d.reason ? { reason: d.reason } : {}) };
}

/** the subject a SubjectAccessReview names: user, groups, uid, extra exactly as given */
function subjectOf(kind: string, group: string, spec: Spec): UserInfo {
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const username = typeof spec.user === 'string' ? spec.user : '';
  const groups = strings(spec.groups);
  if (!username && groups.length === 0) {
    throw ApiError.invalid(kind, group, '', [{ field: 'spec.user', type: 'FieldValueInvalid', message: 'Invalid value: "": at least one of user or group must be specified' }]);
  }
  const extra: Record<string, string[]> = {};
  if (spec.extra && typeof spec.extra === 'object') for (const [k, v] of Object.entries(spec.extra as Record<string, unknown>)) extra[k] = strings(v);
  return { username, groups, ...(typeof spec.uid === 'string' && spec.uid ? { uid: spec.uid } : {}), ...(Object.keys(extra).length ? { extra } : {}) };
}

/**
 * A request under /apis/{authorization,authentication}.k8s.io/{version}/{rest}: answers the review
 * with its status filled in, as kube-apiserver does (201, nothing stored).
 */
export async function serveReview(req: IncomingMessage, res: ServerResponse, url: URL, group: string, version: string, rest: string[], authorizer: Authorizer): Promise<void> {
  // a namespaced review is at namespaces/{ns}/{plural}
  const namespace = rest.length === 3 && rest[0] === 'namespaces' ? rest[1] : undefined;
  const plural = namespace !== undefined ? rest[2] : rest[0];
  const r = reviewResources.find((x) => x.group === group && x.version === version && x.plural === plural);
  if (!r || (r.namespaced ? namespace === undefined : rest.length !== 1)) {
    throw new ApiError(StatusReason.NotFound, `the server could not find the requested resource`);
  }
  const method = req.method ?? 'GET';
  if (method !== 'POST') {
    throw new ApiError(StatusReason.MethodNotAllowed, `${method} is not supported on ${r.plural}.${r.group}: only create`, { group: r.group, kind: r.plural });
  }
  writeOptions(url, 'CreateOptions');
  const raw = await readBody(req);
  // kubectl's typed clients send protobuf; the answer is JSON, which they accept too
  const review = parseBody(raw, req.headers['content-type']) as Record<string, any>;
  if (review === null || typeof review !== 'object' || Array.isArray(review)) throw new ApiError(StatusReason.BadRequest, `the request body must be a ${r.kind}`);
  const apiVersion = `${r.group}/${r.version}`;
  if ((review.kind !== undefined && review.kind !== r.kind) || (review.apiVersion !== undefined && review.apiVersion !== apiVersion)) {
    throw new ApiError(StatusReason.BadRequest, `the body is a ${review.apiVersion}/${review.kind} but the path is for ${apiVersion}/${r.kind}`);
  }
  const meta = (review.metadata ?? {}) as Record<string, unknown>;
  if (namespace !== undefined && meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
    throw new ApiError(StatusReason.BadRequest, 'the namespace of the provided object does not match the namespace sent on the request');
  }
  const out: Record<string, unknown> = { ...review, apiVersion, kind: r.kind, metadata: { ...meta, ...(namespace !== undefined ? { namespace } : {}), creationTimestamp: null } };
  const spec = (review.spec ?? {}) as Spec;
  // the self reviews answer for whoever asks (or whom they impersonate)
  const self = (): UserInfo => impersonate(req, requestUser(req), authorizer);
  switch (r.kind) {
    case 'SelfSubjectAccessReview':
      out.status = accessStatus(authorizer, attributesOf(r.kind, r.group, spec, self()));
      break;
    case 'SubjectAccessReview':
      out.status = accessStatus(authorizer, attributesOf(r.kind, r.group, spec, subjectOf(r.kind, r.group, spec)));
      break;
    case 'LocalSubjectAccessReview': {
      const errs: FieldError[] = [];
      if (spec.nonResourceAttributes) errs.push({ field: 'spec.nonResourceAttributes', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(spec.nonResourceAttributes)}: disallowed on this kind of request` });
      const ns = spec.resourceAttributes?.namespace as unknown;
      if (spec.resourceAttributes && ns !== undefined && ns !== '' && ns !== namespace) errs.push({ field: 'spec.resourceAttributes.namespace', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(ns)}: must match metadata.namespace` });
      if (errs.length > 0) throw ApiError.invalid(r.kind, r.group, '', errs);
      const scoped = { ...spec, ...(spec.resourceAttributes ? { resourceAttributes: { ...spec.resourceAttributes, namespace } } : {}) };
      out.status = accessStatus(authorizer, attributesOf(r.kind, r.group, scoped, subjectOf(r.kind, r.group, spec)));
      break;
    }
    case 'SelfSubjectRulesReview': {
      const rules = authorizer.rulesFor(self(), typeof spec.namespace === 'string' ? spec.namespace : '');
      out.status = rules;
      break;
    }
    case 'SelfSubjectReview':
      out.status = { userInfo: self() };
      break;
  }
  send(res, 201, out, (req.headers.accept ?? '').includes('yaml') ? 'yaml' : undefined);
}
