import { describe, expect, it } from 'vitest';
import type { ApiClient, ListOptions, ObjectList, WatchEvent } from './client';
import { ApiError } from './errors';
import type { KindInfo } from './kinds';
import type { KObject } from './types';
import { applyEvent, byCreation, Connection, ListWatch } from './watch';

const kind: KindInfo = { group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', namespaced: true, verbs: ['list', 'watch'], shortNames: [], hasStatus: true };
const obj = (name: string, rv: string, ts = '2026-01-01T00:00:00Z'): KObject => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: 'default', resourceVersion: rv, creationTimestamp: ts } });

/** a server that answers lists from `items` and plays scripted watch sessions */
class FakeApi {
  items: KObject[] = [];
  rv = '10';
  lists = 0;
  watchParams: Record<string, string>[] = [];
  sessions: ((emit: (e: WatchEvent) => void) => Promise<void>)[] = [];
  list(_k: KindInfo, _ns: string | undefined, _o?: ListOptions): Promise<ObjectList<KObject>> {
    this.lists++;
    return Promise.resolve({ items: this.items, metadata: { resourceVersion: this.rv } });
  }
  async watch(_path: string, params: Record<string, string>, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    this.watchParams.push(params);
    const session = this.sessions.shift();
    if (session) return session(onEvent);
    // no more scripted sessions: stay open until aborted
    await new Promise<void>((r) => signal.addEventListener('abort', () => r()));
  }
}

const settle = (ms = 40) => new Promise((r) => setTimeout(r, ms));

function start(api: FakeApi) {
  const connection = new Connection();
  const w = new ListWatch(api as unknown as ApiClient, kind, 'default', {}, connection, () => {});
  const unsub = w.subscribe(() => {});
  return { w, connection, stop: () => { unsub(); w.stop(); } };
}

describe('applyEvent', () => {
  it('adds, replaces only newer versions, and deletes', () => {
    const m = new Map<string, KObject>();
    expect(applyEvent(m, { type: 'ADDED', object: obj('a', '1') })).toBe(true);
    expect(applyEvent(m, { type: 'MODIFIED', object: obj('a', '1') })).toBe(false);
    expect(applyEvent(m, { type: 'MODIFIED', object: obj('a', '2') })).toBe(true);
    expect(applyEvent(m, { type: 'BOOKMARK', object: obj('', '3') })).toBe(false);
    expect(applyEvent(m, { type: 'DELETED', object: obj('a', '4') })).toBe(true);
    expect(m.size).toBe(0);
  });
  it('orders newest first', () => {
    const l = [obj('old', '1', '2026-01-01T00:00:00Z'), obj('new', '2', '2026-01-02T00:00:00Z')].sort(byCreation);
    expect(l.map((o) => o.metadata?.name)).toEqual(['new', 'old']);
  });
});

describe('ListWatch', () => {
  it('lists, then watches from the list’s resourceVersion and folds events in', async () => {
    const api = new FakeApi();
    api.items = [obj('a', '5')];
    api.sessions.push(async (emit) => {
      emit({ type: 'ADDED', object: obj('b', '11') });
      emit({ type: 'DELETED', object: obj('a', '12') });
      await new Promise(() => {});
    });
    const { w, stop } = start(api);
    await settle();
    expect(api.watchParams[0]?.resourceVersion).toBe('10');
    expect(w.getSnapshot().items.map((o) => o.metadata?.name)).toEqual(['b']);
    expect(w.getSnapshot().loaded).toBe(true);
    stop();
  });

  it('relists when the server says the version is gone (410)', async () => {
    const api = new FakeApi();
    api.items = [obj('a', '5')];
    let expire: () => void = () => {};
    api.sessions.push(async () => {
      await new Promise<void>((r) => (expire = r));
      throw new ApiError(410, 'too old resource version');
    });
    const { w, stop } = start(api);
    await settle();
    expect(w.getSnapshot().items.map((o) => o.metadata?.name)).toEqual(['a']);
    api.items = [obj('c', '20')];
    api.rv = '20';
    expire();
    await settle(100);
    expect(api.lists).toBe(2);
    expect(w.getSnapshot().items.map((o) => o.metadata?.name)).toEqual(['c']);
    expect(api.watchParams.at(-1)?.resourceVersion).toBe('20');
    stop();
  });

  it('reports a lost connection, then relists and clears it when the server is back', async () => {
    const api = new FakeApi();
    api.sessions.push(async () => {
      throw new TypeError('Failed to fetch');
    });
    const { connection, stop } = start(api);
    await settle(20);
    expect(connection.getSnapshot()).toBe(true);
    await settle(700);
    expect(api.lists).toBe(2);
    expect(connection.getSnapshot()).toBe(false);
    stop();
  });

  it('resumes from the last version seen when the server ends a watch', async () => {
    const api = new FakeApi();
    api.sessions.push(async (emit) => {
      emit({ type: 'ADDED', object: obj('x', '15') });
    });
    const { stop } = start(api);
    await settle();
    expect(api.lists).toBe(1);
    expect(api.watchParams[1]?.resourceVersion).toBe('15');
    stop();
  });
});
