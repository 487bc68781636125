// Notebook culling end to end, turned on as upstream's controller is, by ENABLE_CULLING,
// CULL_IDLE_TIME and IDLENESS_CHECK_PERIOD in the server's environment (seconds here): of two
// Jupyter notebooks, the one with a kernel running a long cell (`time.sleep(60)`) keeps running with
// its last-activity annotation moving, and the idle one gets kubeflow-resource-stopped and its Pod goes.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import YAML from 'yaml';
import { clientsPython, kubectlBin, repoRoot, sleep, TestServer } from './harness.js';

const skip = !existsSync(kubectlBin) || !existsSync(clientsPython) ? 'the clients\' environment (.venv-clients) is not set up'
  : !existsSync(join(repoRoot, '.venv-notebooks', 'bin', 'jupyter-lab')) ? 'the notebooks\' environment (.venv-notebooks) is not set up' : false;

const idleMinutes = 0.15;
const periodMinutes = 0.05;

function notebook(name: string): string {
  return YAML.stringify({
    apiVersion: 'kubeflow.org/v1', kind: 'Notebook', metadata: { name },
    spec: { template: { spec: { containers: [{ name, image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0', resources: { requests: { cpu: '100m', memory: '256Mi' } } }] } } },
  });
}

describe('notebook culling', { skip, timeout: 180_000 }, () => {
  let s: TestServer;
  let ws: WebSocket | undefined;
  const annotations = async (name: string): Promise<Record<string, string>> => {
    const r = await s.kubectl(['get', 'notebook', name, '-o', 'jsonpath={.metadata.annotations}']);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout ? JSON.parse(r.stdout) as Record<string, string> : {};
  };

  before(async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { ENABLE_CULLING: 'true', CULL_IDLE_TIME: String(idleMinutes), IDLENESS_CHECK_PERIOD: String(periodMinutes) });
    try {
      s = await TestServer.start({ config: { pythonZygote: false } });
    } finally {
      for (const k of ['ENABLE_CULLING', 'CULL_IDLE_TIME', 'IDLENESS_CHECK_PERIOD']) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  });
  after(async () => {
    ws?.terminate();
    await s?.cleanup();
  });

  it('stops the idle notebook and never the one running a long cell', async () => {
    assert.match(s.output, /notebooks: culling on, idle notebooks stopped after 0\.15 minutes, checked every 0\.05 minutes/);
    for (const name of ['busy', 'idle']) {
      const r = await s.kubectl(['apply', '-f', '-'], notebook(name));
      assert.equal(r.code, 0, r.stderr);
    }
    // the busy one's server: a kernel, and a cell that sleeps for a minute
    const prefix = '/notebook/default/busy';
    await s.until('the busy notebook\'s server', async () => (await s.req('GET', `${prefix}/api/status`)).status === 200, 120_000);
    const lab = await fetch(`${s.url}${prefix}/lab`);
    const xsrf = /_xsrf=([^;]+)/.exec(lab.headers.get('set-cookie') ?? '')?.[1] ?? '';
    await lab.text();
    const headers = { cookie: `_xsrf=${xsrf}`, 'x-xsrftoken': xsrf };
    const kernel = await s.req('POST', `${prefix}/api/kernels`, { name: 'python3' }, headers);
    assert.equal(kernel.status, 201, kernel.text);
    const id = (kernel.body as { id: string }).id;
    ws = new WebSocket(`${s.url.replace(/^http/, 'ws')}${prefix}/api/kernels/${id}/channels?session_id=${randomUUID()}`, { headers });
    await new Promise((resolve, reject) => ws?.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({
      header: { msg_id: randomUUID(), username: 'test', session: randomUUID(), msg_type: 'execute_request', version: '5.3', date: new Date().toISOString() },
      parent_header: {}, metadata: {}, channel: 'shell', buffers: [],
      content: { code: 'import time\ntime.sleep(60)', silent: false, store_history: false, user_expressions: {}, allow_stdin: false, stop_on_error: true },
    }));
    await s.until('the kernel busy', async () => {
      const r = await s.req('GET', `${prefix}/api/kernels`);
      return (r.body as { execution_state: string }[] | undefined)?.some((k) => k.execution_state === 'busy');
    }, 30_000);
    const busySince = Date.now();

    // the idle one: stopped by the culler, its Pod deleted
    await s.until('the idle notebook culled', async () => (await annotations('idle'))['kubeflow-resource-stopped'], 90_000);
    await s.until('the idle notebook\'s Pod gone', async () => (await s.kubectl(['get', 'pod', 'idle-0', '-o', 'name'])).code !== 0, 30_000);
    const events = await s.kubectl(['get', 'events', '--field-selector', 'involvedObject.name=idle', '-o', 'jsonpath={.items[*].reason}']);
    assert.match(events.stdout, /Culled/);

    // the busy one outlives the idle time, with its last activity kept up to date
    const wait = busySince + idleMinutes * 60_000 + 2 * periodMinutes * 60_000 - Date.now();
    if (wait > 0) await sleep(wait);
    const busy = await annotations('busy');
    assert.equal(busy['kubeflow-resource-stopped'], undefined, JSON.stringify(busy));
    const last = busy['notebooks.kubeflow.org/last-activity'];
    assert.match(last ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'RFC 3339, as upstream writes it');
    assert.ok(Date.parse(last ?? '') >= busySince - 1000, `last activity ${last} moves while the cell runs`);
    assert.ok(busy['notebooks.kubeflow.org/last_activity_check_timestamp']);
    assert.equal((await s.kubectl(['get', 'pod', 'busy-0', '-o', 'jsonpath={.status.phase}'])).stdout, 'Running');
  });
});
