import { describe, expect, it } from 'vitest';
import type { PipelineSpec, Run } from '../../../api/types';
import loops from '../../../fixtures/run-pipeline-with-loops-and-conditions-multi.json';
import metrics from '../../../fixtures/run-metrics-visualization-pipeline.json';
import nested from '../../../fixtures/run-pipeline-in-pipeline.json';
import { levelGraph, resolveLayer, taskAt } from './static';
import { countsText, iterationsOf, nodeStates, taskRecords, timelineBars } from './state';

const spec = (r: unknown): PipelineSpec => (r as Run).spec.pipelineSpec;

describe('the static graph of a DAG level', () => {
  it('has a node per task and an edge per value passed, labelled with it', () => {
    const layer = resolveLayer(spec(loops), '');
    const level = levelGraph(spec(loops), layer.component, '');
    expect(level.nodes.map((n) => `${n.id}:${n.kind}`).sort()).toEqual(['args-generator-op:container', 'condition-1:condition', 'flip-coin-op:container', 'for-loop-14:loop']);
    const e = level.edges.find((x) => x.source === 'flip-coin-op' && x.target === 'condition-1');
    expect(e?.label).toBe('Output');
    // a loop over a pipeline input has no upstream task
    expect(level.edges.some((x) => x.target === 'for-loop-14')).toBe(false);
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
    expect(levelGraph(spec(nested), sub.component, 'inner-pipeline').nodes.map((n) => n.id).sort()).toEqual(['inner-pipeline.print-op1', 'inner-pipeline.print-op2']);
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
