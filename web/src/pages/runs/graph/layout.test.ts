import { describe, expect, it } from 'vitest';
import { layout, NODE_H, NODE_W, QUICK_ABOVE } from './layout';
import type { Level } from './static';

// A DAG shaped like a wide pipeline: stages of tasks, each fed by two of the stage before.
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

function checkPlacement(level: Level, pos: Awaited<ReturnType<typeof layout>>) {
  expect(pos.nodes.size).toBe(level.nodes.length);
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
}

describe('layout', () => {
  it('lays out a 200-task level at once: every node, upstream above downstream, no overlaps', async () => {
    const level = wide(20, 10);
    expect(level.nodes.length).toBeGreaterThan(QUICK_ABOVE);
    const t0 = performance.now();
    const pos = await layout(level);
    // measured, not asserted
    console.log(`quick layout, ${level.nodes.length} nodes / ${level.edges.length} edges: ${(performance.now() - t0).toFixed(1)} ms`);
    checkPlacement(level, pos);
  });

  it('lays out a smaller level with ELK, by the same rules', async () => {
    const level = wide(6, 8);
    expect(level.nodes.length).toBeLessThanOrEqual(QUICK_ABOVE);
    const t0 = performance.now();
    const pos = await layout(level);
    console.log(`ELK layered, ${level.nodes.length} nodes / ${level.edges.length} edges: ${(performance.now() - t0).toFixed(0)} ms`);
    checkPlacement(level, pos);
    // ELK's first layout in a fresh process includes its JIT warm-up: seconds on a loaded machine, so
    // no tight limit here (vitest's 5 s default failed under load)
  }, 600_000);

  it('lays out the same shape once', async () => {
    const level = wide(3, 2);
    expect(layout(level)).toBe(layout({ nodes: [...level.nodes], edges: [...level.edges] }));
  });
});
