// The review APIs clients ask before acting: `kubectl auth can-i` (SelfSubjectAccessReview,
// SelfSubjectRulesReview for --list) and `kubectl auth whoami` (SelfSubjectReview). Skiff has no
// tenancy yet, so every caller is the one local user and may do everything; when tenancy arrives,
// these answers come from its policy.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, StatusReason } from '../../api/errors.js';
import { parseBody, readBody, send } from '../body.js';
import { writeOptions } from './options.js';
import { requestUser } from '../auth/types.js';


interface ReviewResource {
  group: string;
  version: string;
  plural: string;
  kind: string;
}

/** the review resources, for discovery documents: create-only, cluster-scoped, as kube-apiserver lists them */
export const reviewResources: ReviewResource[] = [
  { group: 'authorization.k8s.io', version: 'v1', plural: 'selfsubjectaccessreviews', kind: 'SelfSubjectAccessReview' },
  { group: 'authorization.k8s.io', version: 'v1', plural: 'selfsubjectrulesreviews', kind: 'SelfSubjectRulesReview' },
  { group: 'authentication.k8s.io', version: 'v1', plural: 'selfsubjectreviews', kind: 'SelfSubjectReview' },
];

/**
 * A request under /apis/{authorization,authentication}.k8s.io/{version}/{rest}: answers the review
 * with its status filled in, as kube-apiserver does (201, nothing stored).
 */
export async function serveReview(req: IncomingMessage, res: ServerResponse, url: URL, group: string, version: string, rest: string[]): Promise<void> {
  const r = reviewResources.find((x) => x.group === group && x.version === version && x.plural === rest[0]);
  if (!r || rest.length !== 1) {
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
  const out: Record<string, unknown> = { ...review, apiVersion, kind: r.kind, metadata: { ...(review.metadata ?? {}), creationTimestamp: null } };
  switch (r.kind) {
    case 'SelfSubjectAccessReview': {
      const spec = review.spec ?? {};
      // kube-apiserver's validation: exactly one of resourceAttributes and nonResourceAttributes
      if (spec.resourceAttributes && spec.nonResourceAttributes) {
        throw ApiError.invalid(r.kind, r.group, '', [{ field: 'spec.nonResourceAttributes', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(spec.nonResourceAttributes)}: cannot be specified in combination with resourceAttributes` }]);
      }
      if (!spec.resourceAttributes && !spec.nonResourceAttributes) {
        throw ApiError.invalid(r.kind, r.group, '', [{ field: 'spec.resourceAttributes', type: 'FieldValueInvalid', message: 'Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified' }]);
      }
      out.status = { allowed: true, reason: 'Skiff has no tenancy yet: every caller may do everything' };
      break;
    }
    case 'SelfSubjectRulesReview':
      out.status = {
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
        nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        incomplete: false,
      };
      break;
    case 'SelfSubjectReview':
      out.status = { userInfo: requestUser(req) };
      break;
  }
  send(res, 201, out, (req.headers.accept ?? '').includes('yaml') ? 'yaml' : undefined);
}
