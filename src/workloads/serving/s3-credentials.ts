// The S3 endpoint and credentials of an InferenceService's model, as KServe's storage initializer
// finds them: the Secrets listed on the service account the predictor runs as (`default` unless it
// names one), the first with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; its annotations
// `serving.kserve.io/s3-endpoint` (host:port), `s3-usehttps` ("0": plain http, as for MinIO) and
// `s3-region` say where. Without such a Secret, Skiff's own artifacts.s3 configuration answers.
import { Kinds } from '../../api/index.js';
import type { KObject } from '../../api/meta.js';
import type { S3ArtifactStore, S3Stores } from '../../artifacts/s3.js';
import type { Client } from '../../store/client.js';
import type { ModelOwner } from './storage.js';

export const S3Annotations = {
  endpoint: 'serving.kserve.io/s3-endpoint',
  useHttps: 'serving.kserve.io/s3-usehttps',
  region: 'serving.kserve.io/s3-region',
} as const;

type SecretObject = KObject & { data?: Record<string, string> };

const decode = (v: string | undefined): string | undefined => (v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8').trim());

/** the endpoint URL of a Secret's annotations: a bare host:port gets the scheme s3-usehttps says (https unless "0") */
export function endpointOf(annotations: Record<string, string>): string | undefined {
  const e = annotations[S3Annotations.endpoint]?.trim();
  if (!e) return undefined;
  if (/^https?:\/\//.test(e)) return e.replace(/\/+$/, '');
  return `${annotations[S3Annotations.useHttps] === '0' ? 'http' : 'https'}://${e.replace(/\/+$/, '')}`;
}

export async function serviceAccountS3Store(client: Client, s3: S3Stores, owner: ModelOwner, uri: string): Promise<S3ArtifactStore> {
  const sa = owner.serviceAccountName || 'default';
  const account = await client.find<KObject & { secrets?: { name?: string }[] }>(Kinds.ServiceAccount, { namespace: owner.namespace, name: sa });
  const root = /^s3:\/\/[^/]+/.exec(uri)?.[0] ?? uri;
  for (const ref of account?.secrets ?? []) {
    if (!ref.name) continue;
    const secret = await client.find<SecretObject>(Kinds.Secret, { namespace: owner.namespace, name: ref.name });
    const accessKeyId = decode(secret?.data?.['AWS_ACCESS_KEY_ID']);
    const secretAccessKey = decode(secret?.data?.['AWS_SECRET_ACCESS_KEY']);
    if (!secret || !accessKeyId || !secretAccessKey) continue;
    const annotations = secret.metadata.annotations ?? {};
    return s3.get(root, { credentials: { accessKeyId, secretAccessKey }, endpoint: endpointOf(annotations), region: annotations[S3Annotations.region] });
  }
  return s3.get(root, { missing: `the service account ${owner.namespace}/${sa} lists no Secret with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and Skiff's config has no artifacts.s3.accessKey` });
}
