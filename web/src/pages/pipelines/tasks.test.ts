import { describe, expect, it } from 'vitest';
import type { PipelineSpec } from '../../api/types';
import { taskLines } from './tasks';
const spec = {
  pipelineInfo: { name: 'p' },
  root: {
    inputDefinitions: { parameters: { n: { parameterType: 'NUMBER_INTEGER', defaultValue: 3 }, s: { parameterType: 'STRING' } }, artifacts: { data: { artifactType: { schemaTitle: 'system.Dataset' } } } },
    dag: {
      tasks: {
        report: { componentRef: { name: 'comp-report' }, dependentTasks: ['loop'], taskInfo: { name: 'report' } },
        loop: { componentRef: { name: 'comp-for-loop' }, dependentTasks: ['make'], parameterIterator: { itemInput: 'x', items: { inputParameter: 'l' } }, taskInfo: { name: 'for-loop' } },
        make: { componentRef: { name: 'comp-make' }, taskInfo: { name: 'make' } },
      },
    },
  },
  components: {
    'comp-for-loop': { dag: { tasks: { inner: { componentRef: { name: 'comp-make' } } } } },
    'comp-make': { executorLabel: 'exec-make' },
    'comp-report': { executorLabel: 'exec-report' },
  },
} as unknown as PipelineSpec;

describe('taskLines', () => {
  it('orders tasks after what they depend on and nests sub-DAGs', () => {
    const { lines, truncated } = taskLines(spec);
    expect(lines.map((l) => [l.path, l.depth, l.dag, l.loop])).toEqual([
      ['make', 0, false, false],
      ['loop', 0, true, true],
      ['loop.inner', 1, false, false],
      ['report', 0, false, false],
    ]);
    expect(truncated).toBe(0);
  });
  it('says how many it left out past the limit', () => {
    const { lines, truncated } = taskLines(spec, 2);
    expect(lines).toHaveLength(2);
    expect(truncated).toBe(2);
  });
  it('does not hang on a cycle', () => {
    const cyc = { pipelineInfo: { name: 'c' }, root: { dag: { tasks: { a: { componentRef: { name: 'x' }, dependentTasks: ['b'] }, b: { componentRef: { name: 'x' }, dependentTasks: ['a'] } } } } } as unknown as PipelineSpec;
    expect(taskLines(cyc).lines.map((l) => l.path)).toEqual(['a', 'b']);
  });
});

