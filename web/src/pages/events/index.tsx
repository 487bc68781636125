// Events across the cluster or a namespace: filtered by type, reason and object (the filters are in the
// URL, so a link shares them), each leading to the page of the object it is about.
import { useMemo } from 'react';
import type { ReactNode } from 'react';
import { useApi, useList } from '../../api/context';
import { Link, useQueryParam } from '../../app/nav';
import { href, objectHref } from '../../app/router';
import { Age } from '../../components/Age';
import type { Column } from '../../components/DataTable';
import { DataTable } from '../../components/DataTable';
import type { ListPageProps, PageDef } from '../types';
import type { EventFilter, EventObj } from './filter';
import { eventSubject, eventTime, filterEvents, reasonsOf, subjectLabel } from './filter';
import './events.css';

/** a link to the object an Event is about, when the server serves its kind */
export function SubjectLink({ e }: { e: EventObj }) {
  const { kinds } = useApi();
  const s = eventSubject(e);
  const k = s.kind ? kinds.of(s.apiVersion, s.kind) : undefined;
  const label = subjectLabel(e);
  if (!k || !s.name) return <span>{label}</span>;
  return <Link to={objectHref(k.plural, s.namespace ?? e.metadata?.namespace, s.name, !k.namespaced)}>{label}</Link>;
}

export function EventsTable({ namespace, filter, height, toolbar, showNamespace }: { namespace?: string; filter: EventFilter; height?: number; toolbar?: ReactNode; showNamespace?: boolean }) {
  const list = useList<EventObj>('events', namespace);
  const rows = useMemo(() => filterEvents(list.items, filter), [list.items, filter]);
  const columns: Column<EventObj>[] = [
    { id: 'type', header: 'Type', width: 76, value: (e) => e.type, cell: (e) => <span className={e.type === 'Warning' ? 'warn' : ''}>{e.type}</span> },
    { id: 'reason', header: 'Reason', width: 146, value: (e) => e.reason, cell: (e) => e.reason },
    ...(showNamespace ? [{ id: 'namespace', header: 'Namespace', width: 100, value: (e: EventObj) => e.metadata?.namespace, cell: (e: EventObj) => e.metadata?.namespace }] : []),
    { id: 'object', header: 'Object', width: 'minmax(110px, 1fr)', value: subjectLabel, cell: (e) => <SubjectLink e={e} /> },
    { id: 'message', header: 'Message', width: 'minmax(150px, 2.5fr)', value: (e) => e.message, cell: (e) => e.message ?? '' },
    { id: 'count', header: 'Count', width: 56, align: 'right', value: (e) => e.count ?? 1, cell: (e) => e.count ?? 1 },
    { id: 'last', header: 'Last seen', width: 92, value: eventTime, cell: (e) => <Age ts={eventTime(e)} /> },
  ];
  return (
    <DataTable
      label="events"
      rows={rows}
      columns={columns}
      rowKey={(e) => `${e.metadata?.namespace}/${e.metadata?.name}`}
      loading={!list.loaded}
      empty={filter.type || filter.reason || filter.object ? 'No events match these filters.' : 'No events.'}
      height={height === undefined ? undefined : Math.min(height, 34 * Math.max(rows.length, 2) + 4)}
      toolbar={toolbar}
    />
  );
}

function EventsPage({ namespace }: ListPageProps) {
  const [type, setType] = useQueryParam('type');
  const [reason, setReason] = useQueryParam('reason');
  const [object, setObject] = useQueryParam('object');
  const all = useList<EventObj>('events', namespace);
  const reasons = useMemo(() => reasonsOf(all.items), [all.items]);
  const filter = useMemo(() => ({ type, reason, object }), [type, reason, object]);
  const toolbar = (
    <div className="evfilters">
      <label>
        <span className="muted">Type</span>
        <select aria-label="Event type" value={type ?? ''} onChange={(e) => setType(e.target.value || undefined)}>
          <option value="">any</option>
          <option value="Normal">Normal</option>
          <option value="Warning">Warning</option>
        </select>
      </label>
      <label>
        <span className="muted">Reason</span>
        <select aria-label="Event reason" value={reason ?? ''} onChange={(e) => setReason(e.target.value || undefined)}>
          <option value="">any</option>
          {reasons.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
          {reason && !reasons.includes(reason) ? <option value={reason}>{reason}</option> : null}
        </select>
      </label>
      <label>
        <span className="muted">Object</span>
        <input type="search" aria-label="Event object" placeholder="kind/name" value={object ?? ''} onChange={(e) => setObject(e.target.value || undefined)} />
      </label>
      {type || reason || object ? (
        <Link to={href({ namespace, plural: 'events' })} className="small">
          Clear filters
        </Link>
      ) : null}
    </div>
  );
  return (
    <section className="page">
      <header className="listhead">
        <h1>Events{namespace ? ` in ${namespace}` : ''}</h1>
      </header>
      <EventsTable namespace={namespace} filter={filter} toolbar={toolbar} showNamespace={namespace === undefined} />
    </section>
  );
}

export const pages: PageDef[] = [{ plural: 'events', title: 'Events', section: 'Cluster', order: 3, list: EventsPage }];
