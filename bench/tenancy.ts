// Section 11: what tenancy costs. Two servers on this machine in the same run, one single-user (no
// token file, as Skiff starts by default) and one with a token file, where every request carries the
// token of a user who owns the namespace through a Profile, so it is authenticated and authorised by
// RBAC and the Pods it makes run isolated. Their measurements alternate, request by request or run
// by run, so that a change in the machine's load falls on both alike:
//   a. apply-to-Running of a Pod (section 2's measurement)
//   b. the 10-step pipeline chain by `skiff run --watch` (section 4's; needs .venv)
//   c. one ConfigMap read N times: the per-request cost of authentication and RBAC
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestServer, repoRoot } from '../test/harness.js';
import { authHeaders, chainRun, compileChain, podStart, singleUser, type Caller } from './measure.js';
import { fmtMs, median, nowMs, percentile } from './stats.js';

type Row = (label: string, value: string, note?: string) => void;

export interface TenancyBenchOptions {
  /** Pod starts with each server */
  runs: number;
  /** GETs of one ConfigMap with each server */
  gets: number;
  /** pipeline chain runs with each server */
  chainRuns: number;
}

const owner = 'alice@example.com';
const tenant: Caller = { namespace: 'team-a', token: 'alice-token' };
const admin = { authorization: 'Bearer admin-token' };

/** a server with tenancy on: a token file, and a Profile giving the tenant their namespace */
async function tenancyServer(): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'skiff-bench-tenancy-'));
  const tokens = join(dataDir, 'tokens.csv');
  writeFileSync(tokens, `admin-token,admin,0,system:masters\n${tenant.token},${owner},1001\n`);
  const s = await TestServer.start({ dataDir, config: { verbose: false, tokenAuthFile: tokens } });
  const profile = await s.req('POST', '/apis/kubeflow.org/v1/profiles', {
    apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: tenant.namespace }, spec: { owner: { kind: 'User', name: owner } },
  }, admin);
  if (profile.status !== 201) throw new Error(`creating the Profile: ${profile.status} ${profile.text}`);
  await s.until('the owner\'s access to the Profile\'s namespace', async () => (await s.req('GET', `/api/v1/namespaces/${tenant.namespace}/configmaps`, undefined, authHeaders(tenant))).status === 200, 30_000);
  // the numbers below mean something only if credentials are really checked
  const anonymous = await s.req('GET', `/api/v1/namespaces/${tenant.namespace}/configmaps`);
  if (anonymous.status !== 401) throw new Error(`tenancy is not on: an anonymous request answered ${anonymous.status}`);
  return s;
}

/** the uid a Pod's process runs as, to show the isolation measured is in effect */
async function podUid(s: TestServer, c: Caller): Promise<string> {
  const pods = `/api/v1/namespaces/${c.namespace}/pods`;
  const r = await s.req('POST', pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'whoami' }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'bench', command: ['id', '-u'] }] } }, authHeaders(c));
  if (r.status !== 201) throw new Error(`POST ${pods}: ${r.status} ${r.text}`);
  const uid = await s.until('the uid', async () => {
    const log = await s.req('GET', `${pods}/whoami/log`, undefined, authHeaders(c));
    return log.status === 200 && /^\d+\s*$/.test(log.text) ? log.text.trim() : undefined;
  }, 30_000);
  await s.req('DELETE', `${pods}/whoami`, undefined, authHeaders(c));
  return uid;
}

/** runs measure on both servers in turn, count times, and returns their samples */
async function alternate(count: number, measure: (on: boolean, i: number) => Promise<number>): Promise<{ off: number[]; on: number[] }> {
  const off: number[] = [];
  const on: number[] = [];
  for (let i = 0; i < count; i++) {
    // which goes first alternates too: the second of a pair may find caches warmer
    const first = i % 2 === 0;
    (first ? off : on).push(await measure(!first, i));
    (first ? on : off).push(await measure(first, i));
  }
  return { off, on };
}

