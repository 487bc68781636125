// Pipeline artifacts and run comparison in real Chromium: two runs of examples/pipelines/metrics_report
// with different parameters; their Metrics, Markdown, ClassificationMetrics, HTML, Model and Dataset
// artifacts rendered by type (the HTML's script never runs), and the two runs compared side by side.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openUi, type Ui } from './browser.js';
import { repoRoot, TestServer } from './harness.js';

const pipeline = join(repoRoot, 'examples', 'pipelines', 'metrics_report.yaml');
// sandboxed frames refusing the report's script is the behaviour under test, not an error of the page
const realErrors = (ui: Ui): string[] => ui.errors.filter((e) => !/Blocked script execution in 'about:srcdoc'/.test(e));

describe('artifacts and compare in the dashboard', () => {
  let s: TestServer;
  let ui: Ui;
  let a = '';
  let b = '';
  const artifact = (run: string, task: string, output: string): string => `/ui/default/artifact?run=${run}&task=${task}&output=${output}&index=0`;

  before(async () => {
    s = await TestServer.start();
    const run = async (...params: string[]): Promise<string> => {
      const r = await s.cli(['run', pipeline, ...params.flatMap((p) => ['-p', p]), '--watch']);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const name = /run\.pipelines\.kubeflow\.org\/(\S+) created/.exec(r.stdout)?.[1];
      assert.ok(name, r.stdout);
      return name;
    };
    a = await run('learning_rate=0.1', 'epochs=5');
    b = await run('learning_rate=0.3', 'epochs=9');
    ui = await openUi(s);
  });
  after(async () => {
    await ui?.close();
    await s?.cleanup();
  });

  it('shows a Metrics artifact as a table of its scalars', async () => {
    await ui.open(artifact(a, 'train', 'metrics'));
    const table = ui.page.locator('table.artifact-metrics');
    await table.waitFor();
    const rows = await table.locator('tbody tr').allInnerTexts();
    assert.deepEqual(rows.map((r) => r.split('\t').map((x) => x.trim())), [['accuracy', '0.65'], ['loss', '0.36'], ['epochs', '5']]);
    await ui.shot('artifact-metrics');
  });

  it('renders a Markdown artifact in a sandboxed frame', async () => {
    await ui.open(artifact(b, 'train', 'summary'));
    const frame = ui.page.frameLocator('iframe.artifact-doc');
    await frame.getByRole('heading', { name: 'Summary' }).waitFor();
    assert.equal(await frame.locator('strong').innerText(), '0.3');
    assert.deepEqual(await frame.locator('tbody tr').allInnerTexts(), ['accuracy\t0.71', 'loss\t0.32']);
    assert.equal(await ui.page.locator('iframe.artifact-doc').getAttribute('sandbox'), '');
    await ui.shot('artifact-markdown');
  });

  it('draws a confusion matrix and a ROC curve with the threshold on hover', async () => {
    await ui.open(artifact(a, 'train', 'classification'));
    const grid = ui.page.locator('table.confusion');
    await grid.waitFor();
    assert.deepEqual(await grid.locator('thead th').allInnerTexts(), ['true ↓ predicted →', 'cat', 'dog', 'bird']);
    assert.deepEqual(await grid.locator('tbody td').allInnerTexts(), ['65', '33', '2', '5', '65', '30', '1', '3', '96']);
    assert.match((await grid.locator('tbody td').first().getAttribute('title')) ?? '', /true cat, predicted cat: 65 \(65% of cat\)/);
    const svg = ui.page.getByRole('img', { name: /ROC curve/ });
    const box = await svg.boundingBox();
    assert.ok(box);
    // x = 0.3 of the plot: 30 px of axis labels on the left, 8 px of margin on the right
    await ui.page.mouse.move(box.x + 30 + 0.3 * (box.width - 38), box.y + box.height / 2);
    await ui.page.locator('.roc-readout', { hasText: 'threshold 0.4 · TPR 0.65 · FPR 0.3' }).waitFor();
    await ui.shot('artifact-classification');
  });

  it('shows an HTML artifact without running its script', async () => {
    await ui.open(artifact(a, 'train', 'report'));
    const frame = ui.page.frameLocator('iframe.artifact-doc');
    await frame.getByRole('heading', { name: 'Training report' }).waitFor();
    // the script would set this global on the page and append a line to the report
    assert.equal(await ui.page.evaluate(() => (window as unknown as { artifactScriptRan?: boolean }).artifactScriptRan), undefined);
    assert.doesNotMatch(await frame.locator('body').innerText(), /script ran/);
    assert.equal(await ui.page.locator('iframe.artifact-doc').getAttribute('sandbox'), '');
    await ui.shot('artifact-html');
  });

  it('previews a text dataset, calls a model binary, and links the whole file', async () => {
    await ui.open(artifact(a, 'make-data', 'data'));
    await ui.page.locator('pre.artifact-preview', { hasText: 'x,label\n0.000,dog' }).waitFor();
    await ui.shot('artifact-dataset');
    await ui.open(artifact(a, 'train', 'model'));
    await ui.page.getByText('Binary content (2.0 KiB), not shown as text.').waitFor();
    const link = ui.page.getByRole('link', { name: 'Download whole file' });
    const res = await fetch(s.url + ((await link.getAttribute('href')) ?? ''));
    assert.equal(res.status, 200);
    assert.equal((await res.arrayBuffer()).byteLength, 2048);
    await ui.shot('artifact-model');
    await ui.open(artifact(a, 'train', 'nothing'));
    await ui.page.getByText(`Task train of run ${a} has no output artifact nothing`).waitFor();
  });

  it('shows malformed metrics and a ragged confusion matrix as errors inside their panels', async () => {
    const c = await s.cli(['run', join(repoRoot, 'test', 'fixtures', 'artifacts', 'bad_metrics.yaml'), '--watch']);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    const name = /run\.pipelines\.kubeflow\.org\/(\S+) created/.exec(c.stdout)?.[1] ?? '';
    await ui.open(artifact(name, 'train', 'metrics'));
    await ui.page.getByRole('alert').filter({ hasText: 'metric accuracy: "high" is not a number' }).waitFor();
    assert.deepEqual(await ui.page.locator('table.artifact-metrics tbody tr').allInnerTexts(), ['loss\t0.5']);
    await ui.open(artifact(name, 'train', 'classification'));
    await ui.page.getByRole('alert').filter({ hasText: 'confusionMatrix.rows[1] has 2 values for 3 labels' }).waitFor();
    // the ROC curve beside it is still drawn
    await ui.page.getByRole('img', { name: /ROC curve/ }).waitFor();
    await ui.shot('artifact-bad-metadata');
    await ui.open(`/ui/default/compare?runs=${a},${name}`);
    await ui.page.getByRole('alert').filter({ hasText: `${name}: train/metrics: metric accuracy: "high" is not a number` }).waitFor();
    assert.deepEqual(realErrors(ui), []);
  });

  it('compares the two runs: differing parameters and metrics marked, artifacts side by side', async () => {
    await ui.open(`/ui/default/compare?runs=${a},${b}`);
    const params = ui.page.getByRole('table', { name: 'Parameters' });
    await params.waitFor();
    const row = (name: string) => params.locator('tbody tr', { has: ui.page.getByRole('rowheader', { name: new RegExp(`^${name}`) }) });
    assert.deepEqual(await row('epochs').locator('td').allInnerTexts(), ['5', '9']);
    assert.equal(await row('epochs').getAttribute('class'), 'differs');
    assert.deepEqual(await row('learning_rate').locator('td').allInnerTexts(), ['0.1', '0.3']);
    assert.deepEqual(await row('rows').locator('td').allInnerTexts(), ['40', '40']);
    assert.equal(await row('rows').getAttribute('class'), null);
    const metrics = ui.page.getByRole('rowgroup', { name: 'Metrics' });
    const metric = (key: string) => metrics.getByRole('row').filter({ hasText: key }).getByRole('cell');
    await metrics.getByRole('row').filter({ hasText: 'train/metrics/loss' }).waitFor();
    assert.deepEqual(await metric('train/metrics/loss').allInnerTexts(), ['train/metrics/loss', '0.36', '0.32 ★']);
    assert.deepEqual(await metric('train/metrics/accuracy').allInnerTexts(), ['train/metrics/accuracy', '0.65', '0.71 ★']);
    // one classification, HTML and Markdown panel per run
    assert.equal(await ui.page.locator('.compare-panelrow').count(), 3);
    assert.equal(await ui.page.locator('.compare-panelrow').first().locator('table.confusion').count(), 2);
    await ui.page.locator('.compare-panelrow').nth(2).frameLocator('iframe').first().getByRole('heading', { name: 'Summary' }).waitFor();
    assert.equal(await ui.page.evaluate(() => (window as unknown as { artifactScriptRan?: boolean }).artifactScriptRan), undefined);
    await ui.shot('compare');
    await ui.page.locator('.compare-panelrow').first().evaluate((e) => e.scrollIntoView({ block: 'center' }));
    await ui.shot('compare-artifacts');

    // remove a run, then add it back from the page
    await ui.page.getByRole('button', { name: `Remove ${a} from the comparison` }).click();
    await ui.page.waitForURL((u) => u.searchParams.get('runs') === b);
    assert.deepEqual(await row('epochs').locator('td').allInnerTexts(), ['9']);
    await ui.page.getByLabel('Run to add').selectOption(a);
    await ui.page.getByRole('button', { name: 'Add' }).click();
    await ui.page.waitForURL((u) => u.searchParams.get('runs') === `${b},${a}`);
    assert.deepEqual(await row('epochs').locator('td').allInnerTexts(), ['9', '5']);
    // each panel opens its artifact full size
    await ui.page.getByRole('link', { name: 'Open classification full size' }).first().click();
    await ui.page.waitForURL((u) => u.pathname === '/ui/default/artifact' && u.searchParams.get('run') === b && u.searchParams.get('output') === 'classification');
    await ui.page.locator('table.confusion').waitFor();
    assert.equal(await ui.page.getByRole('link', { name: /full size/ }).count(), 0);
    assert.deepEqual(realErrors(ui), []);
  });

  it('looks right in the dark theme', async () => {
    const dark = await openUi(s, { dark: true });
    try {
      await dark.open(`/ui/default/compare?runs=${a},${b}`);
      await dark.page.getByRole('table', { name: 'Parameters' }).waitFor();
      await dark.page.locator('table.confusion').first().waitFor();
      await dark.shot('compare-dark');
      await dark.page.locator('.compare-panelrow').first().evaluate((e) => e.scrollIntoView({ block: 'center' }));
      await dark.shot('compare-artifacts-dark');
      await dark.open(artifact(b, 'train', 'summary'));
      await dark.page.frameLocator('iframe.artifact-doc').getByRole('heading', { name: 'Summary' }).waitFor();
      await dark.shot('artifact-markdown-dark');
      await dark.open(artifact(a, 'train', 'classification'));
      await dark.page.locator('table.confusion').waitFor();
      await dark.shot('artifact-classification-dark');
      assert.deepEqual(realErrors(dark), []);
    } finally {
      await dark.close();
    }
  });
});
