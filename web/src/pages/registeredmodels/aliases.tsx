// A model's aliases (`production`, `staging`, any name) on its versions: badges, a control to set or
// move one, removal, and the history of who moved which alias from which version to which, when.
import { useState } from 'react';
import { messageOf } from '../../api/errors';
import type { AliasState } from './hooks';
import { useCan, useRegistryCall } from './hooks';
import { idOf, moveText, str, type RegistryObject } from './model';
import { REGISTRY_GROUP, When } from './parts';

export function AliasBadges({ names }: { names: string[] | undefined }) {
  if (!names?.length) return null;
  return (
    <span className="mr-aliases">
      {names.map((n) => (
        <span key={n} className="chip mr-alias" title={`alias ${n}`}>
          @{n}
        </span>
      ))}
    </span>
  );
}

/** set (or move) an alias onto a version, remove one; the API's 400 says what is wrong with a name */
function AliasControl({ namespace, modelId, versions, state, initialVersion }: { namespace: string; modelId: string; versions: RegistryObject[]; state: AliasState; initialVersion?: string }) {
  const call = useRegistryCall(namespace);
  const live = versions.filter((v) => v.spec.state !== 'ARCHIVED');
  const [alias, setAlias] = useState('');
  const [version, setVersion] = useState(initialVersion ?? (live[0] ? idOf(live[0]) : ''));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const set = async (): Promise<void> => {
    setBusy(true);
    setError(undefined);
    try {
      await call('PUT', `/registered_models/${encodeURIComponent(modelId)}/aliases/${encodeURIComponent(alias.trim())}`, { modelVersionId: version });
      setAlias('');
      state.reload();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      className="toolbar mr-setalias"
      aria-label="Set an alias"
      onSubmit={(e) => {
        e.preventDefault();
        void set();
      }}
    >
      <label>
        Alias <input value={alias} onChange={(e) => setAlias(e.target.value)} placeholder="production" list="mr-alias-names" spellCheck={false} required aria-label="Alias name" />
      </label>
      <datalist id="mr-alias-names">
        {[...new Set(['production', 'staging', ...state.aliases.map((a) => a.name)])].map((n) => (
          <option key={n} value={n} />
        ))}
      </datalist>
      <label>
        on{' '}
        <select value={version} onChange={(e) => setVersion(e.target.value)} aria-label="Version for the alias">
          {live.map((v) => (
            <option key={idOf(v)} value={idOf(v)}>
              {str(v, 'name') ?? idOf(v)}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" className="primary" disabled={busy || !alias.trim() || !version}>
        Set alias
      </button>
      {error ? (
        <span className="tone-bad-text small" role="alert">
          {error}
        </span>
      ) : null}
    </form>
  );
}

export function AliasesPanel({ namespace, modelId, versions, state, versionName }: { namespace: string; modelId: string; versions: RegistryObject[]; state: AliasState; versionName: (id: string) => string }) {
  const call = useRegistryCall(namespace);
  const can = useCan('update', REGISTRY_GROUP, 'registeredmodels', namespace);
  const [error, setError] = useState<string>();
  const remove = async (name: string): Promise<void> => {
    if (!window.confirm(`Remove alias ${name}? A model-registry://…@${name} URI then names nothing.`)) return;
    setError(undefined);
    try {
      await call('DELETE', `/registered_models/${encodeURIComponent(modelId)}/aliases/${encodeURIComponent(name)}`);
      state.reload();
    } catch (e) {
      setError(messageOf(e));
    }
  };
  return (
    <section className="psec mr-aliaspanel" aria-label="Aliases">
      <h3>Aliases</h3>
      {!state.loaded ? <p className="muted">Loading…</p> : null}
      {state.error ? <div className="notice bad">{state.error}</div> : null}
      {state.loaded && !state.error && state.aliases.length === 0 ? <p className="muted">No aliases{state.unsupported ? ': this server keeps none' : ''}.</p> : null}
      {state.aliases.length ? (
        <table className="plain" aria-label="Current aliases">
          <thead>
            <tr>
              <th>Alias</th>
              <th>Version</th>
              <th>Moved by</th>
              <th>Since</th>
              {can === true ? <th /> : null}
            </tr>
          </thead>
          <tbody>
            {state.aliases.map((a) => (
              <tr key={a.name}>
                <td>
                  <span className="chip mr-alias">@{a.name}</span>
                </td>
                <td>{versionName(a.modelVersionId)}</td>
                <td>{a.movedBy ?? <span className="muted">—</span>}</td>
                <td>
                  <When ms={a.lastUpdateTimeSinceEpoch ?? a.createTimeSinceEpoch} />
                </td>
                {can === true ? (
                  <td>
                    <button type="button" className="linkish" onClick={() => void remove(a.name)} aria-label={`Remove alias ${a.name}`}>
                      Remove
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {error ? (
        <div className="notice bad" role="alert">
          {error}
        </div>
      ) : null}
      {can === true && state.loaded && !state.unsupported ? <AliasControl namespace={namespace} modelId={modelId} versions={versions} state={state} /> : null}
      {state.history.length ? (
        <>
          <h4>History</h4>
          <table className="plain" aria-label="Alias history">
            <thead>
              <tr>
                <th>When</th>
                <th>Alias</th>
                <th>Change</th>
                <th>By</th>
              </tr>
            </thead>
            <tbody>
              {state.history.map((m) => (
                <tr key={m.id}>
                  <td>
                    <When ms={m.createTimeSinceEpoch} />
                  </td>
                  <td>
                    <span className="chip mr-alias">@{m.name}</span>
                  </td>
                  <td>{moveText(m, versionName)}</td>
                  <td>{m.movedBy ?? <span className="muted">—</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </section>
  );
}
