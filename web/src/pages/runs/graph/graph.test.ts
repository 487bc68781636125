import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import artifactsSimple from '../../../fixtures/artifacts_simple.yaml?raw';
import type { PipelineSpec, Run, TaskStatus } from '../../../api/types';
import loops from '../../../fixtures/run-pipeline-with-loops-and-conditions-multi.json';
import metrics from '../../../fixtures/run-metrics-visualization-pipeline.json';
import nested from '../../../fixtures/run-pipeline-in-pipeline.json';
import complex from '../../../fixtures/run-pipeline-in-pipeline-complex.json';
import { isPseudo, levelGraph, resolveLayer, taskAt } from './static';
import { countsText, iterationRows, iterationsOf, loopItemCount, nodeStates, taskRecords, timeTicks, timelineBars } from './state';

const spec = (r: unknown): PipelineSpec => (r as Run).spec.pipelineSpec;

describe('the static graph of a DAG level', () => {
  it('has a node per task and an edge per value passed, labelled with it', () => {
    const layer = resolveLayer(spec(loops), '');
    const level = levelGraph(spec(loops), layer.component, '');
    expect(level.nodes.map((n) => `${n.id}:${n.kind}`).sort()).toEqual(['__inputs:inputs', 'args-generator-op:container', 'condition-1:condition', 'flip-coin-op:container', 'for-loop-14:loop']);
    const e = level.edges.find((x) => x.source === 'flip-coin-op' && x.target === 'condition-1');
    expect(e?.label).toBe('Output');
    // a loop over a pipeline input has no upstream task: its items come from the pipeline's inputs
    expect(level.edges.filter((x) => x.target === 'for-loop-14').map((x) => [x.source, x.label, x.kind])).toEqual([['__inputs', 'loop_parameter', 'parameter']]);
    expect(level.nodes[0]).toMatchObject({ kind: 'inputs', names: ['loop_parameter', 'msg'] });
  });
  it('opens sub-DAGs and loop iterations as layers with a breadcrumb', () => {
    const l = resolveLayer(spec(loops), 'condition-1.for-loop-2.0');
    expect(l.error).toBeUndefined();
    expect(l.iterationOf).toBe('condition-1.for-loop-2');
    expect(l.crumbs.map((c) => c.path)).toEqual(['', 'condition-1', 'condition-1.for-loop-2.0']);
    const level = levelGraph(spec(loops), l.component, 'condition-1.for-loop-2.0');
    expect(level.nodes.map((n) => n.id)).toContain('condition-1.for-loop-2.0.for-loop-9');
    expect(resolveLayer(spec(loops), 'condition-1.for-loop-2').error).toMatch(/iteration/);
    expect(resolveLayer(spec(loops), 'nope').error).toMatch(/no task nope/);
    const sub = resolveLayer(spec(nested), 'inner-pipeline');
    const inner = levelGraph(spec(nested), sub.component, 'inner-pipeline');
    expect(inner.nodes.filter((n) => !isPseudo(n)).map((n) => n.id).sort()).toEqual(['inner-pipeline.print-op1', 'inner-pipeline.print-op2']);
    // the sub-DAG's own input feeds its first task, its output comes from its last
    expect(inner.edges.filter((e) => e.source === 'inner-pipeline.__inputs').map((e) => [e.target, e.label])).toEqual([['inner-pipeline.print-op1', 'msg']]);
  });
  it('finds the task spec at a path, through iterations', () => {
    expect(taskAt(spec(loops), 'condition-1.for-loop-2.0.for-loop-9.0.print-text-5')?.componentRef.name).toMatch(/print-text/);
  });
});

describe('runtime state over the graph', () => {
  it('joins task records by path and counts a loop’s iterations', () => {
    const run = loops as unknown as Run;
    const tasks = taskRecords(run, []);
    const level = levelGraph(spec(loops), resolveLayer(spec(loops), '').component, '');
    const st = nodeStates(level, tasks);
    expect(st.get('flip-coin-op')?.state).toBe('SUCCEEDED');
    const loop = st.get('for-loop-14');
    expect(loop?.iterations?.total).toBe(iterationsOf(tasks, 'for-loop-14').length);
    expect(loop?.iterations?.total).toBeGreaterThan(1);
    expect(countsText(loop!.iterations!.counts)).toMatch(/succeeded/);
    // a skipped condition is reported as skipped, not as not started
    expect(tasks['for-loop-14.1.condition-15']?.state).toBe('SKIPPED');
  });
  it('prefers live RunTask records over the folded status', () => {
    const run = structuredClone(metrics) as unknown as Run;
    const tasks = taskRecords(run, [{ spec: { path: 'digit-classification' }, status: { state: 'RUNNING' } }]);
    expect(tasks['digit-classification']?.state).toBe('RUNNING');
  });
  it('lays tasks that ran on a timeline', () => {
    const tasks = taskRecords(metrics as unknown as Run, []);
    const { bars, t0, t1 } = timelineBars(tasks, Date.now());
    expect(bars.length).toBe(5);
    expect(bars.every((b) => b.start >= t0 && b.end <= t1)).toBe(true);
    expect(bars.map((b) => b.start)).toEqual([...bars.map((b) => b.start)].sort((a, b) => a - b));
  });
});

