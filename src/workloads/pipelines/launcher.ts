// KFP's launcher for task Pods that may run on another machine (Skiff on a cluster, an S3 pipeline
// root). Upstream the launcher runs inside the task's Pod: it downloads the input artifacts to
// `/minio/<bucket>/<key>` (or `/s3/...`) before the component's command and uploads the outputs from
// there after it. Here the Run controller writes the same instructions on the Pod (the annotation
// below: which objects go to which local paths before the command, which local paths go to which
// URIs after it, where the executor output file is) and gives it emptyDir volumes at /minio and /s3;
// the node agent that runs the Pod does the launcher's part on its own machine (PodLauncher), before
// the containers start and after they have exited 0, before it reports the Pod Succeeded. The Run
// controller then reads the output parameters and the executor output from S3, never from a disk.
//
// Pods that a real kubelet runs (the user's image, no Skiff on the node) get the launcher inside
// them instead, as KFP does it (`artifacts.launcherImage` in Skiff's config; `inPodLauncher` below): an init
// container from Skiff's image copies the static `skiff-launcher` binary (launcher/, Go) into an
// emptyDir, and the main container's command runs under it with the plan and the S3 server in its
// environment and the credentials from the namespace's mlpipeline-minio-artifact Secret.
import { posix } from 'node:path';
import type { Container, EnvVar, Volume, VolumeMount } from '../../api/core-types.js';
import { parseS3Uri } from '../../artifacts/s3-uri.js';
import type { ArtifactStore } from '../../artifacts/store.js';
import type { PodArtifacts } from '../../substrate/local/kubelet.js';
import { copyAcross } from '../../artifacts/transfer.js';
import { artifactSecret, type RootStore } from './artifact-roots.js';
import { localPathForUri, type ArtifactList, type ExecutorInput } from './executor-input.js';
import { readBackOutputs } from './read-back.js';

/** the Pod annotation that holds a task's LauncherPlan (JSON) */
export const launcherAnnotation = 'pipelines.kubeflow.org/launcher';

/** the folders KFP's executor Pods have for S3 URIs (`localPathForUri`) */
const mounts = ['minio', 's3'] as const;

/** What KFP's launcher gets for one task, as the node agent needs it. */
export interface LauncherPlan {
  /** the run's pipeline root: which S3 server, and the namespace's credentials for it */
  pipelineRoot: string;
  /** before the command: each input artifact (an object, or the objects under a prefix) to its local path */
  downloads: { name: string; uri: string; path: string }[];
  /** before the command: where the outputs go (their folders are made, as the launcher's prepareOutputFolders) */
  outputPaths: string[];
  /** after the command: the output artifacts as provisioned; the executor output may move them (customPath) */
  artifacts: Record<string, ArtifactList>;
  /** after the command: the files of the output parameters, each to its URI */
  parameterFiles: { path: string; uri: string }[];
  /** after the command, last: the executor output file and its URI */
  executorOutput: { path: string; uri: string };
}

/** The S3 URI a local path under /minio or /s3 stands for (the inverse of localPathForUri); undefined for other paths. */
export function uriForLocalPath(path: string): string | undefined {
  const p = posix.normalize(path);
  for (const m of mounts) if (p.startsWith(`/${m}/`)) return `${m}://${p.slice(m.length + 2)}`;
  return undefined;
}

/** the volumes and mounts of a task Pod whose launcher is its node's: emptyDirs at /minio and /s3 */
export function launcherVolumes(): { volumes: Volume[]; mounts: VolumeMount[] } {
  return {
    volumes: mounts.map((m) => ({ name: `kfp-artifacts-${m}`, emptyDir: {} }) as Volume),
    mounts: mounts.map((m) => ({ name: `kfp-artifacts-${m}`, mountPath: `/${m}` })),
  };
}

/** The plan of a task Pod from its executor input; its output files must be under /minio or /s3. */
export function launcherPlan(ei: ExecutorInput, pipelineRoot: string): LauncherPlan {
  const downloads: LauncherPlan['downloads'] = [];
  for (const [name, list] of Object.entries(ei.inputs.artifacts ?? {})) {
    for (const a of list.artifacts) if (a.uri && parseS3Uri(a.uri)) downloads.push({ name, uri: a.uri, path: localPathForUri(a.uri) });
  }
  const file = (path: string): { path: string; uri: string } => {
    const uri = uriForLocalPath(path);
    if (!uri) throw new Error(`the output file ${path} is not under /minio or /s3`);
    return { path, uri };
  };
  const outputPaths = [ei.outputs.outputFile, ...Object.values(ei.outputs.parameters).map((p) => p.outputFile)];
  for (const list of Object.values(ei.outputs.artifacts)) for (const a of list.artifacts) if (a.uri) outputPaths.push(localPathForUri(a.uri));
  return {
    pipelineRoot, downloads, outputPaths, artifacts: ei.outputs.artifacts,
    parameterFiles: Object.values(ei.outputs.parameters).map((p) => file(p.outputFile)),
    executorOutput: file(ei.outputs.outputFile),
  };
}

