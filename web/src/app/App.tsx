// The dashboard's frame: top bar (namespace, theme), navigation, the connection banner, and the page
// the URL names.
import { useEffect, useMemo, useState } from 'react';
import { HttpClient } from '../api/client';
import { ApiProvider, useApi, useConnectionLost, useList } from '../api/context';
import { messageOf } from '../api/errors';
import type { KObject } from '../api/types';
import { GenericDetail, GenericList } from '../pages/generic';
import { Home } from '../pages/home';
import { AllKinds } from '../pages/kinds';
import { allPages, pageFor } from '../pages/registry';
import type { NavSection } from '../pages/types';
import { Link, NavProvider, useNav, useRoute } from './nav';
import { href, legacyTarget, objectHref } from './router';
import { ScopeProvider, useScope } from './scope';
import { SessionGate, useSession } from './session';
import { ThemeToggle } from './theme';

const CLUSTER_PAGES = allPages.filter((p) => p.cluster && p.page).map((p) => p.plural);

const SECTIONS: NavSection[] = ['Workloads', 'Pipelines', 'Training', 'Tuning', 'Serving', 'Notebooks', 'Queues', 'Cluster', 'Config'];

export function App() {
  return (
    <SessionGate>
      <SignedIn />
    </SessionGate>
  );
}

function SignedIn() {
  const { token, expired } = useSession();
  // a new user is a new client: nothing cached or streaming is carried over from the one before
  const api = useMemo(() => HttpClient.forPage({ ...(token ? { token } : {}), onUnauthorized: expired }), [token, expired]);
  useEffect(() => () => api.close(), [api]);
  return (
    <ApiProvider
      api={api}
      fallback={(error) => (
        <div className="boot">
          <h1>Skiff</h1>
          <p className="muted">{error ? `Cannot reach the server: ${error}. Retrying…` : 'Connecting…'}</p>
        </div>
      )}
    >
      <ScopeProvider>
        <NavProvider clusterPages={CLUSTER_PAGES}>
          <Shell />
        </NavProvider>
      </ScopeProvider>
    </ApiProvider>
  );
}

function Shell() {
  const lost = useConnectionLost();
  const [navOpen, setNavOpen] = useState(true);
  return (
    <div className={`shell ${navOpen ? '' : 'nav-closed'}`}>
      <TopBar onToggleNav={() => setNavOpen((v) => !v)} />
      {lost && (
        <div className="banner" role="alert">
          Lost the connection to the server. Live views resume when it is back.
        </div>
      )}
      <SideNav />
      <main id="main" tabIndex={-1}>
        <ScopeRedirect />
        <LegacyRedirect />
        <Content />
      </main>
    </div>
  );
}

function TopBar({ onToggleNav }: { onToggleNav: () => void }) {
  const route = useRoute();
  return (
    <header className="topbar">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <button type="button" className="iconbtn" aria-label="Toggle navigation" onClick={onToggleNav}>
        ☰
      </button>
      <Link to={href({ namespace: route.namespace })} className="brand">
        <Logo /> Skiff
      </Link>
      <NamespaceSwitcher />
      <span className="spacer" />
      <UserMenu />
      <ThemeToggle />
    </header>
  );
}

function UserMenu() {
  const { user, token, signOut } = useSession();
  if (!user.username && !token) return null;
  return (
    <span className="usermenu">
      {user.username ? (
        <span className="whoami" title={user.groups.length ? `groups: ${user.groups.join(', ')}` : undefined}>
          {user.username}
        </span>
      ) : null}
      {/* behind a trusted proxy there is no token here to forget: the proxy signs out */}
      {token ? (
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      ) : null}
    </span>
  );
}

/** a user who may not list every namespace lands in their own, not on a page of 403s */
function ScopeRedirect() {
  const scope = useScope();
  const { route, navigate } = useNav();
  const first = scope.namespaces[0];
  // a KFP-style link (`#/runs/details/<id>`) is LegacyRedirect's to resolve: its hash must stay
  const needs = scope.loaded && !scope.all && !route.cluster && route.namespace === undefined && !route.name && !legacyTarget(window.location.hash);
  useEffect(() => {
    if (needs && first) navigate(href({ namespace: first, plural: route.plural }), { replace: true });
  }, [needs, first, route.plural, navigate]);
  if (needs && !first) {
    return (
      <div className="notice" role="status">
        You have no namespace yet: ask an administrator for a Profile, or a namespace&apos;s owner to add you as a contributor.
      </div>
    );
  }
  return null;
}

function Logo() {
  return (
    <svg width="20" height="20" viewBox="0 0 16 16" aria-hidden="true">
      <path d="M1 10h14l-3 4H4z" fill="currentColor" />
      <path d="M8 1v8H3z" fill="var(--accent)" />
    </svg>
  );
}

