// Starts the platform: store, API server, controllers and the local substrate, in one process.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultRegistry, Kinds } from '../api/index.js';
import { isConflict } from '../api/errors.js';
import { Manager } from '../control/controller.js';
import { EventRecorder, sweepEvents } from '../control/events.js';
import { GarbageCollector } from '../control/gc.js';
import { addNamespaceController } from '../control/namespace.js';
import { discoverCapacity } from '../scheduler/node.js';
import { ResourceFit } from '../scheduler/placement.js';
import { addScheduler } from '../scheduler/scheduler.js';
import { Client } from '../store/client.js';
import { SqliteStore } from '../store/sqlite/store.js';
import { Environments } from '../substrate/local/environments.js';
import { LocalSubstrate } from '../substrate/local/index.js';
import { addJobController } from '../workloads/jobs/controller.js';
import { PythonEnvironments } from '../workloads/pipelines/python-envs.js';
import { addRecurringRunController } from '../workloads/pipelines/recurring-run-controller.js';
import { addRunController } from '../workloads/pipelines/run-controller.js';
import { addServingControllers } from '../workloads/serving/controller.js';
import { Gateway } from '../workloads/serving/gateway.js';
import { ModelStore } from '../workloads/serving/storage.js';
import { installStockRuntimes } from '../workloads/serving/install-runtimes.js';
import { addTrainingController } from '../workloads/training/controller.js';
import { trainingKindFor } from '../workloads/training/render.js';
import { PythonZygote } from '../workloads/pipelines/zygote.js';
import { App } from './app.js';
import { MetricsRegistry } from './metrics.js';
import type { SkiffOptions } from './config.js';
import { compileConfig } from './config.js';
import { every } from '../util/timers.js';

export type { SkiffOptions } from './config.js';

export interface Skiff {
  url: string;
  dataDir: string;
  client: Client;
  /** stops serving; running containers keep running (the count is returned) unless asked to stop them too */
  stop(opts?: { containers?: 'keep' | 'stop' }): Promise<number>;
}

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export function skiffVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/** the default environment of images: the Python environment setup made, if any, and its tool shims */
function defaultPath(): string[] {
  return [join(repoRoot, '.venv', 'bin'), join(repoRoot, 'build', 'bin')].filter((d) => existsSync(d));
}