describe('a loop’s items, started or not', () => {
  const spec1000 = (): PipelineSpec => {
    const s = structuredClone(spec(complex));
    const loop = Object.values(s.root.dag?.tasks ?? {}).find((t) => t.parameterIterator);
    if (!loop?.parameterIterator) throw new Error('the fixture has no loop at its root');
    loop.parameterIterator.items.raw = JSON.stringify(Array.from({ length: 1000 }, (_, i) => `item-${i}`));
    return s;
  };
  it('counts the iterations not started yet from the loop’s literal items', () => {
    const s = spec1000();
    const level = levelGraph(s, s.root, '');
    const loop = level.nodes.find((n) => n.kind === 'loop')!;
    const tasks: Record<string, TaskStatus> = { [loop.id]: { state: 'RUNNING', startedAt: '2026-01-01T00:00:00Z' } };
    for (let i = 0; i < 812; i++) tasks[`${loop.id}.${i}`] = { state: 'SUCCEEDED', ...(i < 2 ? { cachedFrom: 'r/t' } : {}) };
    for (let i = 812; i < 962; i++) tasks[`${loop.id}.${i}`] = { state: 'RUNNING' };
    tasks[`${loop.id}.962`] = { state: 'FAILED', message: 'boom' };
    const st = nodeStates(level, tasks).get(loop.id)!;
    expect(st.iterations).toEqual({ total: 1000, started: 963, counts: { SUCCEEDED: 810, CACHED: 2, RUNNING: 150, FAILED: 1, NOT_STARTED: 37 } });
    expect(countsText(st.iterations!.counts)).toBe('150 running · 810 succeeded · 2 cached · 1 failed · 37 not started');
    const rows = iterationRows(tasks, loop.id, st.iterations!.total);
    expect(rows).toHaveLength(1000);
    expect(rows[962]).toEqual({ index: 962, path: `${loop.id}.962`, status: { state: 'FAILED', message: 'boom' } });
    expect(rows[999]).toEqual({ index: 999, path: `${loop.id}.999` });
  });
  it('counts a loop over an upstream output from the list its record resolved', () => {
    const run = loops as unknown as Run;
    const tasks = taskRecords(run, []);
    const layer = resolveLayer(spec(loops), 'condition-1');
    const level = levelGraph(spec(loops), layer.component, 'condition-1');
    const node = level.nodes.find((n) => n.id === 'condition-1.for-loop-2')!;
    expect(node.iterator?.literal).toBeUndefined();
    const resolved = tasks['condition-1.for-loop-2']?.inputs?.parameters[node.iterator!.items];
    expect(Array.isArray(resolved)).toBe(true);
    expect(loopItemCount(node, tasks['condition-1.for-loop-2'])).toBe((resolved as unknown[]).length);
    // before the loop has a record, its items are unknown: the count is what has started
    expect(loopItemCount(node, undefined)).toBeUndefined();
    expect(nodeStates(level, {}).get(node.id)?.iterations).toEqual({ total: 0, started: 0, counts: {} });
  });
});

describe('the timeline’s ticks', () => {
  it('steps by a round duration that fits the span', () => {
    expect(timeTicks(7000)).toEqual([0, 2000, 4000, 6000]);
    expect(timeTicks(60_000)).toEqual([0, 15_000, 30_000, 45_000, 60_000]);
    expect(timeTicks(500)).toEqual([0]);
    expect(timeTicks(3 * 3_600_000)).toEqual([0, 3_600_000, 7_200_000, 10_800_000]);
    expect(timeTicks(30 * 86_400_000)).toHaveLength(6);
  });
});

describe('a layer’s own inputs and outputs', () => {
  it('draws where a DAG’s outputs come from, at the root and inside a loop’s body', () => {
    const sp = parse(artifactsSimple) as PipelineSpec;
    const root = levelGraph(sp, sp.root, '');
    expect(root.nodes.find((n) => n.kind === 'outputs')).toMatchObject({ id: '__outputs', names: ['Output'] });
    expect(root.edges.filter((e) => e.target === '__outputs')).toEqual([{ id: 'for-loop-2->__outputs', source: 'for-loop-2', target: '__outputs', label: 'Output', kind: 'artifact' }]);
    const body = resolveLayer(sp, 'for-loop-2.0');
    const level = levelGraph(sp, body.component, 'for-loop-2.0');
    expect(level.edges.filter((e) => e.target === 'for-loop-2.0.__outputs').map((e) => [e.source, e.label])).toEqual([['for-loop-2.0.double', 'double-out_dataset']]);
    // the item each iteration gets is an input of the body
    expect(level.nodes[0]).toMatchObject({ id: 'for-loop-2.0.__inputs', kind: 'inputs' });
  });
});

describe('a sub-DAG’s progress', () => {
  it('counts the Pod tasks inside it at any depth, not its own or its children’s DAG records', () => {
    const run = complex as unknown as Run;
    const tasks = taskRecords(run, []);
    const layer = resolveLayer(spec(complex), 'for-loop-2.0');
    const level = levelGraph(spec(complex), layer.component, 'for-loop-2.0');
    const st = nodeStates(level, tasks).get('for-loop-2.0.inner-pipeline');
    // print-op1 and the print-op2 of the condition that held; the skipped condition ran nothing
    expect(st?.inside).toEqual({ SUCCEEDED: 2 });
    const live = { ...tasks, 'for-loop-2.0.inner-pipeline.condition-1.print-op2': { state: 'RUNNING', podName: 'p' } as TaskStatus };
    expect(nodeStates(level, live).get('for-loop-2.0.inner-pipeline')?.inside).toEqual({ SUCCEEDED: 1, RUNNING: 1 });
    // a task of the same name prefix in another iteration is not inside
    expect(nodeStates(level, { 'for-loop-2.1.inner-pipeline.print-op1': { state: 'FAILED', podName: 'q' } as TaskStatus }).get('for-loop-2.0.inner-pipeline')?.inside).toBeUndefined();
  });
});
