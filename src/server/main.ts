// Starts the platform: store, API server, controllers and the local substrate, in one process.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { hostname } from 'node:os';
import { isIP, type AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kinds } from '../api/index.js';
import { LocalArtifactStore } from '../artifacts/local.js';
import { isS3Root } from '../workloads/pipelines/artifact-roots.js';
import { isConflict } from '../api/errors.js';
import { Manager } from '../control/controller.js';
import { LeaderElector, type LeaseHttp } from '../control/leader-election.js';
import { ControlMetrics } from '../control/metrics.js';
import { EventRecorder, sweepEvents } from '../control/events.js';
import { GarbageCollector } from '../control/gc.js';
import { addClusterRoleAggregationController } from '../control/clusterrole-aggregation.js';
import { addNamespaceController } from '../control/namespace.js';
import { addResourceQuotaController } from '../control/resourcequota.js';
import { addServiceAccountController } from '../control/serviceaccounts.js';
import { ResourceFit } from '../scheduler/placement.js';
import { addScheduler } from '../scheduler/scheduler.js';
import { addGpuSharesController } from '../scheduler/gpu-shares.js';
import { Client } from '../store/client.js';
import { SqliteStore } from '../store/sqlite/store.js';
import { ClusterSetupError, openCluster } from '../store/kube/index.js';
import type { WebhookSetup } from '../store/kube/index.js';
import { leaseAccessNeeds } from '../store/kube/setup.js';
import { podNamespace } from '../store/kube/kubeconfig.js';
import type { Store } from '../store/store.js';
import { Environments } from '../substrate/local/environments.js';
import { LocalSubstrate, type LocalSubstrateOptions } from '../substrate/local/index.js';
import type { ServiceView } from '../substrate/local/network.js';
import { bwrapAvailable } from '../substrate/local/process.js';
import { claimPodNetwork, podNetworksAvailable } from '../substrate/local/podnet.js';
import { Gateway } from './inference/gateway.js';
import { LeaderForwarder, leaderAddressAnnotation, servingAddress } from './inference/forward.js';
import { App } from './app.js';
import { ensureBootstrapPolicy } from './auth/bootstrap-policy.js';
import { informerPolicy, RbacAuthorizer } from './auth/rbac.js';
import { servePortForward } from './kube/portforward.js';
import { remoteCommandUpgrade } from './kube/remotecommand.js';
import { Upgrades } from './kube/upgrade.js';
import { startWebhookServer, type WebhookServer } from './kube/webhooks.js';
import { MetricsRegistry } from './metrics.js';
import { visibilityGroup } from './kube/visibility-api.js';
import { queueManager } from '../workloads/queues/index.js';
import { registerQueueMetrics } from './queue-metrics.js';
import { registerUsageMetrics } from './usage-metrics.js';
import { UsageHistory } from './usage-history.js';
import type { StartedWorkload } from '../workloads/workload.js';
import { dryRenderer, registryOf, workloads } from './workloads.js';
import type { SkiffConfig, SkiffOptions } from './config.js';
import { compileConfig } from './config.js';
import { every } from '../util/timers.js';
import { ClusterPods } from './kube/cluster-pods.js';
import { kubeconfig, startInCluster, writeKubeconfig } from './kube/incluster.js';
import { StreamMux } from './stream-mux.js';
import { KatibDbManagerService, startKatibDbManager } from './katib-db/index.js';
import { KfpApiService, startKfpInClusterService } from './kfp/in-cluster.js';
import { AddressSet, Authenticator } from './auth/authn.js';
import { allowAll } from './auth/types.js';

export type { SkiffOptions } from './config.js';