export async function startSkiff(opts: SkiffOptions = {}): Promise<Skiff> {
  const config = compileConfig(opts);
  const version = skiffVersion();
  const log = (m: string): void => void process.stderr.write(`${m}\n`);
  const registry = defaultRegistry();
  const store = new SqliteStore({ file: join(config.dataDir, 'skiff.db'), historySize: config.watchHistory });
  const client = new Client(store, registry);
  for (const name of ['default', 'kube-system']) {
    try {
      if (!(await client.find(Kinds.Namespace, { name }))) await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    } catch (e) {
      if (!isConflict(e)) throw e;
    }
  }
  const found = await discoverCapacity();
  const capacity = {
    cpu: config.node.cpu ?? found.cpu,
    memoryBytes: config.node.memoryBytes ?? found.memoryBytes,
    gpus: config.node.gpus !== undefined ? Array.from({ length: config.node.gpus }, (_, i) => found.gpus[i] ?? { index: i, uuid: `GPU-fake-${i}`, name: 'configured', memoryMiB: 0 }) : found.gpus,
  };
  const recorder = new EventRecorder(client, 'skiff');
  const manager = new Manager(client, log, config.verbose);
  const substrate = new LocalSubstrate({
    client, recorder, manager, dataDir: config.dataDir, nodeName: config.nodeName, capacity,
    environments: new Environments(config.environments, { path: defaultPath(), env: { SKIFF_HOME: repoRoot } }),
    version, crashLoopBaseMs: config.crashLoopBackoffMs, crashLoopMaxMs: config.crashLoopBackoffMaxMs, log,
  });
  await substrate.start();
  addScheduler(manager, { client, recorder: new EventRecorder(client, 'default-scheduler'), nodeName: config.nodeName, placement: new ResourceFit() });
  addNamespaceController(manager, client, registry);
  addJobController(manager, { client, recorder: new EventRecorder(client, 'job-controller'), podBackoffBaseMs: config.jobPodBackoffMs, podBackoffMaxMs: config.jobPodBackoffMaxMs });
  const basePython = join(repoRoot, '.venv', 'bin', 'python');
  const pipelineRoot = join(config.dataDir, 'pipeline-root');
  const zygoteOpts = { python: basePython, script: join(repoRoot, 'python', 'skiff_zygote.py'), client: join(repoRoot, 'build', 'skiff-pyfork') };
  const zygote = config.pythonZygote && PythonZygote.available(zygoteOpts) ? new PythonZygote({ ...zygoteOpts, dir: join(config.dataDir, 'python-zygote') }) : undefined;
  // warmed at start-up, so the first task does not wait for it
  if (zygote) void zygote.ensure();
  addRunController(manager, {
    client, recorder: new EventRecorder(client, 'pipeline-runner'),
    pipelineRoot,
    ...(existsSync(basePython) ? { python: basePython, environments: new PythonEnvironments({ root: join(config.dataDir, 'python-envs'), basePython, log }) } : {}),
    ...(zygote ? { zygote } : {}),
  });
  addRecurringRunController(manager, { client, recorder: new EventRecorder(client, 'recurring-run-controller') });
  // one controller per training kind the registry serves (kubeflow.org: PyTorchJob, TFJob, ..., MPIJob)
  addTrainingController(manager, { client, recorder: new EventRecorder(client, 'training-operator'), kinds: trainingKindFor, nodeName: config.nodeName });
  // model serving: the gateway lives in this process; Pods reach it at `podGateway`
  const metrics = new MetricsRegistry();
  const gateway = new Gateway({ metrics, ingressDomain: config.ingressDomain, log });
  let podGateway = '127.0.0.1:0';
  let serverUrl = 'http://127.0.0.1:0';
  await installStockRuntimes(client, log);
  addServingControllers(manager, {
    client, recorder: new EventRecorder(client, 'inferenceservice-controller'), gateway,
    models: new ModelStore(join(config.dataDir, 'serving', 'models'), (ns, claim) => join(config.dataDir, 'volumes', ns, claim)),
    podGateway: () => podGateway,
    serverUrl: () => serverUrl,
    podLog: async (pod, container) => {
      const ac = new AbortController();
      const lines: string[] = [];
      try {
        for await (const l of await substrate.logs(pod, { container, tailLines: 30 }, ac.signal)) lines.push(l);
      } finally {
        ac.abort();
      }
      return lines.join('');
    },
  });
  const gc = new GarbageCollector(client, store, registry, log);
  let ready = false;
  const app = new App({ client, registry, logs: substrate, exec: substrate, version, ready: () => ready, pipelineRoot, gateway, metrics });
  const server = createServer(app.handle);
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
    let reach = a.address === '0.0.0.0' || a.address === '::' ? `127.0.0.2:${a.port}` : `${host}:${a.port}`;
    if (a.address === '127.0.0.1') {
      podServer = createServer(app.handle);
      podServer.keepAliveTimeout = 5000;
      const ps = podServer;
      const port = await new Promise<number | undefined>((resolve) => {
        const tryListen = (p: number): void => {
          ps.once('error', () => (p === 0 ? resolve(undefined) : tryListen(0)));
          ps.listen(p, '127.0.0.2', () => resolve((ps.address() as AddressInfo).port));
        };
        tryListen(a.port);
      });
      if (port !== undefined) reach = `127.0.0.2:${port}`;
      else podServer = undefined;
    }
    podGateway = reach;
    substrate.setApiServer(`http://${reach}`);
  }
  manager.start();
  await gc.start();
  const sweep = async (): Promise<void> => {
    try {
      await sweepEvents(client, config.eventTtlMs);
    } catch (e) {
      log(`event sweep: ${(e as Error).message}`);
    }
  };
  const sweeper = every(Math.min(config.eventTtlMs, 10 * 60_000), () => void sweep()).unref();
  ready = true;
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    dataDir: config.dataDir,
    client,
    async stop(o = {}) {
      ready = false;
      sweeper.clear();
      gateway.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (podServer) {
        podServer.closeAllConnections();
        await new Promise<void>((resolve) => podServer?.close(() => resolve()));
      }
      if (o.containers === 'stop') await substrate.shutdown();
      await manager.stop();
      await gc.stop();
      await recorder.flush();
      const left = substrate.runningContainers();
      await substrate.stop();
      // the zygote finishes the tasks it forked, then exits; a later server starts another
      zygote?.stop();
      await store.close();
      return left;
    },
  };
}
