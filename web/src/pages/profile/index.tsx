// A namespace's Profile as its owner manages it: who owns it, its contributors (KFAM's bindings:
// added with an email and a role, removed with a click) and its resource quota (the Profile's
// kf-resource-quota, used against hard). Anyone may look; only the owner or a cluster admin may
// change contributors, and KFAM's refusal says so otherwise.
import { useCallback, useEffect, useState } from 'react';
import type { FormEvent } from 'react';
import { useApi, useObject } from '../../api/context';
import { messageOf } from '../../api/errors';
import type { Contributor, KfamBinding } from '../../api/session';
import { contributorProblem, contributorsOf } from '../../api/session';
import type { KObject } from '../../api/types';
import { useScope } from '../../app/scope';
import { useSession } from '../../app/session';
import type { PageDef } from '../types';
import './profile.css';

interface ResourceQuota extends KObject {
  status?: { hard?: Record<string, string>; used?: Record<string, string> };
  spec?: { hard?: Record<string, string> };
}

const ROLE_TEXT: Record<Contributor['role'], string> = { owner: 'Owner', edit: 'Edit', view: 'View' };

function ProfilePage({ namespace }: { namespace?: string }) {
  if (!namespace) {
    return (
      <section className="page">
        <h1>Profile</h1>
        <div className="notice">Choose a namespace above to see its Profile and contributors.</div>
      </section>
    );
  }
  return <ProfileOf key={namespace} namespace={namespace} />;
}

function ProfileOf({ namespace }: { namespace: string }) {
  const { api } = useApi();
  const { user } = useSession();
  const scope = useScope();
  const [people, setPeople] = useState<Contributor[]>();
  const [problem, setProblem] = useState<string>();
  const load = useCallback(async () => {
    try {
      const { bindings } = await api.json<{ bindings?: KfamBinding[] }>(`/kfam/v1/bindings?namespace=${encodeURIComponent(namespace)}`);
      setPeople(contributorsOf(bindings ?? [], namespace));
      setProblem(undefined);
    } catch (e) {
      setProblem(messageOf(e));
    }
  }, [api, namespace]);
  useEffect(() => void load(), [load]);
  const owner = people?.find((p) => p.role === 'owner')?.user;
  // KFAM decides; this only hides buttons that would be refused
  const mayChange = scope.all || (owner !== undefined && owner === user.username);
  return (
    <section className="page profile">
      <div className="listhead">
        <div>
          <h1>
            Profile <span className="kindtag">{namespace}</span>
          </h1>
          <div className="muted meta">
            {owner ? (
              <>
                Owned by <b>{owner}</b>
                {owner === user.username ? ' (you)' : ''}
              </>
            ) : people ? (
              'No owner is recorded for this namespace: it may not come from a Profile.'
            ) : (
              'Loading…'
            )}
          </div>
        </div>
      </div>
      {problem ? (
        <div className="notice bad" role="alert">
          {problem}
        </div>
      ) : null}
      <div className="card stack">
        <h2>Contributors</h2>
        <p className="muted small">People who may work in this namespace: <b>Edit</b> may create and change its objects, <b>View</b> may only look.</p>
        <table className="kvtable" aria-label="contributors">
          <thead>
            <tr>
              <th>User</th>
              <th>Role</th>
              <th aria-label="actions" />
            </tr>
          </thead>
          <tbody>
            {(people ?? []).map((p) => (
              <tr key={`${p.user}/${p.role}`} data-user={p.user}>
                <td>{p.user}</td>
                <td>
                  <span className={`badge ${p.role === 'owner' ? 'tone-info' : p.role === 'edit' ? 'tone-run' : 'tone-off'}`}>{ROLE_TEXT[p.role]}</span>
                </td>
                <td className="right">{p.role !== 'owner' && mayChange ? <RemoveButton namespace={namespace} person={p} onDone={load} onError={setProblem} /> : null}</td>
              </tr>
            ))}
            {people && people.length === 0 ? (
              <tr>
                <td colSpan={3} className="muted">
                  Nobody yet.
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
        {mayChange ? <AddContributor namespace={namespace} people={people ?? []} onDone={load} /> : <p className="muted small">Only the namespace&apos;s owner or a cluster admin may add or remove contributors.</p>}
      </div>
      <Quota namespace={namespace} />
    </section>
  );
}

async function kfam(api: ReturnType<typeof useApi>['api'], method: 'POST' | 'DELETE', namespace: string, user: string, role: 'edit' | 'view'): Promise<void> {
  await api.json('/kfam/v1/bindings', {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user: { kind: 'User', name: user }, referredNamespace: namespace, RoleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `kubeflow-${role}` } }),
  });
}