/** What the launcher inside a Pod needs: its image, and the S3 server as the Pod reaches it. */
export interface InPodLauncher {
  /** an image with `skiff-launcher` on its PATH (Skiff's own image has it in /usr/local/bin) */
  image: string;
  /** `http(s)://host:port` of the S3 server, as Pods reach it */
  endpoint: string;
  region: string;
}

/** where the init container puts the launcher for the main container: an emptyDir both mount */
export const inPodLauncherDir = '/skiff-launcher';
/** the Secret and keys the launcher's credentials come from, in the run's namespace (KFP's) */
export const inPodLauncherSecret = { name: artifactSecret, accessKey: 'accesskey', secretKey: 'secretkey' } as const;

/**
 * A task Pod that carries its own launcher: the init container `kfp-launcher` copies the binary into
 * the emptyDir at /skiff-launcher, and the main container's command runs under it (`launch run --
 * <command>`, its args unchanged), with the plan in SKIFF_LAUNCHER_PLAN, the S3 server in
 * SKIFF_S3_ENDPOINT and SKIFF_S3_REGION, and the credentials from the namespace's
 * mlpipeline-minio-artifact Secret. The launcher takes its own variables out of the command's
 * environment. A failed container's log tail is its termination message, so a launcher error (its
 * last line, `skiff-launcher: ...`) reaches the task's message. Throws when the container has no
 * command: the image's entrypoint is not known here, so there is nothing to wrap.
 */
export function inPodLauncher(spec: { volumes?: Volume[]; initContainers?: Container[]; containers: Container[] }, plan: LauncherPlan, l: InPodLauncher): void {
  const main = spec.containers[0];
  if (!main?.command?.length) throw new Error('its container has no command for the launcher in the Pod to run (the image\'s entrypoint is not known to Skiff)');
  const { volumes, mounts: artifactMounts } = launcherVolumes();
  const binMount: VolumeMount = { name: 'skiff-launcher', mountPath: inPodLauncherDir };
  spec.volumes = [...(spec.volumes ?? []), ...volumes, { name: 'skiff-launcher', emptyDir: {} }];
  spec.initContainers = [...(spec.initContainers ?? []), {
    name: 'kfp-launcher', image: l.image, command: ['skiff-launcher', 'copy', `${inPodLauncherDir}/launch`], volumeMounts: [binMount],
  }];
  const secret = (key: string): EnvVar['valueFrom'] => ({ secretKeyRef: { name: inPodLauncherSecret.name, key } });
  main.command = [`${inPodLauncherDir}/launch`, 'run', '--', ...main.command];
  main.env = [
    ...(main.env ?? []),
    { name: 'SKIFF_LAUNCHER_PLAN', value: JSON.stringify(plan) },
    { name: 'SKIFF_S3_ENDPOINT', value: l.endpoint },
    { name: 'SKIFF_S3_REGION', value: l.region },
    { name: 'SKIFF_S3_ACCESS_KEY_ID', valueFrom: secret(inPodLauncherSecret.accessKey) },
    { name: 'SKIFF_S3_SECRET_ACCESS_KEY', valueFrom: secret(inPodLauncherSecret.secretKey) },
  ];
  main.volumeMounts = [...(main.volumeMounts ?? []), ...artifactMounts, binMount];
  main.terminationMessagePolicy = 'FallbackToLogsOnError';
}

/**
 * The launcher's own error in a failed container's termination message: the last line, when the
 * launcher wrote it (it prints its error after everything else, the command's output included).
 */
export function launcherError(message: string | undefined): string | undefined {
  const last = (message ?? '').trimEnd().split('\n').at(-1) ?? '';
  if (!last.startsWith('skiff-launcher: ')) return undefined;
  // the command's own failure, which the container's exit code already says: not the launcher's
  if (/; nothing uploaded$/.test(last)) return undefined;
  return last;
}

/** Reads a Pod's plan from its annotation: undefined when it has none; an error naming the field when it is malformed. */
export function podLauncherPlan(pod: { metadata: { annotations?: Record<string, string> } }): LauncherPlan | undefined {
  const text = pod.metadata.annotations?.[launcherAnnotation];
  if (text === undefined) return undefined;
  let plan: LauncherPlan;
  try {
    plan = JSON.parse(text) as LauncherPlan;
  } catch (e) {
    throw new Error(`annotation ${launcherAnnotation} is not JSON: ${(e as Error).message}`);
  }
  const bad = (field: string): never => {
    throw new Error(`annotation ${launcherAnnotation}: ${field} is missing or malformed`);
  };
  if (typeof plan !== 'object' || plan === null) return bad('the plan');
  if (typeof plan.pipelineRoot !== 'string' || !parseS3Uri(plan.pipelineRoot)) bad('pipelineRoot (an s3:// or minio:// URI)');
  if (!Array.isArray(plan.downloads) || plan.downloads.some((d) => typeof d?.uri !== 'string' || typeof d.path !== 'string')) bad('downloads');
  if (!Array.isArray(plan.outputPaths) || plan.outputPaths.some((p) => typeof p !== 'string')) bad('outputPaths');
  if (typeof plan.artifacts !== 'object' || plan.artifacts === null) bad('artifacts');
  if (!Array.isArray(plan.parameterFiles) || plan.parameterFiles.some((f) => typeof f?.path !== 'string' || typeof f.uri !== 'string')) bad('parameterFiles');
  if (typeof plan.executorOutput?.path !== 'string' || typeof plan.executorOutput.uri !== 'string') bad('executorOutput');
  return plan;
}

