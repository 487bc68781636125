import { describe, expect, it } from 'vitest';
import { cleanToken, contributorProblem, contributorsOf, namespacesOf, roleOf, storedToken, storeToken, whoAmI, wsProtocols } from './session';

class MemoryStorage {
  private m = new Map<string, string>();
  get length(): number {
    return this.m.size;
  }
  clear(): void {
    this.m.clear();
  }
  getItem(k: string): string | null {
    return this.m.get(k) ?? null;
  }
  key(i: number): string | null {
    return [...this.m.keys()][i] ?? null;
  }
  removeItem(k: string): void {
    this.m.delete(k);
  }
  setItem(k: string, v: string): void {
    this.m.set(k, v);
  }
}

const binding = (user: string, ns: string, role: string) => ({ user: { kind: 'User', name: user }, referredNamespace: ns, RoleRef: { kind: 'ClusterRole', name: role } });

describe('session', () => {
  it('keeps the token in the storage it is given, and forgets it on sign-out', () => {
    const s = new MemoryStorage();
    expect(storedToken(s)).toBeUndefined();
    storeToken('alice-token', s);
    expect(storedToken(s)).toBe('alice-token');
    storeToken(undefined, s);
    expect(storedToken(s)).toBeUndefined();
  });

  it('takes a pasted token with or without `Bearer `', () => {
    expect(cleanToken('  Bearer abc.def \n')).toBe('abc.def');
    expect(cleanToken('abc')).toBe('abc');
  });

  it('puts the token in a WebSocket protocol as kube reads it: base64url, no padding', () => {
    const [mux, tok] = wsProtocols('alice-token?') ?? [];
    expect(mux).toBe('skiff.streams.v1');
    expect(tok).toBe(`base64url.bearer.authorization.k8s.io.${Buffer.from('alice-token?').toString('base64url')}`);
    expect(tok).not.toMatch(/[=+/]/);
    expect(wsProtocols(undefined)).toBeUndefined();
  });

  it('asks the server who the token is; 401 means signed out', async () => {
    const answer = (status: number, body: unknown) => (async () => new Response(JSON.stringify(body), { status })) as typeof fetch;
    expect(await whoAmI('t', answer(201, { status: { userInfo: { username: 'alice@example.com', groups: ['system:authenticated'] } } }))).toEqual({ user: { username: 'alice@example.com', groups: ['system:authenticated'] } });
    expect(await whoAmI('bad', answer(401, { kind: 'Status', message: 'Unauthorized' }))).toEqual({ unauthorized: true, message: 'Unauthorized' });
    expect(await whoAmI(undefined, answer(404, {}))).toEqual({ user: { username: '', groups: [] } });
  });

  it('lists a user\'s namespaces and a namespace\'s people from KFAM\'s bindings', () => {
    const bs = [binding('alice@example.com', 'team-a', 'admin'), binding('carol@example.com', 'team-a', 'kubeflow-view'), binding('alice@example.com', 'team-c', 'edit'), binding('bob@example.com', 'team-b', 'admin')];
    expect(namespacesOf(bs, 'alice@example.com')).toEqual(['team-a', 'team-c']);
    expect(roleOf(bs[1] ?? {})).toBe('view');
    expect(contributorsOf(bs, 'team-a')).toEqual([{ user: 'alice@example.com', role: 'owner' }, { user: 'carol@example.com', role: 'view' }]);
    expect(contributorProblem(' ', [])).toMatch(/email/);
    expect(contributorProblem('alice@example.com', contributorsOf(bs, 'team-a'))).toMatch(/owns/);
    expect(contributorProblem('dan@example.com', [])).toBeUndefined();
  });
});