function NamespaceSwitcher() {
  const { route, navigate } = useNav();
  const scope = useScope();
  // only whoever may list namespaces watches them; everyone else has theirs from the scope
  const list = useList<KObject>('namespaces', undefined, { enabled: scope.loaded && scope.all });
  const names = scope.all ? list.items.map((n) => n.metadata?.name ?? '').sort() : scope.namespaces;
  const current = route.cluster ? '' : route.namespace ?? '';
  return (
    <label className="nsswitch">
      <span className="muted">Namespace</span>
      <select
        aria-label="Namespace"
        value={current}
        onChange={(e) => {
          const ns = e.target.value || undefined;
          // stay on the same kind of list; an object page does not exist in another namespace
          navigate(href({ namespace: ns, plural: route.cluster ? undefined : route.plural }));
        }}
      >
        {scope.all || !current ? <option value="">{scope.all ? 'All namespaces' : 'Choose a namespace'}</option> : null}
        {names.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
        {current && !names.includes(current) ? <option value={current}>{current}</option> : null}
      </select>
    </label>
  );
}

function SideNav() {
  const route = useRoute();
  const { kinds } = useApi();
  const ns = route.namespace;
  return (
    <nav className="sidenav" aria-label="Pages">
      {SECTIONS.map((section) => {
        const items = allPages.filter((p) => p.section === section && (p.page || kinds.plural(p.plural)));
        if (!items.length) return null;
        return (
          <div key={section} className="navsection">
            <div className="navtitle">{section}</div>
            {items.map((p) => {
              const clusterScoped = p.cluster || kinds.isClusterScoped(p.plural);
              const to = clusterScoped ? href({ cluster: true, plural: p.plural }) : href({ namespace: ns, plural: p.plural });
              const active = route.plural === p.plural || (p.plural === 'overview' && !route.plural) || (route.plural !== undefined && !!p.navFor?.includes(route.plural));
              return (
                <Link key={p.plural} to={to} className={active ? 'active' : ''} aria-current={active ? 'page' : undefined}>
                  {p.title}
                </Link>
              );
            })}
          </div>
        );
      })}
      <div className="navsection">
        <div className="navtitle">More</div>
        <Link to={href({ namespace: ns, plural: 'kinds' })} className={route.plural === 'kinds' ? 'active' : ''}>
          All kinds
        </Link>
      </div>
    </nav>
  );
}

function Content() {
  const route = useRoute();
  const { kinds } = useApi();
  const { plural, name, namespace } = route;
  if (!plural && route.cluster) {
    // /ui/cluster (the breadcrumb of a node) is the cluster's overview when there is one
    const Overview = pageFor('cluster-overview')?.page;
    if (Overview) return <Overview />;
  }
  if (!plural || plural === 'overview') return <Home namespace={namespace} />;
  if (plural === 'kinds') return <AllKinds namespace={namespace} />;
  const def = pageFor(plural);
  if (def?.page) {
    const Page = def.page;
    return <Page namespace={namespace} />;
  }
  const kind = kinds.plural(plural);
  if (!kind) {
    return (
      <section className="page">
        <div className="notice bad">
          This server serves no kind called <b>{plural}</b>. <Link to={href({ namespace, plural: 'kinds' })}>See every kind</Link>
        </div>
      </section>
    );
  }
  if (name) {
    const Detail = def?.detail ?? GenericDetail;
    return <Detail key={`${namespace}/${plural}/${name}`} kind={kind} namespace={kind.namespaced ? namespace : undefined} name={name} rest={route.rest} />;
  }
  const List = def?.list ?? GenericList;
  return <List key={`${namespace}/${plural}`} kind={kind} namespace={kind.namespaced ? namespace : undefined} />;
}

/** `/#/runs/details/<id>` (the links kfp.Client prints) → the object's page */
function LegacyRedirect() {
  const { api, kinds } = useApi();
  const { navigate } = useNav();
  const scope = useScope();
  const [problem, setProblem] = useState<string>();
  useEffect(() => {
    const target = legacyTarget(window.location.hash);
    if (!target || !scope.loaded) return;
    const kind = kinds.plural(target.plural);
    if (!kind) return setProblem(`This server serves no ${target.plural}.`);
    // the id is unique across namespaces; a user who may not list them all (tenancy on) finds it in
    // one of their own, as KFP's UI finds a run through its namespace's authorization
    const opts = { fieldSelector: `metadata.name=${target.id}` };
    const lists = scope.all ? [api.list(kind, undefined, opts)] : scope.namespaces.map((ns) => api.list(kind, ns, opts));
    void Promise.allSettled(lists).then((results) => {
      const o = results.flatMap((r) => (r.status === 'fulfilled' ? r.value.items : []))[0];
      if (o) return navigate(objectHref(kind.plural, o.metadata?.namespace, o.metadata?.name ?? target.id), { replace: true });
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      setProblem(failed && results.length === 1 ? messageOf(failed.reason) : `No ${kind.kind} with the id ${target.id}.`);
    });
  }, [api, kinds, navigate, scope]);
  return problem ? <div className="notice bad">{problem}</div> : null;
}
