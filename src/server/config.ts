// Server configuration: options in, defaults applied once, a fully required config out.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { parseQuantity } from '../api/quantity.js';
import type { CapacityOverrides } from '../substrate/local/capacity.js';
import type { EnvironmentRule } from '../substrate/local/environments.js';
import type { NotebookSettings, QueueSettings } from '../workloads/workload.js';
import { parseDuration as parseGoDuration } from '../util/duration.js';
import { builtinEnvironments } from './builtin-images.js';
import type { AuthnOptions } from './auth/authn.js';
import type { Authorizer } from './auth/types.js';
import { parseS3Uri, type S3Settings } from '../artifacts/s3-uri.js';

export interface SkiffOptions {
  dataDir?: string;
  host?: string;
  port?: number;
  configFile?: string;
  /** instead of reading the machine (tests give a node of a chosen size); GPUs as a count (with
   *  `gpuMemory`, default 80Gi, and `gpuType`, default "NVIDIA GPU") or card by card */
  node?: {
    name?: string; cpu?: number | string; memory?: string; gpus?: number; gpuMemory?: string | number; gpuType?: string;
    gpuCards?: { type?: string; memory?: string | number; uuid?: string }[];
  };
  /** GPU sharing with HAMi's resource names (nvidia.com/gpumem, nvidia.com/gpucores) */
  gpuSharing?: GpuSharingOptions;
  /** image name patterns to environments; the first match wins, and the built-in images come last */
  environments?: EnvironmentRule[];
  jobPodBackoff?: string | number;
  jobPodBackoffMax?: string | number;
  crashLoopBackoff?: string | number;
  crashLoopBackoffMax?: string | number;
  /** how many changes the store keeps for watches to resume from */
  watchHistory?: number;
  /** how often a watch that allows bookmarks gets one (default 15s) */
  watchBookmarkInterval?: string | number;
  /** how long Events are kept after they last happened (Kubernetes: 1h) */
  eventTTL?: string | number;
  /** print every controller retry, not only failures that keep coming back */
  verbose?: boolean;
  /** start lightweight kfp components from a warm, forked Python (default true) */
  pythonZygote?: boolean;
  /** the domain of InferenceService hosts, `<name>.<namespace>.<domain>` (default example.com, as KServe's) */
  ingressDomain?: string;
  /** how often running containers' CPU and memory are sampled, the window of `kubectl top` (default 5s) */
  metricsResolution?: string | number;
  /** kube-apiserver's --token-auth-file: with it (or an OIDC issuer, or a trusted proxy) tenancy is on */
  tokenAuthFile?: string;
  /** --oidc-issuer-url and the other --oidc-* flags, as kube-apiserver's */
  oidcIssuerUrl?: string;
  oidcClientId?: string;
  oidcUsernameClaim?: string;
  oidcUsernamePrefix?: string;
  oidcGroupsClaim?: string;
  oidcGroupsPrefix?: string;
  /** the issuer's keys (a JWKS document); without it they are fetched from the issuer */
  oidcJwksFile?: string;
  /** CIDRs of the proxies whose user header is believed (a list, or comma-separated) */
  trustedProxies?: string[] | string;
  /**
   * a kubeconfig file (or "in-cluster"): the cluster's API server becomes the store, and Skiff's kinds
   * are CRDs there (src/store/kube/)
   */
  kubeconfig?: string;
  /**
   * with a kubeconfig: the Lease replicas elect their leader on (kube-controller-manager's
   * --leader-elect-* flags); only the holder runs controllers. Namespace default: $POD_NAMESPACE, else
   * skiff-system; name default skiff-controllers; durations client-go's (15 s, 10 s, 2 s)
   */
  leaderElection?: { namespace?: string; name?: string; leaseDurationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
  /**
   * with a kubeconfig: the HTTPS endpoint of the validating and conversion webhooks Skiff registers on
   * the cluster (src/server/kube/webhooks.ts). `port`: where it listens (default 9443 in a Pod, a free
   * port outside); `host`: outside the cluster, the address the API server calls (default the address
   * Skiff listens on, 127.0.0.1 when that is every address); in a Pod the API server calls `service`
   * (default skiff, port 443) in the Pod's namespace
   */
  webhook?: { host?: string; port?: number; service?: string };
  /** the trusted proxy's user header (Kubeflow's USERID_HEADER, default kubeflow-userid) and its value's prefix (USERID_PREFIX) */
  userIdHeader?: string;
  userIdPrefix?: string;
  /** what each user may do once tenancy is on (in-process only; default: everything) */
  authorizer?: Authorizer;
  /** notebook culling, as Kubeflow's notebook-controller (its ENABLE_CULLING, CULL_IDLE_TIME, IDLENESS_CHECK_PERIOD) */
  notebooks?: { enableCulling?: boolean; cullIdleTimeMinutes?: number; idlenessCheckPeriodMinutes?: number };
  /** Kueue's Configuration (config.kueue.x-k8s.io): the fields the queue controllers read */
  queues?: QueueSettings;
  /** with tenancy on, isolate Pods by the kernel: own users, network namespaces, hidden data dir (default true) */
  podIsolation?: boolean;
  /** the Pods' network when they are isolated (an IPv4 /16, the node is its first address; default: a
   *  10.x.0.0/16 derived from the data dir that no other running server on this machine has) */
  podNetwork?: string;
  /** where pipeline artifacts live (README "Artifacts in S3") */
  artifacts?: ArtifactsOptions;
}

export interface ArtifactsOptions {
  /** the pipeline root of runs that name none and whose namespace's kfp-launcher ConfigMap names none:
   *  a local directory (default: the data dir's pipeline-root), or `minio://bucket/path` / `s3://bucket/path` */
  pipelineRoot?: string;
  /** the S3 server behind `s3://` and `minio://` URIs */
  s3?: {
    /** `http(s)://host:port`; absent: AWS's own endpoint for the region */
    endpoint?: string;
    region?: string;
    /** credentials for namespaces without a `mlpipeline-minio-artifact` Secret */
    accessKey?: string;
    secretKey?: string;
    /** bucket in the path rather than the host name (default true: MinIO and most servers but AWS want it) */
    forcePathStyle?: boolean;
  };
  /**
   * on a cluster, task Pods of runs whose root is in S3 carry KFP's launcher themselves: an init
   * container from this image (Skiff's own, which has `skiff-launcher` on its PATH) copies it in.
   * Absent: the `skiff node` agent that runs a task Pod is its launcher (real kubelets are not).
   */
  launcherImage?: string;
}

export interface GpuSharingOptions {
  /** shares each card is split into: a node's nvidia.com/gpu is cards x this (HAMi's default 10) */
  deviceSplitCount?: number;
  /** how a Pod's shares are spread over the cards unless its hami.io/gpu-scheduler-policy says (spread) */
  gpuSchedulerPolicy?: 'spread' | 'binpack';
  /** HAMi-core's libvgpu.so: preloaded into containers with a share, it enforces their memory and
   *  compute limits; without it the limits are only accounting */
  libvgpu?: string;
}

export interface SkiffConfig {
  dataDir: string;
  host: string;
  port: number;
  nodeName: string;
  node: CapacityOverrides;
  gpuSharing: { gpuSchedulerPolicy: 'spread' | 'binpack'; libvgpu?: string };
  environments: EnvironmentRule[];
  jobPodBackoffMs: number;
  jobPodBackoffMaxMs: number;
  crashLoopBackoffMs: number;
  crashLoopBackoffMaxMs: number;
  watchHistory: number;
  watchBookmarkMs: number;
  eventTtlMs: number;
  verbose: boolean;
  pythonZygote: boolean;
  ingressDomain: string;
  metricsResolutionMs: number;
  /** how users are known; absent when tenancy is off (one local user, no authentication) */
  authn?: AuthnOptions;
  notebooks: NotebookSettings;
  queues: QueueSettings;
  /** with tenancy: whether Pods are isolated by the kernel (src/substrate/local/isolation.ts) */
  podIsolation: boolean;
  podNetwork?: string;
  artifacts: { pipelineRoot?: string; s3?: S3Settings; launcherImage?: string };
}

/** the authentication options, when any turns tenancy on */
function authnOptions(o: SkiffOptions, relative: (p: string) => string): AuthnOptions | undefined {
  const proxies = typeof o.trustedProxies === 'string' ? o.trustedProxies.split(',').map((s) => s.trim()).filter((s) => s !== '') : o.trustedProxies ?? [];
  if (!Array.isArray(proxies) || proxies.some((p) => typeof p !== 'string')) throw new Error('trustedProxies: must be a list of CIDRs');
  if (!o.tokenAuthFile && !o.oidcIssuerUrl && proxies.length === 0) {
    if (o.oidcClientId || o.oidcJwksFile) throw new Error('oidcClientId and oidcJwksFile need oidcIssuerUrl');
    return undefined;
  }
  return {
    ...(o.tokenAuthFile ? { tokenAuthFile: relative(o.tokenAuthFile) } : {}),
    ...(o.oidcIssuerUrl ? {
      oidc: {
        issuerUrl: o.oidcIssuerUrl, clientId: o.oidcClientId ?? '',
        ...(o.oidcUsernameClaim ? { usernameClaim: o.oidcUsernameClaim } : {}),
        ...(o.oidcUsernamePrefix !== undefined ? { usernamePrefix: o.oidcUsernamePrefix } : {}),
        ...(o.oidcGroupsClaim ? { groupsClaim: o.oidcGroupsClaim } : {}),
        ...(o.oidcGroupsPrefix !== undefined ? { groupsPrefix: o.oidcGroupsPrefix } : {}),
        ...(o.oidcJwksFile ? { jwksFile: relative(o.oidcJwksFile) } : {}),
      },
    } : {}),
    ...(proxies.length ? { trustedProxies: proxies } : {}),
    ...(o.userIdHeader ? { userIdHeader: o.userIdHeader } : {}),
    ...(o.userIdPrefix !== undefined ? { userIdPrefix: o.userIdPrefix } : {}),
  };
}

/**
 * Notebook culling. The names and defaults are upstream notebook-controller's environment: culling
 * off, 1440 minutes idle, a check every minute. A value in Skiff's config wins over the variable;
 * minutes may be fractional, so a test can cull within seconds.
 */
export function notebookSettings(o: SkiffOptions['notebooks'], env: NodeJS.ProcessEnv = process.env): NotebookSettings {
  const minutes = (v: number | string | undefined, what: string, fallback: number): number => {
    if (v === undefined || v === '') return fallback;
    const n = typeof v === 'number' ? v : Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${what}: "${v}" is not a positive number of minutes`);
    return n;
  };
  const enable = o?.enableCulling ?? (env.ENABLE_CULLING === undefined ? false : env.ENABLE_CULLING.toLowerCase() === 'true');
  if (typeof enable !== 'boolean') throw new Error('notebooks.enableCulling: must be true or false');
  return {
    enableCulling: enable,
    cullIdleTimeMinutes: o?.cullIdleTimeMinutes !== undefined ? minutes(o.cullIdleTimeMinutes, 'notebooks.cullIdleTimeMinutes', 1440) : minutes(env.CULL_IDLE_TIME, 'CULL_IDLE_TIME', 1440),
    idlenessCheckPeriodMinutes: o?.idlenessCheckPeriodMinutes !== undefined
      ? minutes(o.idlenessCheckPeriodMinutes, 'notebooks.idlenessCheckPeriodMinutes', 1)
      : minutes(env.IDLENESS_CHECK_PERIOD, 'IDLENESS_CHECK_PERIOD', 1),
  };
}

/** "30s", "5m", "1h30m", "250ms" or a number of milliseconds */
export function parseDuration(v: string | number, what: string): number {
  if (typeof v === 'number') return v;
  const ms = parseGoDuration(v);
  if (ms === undefined || ms < 0) throw new Error(`${what}: "${v}" is not a duration (use e.g. 10s, 5m, 1h)`);
  return ms;
}

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

function withAuthn(a: AuthnOptions | undefined): { authn?: AuthnOptions } {
  return a ? { authn: a } : {};
}

export function compileConfig(opts: SkiffOptions): SkiffConfig {
  let file: SkiffOptions = {};
  if (opts.configFile) {
    const text = readFileSync(opts.configFile, 'utf8');
    file = (YAML.parse(text) ?? {}) as SkiffOptions;
  }
  const o: SkiffOptions = { ...file, ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) };
  const port = o.port ?? Number(process.env.SKIFF_PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`port: ${port} is not a TCP port`);
  if (o.environments !== undefined && !Array.isArray(o.environments)) throw new Error('environments: must be a list of {image, environment}');
  const cpu = o.node?.cpu === undefined ? undefined : parseQuantity(o.node.cpu);
  const memoryBytes = o.node?.memory === undefined ? undefined : parseQuantity(o.node.memory);
  if (o.node?.cpu !== undefined && cpu === undefined) throw new Error(`node.cpu: "${o.node.cpu}" is not a quantity`);
  if (o.node?.memory !== undefined && memoryBytes === undefined) throw new Error(`node.memory: "${o.node.memory}" is not a quantity`);
  // a library named in the config file is relative to that file
  const gpuSharing = gpuSharingConfig(o.gpuSharing, relativeTo(o.gpuSharing !== undefined && o.gpuSharing === file.gpuSharing ? opts.configFile : undefined));
  return {
    dataDir: resolve(o.dataDir ?? process.env.SKIFF_DATA_DIR ?? join(homedir(), '.skiff')),
    host: o.host ?? '127.0.0.1',
    port,
    nodeName: o.node?.name ?? 'local',
    node: { ...nodeGpus(o.node), cpu, memoryBytes, ...(gpuSharing.deviceSplitCount !== undefined ? { deviceSplitCount: gpuSharing.deviceSplitCount } : {}) },
    gpuSharing: { gpuSchedulerPolicy: gpuSharing.gpuSchedulerPolicy ?? 'spread', ...(gpuSharing.libvgpu ? { libvgpu: gpuSharing.libvgpu } : {}) },
    // the user's rules first: forImage takes the first match, so a user's rule wins over a built-in
    environments: [...(o.environments ?? []), ...builtinEnvironments(repoRoot)],
    jobPodBackoffMs: parseDuration(o.jobPodBackoff ?? '10s', 'jobPodBackoff'),
    jobPodBackoffMaxMs: parseDuration(o.jobPodBackoffMax ?? '6m', 'jobPodBackoffMax'),
    crashLoopBackoffMs: parseDuration(o.crashLoopBackoff ?? '10s', 'crashLoopBackoff'),
    crashLoopBackoffMaxMs: parseDuration(o.crashLoopBackoffMax ?? '5m', 'crashLoopBackoffMax'),
    watchHistory: o.watchHistory ?? 50_000,
    watchBookmarkMs: parseDuration(o.watchBookmarkInterval ?? '15s', 'watchBookmarkInterval'),
    eventTtlMs: parseDuration(o.eventTTL ?? '1h', 'eventTTL'),
    verbose: o.verbose ?? process.env.SKIFF_VERBOSE === '1',
    pythonZygote: o.pythonZygote ?? process.env.SKIFF_PYTHON_ZYGOTE !== '0',
    ingressDomain: o.ingressDomain ?? 'example.com',
    metricsResolutionMs: Math.max(100, parseDuration(o.metricsResolution ?? '5s', 'metricsResolution')),
    notebooks: notebookSettings(o.notebooks),
    queues: queueSettings(o.queues),
    podIsolation: o.podIsolation ?? process.env.SKIFF_POD_ISOLATION !== '0',
    ...(o.podNetwork !== undefined ? { podNetwork: checkPodNetwork(o.podNetwork) } : {}),
    artifacts: artifactsConfig(o.artifacts),
    // a file named in the config file is relative to that file
    ...withAuthn(authnOptions(o, (p) => resolve(file.tokenAuthFile === p || file.oidcJwksFile === p ? dirname(resolve(opts.configFile ?? '.')) : '.', p))),
  };
}

/** the config's `queues:` section, checked as Kueue's Configuration webhook would */
export function queueSettings(o: QueueSettings | undefined): QueueSettings {
  const out: QueueSettings = {};
  if (o?.manageJobsWithoutQueueName !== undefined) {
    if (typeof o.manageJobsWithoutQueueName !== 'boolean') throw new Error('queues.manageJobsWithoutQueueName: must be true or false');
    out.manageJobsWithoutQueueName = o.manageJobsWithoutQueueName;
  }
  if (o?.fairSharing !== undefined) {
    const strategies = o.fairSharing.preemptionStrategies ?? [];
    for (const s of strategies) {
      if (s !== 'LessThanOrEqualToFinalShare' && s !== 'LessThanInitialShare') throw new Error(`queues.fairSharing.preemptionStrategies: unsupported value "${s}"`);
    }
    out.fairSharing = { enable: o.fairSharing.enable !== false, preemptionStrategies: strategies };
  }
  const w = o?.waitForPodsReady;
  if (w !== undefined && w !== null) {
    // Kueue v1beta2's defaults: presence turns it on, timeout 30m, backoff 60 s doubling to an hour
    const dur = (v: unknown, what: string): string | undefined => {
      if (v === undefined) return undefined;
      const ms = typeof v === 'string' ? parseGoDuration(v) : undefined;
      if (ms === undefined || ms <= 0) throw new Error(`queues.waitForPodsReady.${what}: "${String(v)}" is not a duration (use e.g. 5m)`);
      return v as string;
    };
    const rs = w.requeuingStrategy ?? {};
    if (rs.timestamp !== undefined && rs.timestamp !== 'Eviction' && rs.timestamp !== 'Creation') throw new Error(`queues.waitForPodsReady.requeuingStrategy.timestamp: unsupported value "${String(rs.timestamp)}" (Eviction or Creation)`);
    for (const f of ['backoffLimitCount', 'backoffBaseSeconds', 'backoffMaxSeconds'] as const) {
      const n = rs[f];
      if (n !== undefined && (!Number.isInteger(n) || n < 0)) throw new Error(`queues.waitForPodsReady.requeuingStrategy.${f}: must be a whole number of 0 or more`);
    }
    const timeout = dur(w.timeout, 'timeout') ?? '30m';
    const recoveryTimeout = dur(w.recoveryTimeout, 'recoveryTimeout');
    out.waitForPodsReady = {
      timeout,
      ...(recoveryTimeout ? { recoveryTimeout } : {}),
      requeuingStrategy: { timestamp: rs.timestamp ?? 'Eviction', backoffBaseSeconds: rs.backoffBaseSeconds ?? 60, backoffMaxSeconds: rs.backoffMaxSeconds ?? 3600, ...(rs.backoffLimitCount !== undefined ? { backoffLimitCount: rs.backoffLimitCount } : {}) },
    };
  }
  return out;
}

/** a card's memory in MiB from a quantity ("80Gi", "40960Mi") or a plain number of MiB (as HAMi counts) */
function mebibytes(v: string | number, what: string): number {
  const q = typeof v === 'number' ? v * 2 ** 20 : parseQuantity(v);
  if (q === undefined || q <= 0) throw new Error(`${what}: "${v}" is not a quantity of memory (use e.g. 80Gi)`);
  return Math.floor(q / 2 ** 20);
}

/** the node's declared GPUs, checked */
function nodeGpus(n: SkiffOptions['node']): Pick<CapacityOverrides, 'gpus' | 'gpuMemoryMiB' | 'gpuType' | 'gpuCards'> {
  const out: Pick<CapacityOverrides, 'gpus' | 'gpuMemoryMiB' | 'gpuType' | 'gpuCards'> = {};
  if (n?.gpus !== undefined) {
    if (!Number.isInteger(n.gpus) || n.gpus < 0) throw new Error(`node.gpus: "${n.gpus}" is not a number of cards`);
    out.gpus = n.gpus;
  }
  if (n?.gpuMemory !== undefined) out.gpuMemoryMiB = mebibytes(n.gpuMemory, 'node.gpuMemory');
  if (n?.gpuType !== undefined) out.gpuType = String(n.gpuType);
  if (n?.gpuCards !== undefined) {
    if (!Array.isArray(n.gpuCards)) throw new Error('node.gpuCards: must be a list of {type, memory, uuid}');
    if (n.gpus !== undefined && n.gpus !== n.gpuCards.length) throw new Error(`node.gpus: ${n.gpus} does not match the ${n.gpuCards.length} cards of node.gpuCards`);
    out.gpuCards = n.gpuCards.map((c, i) => ({
      ...(c.type !== undefined ? { type: String(c.type) } : {}),
      ...(c.memory !== undefined ? { memoryMiB: mebibytes(c.memory, `node.gpuCards[${i}].memory`) } : {}),
      ...(c.uuid !== undefined ? { uuid: String(c.uuid) } : {}),
    }));
  }
  return out;
}

function relativeTo(configFile: string | undefined): (p: string) => string {
  return (p) => resolve(configFile ? dirname(resolve(configFile)) : '.', p);
}

function gpuSharingConfig(g: GpuSharingOptions | undefined, relative: (p: string) => string): GpuSharingOptions {
  if (g === undefined) return {};
  if (typeof g !== 'object' || g === null) throw new Error('gpuSharing: must be a map (deviceSplitCount, gpuSchedulerPolicy, libvgpu)');
  const out: GpuSharingOptions = {};
  if (g.deviceSplitCount !== undefined) {
    if (!Number.isInteger(g.deviceSplitCount) || g.deviceSplitCount < 1) throw new Error(`gpuSharing.deviceSplitCount: "${g.deviceSplitCount}" is not a whole number of shares (1 or more)`);
    out.deviceSplitCount = g.deviceSplitCount;
  }
  if (g.gpuSchedulerPolicy !== undefined) {
    if (g.gpuSchedulerPolicy !== 'spread' && g.gpuSchedulerPolicy !== 'binpack') throw new Error(`gpuSharing.gpuSchedulerPolicy: "${String(g.gpuSchedulerPolicy)}" must be spread or binpack`);
    out.gpuSchedulerPolicy = g.gpuSchedulerPolicy;
  }
  if (g.libvgpu !== undefined && g.libvgpu !== '') out.libvgpu = relative(String(g.libvgpu));
  return out;
}

/** the config's `artifacts:` section, checked: a root Skiff can write, an endpoint it can call */
export function artifactsConfig(a: ArtifactsOptions | undefined): SkiffConfig['artifacts'] {
  if (a === undefined || a === null) return {};
  if (typeof a !== 'object') throw new Error('artifacts: must be a map (pipelineRoot, s3, launcherImage)');
  const out: SkiffConfig['artifacts'] = {};
  const s3 = a.s3;
  if (s3 !== undefined && s3 !== null) {
    if (typeof s3 !== 'object') throw new Error('artifacts.s3: must be a map (endpoint, region, accessKey, secretKey, forcePathStyle)');
    const settings: S3Settings = {};
    if (s3.endpoint !== undefined) {
      let url: URL | undefined;
      try {
        url = new URL(String(s3.endpoint));
      } catch {
        url = undefined;
      }
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new Error(`artifacts.s3.endpoint: "${String(s3.endpoint)}" is not an http:// or https:// URL`);
      settings.endpoint = String(s3.endpoint).replace(/\/+$/, '');
    }
    if (s3.region !== undefined) settings.region = String(s3.region);
    if ((s3.accessKey === undefined) !== (s3.secretKey === undefined)) throw new Error('artifacts.s3: accessKey and secretKey go together');
    if (s3.accessKey !== undefined) settings.credentials = { accessKeyId: String(s3.accessKey), secretAccessKey: String(s3.secretKey) };
    if (s3.forcePathStyle !== undefined) {
      if (typeof s3.forcePathStyle !== 'boolean') throw new Error('artifacts.s3.forcePathStyle: must be true or false');
      settings.forcePathStyle = s3.forcePathStyle;
    }
    out.s3 = settings;
  }
  if (a.pipelineRoot !== undefined) {
    const root = String(a.pipelineRoot);
    if (parseS3Uri(root)) {
      if (!out.s3) throw new Error(`artifacts.pipelineRoot: ${root} needs an S3 server: set artifacts.s3 (endpoint, and accessKey/secretKey or each namespace's mlpipeline-minio-artifact Secret)`);
    } else if (!root.startsWith('/') && !root.startsWith('file:///')) {
      throw new Error(`artifacts.pipelineRoot: "${root}" must be an absolute directory, file:///path, minio://bucket/path or s3://bucket/path`);
    }
    out.pipelineRoot = root;
  }
  if (a.launcherImage !== undefined) {
    if (typeof a.launcherImage !== 'string' || !/^\S+$/.test(a.launcherImage)) throw new Error(`artifacts.launcherImage: "${String(a.launcherImage)}" is not an image name`);
    if (!out.s3) throw new Error('artifacts.launcherImage: needs artifacts.s3, the S3 server the launcher in each task Pod reaches');
    out.launcherImage = a.launcherImage;
  }
  return out;
}

/** a /16 of IPv4 (the Pods' addresses are <a>.<b>.x.y) */
function checkPodNetwork(cidr: string): string {
  const m = /^(\d{1,3})\.(\d{1,3})\.0\.0\/16$/.exec(cidr);
  if (!m || Number(m[1]) > 255 || Number(m[2]) > 255 || m[1] === '127') throw new Error(`podNetwork: "${cidr}" must be an IPv4 /16 such as 10.89.0.0/16 (not in 127/8)`);
  return cidr;
}
