// A layered layout computed at once, for DAG levels too big to wait for ELK: ELK's first layout of a
// 200-task level takes seconds on a busy machine, during which the user would see no graph at all.
// Tasks go into ranks by their longest path from a source (so every edge points down), ranks are
// ordered by a few barycenter sweeps (fewer crossings), and a rank wider than `perRow` wraps onto
// extra rows so a 500-way fan-out stays a block rather than a line kilometres long.

export interface QuickOptions {
  width: number;
  height: number;
  gapX: number;
  gapY: number;
  perRow: number;
}

export interface QuickResult {
  nodes: Map<string, { x: number; y: number }>;
  width: number;
  height: number;
}

export function quickLayout(ids: readonly string[], edges: readonly { source: string; target: string }[], o: QuickOptions): QuickResult {
  const known = new Set(ids);
  const up = new Map<string, string[]>(ids.map((id) => [id, []]));
  const down = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const e of edges) {
    if (!known.has(e.source) || !known.has(e.target) || e.source === e.target) continue;
    up.get(e.target)!.push(e.source);
    down.get(e.source)!.push(e.target);
  }
  // longest path from a source, in Kahn's order; a node left in a cycle (the spec's validation
  // refuses those) keeps rank 0 rather than vanishing
  const rank = new Map<string, number>(ids.map((id) => [id, 0]));
  const indeg = new Map<string, number>(ids.map((id) => [id, up.get(id)!.length]));
  const queue = ids.filter((id) => indeg.get(id) === 0);
  for (let i = 0; i < queue.length; i++) {
    const n = queue[i]!;
    for (const d of down.get(n)!) {
      rank.set(d, Math.max(rank.get(d)!, rank.get(n)! + 1));
      const left = indeg.get(d)! - 1;
      indeg.set(d, left);
      if (left === 0) queue.push(d);
    }
  }
  const ranks: string[][] = [];
  for (const id of ids) (ranks[rank.get(id)!] ??= []).push(id);
  const layers = ranks.filter((r) => r && r.length);
  const order = new Map<string, number>();
  const renumber = (l: string[]) => l.forEach((id, i) => order.set(id, i));
  layers.forEach(renumber);
  const sweep = (l: string[], by: Map<string, string[]>) => {
    const bc = new Map<string, number>();
    for (const id of l) {
      const ns = by.get(id)!;
      bc.set(id, ns.length ? ns.reduce((s, n) => s + order.get(n)!, 0) / ns.length : order.get(id)!);
    }
    l.sort((a, b) => bc.get(a)! - bc.get(b)! || order.get(a)! - order.get(b)!);
    renumber(l);
  };
  for (let pass = 0; pass < 2; pass++) {
    for (let i = 1; i < layers.length; i++) sweep(layers[i]!, up);
    for (let i = layers.length - 2; i >= 0; i--) sweep(layers[i]!, down);
  }
  const cols = Math.min(o.perRow, Math.max(1, ...layers.map((l) => l.length)));
  const width = cols * o.width + (cols - 1) * o.gapX;
  const nodes = new Map<string, { x: number; y: number }>();
  let y = 0;
  for (const l of layers) {
    for (let start = 0; start < l.length; start += o.perRow) {
      const row = l.slice(start, start + o.perRow);
      const rowWidth = row.length * o.width + (row.length - 1) * o.gapX;
      const x0 = (width - rowWidth) / 2;
      row.forEach((id, i) => nodes.set(id, { x: x0 + i * (o.width + o.gapX), y }));
      y += o.height + o.gapY;
    }
  }
  return { nodes, width, height: Math.max(0, y - o.gapY) };
}