export interface Skiff {
  url: string;
  dataDir: string;
  /** where Katib's DBManager gRPC API listens (`db_manager_address`), when it could listen */
  katibDbManager?: string;
  client: Client;
  /** who may use the server and how they sign in, in words, for the start-up banner */
  authentication: string;
  /** with --kubeconfig: the cluster whose API server is the store */
  cluster?: { server: string; version: string; crdsInstalled: string[] };
  /**
   * with --kubeconfig: the Lease this replica competes for; its controllers run only while it holds
   * it. `lost` resolves when it held the Lease and could not renew it: the controllers have stopped,
   * and the process should exit non-zero so that its supervisor starts it again as a candidate
   */
  leaderElection?: { lease: string; identity: string; isLeader(): boolean; lost: Promise<string> };
  /** stops serving; running containers keep running (the count is returned) unless asked to stop them too */
  stop(opts?: { containers?: 'keep' | 'stop' }): Promise<number>;
}

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export function skiffVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/** the default environment of images: the Python environment setup made, if any, and its tool shims */
export function defaultPath(): string[] {
  return [join(repoRoot, '.venv', 'bin'), join(repoRoot, 'build', 'bin')].filter((d) => existsSync(d));
}

export async function startSkiff(opts: SkiffOptions = {}): Promise<Skiff> {
  const config = compileConfig(opts);
  const version = skiffVersion();
  const log = (m: string): void => void process.stderr.write(`${m}\n`);
  // S3 for artifacts: a default root in S3 with the config's own credentials is checked before anything
  // starts, so an endpoint that is down or refuses them is a clear error now, not a failed run later
  // the SDK is loaded only then: loading it took 0.6 s on a busy 2-core machine, on every start
  const s3 = config.artifacts.s3 ? new (await import('../artifacts/s3.js')).S3Stores(config.artifacts.s3, { stagingDir: join(config.dataDir, 'artifact-staging'), cacheDir: join(config.dataDir, 'artifact-cache') }) : undefined;
  if (s3 && config.artifacts.pipelineRoot && isS3Root(config.artifacts.pipelineRoot) && config.artifacts.s3?.credentials) {
    try {
      await s3.get(config.artifacts.pipelineRoot).check();
    } catch (e) {
      s3.destroy();
      throw new Error(`artifacts.pipelineRoot ${config.artifacts.pipelineRoot}: ${(e as Error).message}`);
    }
  }
  const metrics = new MetricsRegistry();
  // the inference data plane lives in this process; Pods reach it through the API's address
  const gateway = new Gateway({ metrics, ingressDomain: config.ingressDomain, log });
  const all = workloads({ dataPlane: gateway });
  const registry = registryOf(all);
  // on a cluster its API server is the store, and its own controllers, scheduler and kubelets do what
  // Skiff's local ones do here: only the workloads' controllers run (see README "On Kubernetes")
  // the leader Lease's namespace is checked with the rest of Skiff's access, before anything is written
  // the webhooks the cluster calls (Skiff's validation and Kueue's conversion) listen before they are
  // registered, so that the cluster's first call finds them
  let webhookServer: WebhookServer | undefined;
  const webhooks: WebhookSetup | undefined = opts.kubeconfig ? {
    namespace: leaseNamespace(opts.leaderElection ?? {}),
    serve: async (ca) => {
      const w = webhookAddress(opts, config.host);
      const tls = ca.serving(w.dnsNames, w.ips);
      try {
        webhookServer = await startWebhookServer({ registry, host: w.listen, port: w.port, certPem: tls.certPem, keyPem: tls.keyPem, log });
      } catch (e) {
        throw new ClusterSetupError(`the webhooks cannot listen on ${w.listen}:${w.port}: ${(e as Error).message}`);
      }
      const client = w.service ? { service: { ...w.service, port: 443 } } : { url: `https://${w.urlHost}:${webhookServer.port}` };
      log(`kubernetes: webhooks (validation, conversion) at ${w.service ? `service ${w.service.namespace}/${w.service.name}:443, listening on` : ''} https://${w.listen.includes(':') ? `[${w.listen}]` : w.listen}:${webhookServer.port}`);
      return { client, caPem: ca.caPem };
    },
  } : undefined;
  let cluster: Awaited<ReturnType<typeof openCluster>> | undefined;
  try {
    cluster = opts.kubeconfig ? await openCluster(opts.kubeconfig, registry.all(), log, undefined, leaseAccessNeeds(leaseNamespace(opts.leaderElection ?? {})), webhooks) : undefined;
  } catch (e) {
    await webhookServer?.close();
    throw e;
  }
  const store: Store = cluster?.store ?? new SqliteStore({ file: join(config.dataDir, 'skiff.db'), historySize: config.watchHistory });
  const local = cluster === undefined;
  const client = new Client(store, registry, undefined, { defaultOnRead: !local });
  for (const name of ['default', 'kube-system']) {
    try {
      if (!(await client.find(Kinds.Namespace, { name }))) await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    } catch (e) {
      if (!isConflict(e)) throw e;
    }
  }
  // the roles and bindings every cluster starts with (cluster-admin, admin/edit/view, Kubeflow's)
  if (local) await ensureBootstrapPolicy(client);
  const recorder = new EventRecorder(client, 'skiff');
  // the controllers' reconciles and work queues, under controller-runtime's metric names
  const controlMetrics = new ControlMetrics(metrics);
  const manager = new Manager(client, log, config.verbose, controlMetrics);
  const basePython = join(repoRoot, '.venv', 'bin', 'python');
  const pipelineRoot = join(config.dataDir, 'pipeline-root');
  // with tenancy, Pods are isolated by the kernel where this machine allows it (podIsolation says why not)
  const isolation = config.authn && config.podIsolation ? await podIsolation(config, pipelineRoot) : undefined;
  if (config.authn && !config.podIsolation) log('tenancy: Pods are NOT isolated (podIsolation: false): they run as this server\'s user and share its network');
  if (typeof isolation === 'string') log(`tenancy: Pods are NOT isolated: ${isolation}`);
  const substrate = new LocalSubstrate({
    ...(isolation && typeof isolation !== 'string' ? { isolation } : {}),
    client, recorder, manager, dataDir: config.dataDir, nodeName: config.nodeName, node: config.node,
    ...(config.gpuSharing.libvgpu ? { libvgpu: config.gpuSharing.libvgpu } : {}),
    environments: new Environments(config.environments, { path: defaultPath(), env: { SKIFF_HOME: repoRoot } }),
    ...(existsSync(basePython) ? { python: { basePython, ...(config.pythonZygote ? { zygote: { script: join(repoRoot, 'python', 'skiff_zygote.py'), client: join(repoRoot, 'build', 'skiff-pyfork') } } : {}) } } : {}),
    version, crashLoopBaseMs: config.crashLoopBackoffMs, crashLoopMaxMs: config.crashLoopBackoffMaxMs, metricsIntervalMs: config.metricsResolutionMs, log,
  });
  registerUsageMetrics(metrics, substrate, () => manager.cache.list(Kinds.Pod), config.nodeName);
  // the CA is known once the in-cluster endpoint has its certificates, before the controllers start
  let rootCA: string | undefined;
  if (local) {
    await substrate.start();
    addScheduler(manager, { client, recorder: new EventRecorder(client, 'default-scheduler'), nodeName: config.nodeName, placement: new ResourceFit(config.gpuSharing.gpuSchedulerPolicy) });
    addGpuSharesController(manager, client, config.nodeName);
    addNamespaceController(manager, client, registry);
    addResourceQuotaController(manager, client, registry);
    addServiceAccountController(manager, client, () => rootCA);
    addClusterRoleAggregationController(manager, client);
  }
  // the node address Pods reach the host at (with tenancy's isolation); no local Pods on a cluster
  const nodeIp = local ? substrate.nodeIp : undefined;
  // RBAC from the informers decides every request and answers the access reviews; without tenancy
  // the one local user is in system:masters, which RBAC always allows
  const rbac = new RbacAuthorizer(informerPolicy(manager.cache));
  // one artifact store for everything that reads or moves task outputs and models
  const artifacts = new LocalArtifactStore(pipelineRoot);
  let podGateway = '127.0.0.1:0';
  let serverUrl = 'http://127.0.0.1:0';
  const started: (StartedWorkload | void)[] = [];
  const settings = { ...config, pipelineRoot, tenancy: config.authn !== undefined, podIsolation: Boolean(isolation && typeof isolation !== 'string'), cluster: !local };
  // on a cluster, a Pod's logs, exec, attach and port-forward go through its API server (which asks the Pod's node)
  const clusterPods = cluster ? new ClusterPods(cluster.connection) : undefined;
  for (const w of all) {
    started.push(await w.setup({
      // Katib's StdOut collector reads a trial's log where its Pod runs: on a cluster, through the API server
      client, manager, log, podLogs: clusterPods ?? substrate, podFiles: substrate,
      recorder: (component) => new EventRecorder(client, component),
      settings, artifacts, ...(s3 ? { s3 } : {}),
      endpoints: { server: () => serverUrl, pods: () => podGateway },
    }));
  }
  const gc = new GarbageCollector(client, store, registry, log, controlMetrics);
  let ready = false;
  const usageHistory = new UsageHistory({ usage: substrate, intervalMs: config.metricsResolutionMs });
  usageHistory.start();
  // the listeners only Pods use (the Pod-facing address and the in-cluster endpoint): a header from
  // them is never a trusted proxy's
  const podListeners = new Set<string>();
  // isolated Pods connect from their own network's addresses, to whichever listener
  const podSources = local && isolation && typeof isolation !== 'string' ? new AddressSet([isolation.podCidr]) : undefined;
  const authn = config.authn ? new Authenticator({ ...config.authn, fromPod: (req) => podListeners.has(`${req.socket.localAddress ?? ''}:${req.socket.localPort ?? ''}`) || (podSources?.has(req.socket.remoteAddress) ?? false) }) : undefined;
  for (const w of authn?.warnings ?? []) log(`authentication: ${w}`);
  if (authn && new AddressSet(config.authn?.trustedProxies ?? []).has('127.0.0.1')) {
    log('authentication: a trusted proxy on 127.0.0.1 is trusted for every local process, and Pods share this machine\'s loopback; prefer a proxy that reaches Skiff from another address');
  }
  const authorizer = opts.authorizer ?? rbac;
  const app = new App({ authorizer, ...(authn ? { authn } : {}), client, registry, logs: clusterPods ?? substrate, exec: clusterPods ?? substrate, version, ready: () => ready, bookmarkMs: config.watchBookmarkMs, pipelineRoot, artifacts, ...(s3 ? { s3 } : {}), gateway, metrics, dryRender: dryRenderer(all, settings), usage: substrate, usageHistory });
  // Kueue's visibility API and metrics, read off the queue manager the queues workload started
  app.kube.discovery.addGroup(visibilityGroup({ client, positions: () => queueManager()?.engine.positions() }));
  const queues = queueManager();
  if (queues) registerQueueMetrics(metrics, queues, manager.cache);
  const server = createServer(app.handle);
  // the dashboard's live views share one WebSocket (a browser holds six connections per server)
  // with tenancy on, its streams act as the user who opened it, through Skiff's own admin token
  let streamsImpersonator: string | undefined;
  const streamMux = new StreamMux(() => serverUrl, { tenancy: authn !== undefined, impersonator: () => streamsImpersonator });
  // Pod subresources that stream both ways (exec, attach, portforward) arrive as upgrade requests (kube/upgrade.ts)
  const upgrades = new Upgrades({
    client, fallback: app.handle,
    handlers: [remoteCommandUpgrade({ client, exec: clusterPods ?? substrate, attach: clusterPods ?? substrate, log }), streamMux.upgrade, app.notebooks.upgrade, app.proxy.upgrade],
    pods: { portforward: (pod, req, socket, head, url) => servePortForward({ forwarder: clusterPods ?? substrate, log }, pod, req, socket, head, url) },
  });
  const upgradeListener = app.guardUpgrade(upgrades.listener);
  server.on('upgrade', upgradeListener);
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  // Containers reach the API (`skiff exec` from an MPI launcher, a transformer calling its predictor)
  // at an address of their own: inside a Pod, 127.0.0.1 with a port the Pod declares is the Pod's own
  // server (see native/skiff-net.c), so a server listening on 127.0.0.1 is also reached at 127.0.0.2.
  let podServer: ReturnType<typeof createServer> | undefined;
  {
    const a = server.address() as AddressInfo;
    const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    serverUrl = `http://${a.address === '0.0.0.0' || a.address === '::' ? '127.0.0.1' : host}:${a.port}`;
    // Pods in network namespaces of their own reach the host at the node address only
    const podHost = nodeIp ?? '127.0.0.2';
    let reach = a.address === '0.0.0.0' || a.address === '::' ? `${podHost}:${a.port}` : `${host}:${a.port}`;
    if (local && (a.address === '127.0.0.1' || (nodeIp && a.address !== '0.0.0.0' && a.address !== '::'))) {
      podServer = createServer(app.handle);
      podServer.on('upgrade', upgradeListener);
      podServer.keepAliveTimeout = 5000;
      const ps = podServer;
      const port = await new Promise<number | undefined>((resolve) => {
        const tryListen = (p: number): void => {
          ps.once('error', () => (p === 0 ? resolve(undefined) : tryListen(0)));
          ps.listen(p, podHost, () => resolve((ps.address() as AddressInfo).port));
        };
        tryListen(a.port);
      });
      if (port !== undefined) {
        reach = `${podHost}:${port}`;
        podListeners.add(reach);
      }
      else podServer = undefined;
    }
    podGateway = reach;
    if (local) substrate.setApiServer(`http://${reach}`);
  }
  const inCluster = local ? await startInCluster({ dataDir: config.dataDir, handler: app.handle, upgrades: server, log, ...(nodeIp ? { podHost: nodeIp } : {}) }) : undefined;
  if (inCluster) {
    substrate.setInCluster(inCluster.contract);
    app.kube.tokens = inCluster.tokens;
    podListeners.add(`${inCluster.host}:${inCluster.port}`);
    if (authn) {
      authn.serviceAccounts = inCluster.tokens;
      // a Pod's token dies with its Pod, and any token with its service account (by uid, as kube does)
      authn.boundObjectsGone = (id) => {
        const sa = id.serviceAccount;
        if (!sa) return undefined;
        if (id.pod) {
          const pod = manager.cache.get(Kinds.Pod, { namespace: sa.namespace, name: id.pod.name });
          if (!pod) return `pod "${id.pod.name}" not found`;
          if (pod.metadata.uid !== id.pod.uid) return `the UID in the bound object reference (${id.pod.uid}) does not match the Pod's (${pod.metadata.uid})`;
        }
        if (sa.uid) {
          const obj = manager.cache.get(Kinds.ServiceAccount, { namespace: sa.namespace, name: sa.name });
          if (!obj) return `service account "${sa.name}" not found`;
          if (obj.metadata.uid !== sa.uid) return `the service account's UID (${obj.metadata.uid}) does not match the token's (${sa.uid})`;
        }
        return undefined;
      };
    }
    streamsImpersonator = inCluster.adminToken;
    rootCA = inCluster.contract.caPem;
  }
  // with tenancy on, trial Pods are known by their address and everyone else by a token (src/server/katib-db/service.ts)
  const katibDb = await startKatibDbManager({ client, dataDir: config.dataDir, log, ...(nodeIp ? { podHost: nodeIp } : {}), ...(authn ? { access: { authenticate: (t: string) => authn.userOfToken(t), authorizer } } : {}) });
  // KFP's API at the address kfp.Client() dials in a Pod when given no host (src/server/kfp/in-cluster.ts):
  // next to Katib's DB manager, whose address is this server's own, else the node address
  const kfpService = local ? await startKfpInClusterService({ handler: app.handle, hosts: nodeIp ? [nodeIp] : [...new Set([...(katibDb ? [katibDb.host] : []), '127.0.0.2'])] }) : undefined;
  if (local) {
    const platform: ServiceView[] = [];
    if (katibDb) {
      const { name, namespace } = KatibDbManagerService;
      platform.push({ name, namespace, ips: [katibDb.host] });
      if (!katibDb.podsUseDefault) log(`katib-db-manager: port ${KatibDbManagerService.port} is taken; trials must pass db_manager_address="${katibDb.address}" to report_metrics()`);
    }
    if (kfpService) {
      platform.push({ name: KfpApiService.name, namespace: KfpApiService.namespace, ips: [kfpService.host] });
      podListeners.add(`${kfpService.host}:${kfpService.port}`);
    } else log(`kfp: port ${KfpApiService.port} is taken; Pods reach the KFP API through KF_PIPELINES_ENDPOINT (kfp.Client() then sends no token)`);
    substrate.setPlatformServices(platform, { kfpByName: kfpService !== undefined });
  }
  // isolated Pods reach the host only at these ports of the node address (the kernel drops the rest)
  if (nodeIp) substrate.setNodePorts([Number(podGateway.slice(podGateway.lastIndexOf(':') + 1)), ...(inCluster ? [inCluster.port] : []), ...(katibDb ? [katibDb.port] : []), ...(kfpService ? [kfpService.port] : [])]);
  writeKubeconfig(config.dataDir, kubeconfig(serverUrl, inCluster, inCluster?.adminToken, { preferHttps: authn !== undefined }));
  // on a cluster, replicas elect one to run the controllers (and their clocks); the others serve the
  // HTTP surfaces, which read and write through the cluster's API server, and reconcile nothing
  // the leader publishes where it serves on the Lease: a standby forwards inference requests there
  const election = cluster ? await startElection(cluster.store.http, client, opts.leaderElection ?? {}, log, { [leaderAddressAnnotation]: servingAddress(server.address() as AddressInfo, process.env.POD_IP) }) : undefined;
  if (election) {
    // a standby's gateway has no routes (the serving controllers run on the leader): it knows the
    // cluster's InferenceServices from the informer, started now so that it has listed them by the
    // first request
    manager.cache.informer(Kinds.InferenceService);
    gateway.setStandby({
      leading: () => election.isLeader(),
      exists: (namespace, name) => manager.cache.get(Kinds.InferenceService, { namespace, name }) !== undefined,
      forwarder: new LeaderForwarder({
        lease: election.lease, identity: election.identity,
        leader: () => ({ identity: election.leader(), address: election.annotations()[leaderAddressAnnotation] }),
      }),
    });
  }
  let stopping = false;
  if (!election) manager.start();
  const lost = election ? election.lost.then((why) => {
    // at once: a replica that may no longer hold the Lease starts no other reconcile (their queues
    // shut down now; one in flight is not waited for: its API server may be what is unreachable)
    void manager.stopControllers();
    return why;
  }) : undefined;
  void election?.acquired.then(async () => {
    // outside a cluster the webhooks' URL names one replica: the leader points them at itself, so
    // that the replica they name is one that lives (in a Pod they name the Service: nothing changes)
    try {
      await cluster?.pointWebhooksHere?.();
    } catch (e) {
      log(`kubernetes: cannot point the webhooks at this replica: ${(e as Error).message}`);
    }
    if (!stopping) manager.start();
  });
  // on a cluster, its controller-manager's garbage collector follows ownerReferences
  if (local) await gc.start();
  const sweep = async (): Promise<void> => {
    try {
      await sweepEvents(client, config.eventTtlMs);
    } catch (e) {
      log(`event sweep: ${(e as Error).message}`);
    }
  };
  // a cluster expires its Events itself (kube-apiserver's --event-ttl)
  const sweeper = every(Math.min(config.eventTtlMs, 10 * 60_000), () => void (local && sweep())).unref();
  ready = true;
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const authentication = authn
    ? `Skiff is multi-user: requests need credentials (${authn.describe()}); ${authorizer === allowAll ? 'every signed-in user may do everything (no authorizer configured)' : 'authorization by its policy'}`
    : 'Skiff is single-user: no authentication, every caller acts as skiff-admin (start with --token-auth-file or --oidc-issuer-url for tenancy)';
  return {
    authentication,
    url: `http://${host}:${addr.port}`,
    dataDir: config.dataDir,
    client,
    ...(katibDb ? { katibDbManager: katibDb.address } : {}),
    ...(cluster ? { cluster: { server: cluster.server, version: cluster.version, crdsInstalled: cluster.installed } } : {}),
    ...(election && lost ? { leaderElection: { lease: election.lease, identity: election.identity, isLeader: () => election.isLeader(), lost } } : {}),
    async stop(o = {}) {
      ready = false;
      stopping = true;
      sweeper.clear();
      gateway.stop();
      usageHistory.stop();
      server.closeAllConnections();
      upgrades.closeAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (podServer) {
        podServer.closeAllConnections();
        await new Promise<void>((resolve) => podServer?.close(() => resolve()));
      }
      await inCluster?.close();
      await katibDb?.close();
      await kfpService?.close();
      if (o.containers === 'stop' && local) await substrate.shutdown();
      await manager.stop();
      await gc.stop();
      for (const w of started) await w?.stop?.();
      await recorder.flush();
      // the controllers have stopped: the standby may take over now instead of at the Lease's expiry
      await election?.release();
      const left = local ? substrate.runningContainers() : 0;
      await substrate.stop();
      clusterPods?.close();
      await store.close();
      // last: the controllers' final writes are checked by it too
      await webhookServer?.close();
      s3?.destroy();
      return left;
    },
  };
}

