// The measurements sections 2, 4 and 11 share: a Pod's apply-to-start and the 10-step pipeline chain
// against a server already running, as a given caller (no token: single-user Skiff; a token: a
// tenant, so every request is authenticated and authorised) in a given namespace.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { TestServer } from '../test/harness.js';
import { nowMs } from './stats.js';

/** who sends the requests, and where */
export interface Caller {
  namespace: string;
  /** a bearer token; without one the request carries no credentials */
  token?: string;
}

export const singleUser: Caller = { namespace: 'default' };

export function authHeaders(caller: Caller): Record<string, string> {
  return caller.token ? { authorization: `Bearer ${caller.token}` } : {};
}

/** POSTs a Pod running `date +%s%N` and returns the delay from the POST to the process printing its clock */
export async function podStart(s: TestServer, caller: Caller, name: string): Promise<number> {
  const headers = authHeaders(caller);
  const pods = `/api/v1/namespaces/${caller.namespace}/pods`;
  const t0 = nowMs();
  const created = await s.req('POST', pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'bench', command: ['date', '+%s%N'] }] } }, headers);
  if (created.status !== 201) throw new Error(`POST ${pods}: ${created.status} ${created.text}`);
  const printed = await s.until('pod output', async () => {
    const r = await s.req('GET', `${pods}/${name}/log`, undefined, headers);
    return r.status === 200 && /^\d+\s*$/.test(r.text) ? r.text.trim() : undefined;
  }, 30_000);
  const ms = Number(BigInt(printed) / 1000n) / 1000 - t0;
  await s.req('DELETE', `${pods}/${name}`, undefined, headers);
  return ms;
}

/** compiles bench/pipelines/chain.py into dir and returns the compiled file */
export function compileChain(python: string, script: string, dir: string): string {
  const compiled = join(dir, 'chain.yaml');
  execFileSync(python, [script, 'compile', compiled]);
  return compiled;
}

/** `skiff run --watch` of the compiled chain as the caller: CLI start to SUCCEEDED, in ms (any server
 *  the CLI reaches: a TestServer, or `skiff up --kubeconfig` on a cluster) */
export async function chainRun(s: Pick<TestServer, 'cli'>, caller: Caller, compiled: string): Promise<number> {
  const t = nowMs();
  const r = await s.cli(['run', compiled, '--watch', '--namespace', caller.namespace, ...(caller.token ? ['--token', caller.token] : [])]);
  if (r.code !== 0) throw new Error(`skiff run failed: ${r.stdout}${r.stderr}`);
  return nowMs() - t;
}
