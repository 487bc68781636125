// S3 URIs and settings, without the SDK: what the config and the controllers need to tell an S3 root
// from a local one (the SDK itself, in s3.ts, is loaded only when an S3 server is configured).

/** the URI schemes that name S3 objects, and the folder KFP's launcher gives each inside a Pod */
export const s3Schemes = { s3: 's3', minio: 'minio' } as const;
export type S3Scheme = keyof typeof s3Schemes;

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** Skiff's S3 configuration (the config's `artifacts.s3`): the server, and credentials of last resort. */
export interface S3Settings {
  endpoint?: string;
  region?: string;
  forcePathStyle?: boolean;
  credentials?: S3Credentials;
}

export interface Location {
  scheme: S3Scheme;
  bucket: string;
  /** no leading or trailing `/`; '' for the bucket itself */
  key: string;
}

/** `s3://bucket/key` or `minio://bucket/key` (a query string, as KFP allows on roots, is dropped) */
export function parseS3Uri(uri: string): Location | undefined {
  const m = /^(s3|minio):\/\/([^/?#]+)(\/[^?#]*)?(\?.*)?$/.exec(uri);
  if (!m) return undefined;
  return { scheme: m[1] as S3Scheme, bucket: m[2] as string, key: (m[3] ?? '').replace(/^\/+|\/+$/g, '') };
}

