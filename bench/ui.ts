// The dashboard's first paint in real Chromium (Debian's, driven by playwright-core), on the two pages
// the issue names: (a) the runs list with 1,000 Runs and (b) the page of a run with 1,000 tasks (a
// ParallelFor over 1,000 items). First paint: from the start of the navigation to the first frame
// after the page's content is in the DOM and visible, read inside the page (a MutationObserver and
// requestAnimationFrame against performance.timeOrigin), so Playwright's polling adds nothing.
//
// The Runs of (a) are real: each is a Run of a 2-task pipeline (bench/pipelines/fanout.py over one
// item, caching off) that the run controller executes to SUCCEEDED, about 0.1 s of machine time a run
// here, so 1,000 take a minute or two. The run of (b) really runs its 1,000 iterations.
//
// What a user compares with: the KFP UI cannot run here (it needs a cluster), so the baseline is what
// Skiff's own clients take to show the same list: `kubectl get runs` and `skiff get runs` over the
// 1,000 Runs, from process start to the table printed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { chromiumPath } from '../test/browser.js';
import { TestServer } from '../test/harness.js';
import { compile, runOnSkiff } from './pipelines/fanout.js';
import { fmtMs, median, nowMs } from './stats.js';

type Row = (label: string, value: string, note?: string) => void;

export interface UiBenchOptions {
  runs: number;
  tasks: number;
  loads: number;
  /** what says the runs list's first rows are shown */
  listSelector: string;
  /** what says the run page is shown; 'auto': the run graph's ready mark when the page has a graph, else the page header */
  runSelector: string;
}

const runsPath = '/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs';
const GRAPH_READY = '[data-testid=run-graph][data-ready=true]';

/** milliseconds from navigation start to the first frame with `selector` visible, median over `loads` fresh pages */
async function firstPaint(browser: Browser, url: string, selector: string, loads: number): Promise<{ median: number; first: number; max: number }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const times: number[] = [];
  try {
    for (let i = 0; i < loads; i++) {
      const page = await context.newPage();
      await page.addInitScript((sel: string) => {
        const w = window as unknown as { __painted?: number };
        const seen = (): boolean => {
          const el = document.querySelector(sel);
          if (!el) return false;
          const r = el.getBoundingClientRect();
          return r.width > 0 && r.height > 0;
        };
        const check = (): void => {
          if (w.__painted !== undefined || !seen()) return;
          obs.disconnect();
          requestAnimationFrame(() => (w.__painted = performance.now()));
        };
        const obs = new MutationObserver(check);
        obs.observe(document, { childList: true, subtree: true, attributes: true });
      }, selector);
      await page.goto(url, { waitUntil: 'commit' });
      const handle = await page.waitForFunction(() => (window as unknown as { __painted?: number }).__painted, undefined, { timeout: 120_000, polling: 50 });
      times.push(Number(await handle.jsonValue()));
      await page.close();
    }
  } finally {
    await context.close();
  }
  return { median: median(times), first: times[0] ?? NaN, max: Math.max(...times) };
}

async function timeCommand(loads: number, fn: () => Promise<{ code: number; stdout: string; stderr: string }>, expectLines: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < loads; i++) {
    const t = nowMs();
    const r = await fn();
    times.push(nowMs() - t);
    if (r.code !== 0) throw new Error(r.stderr || r.stdout);
    const lines = r.stdout.trim().split('\n').length - 1;
    if (lines !== expectLines) throw new Error(`printed ${lines} rows, want ${expectLines}`);
  }
  return median(times);
}