/** Where a path the Pod sees is on the node: the file, and the volume directory it must stay in. */
export type PodPathResolver = (podPath: string) => { host: string; base: string } | undefined;

/**
 * The launcher's part for the Pods of one node: `local` reads and writes the node's own files (the
 * Pods' volumes), `remote` gives the S3 store of a namespace's pipeline root with its credentials.
 */
export class PodLauncher {
  constructor(private readonly local: ArtifactStore, private readonly remote: (namespace: string, root: string) => Promise<RootStore>) {}

  /** before the containers: the bucket checked, the inputs downloaded where the Pod reads them, the output folders made */
  async download(namespace: string, plan: LauncherPlan, paths: PodPathResolver, signal?: AbortSignal): Promise<void> {
    const remote = await this.remote(namespace, plan.pipelineRoot);
    await remote.check();
    for (const d of plan.downloads) {
      const target = paths(d.path)?.host;
      if (!target) throw new Error(`its input artifact ${d.name} goes to ${d.path}, which is on none of its volumes`);
      let n: number;
      try {
        n = await copyAcross(remote, d.uri, this.local, target, signal);
      } catch (e) {
        if (signal?.aborted) throw e;
        throw new Error(`downloading its input artifact ${d.name} (${d.uri}): ${(e as Error).message}`);
      }
      if (n === 0) throw new Error(`its input artifact ${d.name}: ${d.uri} does not exist`);
    }
    signal?.throwIfAborted();
    this.local.prepareOutputs(plan.outputPaths.map((p) => paths(p)?.host).filter((p): p is string => p !== undefined));
  }

  /**
   * After the containers exited 0: every output artifact uploaded from where the component wrote it
   * (its customPath when the executor output names one), then the output parameter files, then the
   * executor output file. Nothing written is nothing uploaded. An error names the object.
   */
  async upload(namespace: string, plan: LauncherPlan, paths: PodPathResolver, signal?: AbortSignal): Promise<void> {
    const remote = await this.remote(namespace, plan.pipelineRoot);
    const executorOutput = await this.readFile(plan.executorOutput.path, paths);
    const produced = readBackOutputs({ executorOutputText: executorOutput, outputArtifacts: plan.artifacts });
    for (const [name, list] of Object.entries(produced.artifacts)) {
      for (const a of list) {
        if (!a.uri || !remote.handles(a.uri)) continue;
        await this.put(remote, a.customPath || localPathForUri(a.uri), a.uri, paths, `its output artifact ${name}`, signal);
      }
    }
    for (const f of plan.parameterFiles) await this.put(remote, f.path, f.uri, paths, `its output parameter file ${f.path}`, signal);
    if (executorOutput !== undefined) await this.put(remote, plan.executorOutput.path, plan.executorOutput.uri, paths, 'its executor output', signal);
  }

  private async readFile(podPath: string, paths: PodPathResolver): Promise<string | undefined> {
    const at = paths(podPath);
    if (!at || !(await this.local.exists(at.host))) return undefined;
    // a link the Pod left must not make the node read something of its own for it
    if (!(await this.local.contains(at.base, at.host))) throw new Error(`${podPath} leads out of the Pod's volume`);
    return (await this.local.readIfExists(at.host))?.toString('utf8');
  }

  private async put(remote: ArtifactStore, podPath: string, uri: string, paths: PodPathResolver, what: string, signal?: AbortSignal): Promise<void> {
    const at = paths(podPath);
    if (!at) throw new Error(`${what} was written to ${podPath}, outside the Pod's /minio and /s3 volumes, which the node does not read`);
    const objects = await this.local.list(at.host);
    for (const o of objects) if (!(await this.local.contains(at.base, o.uri))) throw new Error(`${podPath} leads out of the Pod's volume`);
    try {
      await copyAcross(this.local, at.host, remote, uri, signal);
    } catch (e) {
      if (signal?.aborted) throw e;
      throw new Error(`uploading ${what} to ${uri}: ${(e as Error).message}`);
    }
  }
}

/** The launcher as a node's kubelet asks for it: for the Pods that carry a plan. */
export function nodeLauncher(launcher: PodLauncher): PodArtifacts {
  const plan = (pod: { metadata: { annotations?: Record<string, string> } }): LauncherPlan => {
    const p = podLauncherPlan(pod);
    if (!p) throw new Error(`the Pod has no annotation ${launcherAnnotation}`);
    return p;
  };
  return {
    wants: (pod) => podLauncherPlan(pod) !== undefined,
    download: (pod, paths, signal) => launcher.download(pod.metadata.namespace ?? 'default', plan(pod), paths, signal),
    upload: (pod, paths, signal) => launcher.upload(pod.metadata.namespace ?? 'default', plan(pod), paths, signal),
  };
}