/**
 * Where the webhooks listen and how the API server reaches them: in a Pod, every address, through the
 * Service in the Pod's namespace; outside, the address Skiff listens on (or `webhook.host`), by URL.
 */
function webhookAddress(opts: SkiffOptions, listenHost: string): { listen: string; port: number; urlHost: string; dnsNames: string[]; ips: string[]; service?: { namespace: string; name: string } } {
  const inPod = opts.kubeconfig === 'in-cluster';
  const port = opts.webhook?.port ?? (inPod ? 9443 : 0);
  if (inPod && !opts.webhook?.host) {
    const namespace = podNamespace() ?? leaseNamespace(opts.leaderElection ?? {});
    const name = opts.webhook?.service ?? 'skiff';
    return { listen: '0.0.0.0', port, urlHost: '', dnsNames: [`${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`, `${name}.${namespace}`], ips: [], service: { namespace, name } };
  }
  const everywhere = listenHost === '0.0.0.0' || listenHost === '::';
  const urlHost = opts.webhook?.host ?? (everywhere ? '127.0.0.1' : listenHost);
  const ip = isIP(urlHost) !== 0;
  return {
    listen: listenHost, port, urlHost: isIP(urlHost) === 6 ? `[${urlHost}]` : urlHost,
    dnsNames: ip ? ['localhost'] : [urlHost], ips: ip ? [urlHost] : [],
  };
}

