// The frame of every object's page: a header (kind, name, state, age, actions), the kind's own tabs,
// then the tabs every object has (conditions, owned objects, Events, YAML). A deleted object says so.
import type { ReactNode } from 'react';
import { useApi, useList, useObject } from '../api/context';
import type { KindInfo } from '../api/kinds';
import { urlName } from '../api/kinds';
import type { Condition, KObject } from '../api/types';
import { Link } from '../app/nav';
import { href, objectHref } from '../app/router';
import { Age } from './Age';
import { Conditions } from './Conditions';
import { DataTable } from './DataTable';
import { Events } from './Events';
import { StatusBadge, summaryState } from './Status';
import type { Tab } from './Tabs';
import { Tabs } from './Tabs';
import { YamlEditor } from './YamlEditor';

export interface ObjectPageProps<T extends KObject> {
  kind: KindInfo;
  namespace?: string;
  name: string;
  /** the kind's own tabs, first; the generic ones follow */
  tabs?: (obj: T) => Tab[];
  /** under the title: what matters most at a glance */
  summary?: (obj: T) => ReactNode;
  actions?: (obj: T) => ReactNode;
  state?: (obj: T) => string | undefined;
  /** a display name to show instead of the object's name (KFP ids are UUIDs) */
  title?: (obj: T) => string | undefined;
}

export function ObjectPage<T extends KObject>(props: ObjectPageProps<T>) {
  const { kind, namespace, name } = props;
  const plural = urlName(kind, useApi().kinds);
  const live = useObject<T>(plural, namespace, name);
  const obj = live.object;
  const listHref = kind.namespaced ? href({ namespace, plural }) : href({ cluster: true, plural });
  if (!obj) {
    return (
      <section className="page">
        <Breadcrumb kind={kind} namespace={namespace} name={name} />
        {live.deleted ? (
          <div className="notice bad" role="status">
            {kind.kind} <b>{name}</b> was deleted. <Link to={listHref}>Back to {kind.plural}</Link>
          </div>
        ) : live.error ? (
          <div className="notice bad">{live.error.message}</div>
        ) : live.loaded ? (
          <div className="notice">
            No {kind.kind} named <b>{name}</b>
            {namespace ? ` in namespace ${namespace}` : ''}. <Link to={listHref}>See the {kind.plural}</Link>
          </div>
        ) : (
          <p className="muted">Loading…</p>
        )}
      </section>
    );
  }
  const conds = ((obj.status as { conditions?: Condition[] } | undefined)?.conditions ?? []) as Condition[];
  const state = props.state ? props.state(obj) : summaryState(obj);
  const tabs: Tab[] = [
    ...(props.tabs?.(obj) ?? []),
    ...(props.tabs ? [] : [{ id: 'overview', label: 'Overview', render: () => <Overview obj={obj} /> }]),
    ...(conds.length && props.tabs ? [{ id: 'conditions', label: 'Conditions', render: () => <Conditions conditions={conds} /> }] : []),
    { id: 'owned', label: 'Owned', render: () => <Owned owner={obj} /> },
    { id: 'events', label: 'Events', render: () => <Events namespace={obj.metadata?.namespace} kind={obj.kind} name={obj.metadata?.name} /> },
    { id: 'yaml', label: 'YAML', render: () => <YamlEditor kind={kind} object={obj} /> },
  ];
  return (
    <section className="page">
      <Breadcrumb kind={kind} namespace={namespace} name={name} />
      <header className="objhead">
        <div>
          <h1>
            <span className="kindtag">{kind.kind}</span> {props.title?.(obj) || name} <StatusBadge state={state} />
          </h1>
          <div className="muted meta">
            {obj.metadata?.namespace ? <>namespace {obj.metadata.namespace} · </> : null}
            {props.title?.(obj) && props.title(obj) !== name ? <>id {name} · </> : null}
            created <Age ts={obj.metadata?.creationTimestamp} /> ago
            {obj.metadata?.deletionTimestamp ? <> · deleting</> : null}
          </div>
        </div>
        <div className="actions">
          {props.actions?.(obj)}
          <DeleteButton kind={kind} obj={obj} />
        </div>
      </header>
      {props.summary?.(obj)}
      <Tabs tabs={tabs} />
    </section>
  );
}

export function Breadcrumb({ kind, namespace, name }: { kind: KindInfo; namespace?: string; name?: string }) {
  const plural = urlName(kind, useApi().kinds);
  return (
    <nav className="crumbs" aria-label="breadcrumb">
      {kind.namespaced ? <Link to={href({ namespace })}>{namespace ?? 'all namespaces'}</Link> : <Link to={href({ cluster: true })}>cluster</Link>}
      <span>/</span>
      <Link to={kind.namespaced ? href({ namespace, plural }) : href({ cluster: true, plural })}>{kind.plural}</Link>
      {name ? (
        <>
          <span>/</span>
          <span aria-current="page">{name}</span>
        </>
      ) : null}
    </nav>
  );
}

