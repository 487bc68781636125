// Section 13: Skiff on a real control plane (etcd, kube-apiserver, kube-scheduler,
// kube-controller-manager, all started by the test harness on loopback).
//   (a) the 10-step pipeline chain (bench/pipelines/chain.py) run by `skiff up --kubeconfig` with its
//       task Pods on a node agent (`skiff node`), against the same chain on the local substrate
//   (b) scale: N simulated Nodes (kwok) and J Jobs of C completions each (parallelism P), first run by
//       the cluster's own Job controller alone (what a user without Skiff runs), then the same Jobs
//       through Kueue's queues on Skiff (created suspended with kueue.x-k8s.io/queue-name; Skiff's
//       queue controllers admit each Workload and unsuspend its Job; the cluster's Job controller makes
//       the Pods, its scheduler places them on kwok's Nodes, kwok's Stages run them to Succeeded). It
//       measures the time until every Job is Complete, Skiff's server RSS over the run, and the time per
//       reconcile (workqueue_work_duration_seconds on Skiff's /metrics) as the cluster fills with Pods.
// The plain run goes first, with Skiff already watching; its Jobs and Pods are deleted before the Skiff
// run, so that both start from the same cluster (at 10,000 Pods a cluster holding 10,000 more is
// markedly slower on two cores).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeHttp } from '../src/store/kube/http.js';
import { loadKubeconfig } from '../src/store/kube/kubeconfig.js';
import { KubeCluster, kubeClusterSkipReason, kwokNodes, kwokSkipReason, kwokTaint } from '../src/testing/kube-cluster.js';
import { TestServer, repoRoot, runCli } from '../test/harness.js';
import { skiffDaemon, stopDaemon } from '../test/kube-daemons.js';
import { chainRun, compileChain, singleUser } from './measure.js';
import { fmtMs, median, nowMs } from './stats.js';

type Row = (label: string, value: string, note?: string) => void;

export interface KubernetesBenchOptions {
  /** simulated Nodes */
  nodes: number;
  jobs: number;
  /** each Job's completions: jobs x completions Pods in all, per run */
  completions: number;
  parallelism: number;
  /** runs of the pipeline chain on each side; 0 skips (a) */
  chainRuns: number;
  /** skip (b) */
  noScale?: boolean;
}

/**
 * What fits in the 10 minutes the section may take on a busy two-core machine; the issue's full size,
 * 1,000 Nodes and 10,000 Pods, is --nodes 1000 --jobs 100 --completions 100 (see the README's figures).
 */
export const K8S_DEFAULTS = { nodes: 1000, jobs: 20, completions: 100, parallelism: 50, chainRuns: 3 };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface JobStatus { metadata: { name: string }; status?: { succeeded?: number; conditions?: { type: string; status: string }[] } }

/** a Job whose Pods go to kwok's Nodes only: the node agent and the control plane's machine stay out of it */
function benchJob(name: string, namespace: string, completions: number, parallelism: number, queue?: string): Record<string, unknown> {
  return {
    apiVersion: 'batch/v1', kind: 'Job',
    metadata: { name, namespace, ...(queue ? { labels: { 'kueue.x-k8s.io/queue-name': queue } } : {}) },
    spec: {
      completions, parallelism, backoffLimit: 0,
      // Kueue's webhook would set it; on a cluster without Skiff's admission in the API server the user does
      ...(queue ? { suspend: true } : {}),
      template: {
        spec: {
          restartPolicy: 'Never',
          nodeSelector: { type: 'kwok' },
          tolerations: [{ key: kwokTaint.key, operator: 'Equal', value: kwokTaint.value, effect: kwokTaint.effect }],
          containers: [{ name: 'main', image: 'python:3', command: ['python3', '-c', 'print(1)'], resources: { requests: { cpu: '1', memory: '1Gi' } } }],
        },
      },
    },
  };
}

/** a process's resident set, in MiB */
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** the sum and count of workqueue_work_duration_seconds over every controller's queue */
async function workDuration(url: string): Promise<{ sum: number; count: number; byController: Map<string, { sum: number; count: number }> }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const byController = new Map<string, { sum: number; count: number }>();
  let sum = 0;
  let count = 0;
  for (const line of text.split('\n')) {
    const m = /^workqueue_work_duration_seconds_(sum|count)\{[^}]*controller="([^"]*)"[^}]*\} (\S+)$/.exec(line);
    if (!m) continue;
    const v = Number(m[3]);
    const e = byController.get(m[2] as string) ?? { sum: 0, count: 0 };
    if (m[1] === 'sum') {
      e.sum += v;
      sum += v;
    } else {
      e.count += v;
      count += v;
    }
    byController.set(m[2] as string, e);
  }
  return { sum, count, byController };
}