/** Makes the Lease's namespace when missing and starts competing for the Lease. */
/** where the leader Lease is: the flag's namespace, else the Pod's, else skiff-system */
function leaseNamespace(o: NonNullable<SkiffOptions['leaderElection']>): string {
  return o.namespace ?? podNamespace() ?? 'skiff-system';
}

async function startElection(http: LeaseHttp, client: Client, o: NonNullable<SkiffOptions['leaderElection']>, log: (m: string) => void, annotations: Record<string, string>): Promise<LeaderElector & { lease: string }> {
  const namespace = leaseNamespace(o);
  const name = o.name ?? 'skiff-controllers';
  try {
    if (!(await client.find(Kinds.Namespace, { name: namespace }))) await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  } catch (e) {
    if (!isConflict(e)) throw e;
  }
  // as client-go's callers name themselves: the host, and what tells two processes on it apart
  const identity = `${hostname()}_${randomUUID()}`;
  const elector = Object.assign(new LeaderElector({
    http, namespace, name, identity, log, annotations,
    ...(o.leaseDurationMs !== undefined ? { leaseDurationMs: o.leaseDurationMs } : {}),
    ...(o.renewDeadlineMs !== undefined ? { renewDeadlineMs: o.renewDeadlineMs } : {}),
    ...(o.retryPeriodMs !== undefined ? { retryPeriodMs: o.retryPeriodMs } : {}),
  }), { lease: `${namespace}/${name}` });
  elector.start();
  return elector;
}

/** What tenancy's isolation hides and shares, or why this machine cannot isolate Pods. */
async function podIsolation(config: SkiffConfig, pipelineRoot: string): Promise<NonNullable<LocalSubstrateOptions['isolation']> | string> {
  if (process.getuid?.() !== 0) return 'the server does not run as root, which running Pods as other users and in network namespaces needs';
  if (!bwrapAvailable()) return 'bubblewrap (bwrap) is not installed or cannot make namespaces here';
  const why = await podNetworksAvailable();
  if (why) return why;
  const hide = [config.dataDir];
  if (config.authn?.tokenAuthFile) hide.push(config.authn.tokenAuthFile);
  return {
    hide, podCidr: config.podNetwork ?? claimPodNetwork(config.dataDir),
    namespaceDirs: [pipelineRoot, join(config.dataDir, 'tuning', 'checkpoints')],
    reveal: [join(config.dataDir, 'python-envs'), join(config.dataDir, 'shell')],
  };
}
