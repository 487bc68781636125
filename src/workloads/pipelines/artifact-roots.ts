// Where a run's artifacts live, decided as KFP's root DAG driver decides it, and the S3 store that
// holds them with the credentials KFP's launcher would use.
import type { KObject, StoredObject } from '../../api/meta.js';
import { Kinds } from '../../api/index.js';
import type { S3Credentials } from '../../artifacts/s3-uri.js';
import { parseS3Uri } from '../../artifacts/s3-uri.js';
import type { ArtifactStore } from '../../artifacts/store.js';
import type { Client } from '../../store/client.js';

/** the ConfigMap KFP's driver reads a namespace's default pipeline root from (key `defaultPipelineRoot`) */
export const launcherConfigMap = 'kfp-launcher';
/** the Secret KFP's launcher reads MinIO credentials from (keys `accesskey`, `secretkey`), in the run's namespace */
export const artifactSecret = 'mlpipeline-minio-artifact';

/** whether a pipeline root is an S3 one (s3:// or minio://) */
export function isS3Root(root: string): boolean {
  return parseS3Uri(root) !== undefined;
}

/**
 * The root of a run: its own (`runtime_config.pipeline_root`), else the `defaultPipelineRoot` of the
 * namespace's kfp-launcher ConfigMap, else Skiff's configured root, else `local`. Like KFP's backend,
 * the compiled pipeline's `defaultPipelineRoot` is not read.
 */
export async function resolvePipelineRoot(client: Client, run: StoredObject & { spec: { pipelineRoot?: string } }, configured: string | undefined, local: string): Promise<string> {
  if (run.spec.pipelineRoot) return run.spec.pipelineRoot;
  const cm = await client.find<KObject & { data?: Record<string, string> }>(Kinds.ConfigMap, { namespace: run.metadata.namespace ?? 'default', name: launcherConfigMap });
  const fromLauncher = cm?.data?.['defaultPipelineRoot']?.trim();
  if (fromLauncher) return fromLauncher;
  return configured ?? local;
}

/** the store of an S3 root: its bucket can be checked before anything is read from it */
export interface RootStore extends ArtifactStore {
  check(): Promise<void>;
}

/** where S3 roots are read and written: Skiff's S3Stores (artifacts/s3.ts), one store per root and credentials */
export interface RootStores {
  get(root: string, opts?: { credentials?: S3Credentials | undefined; missing?: string }): RootStore;
}

function decode(data: Record<string, string> | undefined, key: string): string | undefined {
  const v = data?.[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8').trim();
}

/**
 * The S3 store for a namespace's run under `root`: the credentials of the namespace's
 * mlpipeline-minio-artifact Secret when it has one, else those of Skiff's config.
 */
export async function namespaceS3Store(client: Client, s3: RootStores, namespace: string, root: string): Promise<RootStore> {
  const secret = await client.find<KObject & { data?: Record<string, string> }>(Kinds.Secret, { namespace, name: artifactSecret });
  return secretS3Store(secret, s3, namespace, root);
}

/** namespaceS3Store with the namespace's mlpipeline-minio-artifact Secret already read (undefined: it has none) */
export function secretS3Store(secret: { data?: Record<string, string> } | undefined, s3: RootStores, namespace: string, root: string): RootStore {
  const accessKeyId = decode(secret?.data, 'accesskey');
  const secretAccessKey = decode(secret?.data, 'secretkey');
  return s3.get(root, {
    ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
    missing: `namespace ${namespace} has no Secret ${artifactSecret} with keys accesskey and secretkey, and Skiff's config has no artifacts.s3.accessKey`,
  });
}
