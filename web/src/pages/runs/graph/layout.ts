// Node positions for one DAG level, by ELK's layered algorithm (top to bottom, as KFP users read a
// pipeline). Sizes are fixed, so a layout depends only on the graph's shape and is cached by it.
import { elk } from './elk';
import { quickLayout } from './quick-layout';
import type { Level } from './static';

export const NODE_W = 220;
export const NODE_H = 52;

export interface Positions {
  nodes: Map<string, { x: number; y: number }>;
  width: number;
  height: number;
}

/** above this many tasks a level is laid out at once by quickLayout, not by ELK (seconds, then) */
export const QUICK_ABOVE = 50;

const cache = new Map<string, Promise<Positions>>();

function shapeKey(level: Level): string {
  return level.nodes.map((n) => n.id).join('|') + '#' + level.edges.map((e) => `${e.source}>${e.target}`).join('|');
}

export function layout(level: Level): Promise<Positions> {
  const key = shapeKey(level);
  let p = cache.get(key);
  if (!p) {
    p = run(level);
    cache.set(key, p);
    if (cache.size > 50) cache.delete(cache.keys().next().value as string);
  }
  return p;
}

async function run(level: Level): Promise<Positions> {
  if (level.nodes.length > QUICK_ABOVE) {
    return quickLayout(
      level.nodes.map((n) => n.id),
      level.edges,
      { width: NODE_W, height: NODE_H, gapX: 40, gapY: 56, perRow: 12 },
    );
  }
  const ids = new Set(level.nodes.map((n) => n.id));
  const g = await (await elk()).layout({
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'DOWN',
      'elk.spacing.nodeNode': '40',
      'elk.layered.spacing.nodeNodeBetweenLayers': '56',
      'elk.layered.nodePlacement.strategy': 'BRANDES_KOEPF',
      'elk.separateConnectedComponents': 'true',
      'elk.spacing.componentComponent': '48',
      // unconnected tasks sit side by side rather than in one tall column
      'elk.layered.compaction.connectedComponents': 'true',
      'elk.aspectRatio': '3',
    },
    children: level.nodes.map((n) => ({ id: n.id, width: NODE_W, height: NODE_H })),
    edges: level.edges.filter((e) => ids.has(e.source) && ids.has(e.target)).map((e) => ({ id: e.id, sources: [e.source], targets: [e.target] })),
  });
  const nodes = new Map<string, { x: number; y: number }>();
  for (const c of g.children ?? []) nodes.set(c.id, { x: c.x ?? 0, y: c.y ?? 0 });
  const box = g as { width?: number; height?: number };
  return { nodes, width: box.width ?? 0, height: box.height ?? 0 };
}
