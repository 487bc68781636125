import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { CliError, UsageError } from '../errors.js';
import type { SkiffOptions } from '../../server/config.js';
import type { Command } from './common.js';
import { stopSignals } from '../stop-signals.js';
import { parseDuration } from '../duration.js';
import { checkLeaderElectionDurations, leaderElectionDefaults } from '../../control/leader-election.js';

/** The options `skiff up` starts the server with: the server's own (a type only: the server is loaded when `up` runs). */
export type StartSkiffOptions = Pick<SkiffOptions, 'dataDir' | 'port' | 'host' | 'configFile' | 'tokenAuthFile' | 'oidcIssuerUrl' | 'oidcClientId' | 'oidcUsernameClaim' | 'oidcUsernamePrefix' | 'oidcGroupsClaim' | 'oidcGroupsPrefix' | 'oidcJwksFile' | 'trustedProxies' | 'userIdHeader' | 'userIdPrefix' | 'kubeconfig' | 'leaderElection' | 'webhook'>;
export interface RunningSkiff {
  url: string;
  /** who may use the server, in words */
  authentication?: string;
  /** Katib's DBManager gRPC address, for users outside Pods */
  katibDbManager?: string;
  /** with --kubeconfig: the cluster whose API server is the store */
  cluster?: { server: string; version: string; crdsInstalled: string[] };
  /** with --kubeconfig: the Lease the replicas elect their leader on; `lost` resolves when this one lost it */
  leaderElection?: { lease: string; identity: string; isLeader(): boolean; lost: Promise<string> };
  /** resolves to how many containers were left running (they are adopted by the next start) */
  stop(): Promise<number | void>;
}
type StartSkiff = (opts: StartSkiffOptions) => Promise<RunningSkiff>;

/** Loads the server lazily (so other commands never pay for it). Overridable for tests. */
export let loadServer = async (): Promise<StartSkiff> => {
  const url = new URL('../../server/main.js', import.meta.url).href;
  let mod: { startSkiff?: StartSkiff };
  try {
    mod = (await import(url)) as { startSkiff?: StartSkiff };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const message = String((err as Error)?.message ?? err);
    if (code === 'ERR_MODULE_NOT_FOUND' && /Cannot find module '[^']*server\/main\.js'/.test(message)) {
      throw new CliError("the Skiff server is not built (dist/src/server/main.js is missing); run 'npm run build'");
    }
    throw new CliError(`cannot load the Skiff server: ${message}`);
  }
  if (typeof mod.startSkiff !== 'function') throw new CliError('the Skiff server module does not export startSkiff()');
  return mod.startSkiff;
};

export function setServerLoader(loader: () => Promise<StartSkiff>): void {
  loadServer = loader;
}

export function expandHome(p: string, home = homedir()): string {
  if (p === '~') return home;
  if (p.startsWith('~/')) return join(home, p.slice(2));
  return p;
}

function describeStartError(err: unknown, port: number | undefined, host: string | undefined): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'EADDRINUSE') return `cannot start Skiff: ${host ?? '127.0.0.1'}:${port ?? 8080} is already in use (is Skiff already running? try --port)`;
  if (e?.code === 'EACCES') return `cannot start Skiff: permission denied (${e.message})`;
  return `cannot start Skiff: ${e instanceof Error ? e.message : String(err)}`;
}

type Args = Parameters<Command['run']>[0]['args'];

/** how long a replica that lost the Lease gives its clean-up before it exits anyway */
const lostCleanupMs = 10_000;

/** the --leader-elect-* flags, checked; undefined when none is given */
function leaderElectionFlags(a: Args, onCluster: boolean): NonNullable<StartSkiffOptions['leaderElection']> | undefined {
  const flags = ['resource-namespace', 'resource-name', 'lease-duration', 'renew-deadline', 'retry-period'];
  if (!flags.some((f) => a.string(`leader-elect-${f}`) !== undefined)) return undefined;
  if (!onCluster) throw new UsageError('--leader-elect-* flags need --kubeconfig or --in-cluster: on one machine there is one Skiff and no Lease');
  const out: NonNullable<StartSkiffOptions['leaderElection']> = {};
  const ns = a.string('leader-elect-resource-namespace');
  const name = a.string('leader-elect-resource-name');
  if (ns !== undefined) out.namespace = ns;
  if (name !== undefined) out.name = name;
  const durations = [['leader-elect-lease-duration', 'leaseDurationMs'], ['leader-elect-renew-deadline', 'renewDeadlineMs'], ['leader-elect-retry-period', 'retryPeriodMs']] as const;
  for (const [flag, key] of durations) {
    const raw = a.string(flag);
    if (raw === undefined) continue;
    const ms = parseDuration(raw);
    if (ms === undefined || ms <= 0) throw new UsageError(`invalid --${flag} "${raw}": expected a duration such as 15s`);
    out[key] = ms;
  }
  const wrong = checkLeaderElectionDurations({ ...leaderElectionDefaults, ...out });
  if (wrong) throw new UsageError(`--leader-elect-*: ${wrong}`);
  return out;
}

