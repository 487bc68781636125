// Signing in and out. With tenancy on, the server answers 401 until the dashboard shows who it is:
// the gate asks the server who this tab is (SelfSubjectReview) and shows the sign-in page until a
// token it accepts is given. Single-user servers and users behind a trusted proxy are answered at
// once and never see it.
import { createContext, useCallback, useContext, useEffect, useState } from 'react';
import type { FormEvent, ReactNode } from 'react';
import { messageOf } from '../api/errors';
import type { UserInfo } from '../api/session';
import { cleanToken, shareWithNotebooks, storedToken, storeToken, whoAmI } from '../api/session';
import { ThemeToggle } from './theme';

export interface Session {
  /** '' when the server did not say (it serves no SelfSubjectReview, or could not be reached yet) */
  user: UserInfo;
  /** the token this tab signed in with; none behind a trusted proxy or on a single-user server */
  token?: string;
  signOut: () => void;
  /** the server refused the token (401) while the dashboard was open */
  expired: () => void;
}

type State = { phase: 'checking' } | { phase: 'out'; notice?: string } | { phase: 'in'; user: UserInfo; token?: string };

const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionGate');
  return s;
}

export function SessionGate({ children }: { children: ReactNode }) {
  const [state, setState] = useState<State>({ phase: 'checking' });
  useEffect(() => {
    let stop = false;
    const token = storedToken();
    whoAmI(token).then(
      (r) => {
        if (stop) return;
        if ('user' in r) {
          // a browser restarted since: its session cookie went with it, this tab's token did not
          if (token) void shareWithNotebooks(token);
          return setState({ phase: 'in', user: r.user, ...(token ? { token } : {}) });
        }
        storeToken(undefined);
        setState({ phase: 'out', ...(token ? { notice: 'The server no longer accepts the token this tab signed in with. Sign in again.' } : {}) });
      },
      // unreachable for now: the dashboard says so and retries, and a 401 then brings the sign-in page
      () => !stop && setState({ phase: 'in', user: { username: '', groups: [] }, ...(token ? { token } : {}) }),
    );
    return () => {
      stop = true;
    };
  }, []);
  const signOut = useCallback(() => {
    storeToken(undefined);
    void shareWithNotebooks(undefined);
    setState({ phase: 'out', notice: 'You are signed out.' });
  }, []);
  const expired = useCallback(() => {
    storeToken(undefined);
    void shareWithNotebooks(undefined);
    setState({ phase: 'out', notice: 'The server refused your token (401): it was removed or has expired. Sign in again.' });
  }, []);
  if (state.phase === 'checking') {
    return (
      <div className="boot">
        <h1>Skiff</h1>
        <p className="muted">Connecting…</p>
      </div>
    );
  }
  if (state.phase === 'out') {
    return (
      <SignIn
        notice={state.notice}
        onSignedIn={(user, token) => {
          storeToken(token);
          void shareWithNotebooks(token);
          setState({ phase: 'in', user, token });
        }}
      />
    );
  }
  const session: Session = { user: state.user, ...(state.token ? { token: state.token } : {}), signOut, expired };
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

function SignIn({ notice, onSignedIn }: { notice?: string; onSignedIn: (user: UserInfo, token: string) => void }) {
  const [input, setInput] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string>();
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    const token = cleanToken(input);
    if (!token) return setProblem('Paste your token first.');
    setBusy(true);
    setProblem(undefined);
    try {
      const r = await whoAmI(token);
      if ('user' in r) return onSignedIn(r.user, token);
      setProblem(`The server did not accept this token (401 ${r.message}). Check that you copied all of it.`);
    } catch (err) {
      setProblem(`Cannot reach the server: ${messageOf(err)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="signin-page">
      <div className="signin-theme">
        <ThemeToggle />
      </div>
      <main className="signin card" aria-labelledby="signin-title">
        <h1 id="signin-title">
          <svg width="22" height="22" viewBox="0 0 16 16" aria-hidden="true">
            <path d="M1 10h14l-3 4H4z" fill="currentColor" />
            <path d="M8 1v8H3z" fill="var(--accent)" />
          </svg>{' '}
          Sign in to Skiff
        </h1>
        <p>This Skiff is shared by several users: sign in with the access token your administrator gave you (a line of the server&apos;s token file, or an ID token from your organisation&apos;s sign-in).</p>
        {notice ? (
          <div className="notice" role="status">
            {notice}
          </div>
        ) : null}
        <form onSubmit={(e) => void submit(e)} className="stack">
          <label className="stack signin-field">
            <span>Access token</span>
            <input type="password" name="token" autoComplete="off" spellCheck={false} value={input} onChange={(e) => setInput(e.target.value)} autoFocus placeholder="Paste your token" />
          </label>
          {problem ? (
            <div className="notice bad" role="alert">
              {problem}
            </div>
          ) : null}
          <div className="actions">
            <button type="submit" className="primary" disabled={busy}>
              {busy ? 'Signing in…' : 'Sign in'}
            </button>
          </div>
        </form>
        <p className="muted small">
          The token stays in this browser tab only (its session storage) and is forgotten when you sign out or close the browser. kubectl users: it is the <code>token</code> of your kubeconfig&apos;s user.
        </p>
      </main>
    </div>
  );
}
