// The list page of any kind: live rows (watch), name links to the object's page, state and age,
// plus whatever columns the kind's page adds.
import type { ReactNode } from 'react';
import { useApi, useList } from '../api/context';
import type { KindInfo } from '../api/kinds';
import { urlName } from '../api/kinds';
import type { KObject } from '../api/types';
import { Link } from '../app/nav';
import { href, objectHref } from '../app/router';
import { Age } from './Age';
import type { Column } from './DataTable';
import { DataTable } from './DataTable';
import { StatusBadge, summaryState } from './Status';

export interface ObjectListProps<T extends KObject> {
  kind: KindInfo;
  namespace?: string;
  title?: string;
  /** columns after Name (and Namespace when listing every namespace) */
  columns?: Column<T>[];
  /** replaces the State column; none: `summaryState` */
  state?: ((o: T) => string | undefined) | null;
  labelSelector?: string;
  toolbar?: ReactNode;
  actions?: ReactNode;
  empty?: ReactNode;
  /** rows may be picked (compare runs) */
  selected?: Set<string>;
  onSelect?: (key: string, on: boolean) => void;
  filterRows?: (rows: T[]) => T[];
  height?: number;
  /** what the Name column shows when the kind has a display name (KFP ids are UUIDs) */
  displayName?: (o: T) => string;
}

/** `plural`: the kind's name in URLs (`experiments.kubeflow.org` where two groups serve `experiments`) */
export function nameColumn<T extends KObject>(kind: KindInfo, displayName?: (o: T) => string, plural = kind.plural): Column<T> {
  const shown = (o: T): string => displayName?.(o) || o.metadata?.name || '';
  return {
    id: 'name',
    header: 'Name',
    value: shown,
    cell: (o) => (
      <>
        <Link to={objectHref(plural, o.metadata?.namespace, o.metadata?.name ?? '', !kind.namespaced)}>{shown(o)}</Link>
        {shown(o) !== o.metadata?.name ? <span className="muted small" title={o.metadata?.name}>{o.metadata?.name?.slice(0, 8)}</span> : null}
      </>
    ),
  };
}

export function ObjectList<T extends KObject>(props: ObjectListProps<T>) {
  const { kind, namespace } = props;
  const plural = urlName(kind, useApi().kinds);
  const list = useList<T>(plural, namespace, { labelSelector: props.labelSelector });
  const rows = props.filterRows ? props.filterRows(list.items) : list.items;
  const state = props.state === null ? undefined : props.state ?? summaryState;
  const columns: Column<T>[] = [
    nameColumn(kind, props.displayName, plural),
    ...(kind.namespaced && namespace === undefined
      ? [{ id: 'namespace', header: 'Namespace', width: 140, value: (o: T) => o.metadata?.namespace, cell: (o: T) => <Link to={href({ namespace: o.metadata?.namespace, plural })}>{o.metadata?.namespace}</Link> }]
      : []),
    ...(state ? [{ id: 'state', header: 'State', width: 130, value: (o: T) => state(o), cell: (o: T) => <StatusBadge state={state(o)} /> }] : []),
    ...(props.columns ?? []),
    { id: 'age', header: 'Age', width: 80, value: (o) => o.metadata?.creationTimestamp, cell: (o) => <Age ts={o.metadata?.creationTimestamp} /> },
  ];
  return (
    <section className="page">
      <header className="listhead">
        <h1>{props.title ?? kind.plural}</h1>
        <div className="actions">{props.actions}</div>
      </header>
      {list.error ? <div className="notice bad">{list.error.message}</div> : null}
      <DataTable
        label={kind.plural}
        rows={rows}
        columns={columns}
        rowKey={(o) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name}`}
        rowHref={(o) => objectHref(plural, o.metadata?.namespace, o.metadata?.name ?? '', !kind.namespaced)}
        loading={!list.loaded}
        empty={props.empty ?? `No ${kind.plural}${namespace ? ` in ${namespace}` : ''}.`}
        toolbar={props.toolbar}
        selected={props.selected}
        onSelect={props.onSelect}
        height={props.height}
      />
    </section>
  );
}
