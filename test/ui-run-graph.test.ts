// The run page in real Chromium against a real server: a kfp-compiled pipeline with a loop over a
// nested pipeline turns green on screen as its tasks finish (watches, no reload); a task's panel
// streams its log while it runs; the loop opens into its iterations and an iteration into its DAG;
// the timeline draws the tasks; a failing task is red with its message. Light and dark screenshots.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { conformanceDir } from '../src/conformance-path.js';
import { openUi, type Ui } from './browser.js';
import { TestServer } from './harness.js';

const runs = '/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs';
const compiled = join(conformanceDir(), 'kfp', 'pipelines', 'valid', 'parallel_and_nested', 'pipeline_in_pipeline_complex.yaml');

type Spec = { deploymentSpec: { executors: Record<string, { container: { command: string[] } }> } };

/**
 * The compiled pipeline with its root task `print-op1` changed: it prints its message, then waits for
 * `gate` to exist (so the test decides when it finishes) or raises (to see a failure).
 */
function pipeline(body: 'wait' | 'fail', gate: string): Spec {
  const spec = YAML.parse(readFileSync(compiled, 'utf8')) as Spec;
  const cmd = spec.deploymentSpec.executors['exec-print-op1']!.container.command;
  const src = cmd.length - 1;
  const fn = body === 'wait'
    ? `def print_op1(msg: str) -> str:\n    import os, time\n    print(msg, flush=True)\n    print('waiting for the gate', flush=True)\n    while not os.path.exists(${JSON.stringify(gate)}):\n        time.sleep(0.1)\n    return msg\n`
    : `def print_op1(msg: str) -> str:\n    print(msg, flush=True)\n    raise RuntimeError('the gate is shut: ' + msg)\n`;
  const next = cmd[src]!.replace(/def print_op1\(msg: str\) -> str:\n {4}print\(msg\)\n {4}return msg\n/, fn);
  assert.notEqual(next, cmd[src], 'the compiled component source changed shape');
  cmd[src] = next;
  return spec;
}

