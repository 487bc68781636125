import { describe, expect, it } from 'vitest';
import { href, legacyTarget, parseRoute } from './router';

const cluster = (p: string) => p === 'nodes' || p === 'namespaces';

describe('parseRoute', () => {
  it('reads namespace, plural, name and what follows', () => {
    const r = parseRoute('/ui/default/runs/my-run/tasks/train', '?tab=logs');
    expect(r).toMatchObject({ namespace: 'default', plural: 'runs', name: 'my-run', rest: ['tasks', 'train'] });
    expect(r.query.get('tab')).toBe('logs');
  });
  it('treats /ui/all as every namespace and /ui/cluster as cluster scope for cluster kinds only', () => {
    expect(parseRoute('/ui/all/pods', '', cluster)).toMatchObject({ namespace: undefined, plural: 'pods' });
    expect(parseRoute('/ui/cluster/nodes/n1', '', cluster)).toMatchObject({ cluster: true, plural: 'nodes', name: 'n1' });
    // a namespace that happens to be called "cluster" still works for namespaced kinds
    expect(parseRoute('/ui/cluster/jobs/pi', '', cluster)).toMatchObject({ namespace: 'cluster', plural: 'jobs', name: 'pi' });
  });
  it('is empty at the root and tolerates slashes and escapes', () => {
    const root = parseRoute('/ui/');
    expect([root.namespace, root.plural, root.rest]).toEqual([undefined, undefined, []]);
    expect(parseRoute('/ui//team-a/jobs/')).toMatchObject({ namespace: 'team-a', plural: 'jobs', name: undefined });
    expect(parseRoute('/ui/default/runs/a%20b').name).toBe('a b');
  });
});

describe('href', () => {
  it('round-trips through parseRoute', () => {
    const h = href({ namespace: 'default', plural: 'pytorchjobs', name: 'ddp', query: { tab: 'yaml', x: undefined } });
    expect(h).toBe('/ui/default/pytorchjobs/ddp?tab=yaml');
    const [p, q] = h.split('?');
    expect(parseRoute(p!, q)).toMatchObject({ namespace: 'default', plural: 'pytorchjobs', name: 'ddp' });
    expect(href({ plural: 'runs' })).toBe('/ui/all/runs');
    expect(href({ cluster: true, plural: 'nodes', name: 'n' })).toBe('/ui/cluster/nodes/n');
  });
});

describe('legacyTarget', () => {
  it('maps the KFP UI fragments kfp.Client prints', () => {
    expect(legacyTarget('#/runs/details/abc-123')).toEqual({ plural: 'runs', id: 'abc-123' });
    expect(legacyTarget('#/experiments/details/e1')).toEqual({ plural: 'experiments', id: 'e1' });
    expect(legacyTarget('#/recurringrun/details/r1')).toEqual({ plural: 'recurringruns', id: 'r1' });
    expect(legacyTarget('#/pipelines')).toBeUndefined();
    expect(legacyTarget('')).toBeUndefined();
  });
});