export async function uiBench(row: Row, o: UiBenchOptions): Promise<void> {
  console.log(`\n9. dashboard first paint in Chromium (bench/ui.ts): a list of ${o.runs.toLocaleString('en')} Runs and a run of ${o.tasks.toLocaleString('en')} tasks, median of ${o.loads} page loads`);
  console.log(`   every Run executes its 2 tasks (caching off); the ${o.tasks}-item ParallelFor runs for real`);
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-ui-'));
  const s = await TestServer.start({ config: { verbose: false } });
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  try {
    // (a) the list
    const tiny = compile(dir, 1, 1);
    let t0 = nowMs();
    await runOnSkiff(s, tiny, 1);
    for (let i = 1; i < o.runs; i++) {
      await s.create(runsPath, { apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run', metadata: { name: `list-${String(i).padStart(4, '0')}` }, spec: { pipelineSpec: tiny } });
    }
    const done = await s.until(`${o.runs} runs finished`, async () => {
      const l = await s.get(runsPath);
      const ended = (l.items as { status?: { state?: string } }[]).filter((r) => ['SUCCEEDED', 'FAILED', 'CANCELED'].includes(r.status?.state ?? ''));
      return ended.length === o.runs ? l.items : undefined;
    }, 30 * 60_000);
    const failed = (done as { status?: { state?: string } }[]).filter((r) => r.status?.state !== 'SUCCEEDED').length;
    const cached = (done as { status?: { tasks?: Record<string, { cachedFrom?: string }> } }[]).filter((r) => Object.values(r.status?.tasks ?? {}).some((t) => t.cachedFrom)).length;
    if (failed) throw new Error(`${failed} of the ${o.runs} runs did not succeed`);
    row(`${o.runs} Runs created and finished`, fmtMs(nowMs() - t0), `${cached} of them with a task served from the cache`);

    const list = await firstPaint(browser, `${s.url}/ui/default/runs`, o.listSelector, o.loads);
    row(`runs list (${o.runs} Runs): first rows painted`, fmtMs(list.median), `first load ${fmtMs(list.first)}, max ${fmtMs(list.max)}; aim < 1000 ms`);
    const kubectl = await timeCommand(3, () => s.kubectl(['get', 'runs.pipelines.kubeflow.org', '-n', 'default']), o.runs);
    row(`  kubectl get runs (${o.runs} rows printed)`, fmtMs(kubectl), `dashboard ${(list.median / kubectl).toFixed(2)}x of kubectl's time`);
    const cli = await timeCommand(3, () => s.cli(['get', 'runs']), o.runs);
    row(`  skiff get runs (${o.runs} rows printed)`, fmtMs(cli), `dashboard ${(list.median / cli).toFixed(2)}x of the CLI's time`);

    // (b) the big run
    t0 = nowMs();
    const big = compile(dir, o.tasks, 16);
    const took = await runOnSkiff(s, big, o.tasks);
    const name = ((await s.get(`${runsPath}?limit=${o.runs + 10}`)).items as { metadata: { name: string }; status?: { tasks?: object } }[]).find((r) => Object.keys(r.status?.tasks ?? {}).length > o.tasks)?.metadata.name;
    if (!name) throw new Error(`no run with over ${o.tasks} tasks`);
    row(`run of ${o.tasks + 1} tasks, POST -> SUCCEEDED`, fmtMs(took), `compile and run ${fmtMs(nowMs() - t0)}`);
    let selector = o.runSelector;
    let what = selector;
    if (selector === 'auto') {
      const probe = await browser.newPage();
      await probe.goto(`${s.url}/ui/default/runs/${name}`);
      const graph = await probe.waitForSelector('[data-testid=run-graph]', { timeout: 15_000 }).then(() => true, () => false);
      await probe.close();
      selector = graph ? GRAPH_READY : '.objhead';
      what = graph ? 'the run graph laid out (data-ready)' : 'the generic object page\'s header: this build has no run graph';
    }
    const page = await firstPaint(browser, `${s.url}/ui/default/runs/${name}`, selector, o.loads);
    row(`run page (${o.tasks + 1} tasks): first paint`, fmtMs(page.median), `waits for ${what}; first load ${fmtMs(page.first)}, max ${fmtMs(page.max)}; aim < 1000 ms`);
  } finally {
    await browser.close();
    await s.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}
