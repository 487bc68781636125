import { describe, expect, it } from 'vitest';
import { layout, NODE_H, NODE_W } from './layout';
import type { Level } from './static';

// A 200-task DAG shaped like a wide pipeline: 20 stages of 10 tasks, each fed by two of the stage before.
function wide(stages: number, width: number): Level {
  const nodes: Level['nodes'] = [];
  const edges: Level['edges'] = [];
  for (let s = 0; s < stages; s++)
    for (let w = 0; w < width; w++) {
      const id = `t${s}-${w}`;
      nodes.push({ id, task: id, label: id, kind: 'container', component: 'comp' });
      if (s > 0)
        for (const from of [w, (w + 1) % width]) {
          const src = `t${s - 1}-${from}`;
          edges.push({ id: `${src}->${id}`, source: src, target: id, label: 'x', kind: 'parameter' });
        }
    }
  return { nodes, edges };
}

describe('layout', () => {
  it('places a 200-task DAG: every node, upstream above downstream, no two overlapping', async () => {
    const level = wide(20, 10);
    const t0 = performance.now();
    const pos = await layout(level);
    // measured, not asserted: the figure the worker keeps off the page's main thread
    console.log(`ELK layered, ${level.nodes.length} nodes / ${level.edges.length} edges: ${(performance.now() - t0).toFixed(0)} ms`);
    expect(pos.nodes.size).toBe(200);
    for (const e of level.edges) expect(pos.nodes.get(e.source)!.y).toBeLessThan(pos.nodes.get(e.target)!.y);
    const list = [...pos.nodes.values()];
    let overlaps = 0;
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++) {
        const a = list[i]!;
        const b = list[j]!;
        if (Math.abs(a.x - b.x) < NODE_W && Math.abs(a.y - b.y) < NODE_H) overlaps++;
      }
    expect(overlaps).toBe(0);
    expect(pos.width).toBeGreaterThan(0);
  });

  it('lays out the same shape once', async () => {
    const level = wide(3, 2);
    expect(layout(level)).toBe(layout({ nodes: [...level.nodes], edges: [...level.edges] }));
  });
});