async function createAll(http: KubeHttp, objs: Record<string, unknown>[], path: (o: Record<string, unknown>) => string, concurrency = 10): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < objs.length) {
      const o = objs[next++] as Record<string, unknown>;
      await http.request('POST', path(o), { body: o });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** polls the namespace's Jobs until all are Complete; calls tick with the Pods succeeded so far */
async function untilComplete(http: KubeHttp, namespace: string, jobs: number, tick: (succeeded: number) => Promise<void>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await http.request<{ items: JobStatus[] }>('GET', `/apis/batch/v1/namespaces/${namespace}/jobs`);
    const failed = list.items.find((j) => j.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True'));
    if (failed) throw new Error(`Job ${namespace}/${failed.metadata.name} failed`);
    const complete = list.items.filter((j) => j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True')).length;
    await tick(list.items.reduce((n, j) => n + (j.status?.succeeded ?? 0), 0));
    if (complete === jobs) return;
    if (Date.now() > deadline) throw new Error(`${complete} of ${jobs} Jobs in ${namespace} Complete after ${timeoutMs / 1000} s`);
    await sleep(1000);
  }
}

/** deletes the Jobs (their Pods by the garbage collector) and waits until the namespace has no Pods */
async function cleanUp(http: KubeHttp, namespace: string, jobs: string[]): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const name = jobs[next++] as string;
      await http.request('DELETE', `/apis/batch/v1/namespaces/${namespace}/jobs/${name}`, { body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' } });
    }
  };
  await Promise.all(Array.from({ length: 10 }, worker));
  const deadline = Date.now() + 900_000;
  for (;;) {
    const page = await http.request<{ items: unknown[]; metadata: { remainingItemCount?: number } }>('GET', `/api/v1/namespaces/${namespace}/pods`, { query: { limit: '1' } });
    const left = page.items.length + (page.metadata.remainingItemCount ?? 0);
    if (!left) return;
    if (Date.now() > deadline) throw new Error(`${left} Pods still in ${namespace}`);
    await sleep(2000);
  }
}

export async function kubernetesBench(row: Row, opts: KubernetesBenchOptions): Promise<void> {
  const python = join(repoRoot, '.venv', 'bin', 'python');
  const pods = opts.jobs * opts.completions;
  console.log(`\n13. Kubernetes: the pipeline chain on a cluster with a node agent against the local substrate (${opts.chainRuns} runs each); ${opts.nodes.toLocaleString('en')} kwok Nodes, ${opts.jobs} Jobs x ${opts.completions} completions (${pods.toLocaleString('en')} Pods, parallelism ${opts.parallelism}) by the cluster's Job controller alone, then through Skiff's Kueue queues`);
  const why = kwokSkipReason() ?? kubeClusterSkipReason();
  if (why) {
    console.log(`  skipped: ${why}`);
    return;
  }
  const dirs: string[] = [];
  const tmp = (p: string): string => {
    const d = mkdtempSync(join(tmpdir(), p));
    dirs.push(d);
    return d;
  };
  const chainOk = opts.chainRuns > 0 && existsSync(python);
  let compiled = '';
  if (chainOk) {
    compiled = compileChain(python, join(repoRoot, 'bench', 'pipelines', 'chain.py'), tmp('skiff-bench-k8s-chain-'));
    const s = await TestServer.start({ config: { verbose: false } });
    const local: number[] = [];
    try {
      for (let i = 0; i < opts.chainRuns; i++) local.push(await chainRun(s, singleUser, compiled));
    } finally {
      await s.cleanup();
    }
    row('chain: local substrate (skiff up), median', fmtMs(median(local)), `runs ${local.map((t) => (t / 1000).toFixed(1)).join(', ')} s`);
  } else if (opts.chainRuns > 0) console.log('  the pipeline chain: skipped, no .venv (run npm run setup)');

  let t = nowMs();
  const cluster = await KubeCluster.start({ kwok: true, apiQps: 500 }).catch((e: unknown) => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    throw e;
  });
  row('cluster: control plane + kwok started', `${((nowMs() - t) / 1000).toFixed(1)} s`);
  const http = new KubeHttp(loadKubeconfig(cluster.kubeconfig));
  let up: ReturnType<typeof skiffDaemon> | undefined;
  let agent: ReturnType<typeof skiffDaemon> | undefined;
  try {
    t = nowMs();
    up = skiffDaemon(['up', '--port', '0', '--data-dir', tmp('skiff-bench-k8s-up-'), '--kubeconfig', cluster.kubeconfig], /ready at http/);
    await up.ready;
    const url = (/ready at (http:\/\/\S+)/.exec(up.output()) as RegExpExecArray)[1] as string;
    const pid = up.proc.pid as number;
    row('skiff up --kubeconfig: start to ready', `${((nowMs() - t) / 1000).toFixed(1)} s`, `RSS ${rssMiB(pid).toFixed(0)} MiB`);

    if (chainOk) {
      agent = skiffDaemon(['node', '--kubeconfig', cluster.kubeconfig, '--name', 'agent-1', '--data-dir', tmp('skiff-bench-k8s-node-'), '--client-ca-file', cluster.caFile], /Node agent-1 is ready/);
      await agent.ready;
      const onCluster: number[] = [];
      const server = { cli: (args: string[]) => runCli(args, { SKIFF_SERVER: url }) };
      for (let i = 0; i < opts.chainRuns; i++) onCluster.push(await chainRun(server, singleUser, compiled));
      row('chain: on the cluster, a node agent, median', fmtMs(median(onCluster)), `runs ${onCluster.map((x) => (x / 1000).toFixed(1)).join(', ')} s`);
      // its watch of every Pod in the cluster would be load the scale run does not need
      await stopDaemon(agent);
      agent = undefined;
    }
    if (opts.noScale) return;

    t = nowMs();
    await kwokNodes(http, 'kwok', opts.nodes, { timeoutMs: 600_000 });
    row(`scale: ${opts.nodes.toLocaleString('en')} kwok Nodes created, Ready`, `${((nowMs() - t) / 1000).toFixed(1)} s`, `Skiff RSS ${rssMiB(pid).toFixed(0)} MiB`);

    // the queues: one flavor, a ClusterQueue as large as the simulated cluster, a LocalQueue
    const kq = '/apis/kueue.x-k8s.io/v1beta2';
    for (const ns of ['bench-plain', 'bench-queued']) await http.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    await http.request('POST', `${kq}/resourceflavors`, { body: { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ResourceFlavor', metadata: { name: 'kwok' } } });
    await http.request('POST', `${kq}/clusterqueues`, {
      body: {
        apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ClusterQueue', metadata: { name: 'bench' },
        spec: { namespaceSelector: {}, resourceGroups: [{ coveredResources: ['cpu', 'memory'], flavors: [{ name: 'kwok', resources: [{ name: 'cpu', nominalQuota: String(opts.nodes * 32) }, { name: 'memory', nominalQuota: `${opts.nodes * 256}Gi` }] }] }] },
      },
    });
    await http.request('POST', `${kq}/namespaces/bench-queued/localqueues`, { body: { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'LocalQueue', metadata: { name: 'lq', namespace: 'bench-queued' }, spec: { clusterQueue: 'bench' } } });

    // Skiff's memory and its reconciles, sampled through both runs
    const rss: number[] = [rssMiB(pid)];
    const sampler = setInterval(() => {
      try {
        rss.push(rssMiB(pid));
      } catch { /* exited */ }
    }, 1000);
    const timeout = Math.max(600_000, pods * 200);
    try {
      const names = Array.from({ length: opts.jobs }, (_, i) => `job-${String(i).padStart(4, '0')}`);
      // (1) the cluster's Job controller alone
      t = nowMs();
      await createAll(http, names.map((n) => benchJob(n, 'bench-plain', opts.completions, opts.parallelism)), (o) => `/apis/batch/v1/namespaces/${(o.metadata as { namespace: string }).namespace}/jobs`);
      await untilComplete(http, 'bench-plain', opts.jobs, async () => undefined, timeout);
      const plain = (nowMs() - t) / 1000;
      row(`scale: ${pods.toLocaleString('en')} Pods, Job controller alone`, `${plain.toFixed(1)} s`, `${(pods / plain).toFixed(0)} Pods/s; create to all ${opts.jobs} Jobs Complete`);
      const rssAfterPlain = rssMiB(pid);
      // both runs start from an empty cluster: its Pods deleted (by the garbage collector, then kwok)
      t = nowMs();
      await cleanUp(http, 'bench-plain', names);
      row(`scale: the plain run's Jobs and Pods deleted`, `${((nowMs() - t) / 1000).toFixed(1)} s`, `Skiff RSS ${rssMiB(pid).toFixed(0)} MiB`);

      // (2) the same Jobs through Skiff's queues; reconcile time per fifth of the Pods finished
      const steps: { succeeded: number; sum: number; count: number; rss: number }[] = [];
      const first = await workDuration(url);
      steps.push({ succeeded: 0, sum: first.sum, count: first.count, rss: rssMiB(pid) });
      t = nowMs();
      await createAll(http, names.map((n) => benchJob(n, 'bench-queued', opts.completions, opts.parallelism, 'lq')), (o) => `/apis/batch/v1/namespaces/${(o.metadata as { namespace: string }).namespace}/jobs`);
      await untilComplete(http, 'bench-queued', opts.jobs, async (succeeded) => {
        const last = steps[steps.length - 1] as (typeof steps)[number];
        if (succeeded - last.succeeded < pods / 5 && succeeded < pods) return;
        const w = await workDuration(url);
        steps.push({ succeeded, sum: w.sum, count: w.count, rss: rssMiB(pid) });
      }, timeout);
      const queued = (nowMs() - t) / 1000;
      row(`scale: ${pods.toLocaleString('en')} Pods through Skiff's queues`, `${queued.toFixed(1)} s`, `${(pods / queued).toFixed(0)} Pods/s; ${(queued / plain).toFixed(2)}x the Job controller alone's time`);
      const wls = await http.request<{ items: { status?: { admission?: { clusterQueue?: string } } }[] }>('GET', `${kq}/namespaces/bench-queued/workloads`);
      row('scale: Workloads admitted by Skiff', `${wls.items.filter((w) => w.status?.admission?.clusterQueue === 'bench').length}`, `of ${opts.jobs} Jobs`);
      for (let i = 1; i < steps.length; i++) {
        const a = steps[i - 1] as (typeof steps)[number];
        const b = steps[i] as (typeof steps)[number];
        const n = b.count - a.count;
        row(`  reconcile, ${a.succeeded.toLocaleString('en')}-${b.succeeded.toLocaleString('en')} Pods done`, n ? fmtMs(((b.sum - a.sum) / n) * 1000) : '-', `mean of ${n} reconciles; Skiff RSS ${b.rss.toFixed(0)} MiB`);
      }
      const end = await workDuration(url);
      const top = [...end.byController.entries()].filter(([, e]) => e.count > 0).sort((x, y) => y[1].sum - x[1].sum).slice(0, 4);
      row('  reconciles over both runs, all controllers', `${end.count}`, `mean ${fmtMs((end.sum / Math.max(1, end.count)) * 1000)}; busiest: ${top.map(([c, e]) => `${c} ${e.count} x ${fmtMs((e.sum / e.count) * 1000)}`).join(', ')}`);
      const rssEnd = rssMiB(pid);
      rss.push(rssEnd);
      row('scale: Skiff server RSS', `${Math.max(...rss).toFixed(0)} MiB`, `peak; ${rss[0]?.toFixed(0)} MiB before the Jobs, ${rssAfterPlain.toFixed(0)} after the plain run, ${rssEnd.toFixed(0)} at the end`);
    } finally {
      clearInterval(sampler);
    }
  } finally {
    await stopDaemon(agent);
    await stopDaemon(up);
    http.close();
    await cluster.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

/** `node dist/bench/kubernetes.js [--nodes N --jobs J --completions C --parallelism P --chain-runs R --no-scale]`: section 13 alone */
if (process.argv[1]?.endsWith('kubernetes.js')) {
  const args = process.argv.slice(2);
  const arg = (name: string, def: number): number => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? Number(args[i + 1]) : def;
  };
  const { loadavg } = await import('node:os');
  const row: Row = (label, value, note = '') => console.log(`  ${label.padEnd(44)} ${value.padStart(14)}  ${note}${note ? '; ' : ''}load ${loadavg()[0]?.toFixed(2)}`);
  const d = K8S_DEFAULTS;
  await kubernetesBench(row, { nodes: arg('nodes', d.nodes), jobs: arg('jobs', d.jobs), completions: arg('completions', d.completions), parallelism: arg('parallelism', d.parallelism), chainRuns: arg('chain-runs', d.chainRuns), noScale: args.includes('--no-scale') });
}