function RemoveButton({ namespace, person, onDone, onError }: { namespace: string; person: Contributor; onDone: () => Promise<void>; onError: (m: string) => void }) {
  const { api } = useApi();
  const [busy, setBusy] = useState(false);
  if (person.role === 'owner') return null;
  const role = person.role;
  return (
    <button
      type="button"
      className="danger"
      disabled={busy}
      aria-label={`Remove ${person.user}`}
      onClick={() => {
        setBusy(true);
        kfam(api, 'DELETE', namespace, person.user, role)
          .then(onDone, (e) => onError(messageOf(e)))
          .finally(() => setBusy(false));
      }}
    >
      Remove
    </button>
  );
}

function AddContributor({ namespace, people, onDone }: { namespace: string; people: Contributor[]; onDone: () => Promise<void> }) {
  const { api } = useApi();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'edit' | 'view'>('view');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string>();
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    const wrong = contributorProblem(email, people);
    if (wrong) return setProblem(wrong);
    setBusy(true);
    setProblem(undefined);
    try {
      await kfam(api, 'POST', namespace, email.trim(), role);
      setEmail('');
      await onDone();
    } catch (err) {
      setProblem(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="addcontrib" onSubmit={(e) => void submit(e)} aria-label="Add a contributor">
      <label>
        <span>Email</span>
        <input type="email" name="email" value={email} onChange={(e) => setEmail(e.target.value)} placeholder="someone@example.com" />
      </label>
      <label>
        <span>Role</span>
        <select name="role" value={role} onChange={(e) => setRole(e.target.value === 'edit' ? 'edit' : 'view')}>
          <option value="view">View</option>
          <option value="edit">Edit</option>
        </select>
      </label>
      <button type="submit" className="primary" disabled={busy}>
        Add contributor
      </button>
      {problem ? (
        <div className="notice bad" role="alert">
          {problem}
        </div>
      ) : null}
    </form>
  );
}

function Quota({ namespace }: { namespace: string }) {
  const q = useObject<ResourceQuota>('resourcequotas', namespace, 'kf-resource-quota');
  const hard = q.object?.status?.hard ?? q.object?.spec?.hard ?? {};
  const used = q.object?.status?.used ?? {};
  const names = Object.keys(hard).sort();
  return (
    <div className="card stack" aria-label="resource quota">
      <h2>Resource quota</h2>
      {q.error ? <div className="notice bad">{q.error.message}</div> : null}
      {!q.loaded ? <p className="muted">Loading…</p> : null}
      {q.loaded && !q.error && !q.object ? <p className="muted">No quota: this namespace&apos;s Profile sets no resourceQuotaSpec, so its use is limited only by the machine.</p> : null}
      {names.length ? (
        <table className="kvtable" aria-label="quota">
          <thead>
            <tr>
              <th>Resource</th>
              <th>Used</th>
              <th>Hard limit</th>
            </tr>
          </thead>
          <tbody>
            {names.map((n) => (
              <tr key={n} data-resource={n}>
                <td className="mono">{n}</td>
                <td>{used[n] ?? '0'}</td>
                <td>{hard[n]}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}

export const pages: PageDef[] = [{ plural: 'profile', title: 'Profile', section: 'Config', order: 1, page: ProfilePage }];
