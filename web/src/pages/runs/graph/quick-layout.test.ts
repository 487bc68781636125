import { describe, expect, it } from 'vitest';
import { quickLayout } from './quick-layout';

const O = { width: 100, height: 40, gapX: 20, gapY: 30, perRow: 4 };
const E = (pairs: string[]) => pairs.map((p) => ({ source: p.split('>')[0]!, target: p.split('>')[1]! }));
const rowOf = (r: ReturnType<typeof quickLayout>, id: string) => r.nodes.get(id)!.y / (O.height + O.gapY);

describe('quickLayout', () => {
  it('ranks a task by its longest path from a source', () => {
    // a→b→c→d and a shortcut a→d: d goes below c, not beside b
    const r = quickLayout(['a', 'b', 'c', 'd'], E(['a>b', 'b>c', 'c>d', 'a>d']), O);
    expect(['a', 'b', 'c', 'd'].map((id) => rowOf(r, id))).toEqual([0, 1, 2, 3]);
    expect(r.height).toBe(4 * 40 + 3 * 30);
  });

  it('wraps a wide rank onto extra rows, and the next rank starts below them', () => {
    const fan = Array.from({ length: 10 }, (_, i) => `f${i}`);
    const r = quickLayout(['src', ...fan, 'sink'], E([...fan.map((f) => `src>${f}`), ...fan.map((f) => `${f}>sink`)]), O);
    expect(fan.map((f) => rowOf(r, f))).toEqual([1, 1, 1, 1, 2, 2, 2, 2, 3, 3]);
    expect(rowOf(r, 'sink')).toBe(4);
    expect(r.width).toBe(4 * 100 + 3 * 20);
  });

  it('orders a rank by its parents to undo crossings', () => {
    // parents a, b in that order; children listed crossed (y under b, x under a)
    const r = quickLayout(['a', 'b', 'y', 'x'], E(['a>x', 'b>y']), O);
    expect(r.nodes.get('x')!.x).toBeLessThan(r.nodes.get('y')!.x);
  });

  it('keeps nodes of a cycle and ignores edges to unknown nodes', () => {
    const r = quickLayout(['a', 'b', 'c'], E(['a>b', 'b>a', 'c>zz']), O);
    expect([...r.nodes.keys()].sort()).toEqual(['a', 'b', 'c']);
  });
});