describe('the run page', { skip: !existsSync(compiled) && 'the conformance corpus is not on this machine' }, () => {
  let s: TestServer;
  let ui: Ui;
  let dark: Ui;
  let gate: string;
  before(async () => {
    s = await TestServer.start();
    ui = await openUi(s);
    dark = await openUi(s, { dark: true });
    gate = join(s.dataDir, 'gate');
  });
  after(async () => {
    await ui?.close();
    await dark?.close();
    await s?.cleanup();
  });

  const node = (u: Ui, name: string) => u.page.locator('.react-flow__node').filter({ has: u.page.locator('.tn-name', { hasText: new RegExp(`^${name}$`) }) });
  const graphReady = (u: Ui) => u.page.locator('[data-testid=run-graph][data-ready=true]').waitFor();

  it('turns the graph green live, streams a running task’s log, opens the loop and its iterations', async () => {
    await s.create(runs, { apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run', metadata: { name: 'nested' }, spec: { pipelineSpec: pipeline('wait', gate) } });
    await ui.open('/ui/default/runs/nested');
    await graphReady(ui);
    const printOp = node(ui, 'print-op1');
    const loop = node(ui, 'for-loop-2');
    await printOp.locator('.tasknode.st-running').waitFor({ timeout: 60_000 });
    // the loop runs beside the gated task and finishes first: both its iterations, on the node
    await loop.locator('.tasknode.st-succeeded').waitFor({ timeout: 60_000 });
    assert.match(await loop.innerText(), /2\/2 done/);
    assert.match((await loop.getByRole('button').first().getAttribute('aria-label')) ?? '', /for-loop-2, loop: succeeded, 2 succeeded/);

    await printOp.click();
    await ui.urlBecomes((u) => u.searchParams.get('task') === 'print-op1', '?task=print-op1');
    const panel = ui.page.getByRole('complementary', { name: 'Task print-op1' });
    await panel.locator('pre.log').filter({ hasText: 'waiting for the gate' }).first().waitFor();
    assert.match(await panel.innerText(), /msg\s+Hello/);
    await panel.getByRole('link', { name: /nested-print-op1/ }).waitFor();
    await ui.shot('run-graph-running');
    await dark.open('/ui/default/runs/nested?task=print-op1');
    await graphReady(dark);
    await dark.page.getByRole('complementary', { name: 'Task print-op1' }).locator('pre.log').filter({ hasText: 'waiting for the gate' }).first().waitFor();
    await dark.shot('run-graph-running-dark');

    // no reload from here: the open page sees the task finish and the run end
    writeFileSync(gate, '');
    await printOp.locator('.tasknode.st-succeeded').waitFor({ timeout: 60_000 });
    await ui.page.locator('.objhead .badge', { hasText: 'SUCCEEDED' }).waitFor({ timeout: 60_000 });

    await loop.click();
    const loopPanel = ui.page.getByRole('complementary', { name: 'Task for-loop-2' });
    await loopPanel.getByRole('button', { name: 'Open iteration 1' }).click();
    await ui.urlBecomes((u) => u.searchParams.get('layer') === 'for-loop-2.1', '?layer=for-loop-2.1');
    await graphReady(ui);
    const inner = node(ui, 'inner-pipeline');
    await inner.locator('.tasknode.st-succeeded').waitFor();
    await inner.getByRole('button', { name: 'Open inner-pipeline' }).click();
    await ui.urlBecomes((u) => u.searchParams.get('layer') === 'for-loop-2.1.inner-pipeline', '?layer=for-loop-2.1.inner-pipeline');
    await graphReady(ui);
    // iteration 1 got "world!": condition-1 (== 'Hello') was skipped, condition-2 ran
    await node(ui, 'condition-1').locator('.tasknode.st-skipped').waitFor();
    await node(ui, 'condition-2').locator('.tasknode.st-succeeded').waitFor();
    const crumbs = await ui.page.getByRole('navigation', { name: 'Pipeline layers' }).innerText();
    assert.match(crumbs, /pipeline-in-pipeline-complex\s*\/\s*for-loop-2 \[1\]\s*\/\s*inner-pipeline/);
    await ui.shot('run-graph-layer');
    await dark.open('/ui/default/runs/nested?layer=for-loop-2.1.inner-pipeline');
    await graphReady(dark);
    await dark.shot('run-graph-layer-dark');

    await ui.page.getByRole('tab', { name: 'Timeline' }).click();
    await ui.page.getByText('print-op1', { exact: true }).first().waitFor();
    // the task names sit inside the frame, as the axis label above them does
    const insets = await ui.page.locator('.timeline .tl-name').evaluateAll((els) => els.map((e) => getComputedStyle(e).paddingLeft));
    assert.ok(insets.length >= 2 && insets.every((p) => p === '8px'), insets.join(','));
    await ui.shot('run-timeline');
    await dark.open('/ui/default/runs/nested?tab=timeline');
    await dark.page.getByText('print-op1', { exact: true }).first().waitFor();
    await dark.shot('run-timeline-dark');
    assert.deepEqual(ui.errors, []);
  });

  it('shows a failing task red with its message, and offers a retry', async () => {
    await s.create(runs, { apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run', metadata: { name: 'broken' }, spec: { pipelineSpec: pipeline('fail', gate) } });
    await ui.open('/ui/default/runs/broken');
    await graphReady(ui);
    const printOp = node(ui, 'print-op1');
    await printOp.locator('.tasknode.st-failed').waitFor({ timeout: 60_000 });
    await ui.page.locator('.objhead .badge', { hasText: 'FAILED' }).waitFor({ timeout: 60_000 });
    await printOp.click();
    const panel = ui.page.getByRole('complementary', { name: 'Task print-op1' });
    // the record says how the task ended; the log says why
    await panel.locator('.notice.bad').filter({ hasText: /task print-op1 failed: container exited with code 1/ }).waitFor();
    await panel.locator('pre.log').filter({ hasText: 'RuntimeError: the gate is shut: Hello' }).waitFor();
    await node(ui, 'print-op1').getByText('failed').waitFor();
    await ui.page.getByRole('button', { name: 'Retry' }).waitFor();
    await ui.shot('run-graph-failed');
    await dark.open('/ui/default/runs/broken?task=print-op1');
    await graphReady(dark);
    await dark.shot('run-graph-failed-dark');
    // a shared link to a task the pipeline does not have says so where the task would be
    await ui.open('/ui/default/runs/broken?task=no-such-task');
    await ui.page.getByRole('complementary', { name: 'Task no-such-task' }).getByText('pipeline has no task').waitFor();
  });

  it('keeps a 1,000-iteration loop usable: one node with counts, its iterations a virtualised list, reachable by keyboard', async () => {
    const items = Array.from({ length: 1000 }, (_, i) => i);
    const spec = {
      pipelineInfo: { name: 'fanout' },
      schemaVersion: '2.1.0',
      root: { dag: { tasks: { 'for-loop-1': { taskInfo: { name: 'for-loop-1' }, componentRef: { name: 'comp-for-loop-1' }, parameterIterator: { itemInput: 'pipelinechannel--loop-item-param-0', items: { raw: JSON.stringify(items) } }, iteratorPolicy: { parallelismLimit: 50 } } } } },
      components: {
        'comp-for-loop-1': {
          inputDefinitions: { parameters: { 'pipelinechannel--loop-item-param-0': { parameterType: 'NUMBER_INTEGER' } } },
          dag: { tasks: { work: { taskInfo: { name: 'work' }, componentRef: { name: 'comp-work' }, inputs: { parameters: { n: { componentInputParameter: 'pipelinechannel--loop-item-param-0' } } } } } },
        },
        'comp-work': { executorLabel: 'exec-work', inputDefinitions: { parameters: { n: { parameterType: 'NUMBER_INTEGER' } } } },
      },
      deploymentSpec: { executors: { 'exec-work': { container: { image: 'busybox', command: ['sh', '-c', 'echo item $0'], args: ["{{$.inputs.parameters['n']}}"] } } } },
    };
    await s.create(runs, { apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run', metadata: { name: 'fanout' }, spec: { pipelineSpec: spec } });
    // while it runs: the loop counts the iterations not started yet, from its items
    await ui.open('/ui/default/runs/fanout');
    await graphReady(ui);
    const loop = node(ui, 'for-loop-1');
    await loop.locator('.tn-bar').waitFor({ timeout: 60_000 });
    assert.match(await loop.innerText(), /\d+\/1000 done/);
    await ui.page.locator('.objhead .badge', { hasText: 'SUCCEEDED' }).waitFor({ timeout: 300_000 });
    await loop.locator('.tasknode.st-succeeded').waitFor();
    assert.match(await loop.innerText(), /1000\/1000 done/);

    // first paint of the finished run's page, as the bench measures it: navigation to the graph's ready mark
    const t0 = Date.now();
    await ui.open('/ui/default/runs/fanout');
    await graphReady(ui);
    console.log(`# first paint of a 1,000-iteration (2,001-record) run page: ${Date.now() - t0} ms`);

    // keyboard: Tab reaches the node's button; Enter opens its panel
    await ui.page.getByRole('tab', { name: 'Graph' }).focus();
    let reached = false;
    for (let i = 0; i < 30 && !reached; i++) {
      await ui.page.keyboard.press('Tab');
      reached = await ui.page.evaluate(() => document.activeElement?.closest('[data-task="for-loop-1"]') !== null);
    }
    assert.ok(reached, 'Tab never reached the loop node');
    await ui.page.keyboard.press('Enter');
    await ui.urlBecomes((u) => u.searchParams.get('task') === 'for-loop-1', '?task=for-loop-1');
    const panel = ui.page.getByRole('complementary', { name: 'Task for-loop-1' });
    await panel.getByText('1000 succeeded').waitFor();
    await panel.getByText('1000 items', { exact: true }).waitFor();
    const rendered = await panel.locator('.dt-body [role=row]').count();
    assert.ok(rendered > 0 && rendered < 100, `the iterations list renders ${rendered} rows of 1000: it must be virtualised`);
    await ui.shot('run-graph-loop-1000');
    await dark.open('/ui/default/runs/fanout?task=for-loop-1');
    await graphReady(dark);
    await dark.shot('run-graph-loop-1000-dark');
    // an iteration far down the list opens as its own layer
    await panel.getByPlaceholder('Filter').fill('999');
    await panel.getByRole('button', { name: 'Open iteration 999' }).click();
    await ui.urlBecomes((u) => u.searchParams.get('layer') === 'for-loop-1.999', '?layer=for-loop-1.999');
    await graphReady(ui);
    await node(ui, 'work').locator('.tasknode.st-succeeded').waitFor();
  });
});
