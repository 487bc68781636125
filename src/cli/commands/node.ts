import { homedir } from 'node:os';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { CliError, UsageError } from '../errors.js';
import type { Command } from './common.js';
import { expandHome } from './up.js';
import { stopSignals } from '../stop-signals.js';

/** What `skiff node` starts the agent with (a type only: the agent is loaded when the command runs). */
export interface StartNodeOptions {
  kubeconfig: string;
  nodeName: string;
  dataDir: string;
  configFile?: string;
  nodeIp?: string;
  podCidr?: string;
  kubeletPort?: number;
  clientCaFile?: string;
}
export interface RunningNode {
  server: string;
  kubeletUrl: string;
  warnings: string[];
  stop(): Promise<number>;
}
type StartNode = (opts: StartNodeOptions) => Promise<RunningNode>;

/** Loads the agent lazily (so other commands never pay for it). Overridable for tests. */
let loadAgent = async (): Promise<StartNode> => {
  const url = new URL('../../server/node-agent.js', import.meta.url).href;
  let mod: { startNodeAgent?: StartNode };
  try {
    mod = (await import(url)) as { startNodeAgent?: StartNode };
  } catch (err) {
    throw new CliError(`cannot load Skiff's node agent: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof mod.startNodeAgent !== 'function') throw new CliError('the node agent module does not export startNodeAgent()');
  return mod.startNodeAgent;
};

export function setAgentLoader(loader: () => Promise<StartNode>): void {
  loadAgent = loader;
}

/** a Node's name is a DNS subdomain */
const nodeNamePattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export const command: Command = {
  name: 'node',
  summary: 'Run this machine as a node of a Kubernetes cluster',
  usage: 'skiff node --kubeconfig FILE --name NAME [--data-dir DIR] [--config FILE] [--node-ip IP] [--pod-cidr CIDR] [--kubelet-port N] [--client-ca-file FILE]',
  description: `
Registers a Node named NAME in the cluster with this machine's CPUs, memory and GPUs, keeps its
Lease in kube-node-lease renewed, and runs the Pods the cluster's scheduler binds to it as
processes, as 'skiff up' runs Pods on one machine (images name environments: see the config's
environments:). Pod status is reported to the cluster as a kubelet reports it, and the kubelet API
serves container logs and exec to the API server, so 'kubectl logs' and 'kubectl exec' work. Agents
with different names and data directories register as different nodes. Each node's Pods get
addresses from the Node's podCIDR (given by the controller-manager's --allocate-node-cidrs, or
--pod-cidr), a loopback range such as 127.64.3.0/24, and their hosts files name the Pods and
Services of the whole cluster; see the README for what a cluster of several machines needs. Pods get
their service-account tokens from the cluster's TokenRequest API (projected volumes, refreshed before
they expire), and claims of the StorageClass skiff-local placed on this node get local volumes under
the data directory (deploy/kubernetes/node-agent). The agent's credentials must allow what it does:
it checks at start-up and names what RBAC refuses. Runs until interrupted
(Ctrl-C); containers keep running and are adopted by the next start with the same data directory.`,
  flags: [
    { name: 'kubeconfig', type: 'string', valueName: 'FILE', description: 'the cluster to join' },
    { name: 'name', type: 'string', valueName: 'NAME', description: 'the Node\'s name' },
    { name: 'data-dir', type: 'string', valueName: 'DIR', description: 'where the agent keeps its Pods\' files (default ~/.skiff/nodes/NAME)' },
    { name: 'config', type: 'string', valueName: 'FILE', description: 'platform configuration file (environments:, node:, artifacts.s3: the S3 server of task Pods\' artifacts)' },
    { name: 'node-ip', type: 'string', valueName: 'IP', description: 'the node\'s address, where the kubelet API listens (default 127.0.0.1)' },
    { name: 'pod-cidr', type: 'string', valueName: 'CIDR', description: 'the Pods\' address range when the controller-manager gives the Node none (a loopback one, e.g. 127.65.0.0/24)' },
    { name: 'kubelet-port', type: 'string', valueName: 'N', description: 'the kubelet API\'s port (default: any free port)' },
    { name: 'client-ca-file', type: 'string', valueName: 'FILE', description: 'only clients with a certificate from this CA may use the kubelet API (the API server\'s --kubelet-client-certificate)' },
  ],

  async run(ctx) {
    const a = ctx.args;
    if (a.positionals.length > 0) throw new UsageError(`unexpected argument "${a.positionals[0]}"`);
    const file = (flag: string): string | undefined => {
      const v = a.string(flag);
      return v === undefined ? undefined : resolve(ctx.io.cwd, expandHome(v));
    };
    const kubeconfig = file('kubeconfig') ?? (ctx.io.env.KUBECONFIG ? resolve(ctx.io.cwd, expandHome(ctx.io.env.KUBECONFIG)) : undefined);
    if (!kubeconfig) throw new UsageError('--kubeconfig is required (or KUBECONFIG in the environment)');
    const nodeName = a.string('name');
    if (!nodeName) throw new UsageError('--name is required: the Node\'s name');
    if (nodeName.length > 253 || !nodeNamePattern.test(nodeName)) throw new UsageError(`invalid --name "${nodeName}": a Node's name is lower-case letters, digits, '-' and '.'`);
    const opts: StartNodeOptions = { kubeconfig, nodeName, dataDir: file('data-dir') ?? join(homedir(), '.skiff', 'nodes', nodeName) };
    const configFile = file('config');
    if (configFile) opts.configFile = configFile;
    const nodeIp = a.string('node-ip');
    if (nodeIp !== undefined) {
      if (!isIP(nodeIp)) throw new UsageError(`invalid --node-ip "${nodeIp}": expected an IP address`);
      opts.nodeIp = nodeIp;
    }
    const podCidr = a.string('pod-cidr');
    if (podCidr !== undefined) {
      const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(podCidr);
      if (!m || m.slice(1, 5).some((o) => Number(o) > 255) || Number(m[5]) < 8 || Number(m[5]) > 30) throw new UsageError(`invalid --pod-cidr "${podCidr}": expected an IPv4 range such as 127.65.0.0/24`);
      opts.podCidr = podCidr;
    }
    const portRaw = a.string('kubelet-port');
    if (portRaw !== undefined) {
      const port = Number(portRaw);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`invalid --kubelet-port "${portRaw}": expected a number from 0 to 65535`);
      opts.kubeletPort = port;
    }
    const ca = file('client-ca-file');
    if (ca) opts.clientCaFile = ca;

    // stop on SIGINT/SIGTERM (or the injected signal); a second signal exits at once
    const stop = stopSignals(ctx.signal);
    try {
      const start = await loadAgent();
      let agent: RunningNode;
      try {
        agent = await start(opts);
      } catch (err) {
        throw new CliError(`cannot start node ${nodeName}: ${err instanceof Error ? err.message : String(err)}`);
      }
      await ctx.out(`Node ${nodeName} is ready in the cluster at ${agent.server} (kubelet API at ${agent.kubeletUrl}, data in ${opts.dataDir})\n`);
      for (const w of agent.warnings) await ctx.err(`warning: ${w}\n`);
      await stop.stopped;
      await ctx.err('Shutting down...\n');
      const left = await agent.stop();
      if (left) await ctx.err(`${left} container${left === 1 ? ' keeps' : 's keep'} running; the next 'skiff node --name ${nodeName} --data-dir ${opts.dataDir}' adopts ${left === 1 ? 'it' : 'them'}.\n`);
      await ctx.err(`Node ${nodeName} stopped.\n`);
      return 0;
    } finally {
      stop.dispose();
    }
  },
};
