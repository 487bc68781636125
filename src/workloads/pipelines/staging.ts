// KFP's launcher, for runs whose pipeline root is in S3. Upstream, the launcher runs inside the task's
// Pod: it downloads the input artifacts to `/minio/<bucket>/<key>` (or `/s3/...`) before the component
// and uploads the outputs from there after it. A task Pod's image is the user's here, with no launcher
// in it, and its files are on this machine; so Skiff does the launcher's part around the Pod: a staging
// directory per Pod, seen by the Pod at /minio and /s3, filled with the inputs before the Pod is
// created, and its outputs uploaded once the Pod has succeeded.
import { basename, dirname, join, posix } from 'node:path';
import type { Volume, VolumeMount } from '../../api/core-types.js';
import type { ArtifactStore } from '../../artifacts/store.js';
import { copyAcross, safeSegments } from '../../artifacts/transfer.js';
import { localPathForUri, type ArtifactList, type ExecutorInput } from './executor-input.js';

/** the folders KFP's executor Pods have for S3 URIs (`localPathForUri`) */
const mounts = ['minio', 's3'] as const;

export class TaskStaging {
  /**
   * `local`: the local artifact store (it makes folders owned as their parent is, for isolated Pods);
   * `namespaceDir`: a namespace's directory an isolated Pod may mount (the pipeline root's)
   */
  constructor(private readonly local: ArtifactStore, private readonly namespaceDir: (namespace: string) => string, private readonly isolated: boolean) {}

  /** the staging directory of one task Pod */
  dir(namespace: string, podName: string): string {
    return join(this.namespaceDir(namespace), '.artifact-staging', podName);
  }

  /** the volumes and mounts that show the staging directory at /minio and /s3 */
  podVolumes(dir: string): { volumes: Volume[]; mounts: VolumeMount[] } {
    return {
      volumes: mounts.map((m) => ({ name: `kfp-artifacts-${m}`, hostPath: { path: join(dir, m), type: 'DirectoryOrCreate' } }) as Volume),
      mounts: mounts.map((m) => ({ name: `kfp-artifacts-${m}`, mountPath: `/${m}` })),
    };
  }

  /**
   * The staging directory a made Pod's volumes show it, when they are the ones podVolumes() makes for
   * a Pod of that name (`<root>/.artifact-staging/<pod>/minio`); undefined otherwise.
   */
  dirOf(pod: { metadata: { name: string }; spec?: { volumes?: Volume[] } }): string | undefined {
    const path = pod.spec?.volumes?.find((v) => v.name === `kfp-artifacts-${mounts[0]}`)?.hostPath?.path;
    if (!path || basename(path) !== mounts[0]) return undefined;
    const dir = dirname(path);
    return basename(dir) === pod.metadata.name && basename(dirname(dir)) === '.artifact-staging' ? dir : undefined;
  }

  /** where a path the Pod sees under /minio or /s3 is on this machine; undefined for other paths */
  hostPath(dir: string, podPath: string): string | undefined {
    const p = posix.normalize(podPath);
    const top = mounts.find((m) => p === `/${m}` || p.startsWith(`/${m}/`));
    return top ? join(dir, top, ...safeSegments(p.slice(top.length + 1))) : undefined;
  }

  /**
   * Before the Pod: its input artifacts held by `remote` downloaded where it reads them, and the
   * folders of its outputs made. An input that is not there fails the task, as the launcher's download does.
   * `signal` stops it between objects.
   */
  async stageInputs(remote: ArtifactStore, dir: string, ei: ExecutorInput, signal?: AbortSignal): Promise<void> {
    for (const [name, list] of Object.entries(ei.inputs.artifacts ?? {})) {
      for (const a of (list as ArtifactList).artifacts) {
        if (!a.uri || !remote.handles(a.uri)) continue;
        const target = this.hostPath(dir, localPathForUri(a.uri)) as string;
        let n: number;
        try {
          n = await copyAcross(remote, a.uri, this.local, target, signal);
        } catch (e) {
          if (signal?.aborted) throw e;
          throw new Error(`downloading its input artifact ${name} (${a.uri}): ${(e as Error).message}`);
        }
        if (n === 0) throw new Error(`its input artifact ${name}: ${a.uri} does not exist`);
      }
    }
    signal?.throwIfAborted();
    const outputs = [ei.outputs.outputFile, ...Object.values(ei.outputs.parameters).map((p) => p.outputFile)];
    for (const list of Object.values(ei.outputs.artifacts) as ArtifactList[]) for (const a of list.artifacts) outputs.push(localPathForUri(a.uri));
    this.local.prepareOutputs(outputs.map((p) => this.hostPath(dir, p)).filter((p): p is string => p !== undefined));
  }

  /** A file the Pod wrote (its executor output, an output parameter), as text; undefined when it wrote none. */
  async read(dir: string, podPath: string): Promise<string | undefined> {
    const host = this.hostPath(dir, podPath);
    if (host === undefined || !(await this.local.exists(host))) return undefined;
    // a link the Pod left must not make Skiff read something of this machine's for it
    if (!(await this.local.contains(dir, host))) throw new Error(`${podPath} leads out of the task's own files`);
    return (await this.local.readIfExists(host))?.toString('utf8');
  }

  /**
   * After the Pod succeeded: what it wrote at `podPath` (a file, or a directory's files) uploaded to
   * `uri`. Nothing written is nothing uploaded, as for a local root, where the output is simply absent.
   */
  async upload(remote: ArtifactStore, dir: string, podPath: string, uri: string, signal?: AbortSignal): Promise<void> {
    const staged = this.hostPath(dir, podPath);
    // Artifact.set_path to a place outside /minio and /s3: the Pod's own file system is this machine's
    // unless Pods are isolated, when Skiff cannot tell what the Pod saw there
    if (staged === undefined && this.isolated) throw new Error(`its output ${uri} was written to ${podPath}, outside /minio and /s3, which Skiff does not read for an isolated Pod`);
    const source = staged ?? podPath;
    const base = staged === undefined ? source : dir;
    for (const o of await this.local.list(source)) {
      if (!(await this.local.contains(base, o.uri))) throw new Error(`${podPath} leads out of the task's own files`);
    }
    await copyAcross(this.local, source, remote, uri, signal);
  }

  async remove(dir: string): Promise<void> {
    await this.local.remove(dir);
  }
}