function compare(row: Row, what: string, r: { off: number[]; on: number[] }, tail: number): void {
  const mOff = median(r.off);
  const mOn = median(r.on);
  const pOff = percentile(r.off, tail);
  const pOn = percentile(r.on, tail);
  row(`${what}: off, median`, fmtMs(mOff), `p${tail} ${fmtMs(pOff)}`);
  row(`${what}: on, median`, fmtMs(mOn), `p${tail} ${fmtMs(pOn)}`);
  const d = mOn - mOff;
  row('  on over off (median)', `${d < 0 ? '-' : '+'}${fmtMs(Math.abs(d))}`, `ratio ${(mOn / mOff).toFixed(2)}x; p${tail} ratio ${(pOn / pOff).toFixed(2)}x`);
}

export async function tenancyBench(row: Row, opts: TenancyBenchOptions): Promise<void> {
  const python = join(repoRoot, '.venv', 'bin', 'python');
  console.log(`\n11. the cost of tenancy: single-user Skiff against a token file + Profile + RBAC, alternated in the same run (${opts.runs} Pods, ${opts.gets} GETs${existsSync(python) ? `, ${opts.chainRuns} pipeline chains` : ''} each)`);
  const load0 = loadavg();
  const off = await TestServer.start({ config: { verbose: false } });
  let on: TestServer | undefined;
  let work: string | undefined;
  try {
    on = await tenancyServer();
    const server = (isOn: boolean): TestServer => (isOn ? on as TestServer : off);
    const caller = (isOn: boolean): Caller => (isOn ? tenant : singleUser);

    console.log(`     tenant Pods run as uid ${await podUid(on, tenant)} (single-user: ${await podUid(off, singleUser)})`);

    // c. one ConfigMap read over and over: authentication and RBAC on every request, nothing else
    for (const isOn of [false, true]) {
      const c = caller(isOn);
      const r = await server(isOn).req('POST', `/api/v1/namespaces/${c.namespace}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bench' }, data: { k: 'v' } }, authHeaders(c));
      if (r.status !== 201) throw new Error(`creating the ConfigMap: ${r.status} ${r.text}`);
    }
    const get = async (isOn: boolean): Promise<number> => {
      const c = caller(isOn);
      const t = nowMs();
      const r = await server(isOn).req('GET', `/api/v1/namespaces/${c.namespace}/configmaps/bench`, undefined, authHeaders(c));
      const ms = nowMs() - t;
      if (r.status !== 200) throw new Error(`GET the ConfigMap: ${r.status} ${r.text}`);
      return ms;
    };
    await alternate(200, get); // warm both servers' code paths and connections
    const gets = await alternate(opts.gets, get);

    // a. a Pod from POST to its process running
    const pods = await alternate(opts.runs, (isOn, i) => podStart(server(isOn), caller(isOn), `tenancy-${i}`));

    // b. the pipeline chain, each task a Pod of the tenant's
    let chains: { off: number[]; on: number[] } | undefined;
    if (existsSync(python)) {
      work = mkdtempSync(join(tmpdir(), 'skiff-bench-tenancy-kfp-'));
      const compiled = compileChain(python, join(repoRoot, 'bench', 'pipelines', 'chain.py'), work);
      chains = await alternate(opts.chainRuns, (isOn) => chainRun(server(isOn), caller(isOn), compiled));
    }

    compare(row, 'GET a ConfigMap', gets, 99);
    compare(row, 'POST Pod -> process running', pods, 90);
    if (chains) compare(row, 'chain, skiff run --watch', chains, 90);
    else console.log('  pipeline chain: skipped, no .venv (run npm run setup)');
  } finally {
    await off.cleanup();
    await on?.cleanup();
    if (work) rmSync(work, { recursive: true, force: true });
  }
  const load1 = loadavg();
  console.log(`     load average (1, 5, 15 min) at start ${load0.map((l) => l.toFixed(2)).join(', ')}, at end ${load1.map((l) => l.toFixed(2)).join(', ')} on ${availableParallelism()} cores`);
}
