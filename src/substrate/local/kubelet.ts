// The local node agent: runs the Pods bound to this machine as processes, reports their status, and
// stops them when they are deleted. Every step reads the Pod from the store and the run directories
// from disk, so a restarted server adopts what the last one started.
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { connect as tcpConnect, type Socket } from 'node:net';
import { constants } from 'node:os';
import { join, posix, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import type { Container, ContainerPort, Pod } from '../../api/core-types.js';
import { ApiError, StatusReason, isNotFound } from '../../api/errors.js';
import { podLogContainer } from '../../api/core.js';
import { Kinds } from '../../api/index.js';
import type { ObjectKey, StoredObject } from '../../api/meta.js';
import { deepEqual, keyString, now } from '../../api/meta.js';
import type { Controller, Manager, Result } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import type { GpuCard } from '../../api/gpu-sharing.js';
import { containerGpuRequest, podContainers, podDevices } from '../../api/gpu-sharing.js';
import { assignedGpus } from '../../scheduler/placement.js';
import type { Client } from '../../store/client.js';
import type { PodAttachOptions, PodAttachSession, PodExecOptions, PodExecSession, PodFile, PodLogOptions } from '../substrate.js';
import { ConfigError, containerArgv, containerEnv } from './env.js';
import type { ContainerGpus } from './gpu-sharing.js';
import { describeShares, gpuEnv, isShared, mpsPipeDir, preloadList, vgpuLibTarget, vgpuLockDir } from './gpu-sharing.js';
import { followOutput } from './attach.js';
import { ExecError, execIn, killExec } from './exec.js';
import { type Environment, type Environments, imageBinds } from './environments.js';
import { followLog, logTail, readLog, terminationLogLines } from './logs.js';
import type { PythonLaunch, PythonPods } from './python-pods.js';
import { PodAddresses, hostsFile, netPreloadPath, podNetworkEnv, sandboxPreloadPath, writeHosts } from './network.js';
import type { ServiceView } from './network.js';
import type { BindMount, ContainerProcess, ExitInfo, SandboxIsolation } from './process.js';
import { adopt, bwrapAvailable, execTarget, launch, recordTerminationMessage } from './process.js';
import type { ContainerRuntime, PodDirs, PodRuntime } from './runtime.js';
import { loadContainer, logFile, readPodRecord, runDir, writePodRecordAsync } from './runtime.js';
import { decidePhase, podStatus } from './status.js';
import type { ContainerIO } from './stdin.js';
import { needsStdin, openStdin, withStdin } from './stdin.js';
import { TerminalSizer } from './tty.js';
import { after, type Timer } from '../../util/timers.js';
import { containerBinds, prepareVolumes } from './volumes.js';
import { hostPathOf, readFilesAt } from './pod-files.js';
import { runtimeDirFor } from './runtime-dir.js';
import { automounts, inClusterEnv, resolvedMountPath, serviceAccountBind, serviceAccountMountPath, type InClusterContract } from './serviceaccount.js';
import { ProjectedTokens, type IssuedToken, type TokenSource } from './projected-tokens.js';
import type { LiveContainer } from './usage.js';
import { NamespaceUids, containerUser, ownVolume, podTmpDir, type IsolationOptions, type PodUser } from './isolation.js';
import { PodNetworks, applyRuleset } from './podnet.js';
import { networkPolicyRuleset, type PolicyPod } from './network-policy.js';
import type { NetworkPolicy } from '../../api/networking.js';

export interface KubeletOptions {
  client: Client;
  recorder: Recorder;
  dataDir: string;
  nodeName: string;
  environments: Environments;
  /** GPUs on this node, to hide them from pods that did not ask for one */
  gpuCount: number;
  /** the node's cards, to turn a Pod's shares into CUDA device numbers and limits */
  gpuCards?: GpuCard[];
  /** HAMi-core's libvgpu.so, preloaded into containers with a share of a card to enforce it */
  libvgpu?: string;
  /** lightweight Python components: their pip bootstrap as an image pull, the warm zygote */
  python?: PythonPods;
  /** first on every container's default PATH: where `sh` is bash (shell.ts) */
  shellDir?: string;
  /** crash-loop back-off: Kubernetes starts at 10s and doubles up to 5m */
  crashLoopBaseMs?: number;
  crashLoopMaxMs?: number;
  /** how long a Pod whose containers have all just started waits before its Running status is
   *  written (default 30 ms): one that ends by then is reported once, with its final state */
  runningReportMs?: number;
  log?: (msg: string) => void;
  /** a deleted Pod whose containers have stopped is removed by the kubelet (a delete with grace
   *  period 0), as on a cluster: kube-apiserver keeps it until then. The SQLite store removes it
   *  itself once its final status is written */
  removeStopped?: boolean;
  /** the node's address, reported as the Pods' hostIP */
  hostIp?: string;
  /** one node of several (`skiff node`): hosts files name the Pods of every node the informers see,
   *  and the Services they back, not only this node's */
  clusterNames?: boolean;
  /** on a cluster: where Pods reach the cluster's API server (KUBERNETES_SERVICE_HOST and _PORT) */
  apiEndpoint?: { host: string; port: number };
  /** on a cluster: a token for a Pod's service account from the cluster's TokenRequest API, bound
   *  to the Pod (projected volumes' serviceAccountToken sources) */
  requestToken?: (pod: Pod & StoredObject, req: { audience?: string; expirationSeconds: number }) => Promise<IssuedToken>;
  /** on a cluster: the directory of the PersistentVolume a bound claim names (volumes.ts) */
  claimVolumeDir?: (claim: StoredObject) => Promise<string>;
  /** a container started or was adopted (the usage monitor samples while any runs) */
  onContainerStart?: () => void;
  /** tenancy: Pods run as unprivileged users, in network namespaces of their own, seeing the host
   *  read-only with Skiff's own files hidden (isolation.ts); needs root, bubblewrap and iproute2 */
  isolation?: IsolationOptions & {
    /** host directories with one subdirectory per namespace (the pipeline root, Katib's
     *  checkpoints): a Pod sees its own namespace's, read-write, and may mount it as a hostPath */
    namespaceDirs: string[];
    /** directories in the data dir every Pod may read (cached Python environments, the `sh` shim) */
    reveal: string[];
  };
  /** KFP's launcher on this node (`skiff node`): the artifacts of Pods that carry its plan */
  podArtifacts?: PodArtifacts;
}

/** where a path a Pod sees is on this machine: the file, and the volume directory it must stay in */
export type PodPaths = (podPath: string) => { host: string; base: string } | undefined;

/**
 * The launcher's part for the Pods that ask for it (pipelines' task Pods on a cluster): their input
 * artifacts downloaded into their volumes before any container starts, their outputs uploaded after
 * every container has exited 0 and before the Pod is reported Succeeded. A failure fails the Pod.
 */
export interface PodArtifacts {
  /** whether the Pod asks for it; throws when its request is malformed (the Pod fails with that) */
  wants(pod: Pod): boolean;
  download(pod: Pod & StoredObject, paths: PodPaths, signal: AbortSignal): Promise<void>;
  upload(pod: Pod & StoredObject, paths: PodPaths, signal: AbortSignal): Promise<void>;
}

type ArtifactStep = { state: 'running'; abort: AbortController } | { state: 'done' } | { state: 'failed'; error: Error };

const osSignals = constants.signals as Record<string, number>;
const terminalPhase = (p: Pod): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
/** a container that ran this long without failing starts its back-off afresh */
const backoffResetMs = 10 * 60_000;
/** how many times in a row a start whose sandbox bubblewrap could not set up is made again */
const sandboxSetupRetries = 3;
/** how long an attach waits for a just-started container to open its stdin FIFO */
const STDIN_OPEN_WAIT_MS = 5_000;

export class Kubelet {
  private readonly pods = new Map<string, PodRuntime>();
  private readonly uidByKey = new Map<string, string>();
  private addresses: PodAddresses;
  private readonly net?: PodNetworks;
  private readonly uids?: NamespaceUids;
  /** container runs (their FIFO's directories) whose `stdinOnce` stdin an attach session has had */
  private readonly stdinTaken = new Set<string>();
  private readonly podsDir: string;
  /** each Pod's part of the runtime directory: service-account files and its containers' run state */
  private readonly statePodsDir: string;
  /** projected service-account tokens, asked for again before they expire */
  private readonly tokens: ProjectedTokens;
  private controller?: Controller;
  private readonly sandboxed: boolean;
  private hostsTimer?: Timer;
  private policyTimer?: Timer;
  /** Pods (by uid) already told their GPU limits are not enforced here, or that CUDA_DISABLE_CONTROL is ignored */
  private readonly gpuNotices = new Set<string>();
  /** failed loads of the ruleset in a row (the retry backs off) */
  private policyFailures = 0;
  private stopped = false;
  /** the launcher's downloads and uploads of Pods (by uid), in memory: after a restart they are made again */
  private readonly artifactSteps = new Map<string, { inputs?: ArtifactStep; outputs?: ArtifactStep }>();
  /** the ruleset the kernel has now (nft), to skip writing the same again */
  private appliedRuleset?: string;
  /** ports on the node address isolated Pods may reach: the API, in-cluster HTTPS, Katib's DB */
  private nodePorts: number[] = [];
  /** the API server's address, given to every container as SKIFF_SERVER (what the skiff CLI reads) */
  apiServer?: string;
  /** the HTTPS endpoint, CA and tokens of the in-cluster contract (serviceaccount.ts) */
  inCluster?: InClusterContract;
  /** names the platform itself answers at, with no Pod behind them (Katib's katib-db-manager.kubeflow) */
  platformServices: ServiceView[] = [];
  /** whether Pods reach KFP's API at its in-cluster Service name (one of platformServices), as kfp.Client() dials it with no host */
  kfpByName = false;

  constructor(private readonly opts: KubeletOptions) {
    this.podsDir = join(opts.dataDir, 'pods');
    mkdirSync(this.podsDir, { recursive: true });
    // the runtime directory (runtime-dir.ts): on a tmpfs, linked from the data directory as `run`
    this.statePodsDir = join(runtimeDirFor(opts.dataDir), 'pods');
    mkdirSync(this.statePodsDir, { recursive: true });
    this.tokens = new ProjectedTokens({ log: opts.log });
    this.sandboxed = bwrapAvailable();
    const iso = opts.isolation;
    if (iso) {
      if (!this.sandboxed) throw new Error('isolating Pods (tenancy) needs bubblewrap (bwrap), and it is not installed or cannot make namespaces here');
      this.net = new PodNetworks(iso.podCidr);
      this.uids = new NamespaceUids(join(opts.dataDir, 'namespace-uids.json'));
      this.addresses = new PodAddresses(iso.podCidr, [this.net.nodeIp]);
    } else {
      this.addresses = new PodAddresses();
    }
  }

  /** Pods' addresses come from this range (a cluster's Node.spec.podCIDR) instead of the default
   *  one; before register(), while no address has been handed out */
  usePodRange(cidr: string): void {
    if (this.net) throw new Error('isolated Pods take their addresses from the Pod network');
    this.addresses = new PodAddresses(cidr);
  }

  /** the node's address on the Pod network, where Pods reach the server (with isolation) */
  get nodeIp(): string | undefined {
    return this.net?.nodeIp;
  }

  /** the host side of Pod networks (before the server listens at the node address) */
  async setUpNetwork(): Promise<void> {
    await this.net?.setUpHost();
  }

  get bubblewrap(): boolean {
    return this.sandboxed;
  }

  /** adopts running pods, removes what no Pod owns any more, and starts the agent's controller */
  async register(mgr: Manager): Promise<Controller> {
    const { client, nodeName } = this.opts;
    const bound = (await client.listAll<Pod>(Kinds.Pod, { fieldSelector: `spec.nodeName=${nodeName}` })).filter((p) => p.spec.nodeName === nodeName);
    const known = new Set(bound.map((p) => p.metadata.uid));
    for (const p of bound) if (p.status?.podIP && !terminalPhase(p)) this.addresses.claim(p.metadata.uid, p.status.podIP);
    for (const uid of new Set([...readdirSync(this.podsDir), ...readdirSync(this.statePodsDir)])) {
      if (!known.has(uid)) {
        this.removePodDir(uid);
        await this.net?.remove(uid);
      }
    }
    this.controller = mgr.add({
      name: 'kubelet',
      for: Kinds.Pod,
      predicate: (e) => {
        if (e.object.spec?.nodeName === nodeName) return true;
        // another node's Pod that got or lost an address: names in this node's hosts files change
        if (this.opts.clusterNames) this.scheduleHosts();
        return false;
      },
      watches: [
        { kind: Kinds.Service, map: () => { this.scheduleHosts(); return []; } },
        // with isolation, NetworkPolicies and namespace labels decide who reaches whom
        ...(this.net ? [
          { kind: Kinds.NetworkPolicy, map: () => { this.schedulePolicies(); return []; } },
          { kind: Kinds.Namespace, map: () => { this.schedulePolicies(); return []; } },
        ] : []),
      ],
      reconcile: (key) => this.reconcile(key),
      workers: 4,
    });
    return this.controller;
  }

  /** the Pod's directories: on disk (logs, volumes, its record) and in the runtime directory */
  private podDirs(uid: string): PodDirs {
    return { pod: join(this.podsDir, uid), state: join(this.statePodsDir, uid) };
  }

  /** kills whatever a Pod's run directories still have running and deletes them */
  private removePodDir(uid: string): void {
    const dirs = this.podDirs(uid);
    // run state is in the runtime directory; a container started before it existed has its own on disk
    for (const cdir of [join(dirs.state, 'containers'), join(dirs.pod, 'containers')]) {
      if (!existsSync(cdir)) continue;
      for (const name of readdirSync(cdir)) {
        if (!statSync(join(cdir, name)).isDirectory()) continue;
        for (const n of readdirSync(join(cdir, name)).filter((f) => /^\d+$/.test(f))) {
          const found = adopt(join(cdir, name, n));
          if ('exited' in found) found.signal('SIGKILL');
        }
      }
    }
    rmSync(dirs.state, { recursive: true, force: true });
    rmSync(dirs.pod, { recursive: true, force: true });
  }

  private async reconcile(key: ObjectKey): Promise<Result> {
    // from the Manager's informer, as the scheduler reads it: a stale copy costs a conflict on the
    // status write, and the key is tried again; a Pod the cache lacks is looked up in the store
    const cached = this.controller?.cache.get(Kinds.Pod, key) as (Pod & StoredObject) | undefined;
    const pod = cached ? structuredClone(cached) : await this.opts.client.find<Pod>(Kinds.Pod, key);
    const k = keyString(key);
    if (!pod || pod.spec.nodeName !== this.opts.nodeName) {
      const uid = this.uidByKey.get(k);
      if (uid && (!pod || pod.metadata.uid !== uid)) await this.forget(uid);
      return {};
    }
    if (this.uidByKey.get(k) && this.uidByKey.get(k) !== pod.metadata.uid) await this.forget(this.uidByKey.get(k) ?? '');
    const rt = this.runtimeFor(pod);
    if (terminalPhase(pod)) {
      this.tokens.forget(rt.uid);
      this.killAll(rt, 'SIGKILL');
      // its launcher's steps are over (reported in its phase)
      this.artifactSteps.delete(rt.uid);
      this.addresses.release(rt.uid);
      if (rt.net) {
        rt.net = undefined;
        await this.net?.remove(rt.uid);
      }
      if (pod.metadata.deletionTimestamp) await this.remove(pod);
      return {};
    }
    if (pod.metadata.deletionTimestamp) return this.terminate(pod, rt, 'Killing');
    const deadline = pod.spec.activeDeadlineSeconds;
    if (deadline !== undefined) {
      const left = Date.parse(rt.startTime) + deadline * 1000 - Date.now();
      if (left <= 0 || rt.termination) {
        rt.termination ??= { deadline: Date.now() + (pod.spec.terminationGracePeriodSeconds ?? 30) * 1000, signalled: false, killed: false, reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' };
        return this.terminate(pod, rt, 'DeadlineExceeded');
      }
      const next = await this.drive(pod, rt);
      return { requeueAfter: Math.min(next.requeueAfter ?? Infinity, left + 5) };
    }
    return this.drive(pod, rt);
  }

  private runtimeFor(pod: Pod & StoredObject): PodRuntime {
    const existing = this.pods.get(pod.metadata.uid);
    if (existing) return existing;
    const dirs = this.podDirs(pod.metadata.uid);
    const dir = dirs.pod;
    // the record is run state (a server from before the runtime directory kept it on disk)
    const rec = readPodRecord(dirs.state) ?? readPodRecord(dir);
    const ip = rec?.ip ?? pod.status?.podIP ?? this.addresses.allocate(pod.metadata.uid);
    this.addresses.claim(pod.metadata.uid, ip);
    const startTime = rec?.startTime ?? pod.status?.startTime ?? now();
    const rt: PodRuntime = { uid: pod.metadata.uid, namespace: pod.metadata.namespace ?? '', name: pod.metadata.name, dir, stateDir: dirs.state, ip, startTime, containers: new Map(), hostsFile: join(dir, 'hosts') };
    // without a record a restarted server takes the address and start from the Pod's status
    if (!rec) rt.recorded = writePodRecordAsync(dirs.state, { uid: rt.uid, namespace: rt.namespace, name: rt.name, ip, startTime }).catch((e: unknown) => this.opts.log?.(`kubelet: pod ${rt.namespace}/${rt.name}: writing its record: ${(e as Error).message}`));
    // a container adopted after a restart may be sandboxed: its hosts file is there
    if (rec) rt.usesHosts = existsSync(rt.hostsFile);
    for (const c of pod.spec.initContainers ?? []) rt.containers.set(c.name, { ...loadContainer(dirs, c.name, true), fallbackToLogs: c.terminationMessagePolicy === 'FallbackToLogsOnError' });
    for (const c of pod.spec.containers) rt.containers.set(c.name, { ...loadContainer(dirs, c.name, false), fallbackToLogs: c.terminationMessagePolicy === 'FallbackToLogsOnError' });
    for (const c of rt.containers.values()) if (c.proc) this.watchExit(rt, c, c.proc);
    if ([...rt.containers.values()].some((c) => c.proc)) this.opts.onContainerStart?.();
    this.pods.set(rt.uid, rt);
    this.uidByKey.set(keyString({ namespace: rt.namespace, name: rt.name }), rt.uid);
    return rt;
  }

  private async forget(uid: string): Promise<void> {
    for (const k of this.gpuNotices) if (k.startsWith(`${uid}/`)) this.gpuNotices.delete(k);
    for (const step of Object.values(this.artifactSteps.get(uid) ?? {})) if (step.state === 'running') step.abort.abort(new Error('the Pod is gone'));
    this.artifactSteps.delete(uid);
    const rt = this.pods.get(uid);
    this.tokens.forget(uid);
    // a record still being written would make the directory again after it is removed
    await rt?.recorded?.catch(() => undefined);
    if (rt) {
      this.killAll(rt, 'SIGKILL');
      this.pods.delete(uid);
      this.uidByKey.delete(keyString({ namespace: rt.namespace, name: rt.name }));
    }
    this.addresses.release(uid);
    this.removePodDir(uid);
    await this.net?.remove(uid);
    this.scheduleHosts();
  }

  private killAll(rt: PodRuntime, sig: NodeJS.Signals): void {
    for (const c of rt.containers.values()) if (c.proc && !c.current?.exit) c.proc.signal(sig);
  }

  private watchExit(rt: PodRuntime, c: ContainerRuntime, proc: ContainerProcess): void {
    proc.exited().then(async (exit) => {
      if (c.proc !== proc) return;
      const run = c.current?.n;
      if (c.fallbackToLogs && exit.exitCode !== 0 && !exit.message && run !== undefined) {
        const message = logTail(await readLog(logFile(rt.dir, c.name, run), { tailLines: terminationLogLines }).catch(() => ''));
        if (message) {
          exit.message = message;
          recordTerminationMessage(proc.stateDir, message);
        }
      }
      if (c.proc !== proc) return;
      try {
        if (run !== undefined && await this.retrySandboxSetup(rt, c, run, exit)) return;
      } catch (e) {
        // the start could not be undone: it ends as it did
        this.opts.log?.(`kubelet: ${rt.namespace}/${rt.name}/${c.name}: starting it again: ${(e as Error).message}`);
      }
      if (c.proc !== proc) return;
      c.sandboxRetries = 0;
      c.proc = undefined;
      if (c.current) c.current.exit = exit;
      this.controller?.enqueue({ namespace: rt.namespace, name: rt.name });
    }).catch((e: unknown) => this.opts.log?.(`kubelet: ${rt.namespace}/${rt.name}/${c.name}: ${(e as Error).message}`));
  }

  /**
   * bubblewrap could not set the sandbox up, so the container's program never ran: its log is only
   * bwrap's own error lines. Binding the host's root races with a mount point vanishing under it (a
   * network namespace another Pod's removal unmounts from /run/netns), so this start is undone (its
   * run directory and log) and made again, a few times, with no restart counted, as a kubelet retries
   * a sandbox it could not create. A lasting error (a bind source that is missing) fails as before.
   */
  private async retrySandboxSetup(rt: PodRuntime, c: ContainerRuntime, run: number, exit: ExitInfo): Promise<boolean> {
    if (exit.exitCode !== 1 || !c.beforeStart || (c.sandboxRetries ?? 0) >= sandboxSetupRetries) return false;
    const ranFor = Date.parse(exit.finishedAt) - Date.parse(c.current?.startedAt ?? '');
    if (!(ranFor < 10_000)) return false;
    const log = (await readLog(logFile(rt.dir, c.name, run), {}).catch(() => '')).trim();
    if (!log || !log.split('\n').every((l) => l.startsWith('bwrap: '))) return false;
    if (this.stopped || rt.termination) return false;
    // undone first (a failure leaves the start as it ended); the shim may still be writing its last
    // files in the run directory, so its removal is tried again when an entry appears under it
    await rm(runDir(rt.stateDir, c.name, run), { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    await rm(logFile(rt.dir, c.name, run), { force: true });
    c.sandboxRetries = (c.sandboxRetries ?? 0) + 1;
    c.proc = undefined;
    c.current = c.beforeStart.current;
    c.last = c.beforeStart.last;
    c.beforeStart = undefined;
    this.opts.log?.(`kubelet: ${rt.namespace}/${rt.name}/${c.name}: the sandbox could not be set up (${log.split('\n')[0]}); starting it again (${c.sandboxRetries} of ${sandboxSetupRetries})`);
    setTimeout(() => this.controller?.enqueue({ namespace: rt.namespace, name: rt.name }), 200 * c.sandboxRetries).unref();
    return true;
  }

  /** graceful stop: SIGTERM, then SIGKILL when the grace period is over; then the final status */
  private async terminate(pod: Pod & StoredObject, rt: PodRuntime, reason: string): Promise<Result> {
    const grace = pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
    const t = (rt.termination ??= { deadline: Date.now() + grace * 1000, signalled: false, killed: false });
    const running = [...rt.containers.values()].filter((c) => c.proc && !c.current?.exit);
    if (running.length && !t.signalled) {
      t.signalled = true;
      for (const c of running) {
        c.proc?.signal('SIGTERM');
        this.opts.recorder.event(pod, 'Normal', reason, `Stopping container ${c.name}`);
      }
    }
    if (running.length) {
      const left = t.deadline - Date.now();
      if (left > 0) return { requeueAfter: left };
      if (!t.killed) {
        t.killed = true;
        this.killAll(rt, 'SIGKILL');
      }
      return { requeueAfter: 100 };
    }
    // every process has exited: report the final state; nothing restarts any more
    for (const c of rt.containers.values()) c.waiting = undefined;
    const phase = decidePhase(pod, rt).phase === 'Succeeded' ? 'Succeeded' : 'Failed';
    await this.writeStatus(pod, rt, { phase, reason: t.reason, message: t.message });
    if (pod.metadata.deletionTimestamp) await this.remove(pod);
    return {};
  }

  /** the end of a deletion on a cluster: the Pod's processes are gone, so the API server may forget it */
  private async remove(pod: Pod & StoredObject): Promise<void> {
    if (!this.opts.removeStopped) return;
    try {
      await this.opts.client.delete(Kinds.Pod, { namespace: pod.metadata.namespace, name: pod.metadata.name }, { gracePeriodSeconds: 0, uid: pod.metadata.uid });
    } catch (e) {
      // gone already, or a new Pod of the same name (the uid precondition): nothing of ours to remove
      if (isNotFound(e) || (e instanceof ApiError && e.code === 409)) return;
      throw e;
    }
  }

  private async configSources(ns: string): Promise<{ configMap: (n: string) => Promise<StoredObject | undefined>; secret: (n: string) => Promise<StoredObject | undefined> }> {
    const { client } = this.opts;
    return {
      configMap: (name) => client.find(Kinds.ConfigMap, { namespace: ns, name }),
      secret: (name) => client.find(Kinds.Secret, { namespace: ns, name }),
    };
  }

  /** where a Pod's projected service-account tokens come from: the cluster's TokenRequest API on a
   *  cluster, else this server's own signing key (its in-cluster endpoint), else nowhere */
  private tokenSource(pod: Pod & StoredObject): TokenSource | undefined {
    const { requestToken } = this.opts;
    if (requestToken) return (req) => requestToken(pod, req);
    const local = this.inCluster;
    if (!local) return undefined;
    return async (req) => {
      const sa = await this.opts.client.find(Kinds.ServiceAccount, { namespace: pod.metadata.namespace ?? 'default', name: pod.spec.serviceAccountName ?? 'default' });
      if (!sa) throw new Error(`serviceaccount "${pod.spec.serviceAccountName ?? 'default'}" not found`);
      const nowSeconds = Math.floor(Date.now() / 1000);
      return {
        token: local.token(pod, sa, { expirationSeconds: req.expirationSeconds, ...(req.audience ? { audiences: [req.audience] } : {}) }),
        expirationTimestamp: new Date((nowSeconds + req.expirationSeconds) * 1000).toISOString(),
        expirationSeconds: req.expirationSeconds,
      };
    };
  }

  /** the next step for a live pod: init containers in order, then all containers, with restarts */
  private async drive(pod: Pod & StoredObject, rt: PodRuntime): Promise<Result> {
    const { client, recorder } = this.opts;
    const ns = pod.metadata.namespace ?? 'default';
    if (this.net && !rt.net) {
      try {
        const net = await this.net.create(rt.uid, rt.ip);
        rt.net = net;
        // the kernel knows the Pod's policies before any of its processes runs
        try {
          await this.policiesNow();
        } catch (e) {
          rt.net = undefined;
          throw new Error(`loading the NetworkPolicies (nftables): ${(e as Error).message}`);
        }
      } catch (e) {
        const message = `Failed to create pod sandbox: network: ${(e as Error).message}`;
        recorder.event(pod, 'Warning', 'FailedCreatePodSandBox', message);
        for (const c of rt.containers.values()) c.waiting = { reason: 'ContainerCreating', message };
        await this.writeStatus(pod, rt, { phase: 'Pending' });
        return { requeueAfter: 2000 };
      }
    }
    if (!rt.volumes) {
      try {
        if (this.opts.isolation) this.checkHostPaths(pod);
        const src = await this.configSources(ns);
        const token = this.tokenSource(pod);
        rt.volumes = await prepareVolumes(pod, rt.dir, {
          ...src,
          claim: (name) => client.find(Kinds.PersistentVolumeClaim, { namespace: ns, name }),
          claimDir: (namespace, claim) => join(this.opts.dataDir, 'volumes', namespace, claim),
          ...(this.opts.claimVolumeDir ? { claimVolumeDir: this.opts.claimVolumeDir } : {}),
          ...(token ? {
            serviceAccountToken: token,
            onToken: (t) => this.tokens.track(rt.uid, t.file, t.issued, token, t.ask, t.mode),
          } : {}),
        }, rt.stateDir);
        if (this.opts.isolation) this.ownVolumes(pod, rt);
        const mounts = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].flatMap((c) => c.volumeMounts ?? []);
        if (!this.sandboxed && mounts.length) {
          const where = mounts.map((m) => `${m.name} at ${rt.volumes?.get(m.name)?.dir} (not ${m.mountPath})`).join(', ');
          recorder.event(pod, 'Warning', 'VolumeMountsUnavailable', `bubblewrap (bwrap) is not installed, so volumes cannot be mounted at their mountPath: ${where}`);
        }
        this.scheduleHosts();
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        recorder.event(pod, 'Warning', 'FailedMount', `MountVolume.SetUp failed: ${e.message}`);
        for (const c of rt.containers.values()) c.waiting = { reason: 'ContainerCreating', message: e.message };
        await this.writeStatus(pod, rt, { phase: 'Pending' });
        rt.volumes = undefined;
        return { requeueAfter: 2000 };
      }
    }
    // KFP's launcher before the component: the inputs in the Pod's volumes before any container starts
    if (!rt.failure && this.wantsArtifacts(pod, rt) && ![...rt.containers.values()].some((c) => c.current)) {
      const step = this.artifactStep(pod, rt, 'inputs');
      if (step.state === 'running') {
        for (const c of rt.containers.values()) c.waiting = { reason: 'PodInitializing', message: 'downloading the input artifacts' };
        await this.writeStatus(pod, rt, { phase: 'Pending' });
        return {};
      }
      if (step.state === 'failed') rt.failure = { phase: 'Failed', reason: 'ArtifactDownloadFailed', message: step.error.message };
      else for (const c of rt.containers.values()) if (c.waiting?.reason === 'PodInitializing') c.waiting = undefined;
    }
    if (rt.failure) return this.fail(pod, rt, rt.failure);
    const policy = pod.spec.restartPolicy ?? 'Always';
    let wake = Infinity;
    // init containers: one at a time, each must succeed before the next
    let initDone = true;
    for (const spec of pod.spec.initContainers ?? []) {
      const c = rt.containers.get(spec.name) as ContainerRuntime;
      const exit = c.current?.exit;
      if (exit?.exitCode === 0) continue;
      initDone = false;
      if (c.current && !exit) break; // running
      if (exit && policy === 'Never') break; // the pod fails
      const w = await this.startOrBackOff(pod, rt, spec, c);
      wake = Math.min(wake, w);
      break;
    }
    if (initDone) {
      for (const spec of pod.spec.containers) {
        const c = rt.containers.get(spec.name) as ContainerRuntime;
        const exit = c.current?.exit;
        if (c.current && !exit) continue;
        if (exit && (policy === 'Never' || (policy === 'OnFailure' && exit.exitCode === 0))) continue;
        wake = Math.min(wake, await this.startOrBackOff(pod, rt, spec, c));
      }
    }
    if (rt.failure) return this.fail(pod, rt, rt.failure);
    let decision = decidePhase(pod, rt);
    // KFP's launcher after the component: the outputs uploaded before the Pod is reported Succeeded
    if (decision.phase === 'Succeeded' && this.wantsArtifacts(pod, rt)) {
      const step = this.artifactStep(pod, rt, 'outputs');
      // the status stays what it was until the uploads end
      if (step.state === 'running') return {};
      if (step.state === 'failed') decision = { phase: 'Failed', reason: 'ArtifactUploadFailed', message: step.error.message };
    }
    const hold = this.runningHold(pod, rt, decision.phase);
    if (hold > 0) wake = Math.min(wake, Date.now() + hold);
    else await this.writeStatus(pod, rt, decision);
    return Number.isFinite(wake) ? { requeueAfter: Math.max(1, wake - Date.now()) } : {};
  }

  /**
   * How much longer the first Running status of a Pod waits (0: write it now). The kubelet's status
   * manager reports asynchronously too. A pipeline task forked by the zygote runs for a few
   * milliseconds: reporting Running, then Succeeded, costs a second write of the Pod and a pass of
   * every controller that watches Pods, for a state nobody acts on. A Pod with a container that has
   * been up longer, or one already reported Running, is written at once.
   */
  private runningHold(pod: Pod, rt: PodRuntime, phase: string): number {
    const wait = this.opts.runningReportMs ?? 30;
    if (wait <= 0 || phase !== 'Running' || pod.status?.phase === 'Running') return 0;
    let oldest = Infinity;
    for (const c of rt.containers.values()) {
      if (c.init || !c.current || c.current.exit) continue;
      oldest = Math.min(oldest, Date.parse(c.current.startedAt));
    }
    return Number.isFinite(oldest) ? Math.max(0, oldest + wait - Date.now()) : 0;
  }

  /** whether the Pod asks for the launcher's part; a malformed request fails the Pod */
  private wantsArtifacts(pod: Pod & StoredObject, rt: PodRuntime): boolean {
    try {
      return this.opts.podArtifacts?.wants(pod) ?? false;
    } catch (e) {
      rt.failure ??= { phase: 'Failed', reason: 'ArtifactPlanInvalid', message: (e as Error).message };
      return false;
    }
  }

  /** where a path the Pod's first container sees is on this machine, through its volumes */
  private podPaths(pod: Pod, rt: PodRuntime): PodPaths {
    const volumeMounts = pod.spec.containers[0]?.volumeMounts ?? [];
    return (podPath) => {
      const p = posix.normalize(podPath);
      const m = volumeMounts.filter((v) => p === v.mountPath || p.startsWith(`${v.mountPath.replace(/\/+$/, '')}/`)).sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
      const vol = m && rt.volumes?.get(m.name);
      if (!m || !vol || vol.readOnly) return undefined;
      const rest = p.slice(m.mountPath.replace(/\/+$/, '').length).split('/').filter((s) => s !== '' && s !== '.' && s !== '..');
      return { host: join(vol.dir, ...(m.subPath ? [m.subPath] : []), ...rest), base: vol.dir };
    };
  }

  /**
   * The launcher's download (before the containers) or upload (after them) of a Pod: started in the
   * background on first ask, with an event; the Pod is looked at again when it ends.
   */
  private artifactStep(pod: Pod & StoredObject, rt: PodRuntime, kind: 'inputs' | 'outputs'): ArtifactStep {
    const artifacts = this.opts.podArtifacts as PodArtifacts;
    const steps = this.artifactSteps.get(rt.uid) ?? {};
    this.artifactSteps.set(rt.uid, steps);
    const known = steps[kind];
    if (known) return known;
    const abort = new AbortController();
    const step: ArtifactStep = { state: 'running', abort };
    steps[kind] = step;
    const { recorder } = this.opts;
    const t0 = Date.now();
    recorder.event(pod, 'Normal', kind === 'inputs' ? 'DownloadingInputs' : 'UploadingOutputs', kind === 'inputs' ? 'Downloading the input artifacts' : 'Uploading the outputs');
    const paths = this.podPaths(pod, rt);
    const work = Promise.resolve().then(() => (kind === 'inputs' ? artifacts.download(pod, paths, abort.signal) : artifacts.upload(pod, paths, abort.signal)));
    work.then(() => {
      if (steps[kind] !== step) return;
      steps[kind] = { state: 'done' };
      recorder.event(pod, 'Normal', kind === 'inputs' ? 'DownloadedInputs' : 'UploadedOutputs', `${kind === 'inputs' ? 'Downloaded the input artifacts' : 'Uploaded the outputs'} in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
    }, (e: unknown) => {
      if (steps[kind] !== step) return;
      const error = e instanceof Error ? e : new Error(String(e));
      steps[kind] = { state: 'failed', error };
      recorder.event(pod, 'Warning', kind === 'inputs' ? 'FailedDownloadingInputs' : 'FailedUploadingOutputs', error.message);
    }).finally(() => {
      if (this.artifactSteps.get(rt.uid) === steps) this.controller?.enqueue({ namespace: rt.namespace, name: rt.name });
    });
    return step;
  }

  /** a Pod that cannot start: what did start is killed, and the Pod ends Failed */
  private async fail(pod: Pod & StoredObject, rt: PodRuntime, failure: NonNullable<PodRuntime['failure']>): Promise<Result> {
    this.killAll(rt, 'SIGKILL');
    await this.writeStatus(pod, rt, failure);
    return {};
  }

  /**
   * A container whose command starts with the kfp SDK's pip bootstrap gets its environment first,
   * as a kubelet pulls an image: `Pulling`, then `Pulled` (or `Failed`), while the container waits.
   * The install runs on its own; the Pod is looked at again when it ends. Returns how the container
   * starts, undefined to start it as written, or 'waiting'.
   */
  private async pythonLaunch(pod: Pod & StoredObject, rt: PodRuntime, spec: Container, c: ContainerRuntime): Promise<PythonLaunch | undefined | 'waiting'> {
    const py = this.opts.python;
    if (!py) return undefined;
    const pull = py.pull(spec);
    if (!pull?.packages.length) return py.launch(pod, spec, pull && { pull });
    const what = `Python environment for pip packages ${pull.packages.join(' ')}`;
    const { recorder } = this.opts;
    if (!c.preparing && py.present(pull)) {
      c.preparing = { state: 'ready', ...(await py.prepare(pull)) };
      recorder.event(pod, 'Normal', 'Pulled', `${what} already present on machine`);
    }
    if (!c.preparing) {
      const prep: NonNullable<ContainerRuntime['preparing']> = { state: 'pending' };
      c.preparing = prep;
      recorder.event(pod, 'Normal', 'Pulling', `preparing ${what}`);
      const t0 = Date.now();
      py.prepare(pull).then((r) => {
        Object.assign(prep, { state: 'ready', ...r });
        recorder.event(pod, 'Normal', 'Pulled', `Successfully prepared ${what} in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
      }, (e: unknown) => {
        Object.assign(prep, { state: 'failed', message: (e as Error).message });
        recorder.event(pod, 'Warning', 'Failed', `Failed to prepare ${what}: ${(e as Error).message}`);
      }).finally(() => this.controller?.enqueue({ namespace: rt.namespace, name: rt.name }));
    }
    const prep = c.preparing;
    if (prep.state === 'pending') {
      c.waiting = { reason: c.init ? 'PodInitializing' : 'ContainerCreating', message: `preparing ${what}` };
      return 'waiting';
    }
    if (prep.state === 'failed') {
      const message = `container ${spec.name}: preparing ${what} failed: ${prep.message ?? ''}`;
      c.waiting = { reason: 'ErrImagePull', message };
      rt.failure = { phase: 'Failed', reason: 'PythonEnvironmentFailed', message };
      return 'waiting';
    }
    return py.launch(pod, spec, { pull, binDir: prep.binDir });
  }

  /** starts a container, or waits out its back-off; returns when to look again (ms epoch) or Infinity */
  private async startOrBackOff(pod: Pod & StoredObject, rt: PodRuntime, spec: Container, c: ContainerRuntime): Promise<number> {
    const base = this.opts.crashLoopBaseMs ?? 10_000;
    const max = this.opts.crashLoopMaxMs ?? 300_000;
    const prev = c.current;
    if (prev?.exit) {
      const ranFor = Date.parse(prev.exit.finishedAt) - Date.parse(prev.startedAt);
      if (c.backoffUntil === undefined) {
        // as the kubelet does: the first restart (or one after a long healthy run) is immediate, then
        // the delay starts at the base and doubles up to the cap
        const fresh = prev.n === 0 || ranFor > backoffResetMs;
        c.backoffWaitMs = fresh ? 0 : c.backoffMs ?? base;
        c.backoffUntil = Date.parse(prev.exit.finishedAt) + c.backoffWaitMs;
        c.backoffMs = fresh ? base : Math.min(max, (c.backoffMs ?? base) * 2);
      }
      if (c.backoffUntil > Date.now()) {
        if (c.waiting?.reason !== 'CrashLoopBackOff') {
          c.waiting = { reason: 'CrashLoopBackOff', message: `back-off ${Math.round((c.backoffWaitMs ?? base) / 1000)}s restarting failed container=${spec.name} pod=${rt.name}_${rt.namespace}(${rt.uid})` };
          this.opts.recorder.event(pod, 'Warning', 'BackOff', `Back-off restarting failed container ${spec.name} in pod ${rt.name}_${rt.namespace}(${rt.uid})`);
        }
        return c.backoffUntil;
      }
    }
    c.backoffUntil = undefined;
    if (this.stopped) return Infinity;
    // a restarted server finds the Pod's address and start in its record: written before anything runs
    await rt.recorded;
    const py = await this.pythonLaunch(pod, rt, spec, c);
    if (py === 'waiting') return Infinity;
    // A task forked by the warm zygote runs outside the Pod's sandbox whatever its container does, so
    // the container (skiff-pyfork, a relay) starts without one: bubblewrap's namespaces and mounts
    // cost tens of milliseconds a container, most of a lightweight task's start.
    const sandboxed = this.sandboxed && !py?.forked;
    const n = prev ? prev.n + 1 : 0;
    const env = this.opts.environments;
    let argv: string[];
    let vars: Record<string, string>;
    let user: PodUser | undefined;
    let gpus: ContainerGpus = { indices: [], shares: [], cards: [] };
    try {
      const base0 = env.baseEnv(spec.image);
      if (this.opts.shellDir) base0.PATH = `${this.opts.shellDir}:${base0.PATH ?? ''}`;
      // kfp.Client() takes KF_PIPELINES_ENDPOINT over its in-cluster default, and then sends no token:
      // given only where the Service's name does not resolve (no hosts file outside a sandbox)
      const kfpEndpoint = sandboxed && this.kfpByName ? undefined : this.apiServer;
      const podVars: Record<string, string> = { ...base0, HOSTNAME: pod.spec.hostname ?? rt.name, ...inClusterEnv(this.inCluster ?? this.opts.apiEndpoint, kfpEndpoint), ...podNetworkEnv(pod, rt.ip, base0.LD_PRELOAD, sandboxed, rt.net !== undefined) };
      if (this.apiServer) podVars.SKIFF_SERVER = this.apiServer;
      gpus = this.containerGpus(pod, spec);
      if (gpus.indices.length) podVars.CUDA_VISIBLE_DEVICES = gpus.indices.join(',');
      else if (this.opts.gpuCount > 0) podVars.CUDA_VISIBLE_DEVICES = '';
      // the downward API's status.podIP is known before the first status write says so
      const self = pod.status?.podIP ? pod : { ...pod, status: { ...pod.status, podIP: rt.ip } };
      vars = await containerEnv(self, spec, await this.configSources(rt.namespace), podVars);
      if (py) {
        Object.assign(vars, py.env);
        if (py.pathPrefix) vars.PATH = `${py.pathPrefix}:${vars.PATH ?? ''}`;
      }
      this.gpuSharingEnv(pod, rt, spec, gpus, vars);
      argv = containerArgv(py ? { ...spec, command: py.command, args: py.args } : spec, vars, env.forImage(spec.image).entrypoint);
      if (this.uids) user = this.userOf(pod, spec);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      if (c.waiting?.message !== e.message) this.opts.recorder.event(pod, 'Warning', 'Failed', `Error: ${e.message}`);
      c.waiting = { reason: 'CreateContainerConfigError', message: e.message };
      return Date.now() + 2000;
    }
    const image = imageBinds(env.forImage(spec.image), rt.dir, spec.name);
    if (image.length) {
      const missing = image.find((b) => b.readOnly && !existsSync(b.source));
      // without bubblewrap the program would run, and find none of its image's files where it looks
      const why = !this.sandboxed
        ? `image ${spec.image} provides files at ${image.map((b) => b.target).join(', ')}, which need bubblewrap (bwrap), and it is not installed`
        : missing && `image ${spec.image}: its files for ${missing.target} are missing from this machine (${missing.source})`;
      if (why) {
        const message = `container ${spec.name}: ${why}`;
        this.opts.recorder.event(pod, 'Warning', 'Failed', `Error: ${message}`);
        c.waiting = { reason: 'CreateContainerError', message };
        rt.failure = { phase: 'Failed', reason: 'ImageFilesUnavailable', message };
        return Infinity;
      }
      for (const b of image) {
        if (b.readOnly) continue;
        mkdirSync(b.source, { recursive: true });
        if (user) ownVolume(b.source, user, pod.spec.securityContext?.fsGroup);
      }
    }
    // a volume's mount point under a symlink (the cluster's ServiceAccount admission plugin mounts
    // kube-api-access-* under /var/run, a symlink to /run on most systems) is at the link's target,
    // as a container runtime resolves it in the container's root
    const volumeBinds = containerBinds(spec, rt.volumes ?? new Map()).map((b) => ({ ...b, target: resolvedMountPath(b.target) }));
    const binds = [...image, ...volumeBinds, ...this.gpuSharingBinds(pod, rt, spec, gpus, vars, user)];
    // a volume the Pod mounts at the service-account path itself wins, as on a cluster
    if (this.inCluster && !binds.some((b) => b.target === serviceAccountMountPath || b.target === resolvedMountPath(serviceAccountMountPath))) {
      const sa = await this.opts.client.find(Kinds.ServiceAccount, { namespace: rt.namespace, name: pod.spec.serviceAccountName ?? 'default' });
      if (automounts(pod, sa)) {
        const bind = serviceAccountBind(pod, rt.stateDir, this.inCluster, sa);
        if (sandboxed) binds.push(bind);
        // outside a sandbox (no bubblewrap, or a task the warm zygote forked) nothing shows the token at
        // the service-account path: the clients that take its path from KF_PIPELINES_SA_TOKEN_PATH
        // (kfp.Client's ServiceAccountTokenVolumeCredentials, the model registry's client) read it where it is,
        // and components find ca.crt and namespace beside it (the GPU pipeline story's deploy step does)
        else if (vars.KF_PIPELINES_SA_TOKEN_PATH === `${serviceAccountMountPath}/token`) vars.KF_PIPELINES_SA_TOKEN_PATH = join(bind.source, 'token');
      }
    }
    const lib = rt.net ? undefined : netPreloadPath();
    const sandboxBinds = lib ? [...binds, { source: lib, target: sandboxPreloadPath, readOnly: true }] : binds;
    const under = (path: string, dir: string): boolean => path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
    const scratch = join(rt.dir, 'work');
    // the default working directory is the Pod's scratch dir, unless a volume mounted over one of
    // its parents hides it inside the sandbox; then it is `/`, as for an image without a WORKDIR
    // With isolation it is the Pod's private /tmp: writable, its own, and the same path in every Pod
    // (mpirun asks its remote daemons to start in the launcher's working directory)
    const cwd = spec.workingDir ?? env.forImage(spec.image).workingDir ?? (user ? '/tmp' : sandboxed && binds.some((b) => under(scratch, b.target)) ? '/' : scratch);
    // a workingDir that does not exist is created, as the kubelet does; inside a volume, in the volume
    const inVolume = sandboxed ? binds.filter((b) => under(cwd, b.target)).sort((a, b) => b.target.length - a.target.length)[0] : undefined;
    const hostCwd = inVolume ? join(inVolume.source, cwd.slice(inVolume.target.length)) : cwd;
    if (!existsSync(hostCwd)) mkdirSync(hostCwd, { recursive: true });
    if (sandboxed) {
      rt.usesHosts = true;
      if (!existsSync(rt.hostsFile)) this.writeHostsFor(pod, rt, [], []);
    }
    const stateDir = runDir(rt.stateDir, spec.name, n);
    let io = { argv, env: vars };
    if (needsStdin(spec as ContainerIO)) {
      try {
        // the FIFO is on disk beside the log, not with the run state: a sandbox has its own /dev/shm,
        // and sees the rest of the host where it is, FIFO included, as its own
        io = withStdin(argv, vars, runDir(rt.dir, spec.name, n), spec as ContainerIO);
        const fifo = io.argv[3];
        if (user && fifo) {
          chownSync(fifo, user.uid, user.gid);
          sandboxBinds.push({ source: fifo, target: fifo, readOnly: false });
        }
      } catch (e) {
        c.waiting = { reason: 'CreateContainerError', message: (e as Error).message };
        return Date.now() + 2000;
      }
    }
    c.waiting = undefined;
    const proc = await launch({
      stateDir,
      logFile: logFile(rt.dir, spec.name, n),
      argv: io.argv,
      env: io.env,
      cwd,
      ...(sandboxed ? {
        sandbox: {
          binds: sandboxBinds, hostname: (pod.spec.hostname ?? rt.name).slice(0, 63), hostsFile: rt.hostsFile,
          ...(user && this.opts.isolation ? { isolation: this.sandboxIsolation(rt, user, environmentDirs(env.forImage(spec.image), vars)) } : {}),
        },
      } : {}),
    });
    c.beforeStart = { ...(prev ? { current: prev } : {}), ...(c.last ? { last: c.last } : {}) };
    if (prev) c.last = prev;
    c.current = { n, startedAt: proc.startedAt };
    c.proc = proc;
    c.gpuShares = this.gpuSharesOf(gpus);
    this.watchExit(rt, c, proc);
    this.opts.onContainerStart?.();
    this.opts.recorder.event(pod, 'Normal', 'Started', `Started container ${spec.name}`);
    return Infinity;
  }

  /** the container's cards: its own shares when the Pod's assignment records them, else (a Pod placed
   *  with whole cards only) the Pod's cards for every container */
  private containerGpus(pod: Pod, spec: Container): ContainerGpus {
    const ask = containerGpuRequest(spec);
    const extra = ask?.priority !== undefined ? { priority: ask.priority } : {};
    const pd = podDevices(pod);
    if (!pd) return { indices: assignedGpus(pod), shares: [], cards: [], ...extra };
    // a container that asked for no card gets none, whatever the annotations say
    if (!ask) return { indices: [], shares: [], cards: [] };
    const byUuid = new Map((this.opts.gpuCards ?? []).map((c) => [c.uuid, c]));
    const mine = (pd[podContainers(pod).findIndex((c) => c.container.name === spec.name)] ?? []).filter((s) => byUuid.has(s.uuid));
    const cards = mine.map((s) => byUuid.get(s.uuid) as GpuCard);
    return { indices: cards.map((c) => c.index), shares: mine, cards, ...extra };
  }

  /** the cards and compute the usage monitor splits a card's measured use by: a whole card is all of its compute */
  private gpuSharesOf(gpus: ContainerGpus): { uuid: string; cores: number }[] {
    if (gpus.shares.length) return gpus.shares.map((s) => ({ uuid: s.uuid, cores: s.cores }));
    const byIndex = new Map((this.opts.gpuCards ?? []).map((c) => [c.index, c]));
    return gpus.indices.flatMap((i) => {
      const card = byIndex.get(i);
      return card ? [{ uuid: card.uuid, cores: 100 }] : [];
    });
  }

  /** an event a Pod gets once, not at every restart of its containers */
  private noticeOnce(pod: Pod & StoredObject, what: string, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const k = `${pod.metadata.uid}/${what}`;
    if (this.gpuNotices.has(k)) return;
    this.gpuNotices.add(k);
    this.opts.recorder.event(pod, type, reason, message);
  }

  /** the directory of a container's HAMi-core shared region (recreated at every start, as HAMi's device plugin does) */
  private vgpuDir(rt: PodRuntime, spec: Container): string {
    return join(rt.dir, 'vgpu', spec.name);
  }

  /**
   * The container's GPU variables over whatever it set itself: its cards, and for a share HAMi-core's
   * limits. CUDA_DISABLE_CONTROL, which makes HAMi leave the limits out, is removed.
   */
  private gpuSharingEnv(pod: Pod & StoredObject, rt: PodRuntime, spec: Container, gpus: ContainerGpus, vars: Record<string, string>): void {
    if (vars.CUDA_DISABLE_CONTROL !== undefined) {
      delete vars.CUDA_DISABLE_CONTROL;
      this.noticeOnce(pod, `control/${spec.name}`, 'Warning', 'GPUControlKept', `container ${spec.name}: CUDA_DISABLE_CONTROL is removed from its environment: the node keeps GPU memory and compute limits in force`);
    }
    // the node decides which cards a container sees: a variable the Pod set does not reach others' cards
    if (gpus.indices.length) vars.CUDA_VISIBLE_DEVICES = gpus.indices.join(',');
    else if (this.opts.gpuCount > 0) vars.CUDA_VISIBLE_DEVICES = '';
    Object.assign(vars, gpuEnv(gpus, { cacheFile: join(this.vgpuDir(rt, spec), `${spec.name}.cache`), mps: mpsPipeDir() }));
  }

  /**
   * What a container with a share needs mounted: its shared-region directory, and where HAMi-core's
   * library is configured, the library itself with an /etc/ld.so.preload naming it (without
   * bubblewrap, LD_PRELOAD instead). Without the library the Pod is told its limits are advisory.
   */
  private gpuSharingBinds(pod: Pod & StoredObject, rt: PodRuntime, spec: Container, gpus: ContainerGpus, vars: Record<string, string>, user: PodUser | undefined): BindMount[] {
    if (!gpus.shares.length || !isShared(gpus)) return [];
    const dir = this.vgpuDir(rt, spec);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    // every process of the container, whoever it runs as, maps the region
    chmodSync(dir, 0o777);
    const binds: BindMount[] = [];
    // with isolation the data dir is hidden: the region's directory is seen where it is
    if (user) binds.push({ source: dir, target: dir, readOnly: false });
    const lib = this.opts.libvgpu;
    if (!lib || !existsSync(lib)) {
      const why = lib ? `HAMi-core's library ${lib} is missing` : 'no HAMi-core library is configured (gpuSharing.libvgpu)';
      this.noticeOnce(pod, `advisory/${spec.name}`, 'Warning', 'GPULimitsAdvisory', `container ${spec.name}: its GPU share (${describeShares(gpus)}) is placed and counted, but not enforced: ${why}, so the limits in its environment are advisory`);
      return binds;
    }
    if (!this.sandboxed) {
      vars.LD_PRELOAD = vars.LD_PRELOAD ? `${lib}:${vars.LD_PRELOAD}` : lib;
      return binds;
    }
    mkdirSync(vgpuLockDir, { recursive: true });
    chmodSync(vgpuLockDir, 0o777);
    const preload = join(rt.dir, 'vgpu', `${spec.name}.ld.so.preload`);
    writeFileSync(preload, preloadList(vgpuLibTarget));
    binds.push({ source: lib, target: vgpuLibTarget, readOnly: true }, { source: preload, target: '/etc/ld.so.preload', readOnly: true }, { source: vgpuLockDir, target: vgpuLockDir, readOnly: false });
    // an isolated Pod has a /tmp of its own: the MPS daemon's pipes are shown in it
    const mps = mpsPipeDir();
    if (mps && user) binds.push({ source: mps, target: mps, readOnly: false });
    return binds;
  }

  /** who a container runs as (isolation.ts); its namespace's group is always one of its groups, so
   *  every Pod of a namespace can use the namespace's directories (the pipeline root's) */
  private userOf(pod: Pod, spec: Container): PodUser {
    const nsUid = this.uids?.uidFor(pod.metadata.namespace ?? 'default') ?? 0;
    const user = containerUser(pod, spec, nsUid);
    if (!user.groups.includes(nsUid) && user.gid !== nsUid) user.groups = [...user.groups, nsUid].sort((a, b) => a - b);
    return user;
  }

  /** a namespace's directory (e.g. its part of the pipeline root): the namespace's group may write it */
  private namespaceDir(root: string, ns: string): string {
    const dir = join(root, ns);
    const nsUid = this.uids?.uidFor(ns) ?? 0;
    mkdirSync(dir, { recursive: true });
    const st = statSync(dir);
    if (st.uid !== nsUid || st.gid !== nsUid || (st.mode & 0o7777) !== 0o2770) {
      // what a controller made in there before (the first run's output directories) becomes the
      // namespace's too; later ones inherit it (src/artifacts/local.ts)
      const walk = (p: string): void => {
        const s = lstatSync(p);
        if (s.isSymbolicLink()) return;
        chownSync(p, nsUid, nsUid);
        if (!s.isDirectory()) return;
        chmodSync(p, 0o2770);
        for (const e of readdirSync(p)) walk(join(p, e));
      };
      walk(dir);
    }
    return dir;
  }

  private sandboxIsolation(rt: PodRuntime, user: PodUser, envDirs: string[]): SandboxIsolation {
    const iso = this.opts.isolation as NonNullable<KubeletOptions['isolation']>;
    const own = iso.namespaceDirs.map((d) => this.namespaceDir(d, rt.namespace));
    const hidden = iso.hide.map((h) => resolve(h));
    const within = (p: string, dir: string): boolean => p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
    // The Pod's private /tmp covers the host's: an environment that lives there (a checkout under
    // /tmp, its .venv) is seen again, read-only, unless it holds something hidden
    const underTmp = envDirs.map((d) => resolve(d)).filter((d) => (within(d, '/tmp') || within(d, '/var/tmp')) && d !== '/tmp' && d !== '/var/tmp' && existsSync(d)
      && !hidden.some((h) => within(h, d) || within(d, h)));
    const tops = [...new Set(underTmp)].sort((a, b) => a.length - b.length).filter((d, i, all) => !all.slice(0, i).some((o) => within(d, o)));
    return {
      user, hide: iso.hide, tmpDir: podTmpDir(rt.dir),
      // the namespace's own directories are seen read-write, at the path their URIs name
      reveal: [...tops, ...iso.reveal.filter((d) => existsSync(d))],
      revealWritable: own,
      ...(rt.net ? { netns: rt.net.netns } : {}),
    };
  }

  /** With isolation, a hostPath volume may not reach into what is hidden from Pods, except the
   *  Pod's own namespace's directories (Katib's checkpoints, a model in the pipeline root). */
  private checkHostPaths(pod: Pod): void {
    const iso = this.opts.isolation as NonNullable<KubeletOptions['isolation']>;
    const ns = pod.metadata.namespace ?? 'default';
    for (const v of pod.spec.volumes ?? []) {
      const hp = (v as { hostPath?: { path?: string } }).hostPath;
      if (!hp?.path) continue;
      const p = resolve('/', hp.path);
      const inside = (dir: string): boolean => p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
      if (iso.namespaceDirs.some((d) => inside(join(d, ns)))) continue;
      // inside something hidden, or above it (a hostPath of / would show the data dir again)
      if (iso.hide.some((h) => inside(resolve(h)) || resolve(h).startsWith(p.endsWith('/') ? p : `${p}/`))) {
        throw new ConfigError(`hostPath volume "${v.name}": ${hp.path} is not allowed: with tenancy on, Pods cannot mount Skiff's data directory or secrets`);
      }
    }
  }

  /** writable volumes belong to the Pod's user (fsGroup: group-owned and setgid, as the kubelet does) */
  private ownVolumes(pod: Pod, rt: PodRuntime): void {
    const first = pod.spec.containers[0];
    if (!first || !rt.volumes) return;
    let user: PodUser;
    try {
      user = this.userOf(pod, first);
    } catch (e) {
      // a user the Pod may not have (root) is the container's error, reported when it would start
      if (e instanceof ConfigError) return;
      throw e;
    }
    const fsGroup = pod.spec.securityContext?.fsGroup;
    for (const v of pod.spec.volumes ?? []) {
      const vol = rt.volumes.get(v.name);
      const src = v as { emptyDir?: unknown; persistentVolumeClaim?: unknown; configMap?: unknown; secret?: unknown; projected?: unknown; downwardAPI?: unknown };
      if (!vol || vol.readOnly) continue;
      if (src.emptyDir !== undefined || src.persistentVolumeClaim !== undefined) ownVolume(vol.dir, user, fsGroup);
      else if (fsGroup !== undefined && (src.configMap !== undefined || src.secret !== undefined || src.projected !== undefined || src.downwardAPI !== undefined)) ownVolume(vol.dir, { ...user, uid: 0 }, fsGroup);
    }
  }

  private async writeStatus(pod: Pod & StoredObject, rt: PodRuntime, decision: ReturnType<typeof decidePhase>): Promise<void> {
    const status = podStatus(pod, rt, decision, this.opts.hostIp ?? '127.0.0.1');
    if (deepEqual(status, pod.status)) return;
    const wasRunning = pod.status?.phase;
    const hadIp = Boolean(pod.status?.podIP);
    pod.status = status;
    try {
      await this.opts.client.updateStatus(pod);
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
    // a Pod's name resolves once its address is known (init containers may be waiting for a peer's)
    if ((wasRunning !== status.phase && (status.phase === 'Running' || status.phase === 'Succeeded' || status.phase === 'Failed')) || (!hadIp && status.podIP)) this.scheduleHosts();
  }

  /** the containers running now, by their main process (what the usage monitor measures) */
  liveContainers(): LiveContainer[] {
    const out: LiveContainer[] = [];
    for (const rt of this.pods.values()) {
      for (const c of rt.containers.values()) {
        if (!c.proc || c.proc.pid <= 0 || !c.current || c.current.exit) continue;
        out.push({ uid: rt.uid, namespace: rt.namespace, pod: rt.name, container: c.name, pid: c.proc.pid, startedAt: c.current.startedAt, ...(c.gpuShares?.length ? { gpuShares: c.gpuShares } : {}) });
      }
    }
    return out;
  }

  runningContainers(): number {
    return [...this.pods.values()].flatMap((rt) => [...rt.containers.values()]).filter((c) => c.proc && !c.current?.exit).length;
  }

  /** SIGTERM to every container, SIGKILL to what is left after `graceMs` */
  async stopAll(graceMs = 10_000): Promise<void> {
    // nothing starts again while the server goes down (a restartPolicy Always container would)
    this.stop();
    const procs = [...this.pods.values()].flatMap((rt) => [...rt.containers.values()]).flatMap((c) => (c.proc && !c.current?.exit ? [c.proc] : []));
    for (const p of procs) p.signal('SIGTERM');
    const all = Promise.all(procs.map((p) => p.exited().catch(() => undefined)));
    let timer: Timer | undefined;
    const late = new Promise<'late'>((resolve) => (timer = after(graceMs, () => resolve('late'))));
    if ((await Promise.race([all, late])) === 'late') {
      for (const p of procs) p.signal('SIGKILL');
      await all;
    }
    timer?.clear();
  }

  // ---- names: every running pod's hosts file lists the pods and services it can reach

  /** the node ports isolated Pods may reach (known once the server listens) */
  setNodePorts(ports: number[]): void {
    this.nodePorts = [...new Set(ports)].sort((a, b) => a - b);
    this.schedulePolicies();
  }

  // ---- NetworkPolicies: the kernel's ruleset for this node's isolated Pods (network-policy.ts)

  private schedulePolicies(delayMs = 20): void {
    if (!this.net || this.policyTimer || this.stopped) return;
    this.policyTimer = after(delayMs, () => {
      this.policyTimer = undefined;
      this.policiesNow().then(() => { this.policyFailures = 0; }, (e) => {
        if (this.stopped) return;
        this.policyFailures++;
        this.opts.log?.(`kubelet: network policies: ${(e as Error).message}`);
        this.schedulePolicies(Math.min(10_000, 200 * 2 ** Math.min(this.policyFailures, 6)));
      });
    });
  }

  /** the server is stopping: no more timers (containers keep running for the next server) */
  stop(): void {
    this.stopped = true;
    this.tokens.stop();
    this.policyTimer?.clear();
    this.hostsTimer?.clear();
    this.policyTimer = undefined;
    this.hostsTimer = undefined;
  }

  /** nftables table of this server: named after its Pod network, so servers on one machine keep their own */
  private get policyTable(): string {
    return `skiff_${this.net?.podCidr.split('.')[1] ?? '0'}`;
  }

  private policyChain: Promise<void> = Promise.resolve();

  /** loads the ruleset now, after any load under way (one nft at a time) */
  private policiesNow(): Promise<void> {
    const next = this.policyChain.then(() => this.applyPolicies());
    this.policyChain = next.catch(() => undefined);
    return next;
  }

  private async applyPolicies(): Promise<void> {
    const net = this.net;
    const cache = this.controller?.cache;
    if (!net || !cache) return;
    const pods: PolicyPod[] = [];
    const byUid = new Map((cache.list(Kinds.Pod) as (Pod & StoredObject)[]).map((p) => [p.metadata.uid, p]));
    for (const rt of this.pods.values()) {
      const p = byUid.get(rt.uid);
      if (!rt.net || !p) continue;
      pods.push({
        namespace: rt.namespace, name: rt.name, labels: p.metadata.labels ?? {}, ip: rt.ip, hostIf: rt.net.hostIf,
        ports: [...(p.spec.initContainers ?? []), ...p.spec.containers].flatMap((c) => (c.ports ?? []).map((x: ContainerPort) => ({ containerPort: x.containerPort, ...(x.name ? { name: x.name } : {}), ...(x.protocol ? { protocol: x.protocol } : {}) }))),
      });
    }
    const ruleset = networkPolicyRuleset({
      table: this.policyTable, pods,
      // the name label as kube-apiserver sets it, also on namespaces stored before Skiff did
      namespaces: cache.list(Kinds.Namespace).map((n) => ({ name: n.metadata.name, labels: { ...n.metadata.labels, 'kubernetes.io/metadata.name': n.metadata.name } })),
      policies: cache.list(Kinds.NetworkPolicy) as unknown as NetworkPolicy[],
      nodeIp: net.nodeIp, nodePorts: this.nodePorts, podCidr: net.podCidr, denyAcrossNamespaces: true,
    });
    if (ruleset === this.appliedRuleset) return;
    await applyRuleset(ruleset);
    this.appliedRuleset = ruleset;
  }

  private scheduleHosts(): void {
    this.schedulePolicies();
    if (this.hostsTimer || this.stopped) return;
    this.hostsTimer = after(20, () => {
      this.hostsTimer = undefined;
      this.refreshHosts().catch((e) => this.opts.log?.(`kubelet: hosts: ${(e as Error).message}`));
    });
  }

  private async refreshHosts(): Promise<void> {
    const { client } = this.opts;
    // from the Manager's informers once registered: a refresh follows every Pod start and end
    const cache = this.controller?.cache;
    // on a cluster, every node's Pods (the informer sees them all): a Service's Pods and a Pod's
    // peers may run anywhere; on one machine, this node's, whose addresses it handed out
    const here = (p: Pod): boolean => this.opts.clusterNames ? Boolean(p.spec.nodeName) : p.spec.nodeName === this.opts.nodeName;
    const pods = (cache ? (cache.list(Kinds.Pod) as (Pod & StoredObject)[]) : await client.listAll<Pod>(Kinds.Pod)).filter((p) => here(p) && p.status?.podIP && !terminalPhase(p));
    const services: ServiceView[] = [];
    for (const s of cache ? cache.list(Kinds.Service) : await client.listAll(Kinds.Service)) {
      const sel = s.spec?.selector as Record<string, string> | undefined;
      if (!sel || !Object.keys(sel).length) continue;
      const ips = pods.filter((p) => p.metadata.namespace === s.metadata.namespace && Object.entries(sel).every(([k, v]) => p.metadata.labels?.[k] === v)).map((p) => p.status?.podIP ?? '');
      services.push({ name: s.metadata.name, namespace: s.metadata.namespace ?? 'default', ips });
    }
    for (const p of pods) {
      const rt = this.pods.get(p.metadata.uid);
      if (rt?.usesHosts) this.writeHostsFor(p, rt, pods, services);
    }
  }

  private writeHostsFor(pod: Pod, rt: PodRuntime, pods: Pod[], services: ServiceView[]): void {
    mkdirSync(rt.dir, { recursive: true });
    const self = { ...pod, status: { ...pod.status, podIP: rt.ip } } as Pod;
    writeHosts(rt.hostsFile, hostsFile(self, pods, [...services, ...this.platformServices]));
  }

  // ---- logs

  async logs(pod: StoredObject, opts: PodLogOptions, signal: AbortSignal): Promise<AsyncIterable<string>> {
    const p = pod as Pod & StoredObject;
    const cname = podLogContainer(p, opts.container);
    const name = cname;
    const dirs = this.podDirs(p.metadata.uid);
    const dir = dirs.pod;
    const rt = this.pods.get(p.metadata.uid);
    const c = rt?.containers.get(cname) ?? (existsSync(dir) ? loadContainer(dirs, cname, false) : undefined);
    const cur = c?.current;
    if (!cur) {
      const reason = c?.waiting?.reason ?? 'ContainerCreating';
      throw new ApiError(StatusReason.BadRequest, `container "${name}" in pod "${p.metadata.name}" is waiting to start: ${reason}`);
    }
    const n = opts.previous ? c?.last?.n ?? (cur.exit && c?.waiting ? cur.n : undefined) : cur.n;
    if (n === undefined) throw new ApiError(StatusReason.BadRequest, `previous terminated container "${name}" in pod "${p.metadata.name}" not found`);
    const file = logFile(dir, cname, n);
    const lo = { tailLines: opts.tailLines, timestamps: opts.timestamps, sinceSeconds: opts.sinceSeconds };
    if (!opts.follow || opts.previous) {
      const text = existsSync(file) ? await readLog(file, lo) : '';
      return (async function* () { yield text; })();
    }
    const done = (): boolean => {
      const live = this.pods.get(p.metadata.uid)?.containers.get(cname);
      return !live || live.current?.n !== n || Boolean(live.current?.exit);
    };
    return followLog(file, lo, done, signal);
  }

  // ---- files

  async readPodFiles(pod: StoredObject, container: string, path: string): Promise<PodFile[]> {
    const p = pod as Pod & StoredObject;
    const host = hostPathOf(p, container, path, {
      podDir: join(this.podsDir, p.metadata.uid),
      claimDir: (namespace, claim) => join(this.opts.dataDir, 'volumes', namespace, claim),
      hostVisible: !this.sandboxed,
    });
    if (host === undefined) throw new ApiError(StatusReason.BadRequest, `${path} is not on a volume of container "${container}" in pod "${p.metadata.name}": mount a volume there to read it`);
    return readFilesAt(host, path);
  }

  // ---- exec

  async exec(pod: StoredObject, opts: PodExecOptions): Promise<PodExecSession> {
    const p = pod as Pod & StoredObject;
    const all = [...(p.spec.initContainers ?? []), ...p.spec.containers].map((c) => c.name);
    // as kubectl does: the annotated default container, else the first one
    const preferred = p.metadata.annotations?.['kubectl.kubernetes.io/default-container'];
    const cname = opts.container ?? (preferred && all.includes(preferred) ? preferred : p.spec.containers[0]?.name ?? '');
    if (!all.includes(cname)) throw new ApiError(StatusReason.BadRequest, `container ${cname} is not valid for pod ${p.metadata.name}`);
    if (terminalPhase(p)) throw new ApiError(StatusReason.BadRequest, `cannot exec into a container in a completed pod; current phase is ${p.status?.phase}`);
    const c = this.pods.get(p.metadata.uid)?.containers.get(cname);
    const cur = c?.current;
    let target = cur && !cur.exit && c?.proc ? execTarget(c.proc.stateDir) : null;
    // a container that has just started may still be inside bubblewrap's set-up: a moment more
    for (let waited = 0; !target && cur && !cur.exit && c?.proc && waited < 10_000; waited += 50) {
      await new Promise((r) => setTimeout(r, 50));
      target = !cur.exit && c.proc ? execTarget(c.proc.stateDir) : null;
    }
    if (!target) throw new ApiError(StatusReason.BadRequest, `container "${cname}" in pod "${p.metadata.name}" is not running`);
    let child;
    try {
      child = execIn(target, { command: opts.command, stdin: opts.stdin, tty: opts.tty });
    } catch (e) {
      if (e instanceof ExecError) throw new ApiError(StatusReason.BadRequest, `cannot exec in container "${cname}" of pod "${p.metadata.name}": ${e.message}`);
      throw e;
    }
    const proc = child;
    const done = new Promise<{ exitCode: number; signal?: string }>((resolve) => {
      proc.once('error', () => resolve({ exitCode: 127 })); // nsenter (or the command) could not be run
      proc.once('exit', (code, signal) => resolve(signal ? { exitCode: 128 + (osSignals[signal] ?? 0), signal } : { exitCode: code ?? 0 }));
    });
    const sizer = opts.tty ? new TerminalSizer(proc) : undefined;
    return {
      stdout: proc.stdout as NonNullable<typeof proc.stdout>, stderr: proc.stderr as NonNullable<typeof proc.stderr>, stdin: proc.stdin ?? undefined, done, kill: () => killExec(proc),
      ...(sizer ? { resize: (size: { width: number; height: number }) => sizer.resize(size) } : {}),
    };
  }

  // ---- attach

  /** The running container's output from now on, and its stdin and terminal when its spec has
   *  them (stdin.ts); with `stdinOnce`, only the first session that asks gets the stdin. */
  async attach(pod: StoredObject, opts: PodAttachOptions, signal: AbortSignal): Promise<PodAttachSession> {
    const p = pod as Pod & StoredObject;
    const all = [...(p.spec.initContainers ?? []), ...p.spec.containers].map((c) => c.name);
    const preferred = p.metadata.annotations?.['kubectl.kubernetes.io/default-container'];
    const cname = opts.container ?? (preferred && all.includes(preferred) ? preferred : p.spec.containers[0]?.name ?? '');
    if (!all.includes(cname)) throw new ApiError(StatusReason.BadRequest, `container ${cname} is not valid for pod ${p.metadata.name}`);
    if (terminalPhase(p)) throw new ApiError(StatusReason.BadRequest, `cannot attach to a container in a completed pod; current phase is ${p.status?.phase}`);
    const c = this.pods.get(p.metadata.uid)?.containers.get(cname);
    const cur = c?.current;
    if (!cur || cur.exit) throw new ApiError(StatusReason.BadRequest, `container "${cname}" in pod "${p.metadata.name}" is not running`);
    const n = cur.n;
    const done = (): boolean => {
      const live = this.pods.get(p.metadata.uid)?.containers.get(cname);
      return !live || live.current?.n !== n || Boolean(live.current?.exit);
    };
    const podDir = join(this.podsDir, p.metadata.uid);
    const spec: ContainerIO = [...(p.spec.initContainers ?? []), ...p.spec.containers].find((x) => x.name === cname) ?? {};
    // where its stdin FIFO is (startOrBackOff)
    const fifoDir = runDir(podDir, cname, n);
    let stdin: Writable | undefined;
    if (opts.stdin && spec.stdin && !(spec.stdinOnce && this.stdinTaken.has(fifoDir))) {
      // a container reported running may not have opened its FIFO yet (its `sh` step has not run):
      // the writer cannot open before a reader has, so it tries again for a while
      for (const t0 = Date.now(); !(stdin = openStdin(fifoDir)) && !done() && !signal.aborted && Date.now() - t0 < STDIN_OPEN_WAIT_MS;) {
        await new Promise((r) => setTimeout(r, 20));
      }
      if (stdin && spec.stdinOnce) this.stdinTaken.add(fifoDir);
    }
    const pid = c?.proc?.pid;
    const sizer = spec.tty && pid ? new TerminalSizer({ pid, exitCode: null, signalCode: null }) : undefined;
    return {
      output: followOutput(logFile(podDir, cname, n), done, signal),
      ...(stdin ? { stdin } : {}),
      ...(sizer ? { resize: (size: { width: number; height: number }) => sizer.resize(size) } : {}),
    };
  }

  /** Port-forward: a connection to the Pod's port at its own address, where its servers listen (a
   *  wildcard bind in a Pod is narrowed to the Pod IP, see network.ts). */
  connectPort(pod: StoredObject, port: number): Promise<Socket> {
    const p = pod as Pod & StoredObject;
    const name = `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`;
    if (p.spec.nodeName !== this.opts.nodeName) return Promise.reject(new Error(`pod ${name} does not run on node ${this.opts.nodeName}`));
    if (terminalPhase(p)) return Promise.reject(new Error(`pod ${name} has completed (phase ${p.status?.phase}): nothing listens on port ${port}`));
    const ip = this.pods.get(p.metadata.uid)?.ip ?? p.status?.podIP;
    if (!ip) return Promise.reject(new Error(`pod ${name} has no address yet: it is not running`));
    return new Promise((resolve, reject) => {
      const sock = tcpConnect({ host: ip, port });
      const fail = (e: Error): void => reject(new Error(`failed to connect to port ${port} of pod ${name} at ${ip}: ${e.message}`));
      sock.once('error', fail);
      sock.once('connect', () => {
        sock.off('error', fail);
        resolve(sock);
      });
    });
  }
}

/** the host directories a container's environment runs from: its PATH entries, its image's files,
 *  the Skiff checkout (SKIFF_HOME) and a virtualenv */
function environmentDirs(e: Environment, vars: Record<string, string>): string[] {
  const dirs = [...(e.path ?? []), ...(e.files ?? []).map((f) => f.source)];
  for (const k of ['SKIFF_HOME', 'VIRTUAL_ENV']) {
    const v = vars[k] ?? e.env?.[k];
    if (v && v.startsWith('/')) dirs.push(v);
  }
  for (const p of (vars.PATH ?? '').split(':')) if (p.startsWith('/')) dirs.push(p);
  return dirs;
}
