// What the dashboard's run list costs with many runs: the bytes of the list it reads (a Run carries
// its whole pipeline spec and every task's status), the same list as a server-side Table and as
// metadata only, and the time from navigation to the first rows in real Chromium.
// The runs are one cheap pipeline run again and again with the same inputs: the first one executes,
// the others are served from the cache, so making 1,000 runs starts one set of Pods, not 1,000.
// Usage: node dist/bench/ui-runlist.js [--runs 1000] [--rounds 5] [--server http://127.0.0.1:PORT]
//        (--server: measure a running server whose namespace `default` already holds the runs)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { chromiumPath } from '../test/browser.js';
import { repoRoot, TestServer } from '../test/harness.js';
import { fmtMs, median } from './stats.js';

const args = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const runs = Number(arg('runs') ?? 1000);
const rounds = Number(arg('rounds') ?? 5);
const runsPath = '/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs';

async function json(url: string, init?: RequestInit): Promise<any> {
  const r = await fetch(url, init);
  const text = await r.text();
  if (!r.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${r.status} ${text}`);
  return JSON.parse(text);
}

/** uploads the word-count example and makes `n` runs of it, all with the same inputs */
async function makeRuns(url: string, n: number): Promise<void> {
  const form = new FormData();
  form.append('uploadfile', new Blob([readFileSync(join(repoRoot, 'examples', 'pipelines', 'word_count.yaml'))]), 'word_count.yaml');
  form.append('name', 'bench-word-count');
  const p = await json(`${url}/apis/v2beta1/pipelines/upload`, { method: 'POST', body: form });
  const versions = await json(`${url}/apis/v2beta1/pipelines/${p.pipeline_id}/versions`);
  const ref = { pipeline_id: p.pipeline_id, pipeline_version_id: versions.pipeline_versions[0].pipeline_version_id };
  const one = (i: number): Promise<any> =>
    json(`${url}/apis/v2beta1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: `bench-${i}`, pipeline_version_reference: ref, runtime_config: { parameters: { text: 'a b c' } } }),
    });
  const first = await one(0);
  // the first run fills the cache; the rest reuse it
  for (;;) {
    const r = await json(`${url}/apis/v2beta1/runs/${first.run_id}`);
    if (r.state === 'SUCCEEDED') break;
    if (r.state === 'FAILED') throw new Error(`the first run failed: ${JSON.stringify(r.error ?? r)}`);
    await new Promise((res) => setTimeout(res, 500));
  }
  for (let i = 1; i < n; i += 10) await Promise.all(Array.from({ length: Math.min(10, n - i) }, (_, k) => one(i + k)));
  for (;;) {
    const list = await json(`${url}/apis/v2beta1/runs?page_size=${n}`);
    if ((list.runs ?? []).filter((r: { state?: string }) => r.state === 'SUCCEEDED').length >= n) break;
    await new Promise((res) => setTimeout(res, 1000));
  }
}

async function size(url: string, accept?: string): Promise<{ bytes: number; ms: number; items: number; body: any }> {
  const t0 = performance.now();
  const r = await fetch(url, accept ? { headers: { accept } } : {});
  const text = await r.text();
  const ms = performance.now() - t0;
  const body = JSON.parse(text);
  return { bytes: Buffer.byteLength(text), ms, items: (body.items ?? body.rows ?? body.runs ?? []).length, body };
}