export const command: Command = {
  name: 'up',
  summary: 'Start the Skiff platform in the foreground',
  usage: 'skiff up [--data-dir DIR] [--port N] [--host H] [--config FILE] [--token-auth-file FILE] [--oidc-issuer-url URL --oidc-client-id ID] [--trusted-proxy CIDR] [--kubeconfig FILE | --in-cluster] [--leader-elect-* ...]',
  description: `
Runs the API server and controllers until interrupted (Ctrl-C). State is kept in the data
directory, so objects survive restarts.

Without --token-auth-file, --oidc-issuer-url or --trusted-proxy, Skiff is single-user: nothing is
asked of callers. With any of them, every request but /healthz, /readyz, /livez, /version and the
dashboard's files needs credentials, as kube-apiserver's flags of the same names ask.

With --kubeconfig (or --in-cluster, inside a Pod), the cluster's API server is the store: Skiff checks
that it answers and that RBAC allows what Skiff does, installs or upgrades the CRDs of its kinds, and
runs its controllers against the cluster's objects. Pods are created in the cluster and run on its
nodes: its own kubelets', or machines without a container engine that run 'skiff node'.

On a cluster, replicas elect a leader on a coordination.k8s.io Lease (in the Pod's namespace, else
skiff-system): only the holder runs the controllers, the others serve the APIs and the dashboard. A
holder that cannot renew the Lease within the renew deadline stops its controllers and exits with
status 1, for its supervisor to restart it; one stopped with SIGTERM releases the Lease at once.`,
  flags: [
    { name: 'data-dir', type: 'string', valueName: 'DIR', description: 'where state is kept (default $SKIFF_DATA_DIR or ~/.skiff)' },
    { name: 'port', type: 'string', valueName: 'N', description: 'port of the API server' },
    { name: 'host', type: 'string', valueName: 'H', description: 'address to listen on' },
    { name: 'config', type: 'string', valueName: 'FILE', description: 'platform configuration file' },
    { name: 'token-auth-file', type: 'string', valueName: 'FILE', description: 'users\' bearer tokens: token,user,uid,"group1,group2" a line (turns tenancy on)' },
    { name: 'oidc-issuer-url', type: 'string', valueName: 'URL', description: 'accept ID tokens of this OIDC issuer (turns tenancy on)' },
    { name: 'oidc-client-id', type: 'string', valueName: 'ID', description: 'the audience ID tokens must carry' },
    { name: 'oidc-username-claim', type: 'string', valueName: 'CLAIM', description: 'the claim naming the user (default sub)' },
    { name: 'oidc-username-prefix', type: 'string', valueName: 'PREFIX', description: 'prefix of user names (default "<issuer>#" unless the claim is email; "-" for none)' },
    { name: 'oidc-groups-claim', type: 'string', valueName: 'CLAIM', description: 'the claim naming the user\'s groups' },
    { name: 'oidc-groups-prefix', type: 'string', valueName: 'PREFIX', description: 'prefix of group names' },
    { name: 'oidc-jwks-file', type: 'string', valueName: 'FILE', description: 'the issuer\'s keys (default: fetched from the issuer)' },
    { name: 'trusted-proxy', type: 'string', valueName: 'CIDRS', description: 'addresses whose user header is believed, comma-separated (never a Pod\'s)' },
    { name: 'userid-header', type: 'string', valueName: 'NAME', description: 'the trusted proxy\'s user header (default kubeflow-userid)' },
    { name: 'userid-prefix', type: 'string', valueName: 'PREFIX', description: 'what the header\'s value starts with before the user' },
    { name: 'kubeconfig', type: 'string', valueName: 'FILE', description: 'keep every object in this cluster\'s API server instead of the data directory' },
    { name: 'in-cluster', type: 'boolean', description: 'as --kubeconfig, with the service account of the Pod Skiff runs in' },
    { name: 'webhook-host', type: 'string', valueName: 'HOST', description: 'with --kubeconfig: the address the API server calls Skiff\'s webhooks at (default the address Skiff listens on; in a Pod, the skiff Service)' },
    { name: 'webhook-port', type: 'string', valueName: 'N', description: 'with --kubeconfig or --in-cluster: the port the webhooks listen on over HTTPS (default a free one; 9443 in a Pod)' },
    { name: 'leader-elect-resource-namespace', type: 'string', valueName: 'NS', description: 'namespace of the leader Lease (default the Pod\'s: $POD_NAMESPACE or its service account\'s; else skiff-system; made if missing)' },
    { name: 'leader-elect-resource-name', type: 'string', valueName: 'NAME', description: 'name of the leader Lease (default skiff-controllers)' },
    { name: 'leader-elect-lease-duration', type: 'string', valueName: 'DURATION', description: 'how long standbys wait after the Lease last changed before taking it (default 15s)' },
    { name: 'leader-elect-renew-deadline', type: 'string', valueName: 'DURATION', description: 'how long the leader tries to renew before it gives up and exits (default 10s)' },
    { name: 'leader-elect-retry-period', type: 'string', valueName: 'DURATION', description: 'how often candidates try and the leader renews (default 2s)' },
  ],

  async run(ctx) {
    const a = ctx.args;
    if (a.positionals.length > 0) throw new UsageError(`unexpected argument "${a.positionals[0]}"`);
    const dataDir = resolve(ctx.io.cwd, expandHome(a.string('data-dir') ?? ctx.io.env.SKIFF_DATA_DIR ?? join(homedir(), '.skiff')));
    let port: number | undefined;
    const portRaw = a.string('port');
    if (portRaw !== undefined) {
      port = Number(portRaw);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`invalid --port "${portRaw}": expected a number from 0 to 65535`);
    }
    const host = a.string('host');
    const configRaw = a.string('config');
    const configFile = configRaw === undefined ? undefined : isAbsolute(expandHome(configRaw)) ? expandHome(configRaw) : resolve(ctx.io.cwd, configRaw);

    const startSkiff = await loadServer();
    const opts: StartSkiffOptions = { dataDir };
    if (port !== undefined) opts.port = port;
    if (host !== undefined) opts.host = host;
    if (configFile !== undefined) opts.configFile = configFile;
    const file = (flag: string): string | undefined => {
      const v = a.string(flag);
      return v === undefined ? undefined : resolve(ctx.io.cwd, expandHome(v));
    };
    const tokenAuthFile = file('token-auth-file');
    if (tokenAuthFile !== undefined) opts.tokenAuthFile = tokenAuthFile;
    const jwks = file('oidc-jwks-file');
    if (jwks !== undefined) opts.oidcJwksFile = jwks;
    const strings: [string, 'oidcIssuerUrl' | 'oidcClientId' | 'oidcUsernameClaim' | 'oidcUsernamePrefix' | 'oidcGroupsClaim' | 'oidcGroupsPrefix' | 'userIdHeader' | 'userIdPrefix'][] = [
      ['oidc-issuer-url', 'oidcIssuerUrl'], ['oidc-client-id', 'oidcClientId'], ['oidc-username-claim', 'oidcUsernameClaim'], ['oidc-username-prefix', 'oidcUsernamePrefix'],
      ['oidc-groups-claim', 'oidcGroupsClaim'], ['oidc-groups-prefix', 'oidcGroupsPrefix'], ['userid-header', 'userIdHeader'], ['userid-prefix', 'userIdPrefix'],
    ];
    for (const [flag, key] of strings) {
      const v = a.string(flag);
      if (v !== undefined) opts[key] = v;
    }
    const kubeconfig = file('kubeconfig');
    if (kubeconfig !== undefined && a.boolean('in-cluster')) throw new UsageError('--kubeconfig and --in-cluster exclude each other');
    if (kubeconfig !== undefined) opts.kubeconfig = kubeconfig;
    else if (a.boolean('in-cluster')) opts.kubeconfig = 'in-cluster';
    const webhookHost = a.string('webhook-host');
    const webhookPort = a.string('webhook-port');
    if ((webhookHost !== undefined || webhookPort !== undefined) && opts.kubeconfig === undefined) throw new UsageError('--webhook-host and --webhook-port need --kubeconfig or --in-cluster: on one machine no cluster calls Skiff');
    if (webhookHost !== undefined || webhookPort !== undefined) {
      opts.webhook = {};
      if (webhookHost !== undefined) {
        if (!webhookHost || /[/\s]/.test(webhookHost)) throw new UsageError(`invalid --webhook-host "${webhookHost}": expected a host name or an IP address`);
        opts.webhook.host = webhookHost;
      }
      if (webhookPort !== undefined) {
        const port = Number(webhookPort);
        if (!/^\d+$/.test(webhookPort) || port > 65535) throw new UsageError(`invalid --webhook-port "${webhookPort}": expected a number from 0 to 65535`);
        opts.webhook.port = port;
      }
    }
    const election = leaderElectionFlags(a, opts.kubeconfig !== undefined);
    if (election) opts.leaderElection = election;
    const proxies = a.string('trusted-proxy');
    if (proxies !== undefined) opts.trustedProxies = proxies.split(',').map((p) => p.trim()).filter((p) => p !== '');

    // stop on SIGINT/SIGTERM (or the injected signal); a second signal exits at once
    const stop = stopSignals(ctx.signal);

    try {
      let running: RunningSkiff;
      try {
        running = await startSkiff(opts);
      } catch (err) {
        if (err instanceof CliError) throw err;
        throw new CliError(describeStartError(err, port, host));
      }
      await ctx.out(`Skiff is ready at ${running.url} (data in ${dataDir})\n`);
      if (running.authentication) await ctx.err(`${running.authentication}\n`);
      if (running.cluster) {
        const c = running.cluster;
        await ctx.err(`Objects are kept in the Kubernetes cluster at ${c.server} (${c.version})${c.crdsInstalled.length ? `; CRDs installed or upgraded: ${c.crdsInstalled.length}` : '; its CRDs are current'}\n`);
        await ctx.err('Pods are created in the cluster and placed by its scheduler on its nodes (machines without a container engine join with \'skiff node --kubeconfig FILE --name NAME\'); their logs, exec, attach and port-forward go through the cluster\'s API server to their node\n');
      }
      const { kubeconfigPath } = await import('../../server/kube/incluster.js');
      if (existsSync(kubeconfigPath(dataDir))) await ctx.err(`kubectl and Kubernetes clients: export KUBECONFIG=${kubeconfigPath(dataDir)}\n`);
      if (running.katibDbManager) await ctx.err(`Katib metrics (report_metrics, KatibClient.get_trial_metrics) from this machine: db_manager_address="${running.katibDbManager}"\n`);
      const le = running.leaderElection;
      if (le) await ctx.err(`Leader election on Lease ${le.lease} as ${le.identity}: controllers run while this replica holds it\n`);
      const lost = await Promise.race([stop.stopped.then(() => undefined), le ? le.lost : new Promise<never>(() => undefined)]);
      if (lost !== undefined) {
        // as controller-runtime does: the controllers stopped at once; exit so a supervisor restarts this replica
        await ctx.err(`leader election lost: ${lost}; stopping\n`);
        // the rest is stopped as on a signal, but not waited for without end: what cost the Lease
        // (an API server out of reach) may hold a clean-up up too
        const cleaned = await Promise.race([running.stop().then(() => true, () => true), new Promise<false>((r) => setTimeout(() => r(false), lostCleanupMs).unref())]);
        if (!cleaned && !ctx.signal) {
          await ctx.err(`leader election lost: stopping took longer than ${lostCleanupMs / 1000}s; exiting\n`);
          process.exit(1);
        }
        throw new CliError(`leader election lost: ${lost}`);
      }
      await ctx.err('Shutting down...\n');
      let left: number | void;
      try {
        left = await running.stop();
      } catch (err) {
        throw new CliError(`Skiff did not stop cleanly: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (left) await ctx.err(`${left} container${left === 1 ? ' keeps' : 's keep'} running; the next 'skiff up --data-dir ${dataDir}' adopts ${left === 1 ? 'it' : 'them'}.\n`);
      await ctx.err('Skiff stopped.\n');
      return 0;
    } finally {
      stop.dispose();
    }
  },
};
