// The Events about an object (or a namespace), live, newest first.
import { useList } from '../api/context';
import type { KObject } from '../api/types';
import { Age } from './Age';
import { DataTable } from './DataTable';
import type { Column } from './DataTable';

interface Event extends KObject {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  involvedObject?: { kind?: string; name?: string; namespace?: string };
  source?: { component?: string };
  reportingComponent?: string;
  lastTimestamp?: string;
  eventTime?: string;
  firstTimestamp?: string;
}

const when = (e: Event): string => e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp ?? '';

export function Events({ namespace, kind, name, height }: { namespace?: string; kind?: string; name?: string; height?: number }) {
  const selector = name ? [`involvedObject.name=${name}`, ...(kind ? [`involvedObject.kind=${kind}`] : [])].join(',') : undefined;
  const list = useList<Event>('events', namespace, { fieldSelector: selector });
  const rows = [...list.items].sort((a, b) => (when(a) < when(b) ? 1 : -1));
  const columns: Column<Event>[] = [
    { id: 'type', header: 'Type', width: 90, value: (e) => e.type, cell: (e) => <span className={e.type === 'Warning' ? 'warn' : ''}>{e.type}</span> },
    { id: 'reason', header: 'Reason', width: 170, value: (e) => e.reason, cell: (e) => e.reason },
    ...(name ? [] : [{ id: 'object', header: 'Object', width: 220, value: (e: Event) => `${e.involvedObject?.kind}/${e.involvedObject?.name}`, cell: (e: Event) => `${e.involvedObject?.kind?.toLowerCase()}/${e.involvedObject?.name}` }]),
    { id: 'message', header: 'Message', value: (e) => e.message, cell: (e) => e.message ?? '' },
    { id: 'from', header: 'From', width: 150, value: (e) => e.source?.component ?? e.reportingComponent, cell: (e) => e.source?.component ?? e.reportingComponent },
    { id: 'count', header: 'Count', width: 64, align: 'right', value: (e) => e.count ?? 1, cell: (e) => e.count ?? 1 },
    { id: 'last', header: 'Last seen', width: 90, value: when, cell: (e) => <Age ts={when(e)} /> },
  ];
  return <DataTable label="events" rows={rows} columns={columns} rowKey={(e) => `${e.metadata?.namespace}/${e.metadata?.name}`} loading={!list.loaded} empty="No events." height={height} />;
}
