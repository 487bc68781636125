// The pipeline pages in real Chromium against a real server: upload a compiled pipeline, see it
// listed, refuse a malformed upload next to the form, refuse a bad parameter on its field, start a
// run from the form and watch it finish, check that kfp.Client lists that run, and screenshot every
// page (light and dark).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openUi, type Ui } from './browser.js';
import { repoRoot, TestServer } from './harness.js';

const wordCount = join(repoRoot, 'examples', 'pipelines', 'word_count.yaml');
const python = join(repoRoot, '.venv', 'bin', 'python');

describe('the pipeline pages', () => {
  let s: TestServer;
  let ui: Ui;
  let pipelineUrl = '';
  let runName = '';
  let runUrl = '';
  before(async () => {
    s = await TestServer.start();
    ui = await openUi(s);
  });
  after(async () => {
    await ui?.close();
    await s?.cleanup();
  });

  it('uploads a compiled pipeline from the browser and lists it', async () => {
    await ui.open('/ui/default/pipelines');
    await ui.page.getByRole('heading', { name: 'Pipelines' }).waitFor();
    await ui.page.getByRole('button', { name: 'Upload pipeline' }).click();
    const form = ui.page.getByRole('form', { name: 'Upload pipeline' });
    await form.getByLabel('Compiled pipeline file').setInputFiles(wordCount);
    await form.getByLabel('Pipeline name').fill('word-count');
    await form.getByRole('button', { name: 'Upload' }).click();
    // the upload lands on the new pipeline's page
    await ui.page.waitForURL(/\/ui\/default\/pipelines\/[0-9a-f-]{36}$/);
    pipelineUrl = new URL(ui.page.url()).pathname;
    await ui.page.getByRole('heading', { level: 1, name: /word-count/ }).waitFor();
    // the version's inputs, with their types and defaults, and its tasks
    const inputs = ui.page.locator('table.plain');
    await inputs.getByRole('cell', { name: 'long_at', exact: true }).waitFor();
    await inputs.getByRole('cell', { name: 'NUMBER_INTEGER' }).waitFor();
    await ui.page.locator('.tasklist li', { hasText: /^count-words/ }).waitFor();
    // tasks inside the condition's sub-DAGs are listed too, under their branch
    await ui.page.locator('.tasklist li', { hasText: /^report-2/ }).waitFor();
    const listed = await s.get('/apis/v2beta1/pipelines?namespace=default');
    assert.deepEqual(listed.pipelines.map((p: { display_name: string }) => p.display_name), ['word-count']);
    await ui.shot('pipelines-detail');

    // a second version, uploaded from the pipeline's page
    await ui.page.getByRole('button', { name: 'Upload version' }).click();
    const vform = ui.page.getByRole('form', { name: 'Upload version' });
    await vform.getByLabel('Compiled pipeline file').setInputFiles(wordCount);
    await vform.getByLabel('Version name').fill('word-count v2');
    await vform.getByRole('button', { name: 'Upload' }).click();
    await ui.page.getByRole('rowgroup', { name: 'versions' }).getByRole('button', { name: /^word-count v2/ }).waitFor();
    const versions = await s.get(`/apis/v2beta1/pipelines/${pipelineUrl.split('/').pop()}/versions`);
    assert.equal(versions.pipeline_versions.length, 2);
    assert.ok(versions.pipeline_versions.some((v: { display_name: string }) => v.display_name === 'word-count v2'));

    await ui.open('/ui/default/pipelines');
    const row = ui.page.getByRole('link', { name: /^word-count/ });
    await row.waitFor();
    await ui.page.getByRole('row').filter({ has: row }).getByRole('cell', { name: '2', exact: true }).waitFor();
    await ui.shot('pipelines-list');
  });

  it('shows the server’s refusal of a malformed file next to the upload form', async () => {
    await ui.open('/ui/default/pipelines');
    await ui.page.getByRole('button', { name: 'Upload pipeline' }).click();
    const form = ui.page.getByRole('form', { name: 'Upload pipeline' });
    // a pipeline whose root DAG runs a component the file does not define
    const bad = 'pipelineInfo:\n  name: broken\nroot:\n  dag:\n    tasks:\n      a:\n        componentRef:\n          name: comp-missing\n        taskInfo:\n          name: a\nschemaVersion: 2.1.0\n';
    await form.getByLabel('Compiled pipeline file').setInputFiles({ name: 'broken.yaml', mimeType: 'application/yaml', buffer: Buffer.from(bad) });
    await form.getByRole('button', { name: 'Upload' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    const text = await alert.innerText();
    // the server's words, naming the file and what in it is wrong
    assert.match(text, /broken\.yaml/);
    assert.match(text, /comp-missing/);
    await ui.shot('pipelines-upload-error');
    // nothing was stored: the refused pipeline is not listed
    const listed = await s.get('/apis/v2beta1/pipelines?namespace=default');
    assert.equal(listed.pipelines.length, 1);
  });

  it('refuses an invalid parameter on its field, then starts the run and shows it finish', async () => {
    await ui.open(`${pipelineUrl}?tab=run`);
    const form = ui.page.getByRole('form', { name: 'Run the pipeline' });
    await form.waitFor();
    const longAt = form.getByLabel(/^long_at/);
    assert.equal(await longAt.inputValue(), '5', 'the default is filled in');
    await longAt.fill('2.5');
    await form.getByRole('button', { name: 'Start run' }).click();
    const err = ui.page.locator('#p-long_at-err');
    await err.waitFor();
    assert.match(await err.innerText(), /whole number/);
    assert.equal(await longAt.getAttribute('aria-invalid'), 'true');
    // the submit was pressed and refused by the form itself
    await form.getByRole('alert').filter({ hasText: 'Some parameters are not valid' }).waitFor();
    await ui.shot('run-form-invalid');
    // nothing was sent
    assert.equal(((await s.get('/apis/v2beta1/runs')).runs ?? []).length, 0);

    await longAt.fill('3');
    await form.getByLabel(/^text/).fill('one two three four');
    runName = `form run ${Date.now()}`;
    await form.getByLabel('Run name').fill(runName);
    await ui.shot('run-form');
    await form.getByRole('button', { name: 'Start run' }).click();
    await ui.page.waitForURL(/\/ui\/default\/runs\/[0-9a-f-]{36}/);
    runUrl = new URL(ui.page.url()).pathname;
    await ui.page.locator('.objhead .badge', { hasText: 'SUCCEEDED' }).waitFor({ timeout: 180_000 });
    await ui.shot('run-finished');
  });

  it('made a run that kfp.Client lists, with its parameters, experiment and version', async () => {
    const id = runUrl.split('/').pop() as string;
    const code = `
import json, kfp
c = kfp.Client(host=${JSON.stringify(s.url)})
runs = c.list_runs(page_size=100).runs or []
r = [r for r in runs if r.run_id == ${JSON.stringify(id)}][0]
x = c.get_experiment(experiment_id=r.experiment_id)
print(json.dumps({"name": r.display_name, "state": r.state, "params": r.runtime_config.parameters if r.runtime_config else None, "experiment": x.display_name, "version": r.pipeline_version_reference.pipeline_version_id if r.pipeline_version_reference else None}))
`;
    const out = spawnSync(python, ['-c', code], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(out.status, 0, out.stderr);
    const got = JSON.parse(out.stdout.trim().split('\n').pop() as string);
    assert.equal(got.name, runName);
    assert.equal(got.state, 'SUCCEEDED');
    assert.deepEqual(got.params, { long_at: 3, text: 'one two three four' });
    assert.equal(got.experiment, 'Default');
    assert.ok(got.version, 'the run names the pipeline version it ran');
  });

  it('opens the links kfp.Client prints for the experiments and runs it makes; a cached task has its own colour', async () => {
    // the same inputs as the form's run: this run's tasks are served from the cache
    const code = `
import kfp
c = kfp.Client(host=${JSON.stringify(s.url)})
c.create_run_from_pipeline_package(${JSON.stringify(wordCount)}, arguments={'text': 'one two three four', 'long_at': 3}, run_name='printed link', experiment_name='printed-links')
`;
    const out = spawnSync(python, ['-c', code], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(out.status, 0, out.stderr);
    // what the SDK prints: `Experiment details: <host>/#/experiments/details/<id>`, then the run's
    const printed = new Map([...out.stdout.matchAll(/^(Experiment|Run) details: (\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]));
    const expLink = printed.get('Experiment');
    const runLink = printed.get('Run');
    assert.ok(expLink && runLink, out.stdout);
    assert.match(runLink, new RegExp(`^${s.url}/#/runs/details/[0-9a-f-]{36}$`));
    await ui.page.goto(expLink);
    await ui.page.waitForURL((u) => u.pathname === `/ui/default/experiments/${expLink.split('/').pop()}`);
    await ui.page.getByRole('heading', { level: 1, name: /printed-links/ }).waitFor();
    await ui.page.goto(runLink);
    await ui.page.waitForURL((u) => u.pathname === `/ui/default/runs/${runLink.split('/').pop()}`);
    await ui.page.getByRole('heading', { level: 1, name: /printed link/ }).waitFor();
    // its experiment by the name it was given, not by its id
    await ui.page.locator('.runsummary').getByRole('link', { name: 'printed-links', exact: true }).waitFor();
    await ui.page.locator('.objhead .badge', { hasText: 'SUCCEEDED' }).waitFor({ timeout: 180_000 });
    await ui.page.locator('[data-testid=run-graph][data-ready=true]').waitFor();
    await ui.page.locator('.react-flow__node .tasknode.st-cached').first().waitFor();
    await ui.shot('run-graph-cached');
  });

  it('starts a run with caching off, linked like the KFP API links runs', async () => {
    await ui.open(`${pipelineUrl}?tab=run`);
    const form = ui.page.getByRole('form', { name: 'Run the pipeline' });
    await form.getByLabel('Run name').fill('uncached run');
    await form.getByLabel('Caching').uncheck();
    await form.getByRole('button', { name: 'Start run' }).click();
    await ui.page.waitForURL(/\/ui\/default\/runs\/[0-9a-f-]{36}/);
    const id = new URL(ui.page.url()).pathname.split('/').pop() as string;
    const run = await s.get(`/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs/${id}`);
    assert.equal(run.spec.enableCaching, false);
    const first = await s.get(`/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs/${runUrl.split('/').pop()}`);
    for (const k of ['experiment-id', 'pipeline-id', 'pipeline-version-id', 'storage-state']) {
      assert.equal(run.metadata.labels[`pipelines.kubeflow.org/${k}`], first.metadata.labels[`pipelines.kubeflow.org/${k}`], k);
    }
    // the KFP API shows it as it shows the run it made itself
    const kfp = await s.get(`/apis/v2beta1/runs/${id}`);
    assert.equal(kfp.display_name, 'uncached run');
    assert.equal(kfp.experiment_id, first.metadata.labels['pipelines.kubeflow.org/experiment-id']);
    await ui.page.locator('.objhead .badge', { hasText: 'SUCCEEDED' }).waitFor({ timeout: 180_000 });
  });

  it('lists the run live, with its experiment, and selects runs to compare', async () => {
    await ui.open('/ui/default/runs');
    const link = ui.page.getByRole('link', { name: runName });
    await link.waitFor();
    const row = ui.page.getByRole('row').filter({ has: link });
    await row.getByRole('link', { name: 'Default' }).waitFor();
    await ui.shot('runs-list');
    await ui.open('/ui/default/experiments');
    await ui.page.getByRole('link', { name: /^Default/ }).click();
    await ui.page.getByRole('link', { name: runName }).waitFor();
    await ui.shot('experiment-detail');
  });

  it('creates a recurring run from the form, disabled, and switches it on', async () => {
    await ui.open(`${pipelineUrl}?tab=run`);
    const form = ui.page.getByRole('form', { name: 'Run the pipeline' });
    await form.getByLabel('Run name').fill('hourly count');
    await form.getByLabel('Run on a schedule (recurring run)').check();
    await form.getByLabel('Interval, seconds').fill('3600');
    await form.getByLabel('Enabled').uncheck();
    await form.getByRole('button', { name: 'Create recurring run' }).click();
    await ui.page.waitForURL(/\/ui\/default\/recurringruns\/[0-9a-f-]{36}/);
    await ui.page.locator('.objhead .badge', { hasText: 'Disabled' }).waitFor();
    const listed = await s.get('/apis/v2beta1/recurringruns?namespace=default');
    assert.equal(listed.recurringRuns.length, 1);
    assert.equal(listed.recurringRuns[0].mode, 'DISABLE');
    assert.equal(listed.recurringRuns[0].trigger.periodic_schedule.interval_second, '3600');
    await ui.page.getByRole('button', { name: 'Enable' }).click();
    await ui.page.locator('.objhead .badge', { hasText: 'Enabled' }).waitFor();
    await ui.shot('recurringrun-detail');
    // off again, so that it starts nothing while the test ends
    await ui.page.getByRole('button', { name: 'Disable' }).click();
    await ui.page.locator('.objhead .badge', { hasText: 'Disabled' }).waitFor();
    await ui.open('/ui/default/recurringruns');
    await ui.page.getByRole('link', { name: /^hourly count/ }).waitFor();
    await ui.shot('recurringruns-list');
  });

  it('draws every page in the dark theme', async () => {
    const dark = await openUi(s, { dark: true });
    try {
      const pages: [string, string, () => Promise<unknown>][] = [
        ['pipelines-list', '/ui/default/pipelines', () => dark.page.getByRole('link', { name: /^word-count/ }).waitFor()],
        ['pipelines-detail', pipelineUrl, () => dark.page.locator('table.plain').waitFor()],
        ['run-form', `${pipelineUrl}?tab=run`, () => dark.page.getByRole('form', { name: 'Run the pipeline' }).waitFor()],
        ['runs-list', '/ui/default/runs', () => dark.page.getByRole('link', { name: runName }).waitFor()],
        ['experiments-list', '/ui/default/experiments', () => dark.page.getByRole('link', { name: /^Default/ }).waitFor()],
        ['recurringruns-list', '/ui/default/recurringruns', () => dark.page.getByRole('link', { name: /^hourly count/ }).waitFor()],
      ];
      for (const [name, path, ready] of pages) {
        await dark.open(path);
        await ready();
        await dark.shot(`${name}-dark`);
      }
      await dark.open(`${pipelineUrl}?tab=run`);
      const form = dark.page.getByRole('form', { name: 'Run the pipeline' });
      await form.getByLabel(/^long_at/).fill('x');
      await form.getByRole('button', { name: 'Start run' }).click();
      await dark.page.locator('#p-long_at-err').waitFor();
      await dark.shot('run-form-invalid-dark');
      assert.deepEqual(dark.errors, []);
    } finally {
      await dark.close();
    }
    // the refused upload's 400 is the one error the light page was meant to meet
    assert.deepEqual(ui.errors.filter((e) => !/status of 400/.test(e)), []);
    assert.equal(ui.errors.length, 1, ui.errors.join('\n'));
  });
});