function DeleteButton({ kind, obj }: { kind: KindInfo; obj: KObject }) {
  const { api } = useApi();
  if (!kind.verbs.includes('delete')) return null;
  return (
    <button
      type="button"
      className="danger"
      onClick={() => {
        if (window.confirm(`Delete ${kind.kind} ${obj.metadata?.name}?`)) void api.remove(kind, obj.metadata?.namespace, obj.metadata?.name ?? '').catch((e: Error) => window.alert(e.message));
      }}
    >
      Delete
    </button>
  );
}

function KeyValues({ values }: { values: Record<string, string> | undefined }) {
  const entries = Object.entries(values ?? {});
  if (!entries.length) return <span className="muted">none</span>;
  return (
    <div className="chips">
      {entries.map(([k, v]) => (
        <span key={k} className="chip" title={`${k}=${v}`}>
          {k}={v.length > 60 ? `${v.slice(0, 60)}…` : v}
        </span>
      ))}
    </div>
  );
}

export function Overview({ obj }: { obj: KObject }) {
  const conds = ((obj.status as { conditions?: Condition[] } | undefined)?.conditions ?? []) as Condition[];
  return (
    <div className="stack">
      <MetadataCard obj={obj} />
      <div className="card">
        <h3>Conditions</h3>
        <Conditions conditions={conds} />
      </div>
    </div>
  );
}

export function MetadataCard({ obj }: { obj: KObject }) {
  const { kinds } = useApi();
  const owners = obj.metadata?.ownerReferences ?? [];
  return (
    <div className="card">
      <dl className="kv">
        <dt>Labels</dt>
        <dd>
          <KeyValues values={obj.metadata?.labels} />
        </dd>
        <dt>Annotations</dt>
        <dd>
          <KeyValues values={obj.metadata?.annotations} />
        </dd>
        {owners.length ? (
          <>
            <dt>Owned by</dt>
            <dd>
              {owners.map((o) => {
                const k = kinds.of(o.apiVersion, o.kind);
                return k ? (
                  <Link key={o.uid} to={objectHref(k.plural, obj.metadata?.namespace, o.name, !k.namespaced)}>
                    {o.kind.toLowerCase()}/{o.name}
                  </Link>
                ) : (
                  <span key={o.uid}>
                    {o.kind}/{o.name}
                  </span>
                );
              })}
            </dd>
          </>
        ) : null}
        <dt>UID</dt>
        <dd>
          <code>{obj.metadata?.uid}</code>
        </dd>
      </dl>
    </div>
  );
}

/**
 * the kinds Skiff's controllers create for others: a Job's or a Revision's Pods, a Run's tasks, a
 * Trial's job, an Experiment's Trials and Suggestion, an InferenceService's Revisions, a queued job's
 * Workload, and a Profile's Namespace with its bindings, service accounts and quota
 */
const CHILD_PLURALS = [
  'pods', 'jobs', 'services', 'configmaps', 'secrets', 'persistentvolumeclaims', 'runtasks', 'runs',
  'pytorchjobs', 'tfjobs', 'mpijobs', 'xgboostjobs', 'paddlejobs', 'jaxjobs', 'trials', 'suggestions',
  'revisions', 'workloads', 'namespaces', 'rolebindings', 'serviceaccounts', 'resourcequotas', 'networkpolicies',
];

export function Owned({ owner }: { owner: KObject }) {
  const { kinds } = useApi();
  // a namespaced object cannot own a cluster-scoped one
  const present = CHILD_PLURALS.filter((p) => kinds.plural(p) !== undefined && (!owner.metadata?.namespace || !kinds.isClusterScoped(p)));
  return (
    <div className="stack">
      {present.map((p) => (
        <OwnedOfKind key={p} plural={p} owner={owner} />
      ))}
      <p className="muted small">Objects of {present.join(', ')} whose ownerReferences name this one.</p>
    </div>
  );
}

/** the objects of one kind that `owner` owns; nothing when there are none */
function OwnedOfKind({ plural, owner }: { plural: string; owner: KObject }) {
  const { kinds } = useApi();
  const list = useList<KObject>(plural, owner.metadata?.namespace);
  const uid = owner.metadata?.uid;
  const rows = list.items.filter((o) => o.metadata?.ownerReferences?.some((r) => r.uid === uid));
  if (!rows.length) return null;
  return (
    <div>
      <h3>
        {plural} ({rows.length})
      </h3>
      <DataTable
        label={`owned ${plural}`}
        rows={rows}
        rowKey={(o) => o.metadata?.name ?? ''}
        rowHref={(o) => objectHref(plural, o.metadata?.namespace, o.metadata?.name ?? '', kinds.isClusterScoped(plural))}
        height={Math.min(300, 34 * rows.length + 4)}
        columns={[
          { id: 'name', header: 'Name', value: (o) => o.metadata?.name, cell: (o) => <Link to={objectHref(plural, o.metadata?.namespace, o.metadata?.name ?? '', kinds.isClusterScoped(plural))}>{o.metadata?.name}</Link> },
          { id: 'state', header: 'State', width: 150, value: (o) => summaryState(o), cell: (o) => <StatusBadge state={summaryState(o)} /> },
          { id: 'age', header: 'Age', width: 80, value: (o) => o.metadata?.creationTimestamp, cell: (o) => <Age ts={o.metadata?.creationTimestamp} /> },
        ]}
      />
    </div>
  );
}