async function main(): Promise<void> {
  let server: TestServer | undefined;
  let url = arg('server');
  if (!url) {
    server = await TestServer.start();
    url = server.url;
    const t0 = performance.now();
    await makeRuns(url, runs);
    console.log(`made ${runs} runs in ${fmtMs(performance.now() - t0)}`);
  }
  try {
    const full = await size(url + runsPath);
    const table = await size(url + runsPath, 'application/json;as=Table;g=meta.k8s.io;v=v1');
    const meta = await size(url + runsPath, 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1');
    const kfp = await size(`${url}/apis/v2beta1/runs?page_size=${Math.max(runs, full.items)}`);
    const kb = (b: number): string => `${(b / 1024).toFixed(0)} KiB`;
    console.log(`list of ${full.items} runs, as the run list reads it: ${kb(full.bytes)} (${kb(full.bytes / Math.max(1, full.items))} a run), ${fmtMs(full.ms)}`);
    // where the bytes are: what a lighter list could leave out
    const share = (pick: (r: any) => unknown): string => `${((100 * full.body.items.reduce((n: number, r: any) => n + JSON.stringify(pick(r) ?? null).length, 0)) / full.bytes).toFixed(0)}%`;
    console.log(`  spec.pipelineSpec ${share((r) => r.spec?.pipelineSpec)}, status.tasks ${share((r) => r.status?.tasks)}, metadata ${share((r) => r.metadata)} of it (the page reads it in pages of 500)`);
    console.log(`  as a Table (as=Table): ${kb(table.bytes)}, ${fmtMs(table.ms)}; metadata only: ${kb(meta.bytes)}, ${fmtMs(meta.ms)}; KFP API list: ${kb(kfp.bytes)}, ${fmtMs(kfp.ms)}`);

    const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    try {
      const firstRows: number[] = [];
      const allCounted: number[] = [];
      const listStart: number[] = [];
      const listDone: number[] = [];
      const shellPaint: number[] = [];
      const fetchFull: number[] = [];
      const fetchTable: number[] = [];
      const filtered: number[] = [];
      const added: number[] = [];
      const removed: number[] = [];
      let heap = 0;
      let listPages = 0;
      const sample = (await json(`${url}/apis/v2beta1/runs?page_size=1`)).runs[0];
      for (let i = 0; i < rounds; i++) {
        // a fresh context each round: nothing cached from the round before
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        const page = await context.newPage();
        await page.goto(`${url}/ui/default/runs`);
        // measured inside the page, from the start of navigation, at the frame the rows appear
        const t = await page.waitForFunction(() => (document.querySelector('.dt-row') ? performance.now() : 0), undefined, { polling: 'raf', timeout: 120_000 });
        firstRows.push(Number(await t.jsonValue()));
        const all = await page.waitForFunction((n) => (document.querySelector('.datatable .count')?.textContent?.startsWith(`${n} `) ? performance.now() : 0), full.items, { polling: 'raf', timeout: 120_000 });
        allCounted.push(Number(await all.jsonValue()));
        heap = Math.max(heap, Number(await page.evaluate(() => (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? 0)));
        // when the page's own list request finished: the rest of the wait is parsing and rendering
        // (the live list reads pages of 500: the last page's end)
        const pages = await page.evaluate((p) => (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).filter((e) => e.name.includes(p) && !e.name.includes('watch=') && e.responseEnd > 0).map((e) => [e.startTime, e.responseEnd]), runsPath);
        if (pages.length) {
          listStart.push(Math.min(...pages.map((x) => x[0] as number)));
          listDone.push(Math.max(...pages.map((x) => x[1] as number)));
        }
        listPages = pages.length;
        shellPaint.push(await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? 0));
        // the same list read and parsed in this page, whole and as a Table: what a lighter list would save
        const read = (accept: string): Promise<number> =>
          page.evaluate(async ([p, a]) => {
            const t0 = performance.now();
            const r = await fetch(p as string, a ? { headers: { accept: a as string } } : {});
            await r.json();
            return performance.now() - t0;
          }, [runsPath, accept]);
        fetchFull.push(await read(''));
        fetchTable.push(await read('application/json;as=Table;g=meta.k8s.io;v=v1'));
        // typing in the filter, to the frame the count of matching rows shows
        filtered.push(
          await page.evaluate(async () => {
            const input = document.querySelector('.datatable input.filter') as HTMLInputElement;
            const count = document.querySelector('.datatable .count') as HTMLElement;
            const t0 = performance.now();
            Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set?.call(input, 'bench-99');
            input.dispatchEvent(new Event('input', { bubbles: true }));
            while (!/ of /.test(count.textContent ?? '')) await new Promise((r) => requestAnimationFrame(r));
            const ms = performance.now() - t0;
            Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set?.call(input, '');
            input.dispatchEvent(new Event('input', { bubbles: true }));
            while (/ of /.test(count.textContent ?? '')) await new Promise((r) => requestAnimationFrame(r));
            return ms;
          }),
        );
        // a run made and then deleted elsewhere, to the frame the count changes: the watch at work
        const [add, remove] = await page.evaluate(
          async ([ref, n, ns]) => {
            const count = document.querySelector('.datatable .count') as HTMLElement;
            const until = async (k: number): Promise<void> => {
              while (!(count.textContent ?? '').startsWith(`${k} `)) await new Promise((r) => requestAnimationFrame(r));
            };
            let t0 = performance.now();
            const r = await fetch('/apis/v2beta1/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ display_name: 'bench-live', pipeline_version_reference: ref, runtime_config: { parameters: { text: 'a b c' } } }) });
            const id = ((await r.json()) as { run_id: string }).run_id;
            await until((n as number) + 1);
            const add = performance.now() - t0;
            t0 = performance.now();
            await fetch(`/apis/pipelines.kubeflow.org/v2beta1/namespaces/${ns as string}/runs/${id}`, { method: 'DELETE' });
            await until(n as number);
            return [add, performance.now() - t0];
          },
          [sample.pipeline_version_reference, full.items, 'default'],
        );
        added.push(add as number);
        removed.push(remove as number);
        await context.close();
      }
      console.log(`Chromium, /ui/default/runs, ${rounds} rounds: first rows painted ${fmtMs(median(firstRows))} median (${firstRows.map((m) => fmtMs(m)).join(', ')}); all ${full.items} counted ${fmtMs(median(allCounted))}; JS heap ${kb(heap)}`);
      console.log(`  first paint (the shell) ${fmtMs(median(shellPaint))}; the page's list (${listPages} requests) asked at ${fmtMs(median(listStart))}, read by ${fmtMs(median(listDone))}; in the page, read and parse the whole list ${fmtMs(median(fetchFull))}, as a Table ${fmtMs(median(fetchTable))}`);
      console.log(`  with ${full.items} rows: filter typed to rows shown ${fmtMs(median(filtered))} median; a run made elsewhere to its row ${fmtMs(median(added))}, deleted to its row gone ${fmtMs(median(removed))}`);
    } finally {
      await browser.close();
    }
  } finally {
    await server?.cleanup();
  }
}

await main();
