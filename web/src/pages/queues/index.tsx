// Kueue's queues: each ClusterQueue's quota and usage per flavor and resource, what it has admitted
// and what waits, in the order it would be admitted (Kueue's visibility API) with the reason each
// waits; LocalQueues per namespace; Workloads with their queue, state and the job that owns them.
import { useEffect, useMemo, useState } from 'react';
import { useApi, useList } from '../../api/context';
import { messageOf } from '../../api/errors';
import type { ClusterQueue, LocalQueue, Workload } from '../../api/types';
import { Link } from '../../app/nav';
import { href, objectHref } from '../../app/router';
import { Age } from '../../components/Age';
import { ObjectList } from '../../components/ObjectList';
import { ObjectPage } from '../../components/ObjectPage';
import { StatusBadge } from '../../components/Status';
import type { DetailPageProps, ListPageProps, PageDef } from '../types';
import { QuotaBars, QuotaLegend } from './QuotaBars';
import type { PendingItem } from './view';
import { ownerOf, pendingReason, queueState, quotaRows, workloadState } from './view';
import '../nodes/nodes.css';
import './queues.css';

const VISIBILITY = '/apis/visibility.kueue.x-k8s.io/v1beta1';
const nameOf = (o: { metadata: { name?: string } }): string => o.metadata.name ?? '';

/** a ClusterQueue's Workloads: admitted to it, or waiting in one of its LocalQueues */
function useQueueWorkloads(cq: string): { admitted: Workload[]; all: Workload[]; localQueues: LocalQueue[] } {
  const workloads = useList<Workload>('workloads', undefined);
  const lqs = useList<LocalQueue>('localqueues', undefined);
  return useMemo(() => {
    const localQueues = lqs.items.filter((q) => q.spec.clusterQueue === cq);
    const mine = new Set(localQueues.map((q) => `${q.metadata.namespace}/${q.metadata.name}`));
    const all = workloads.items.filter((w) => w.status?.admission?.clusterQueue === cq || mine.has(`${w.metadata.namespace}/${w.spec.queueName ?? ''}`));
    const admitted = all.filter((w) => w.status?.admission?.clusterQueue === cq && !['Finished', 'Failed'].includes(workloadState(w)));
    return { admitted, all, localQueues };
  }, [workloads.items, lqs.items, cq]);
}

/** the visibility API's pending list, read again whenever one of the queue's Workloads changes */
function usePending(cq: string, workloads: Workload[]): { items?: PendingItem[]; error?: string } {
  const { api } = useApi();
  const [state, setState] = useState<{ items?: PendingItem[]; error?: string }>({});
  const version = workloads.map((w) => w.metadata.resourceVersion).join(',');
  useEffect(() => {
    let live = true;
    api.json<{ items?: PendingItem[] }>(`${VISIBILITY}/clusterqueues/${encodeURIComponent(cq)}/pendingworkloads`).then(
      (r) => live && setState({ items: r.items ?? [] }),
      (e) => live && setState({ error: messageOf(e) }),
    );
    return () => {
      live = false;
    };
  }, [api, cq, version]);
  return state;
}

function Facts({ cq }: { cq: ClusterQueue }) {
  const s = cq.status ?? {};
  return (
    <div className="cqfacts">
      <div>
        <div className="label">Cohort</div>
        <div>{cq.spec.cohortName ?? <span className="muted">none</span>}</div>
      </div>
      <div>
        <div className="label">Strategy</div>
        <div>{cq.spec.queueingStrategy ?? 'BestEffortFIFO'}</div>
      </div>
      <div>
        <div className="label">Admitted</div>
        <div data-count="admitted">{s.admittedWorkloads ?? 0}</div>
      </div>
      <div>
        <div className="label">Pending</div>
        <div data-count="pending">{s.pendingWorkloads ?? 0}</div>
      </div>
      {cq.spec.stopPolicy && cq.spec.stopPolicy !== 'None' ? (
        <div>
          <div className="label">Stop policy</div>
          <div>{cq.spec.stopPolicy}</div>
        </div>
      ) : null}
    </div>
  );
}

function ClusterQueueCard({ cq }: { cq: ClusterQueue }) {
  const rows = useMemo(() => quotaRows(cq), [cq]);
  const active = cq.status?.conditions?.find((c) => c.type === 'Active');
  return (
    <div className="card cqcard" data-clusterqueue={cq.metadata.name}>
      <h3>
        <Link to={objectHref('clusterqueues', undefined, nameOf(cq), true)}>{cq.metadata.name}</Link>
        <StatusBadge state={queueState(cq)} title={active?.message} />
      </h3>
      <Facts cq={cq} />
      <QuotaBars rows={rows} cohort={cq.spec.cohortName !== undefined} />
    </div>
  );
}

function ClusterQueueList({ kind }: ListPageProps) {
  const cqs = useList<ClusterQueue>(kind.plural, undefined);
  const sorted = useMemo(() => [...cqs.items].sort((a, b) => (a.spec.cohortName ?? '').localeCompare(b.spec.cohortName ?? '') || nameOf(a).localeCompare(nameOf(b))), [cqs.items]);
  return (
    <section className="page">
      <header className="listhead">
        <h1>Cluster queues</h1>
        <div className="actions small">
          <Link to={href({ plural: 'localqueues' })}>Local queues</Link>
          <Link to={href({ plural: 'workloads' })}>Workloads</Link>
        </div>
      </header>
      {!cqs.loaded ? <p className="empty muted">Loading…</p> : null}
      {cqs.loaded && !sorted.length ? <div className="notice">No ClusterQueue: Workloads wait until an administrator creates one and a LocalQueue that points at it.</div> : null}
      {sorted.length ? <QuotaLegend /> : null}
      <div className="stack">
        {sorted.map((cq) => (
          <ClusterQueueCard key={cq.metadata.name} cq={cq} />
        ))}
      </div>
    </section>
  );
}

function OwnerCell({ o }: { o: Parameters<typeof ownerOf>[0] & { metadata?: { namespace?: string } } }) {
  const owner = ownerOf(o);
  if (!owner) return <span className="muted">—</span>;
  return <Link to={objectHref(owner.plural, o.metadata?.namespace, owner.name)}>{`${owner.kind.toLowerCase()}/${owner.name}`}</Link>;
}

function PendingTable({ cq, workloads }: { cq: string; workloads: Workload[] }) {
  const pending = usePending(cq, workloads);
  const byKey = useMemo(() => new Map(workloads.map((w) => [`${w.metadata.namespace}/${w.metadata.name}`, w])), [workloads]);
  if (pending.error) return <div className="notice bad">The pending list is not available: {pending.error}</div>;
  if (!pending.items) return <p className="empty muted">Loading…</p>;
  if (!pending.items.length) return <div className="notice">Nothing waits in this queue.</div>;
  return (
    <table className="plain" aria-label="pending workloads">
      <thead>
        <tr>
          <th>Position</th>
          <th>Workload</th>
          <th>Local queue</th>
          <th>Priority</th>
          <th>Job</th>
          <th>Why it waits</th>
          <th>Waiting</th>
        </tr>
      </thead>
      <tbody>
        {pending.items.map((p) => {
          const w = byKey.get(`${p.metadata.namespace}/${p.metadata.name}`);
          return (
            <tr key={`${p.metadata.namespace}/${p.metadata.name}`} data-workload={p.metadata.name}>
              <td data-position={p.positionInClusterQueue} className="nowrap">
                {p.positionInClusterQueue + 1}
                <span className="muted small"> ({p.positionInLocalQueue + 1} in its local queue)</span>
              </td>
              <td className="nowrap">
                <Link to={objectHref('workloads', p.metadata.namespace, p.metadata.name)}>{p.metadata.name}</Link>
              </td>
              <td className="nowrap">
                {p.metadata.namespace}/{p.localQueueName}
              </td>
              <td>{p.priority ?? 0}</td>
              <td>
                <OwnerCell o={p} />
              </td>
              <td className="wrap pending-reason">{pendingReason(w) ?? <span className="muted">not tried yet</span>}</td>
              <td>
                <Age ts={p.metadata.creationTimestamp ?? undefined} />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function AdmittedTable({ workloads }: { workloads: Workload[] }) {
  if (!workloads.length) return <div className="notice">No Workload holds this queue’s quota.</div>;
  return (
    <table className="plain" aria-label="admitted workloads">
      <thead>
        <tr>
          <th>Workload</th>
          <th>Namespace</th>
          <th>State</th>
          <th>Job</th>
          <th>Flavors</th>
        </tr>
      </thead>
      <tbody>
        {workloads.map((w) => (
          <tr key={`${w.metadata.namespace}/${w.metadata.name}`} data-workload={w.metadata.name}>
            <td>
              <Link to={objectHref('workloads', w.metadata.namespace, nameOf(w))}>{w.metadata.name}</Link>
            </td>
            <td>{w.metadata.namespace}</td>
            <td>
              <StatusBadge state={workloadState(w)} />
            </td>
            <td>
              <OwnerCell o={w} />
            </td>
            <td className="small">
              {(w.status?.admission?.podSetAssignments ?? [])
                .map((a) => `${a.name}: ${Object.entries(a.flavors ?? {}).map(([r, f]) => `${r}→${f}`).join(', ')}`)
                .join('; ')}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function LocalQueuesTable({ queues }: { queues: LocalQueue[] }) {
  if (!queues.length) return <div className="notice">No LocalQueue points at this ClusterQueue: no namespace can submit to it.</div>;
  return (
    <table className="plain" aria-label="local queues">
      <thead>
        <tr>
          <th>Local queue</th>
          <th>Namespace</th>
          <th>Admitted</th>
          <th>Pending</th>
          <th>State</th>
        </tr>
      </thead>
      <tbody>
        {queues.map((q) => (
          <tr key={`${q.metadata.namespace}/${q.metadata.name}`}>
            <td>
              <Link to={objectHref('localqueues', q.metadata.namespace, nameOf(q))}>{q.metadata.name}</Link>
            </td>
            <td>{q.metadata.namespace}</td>
            <td>{q.status?.admittedWorkloads ?? 0}</td>
            <td>{q.status?.pendingWorkloads ?? 0}</td>
            <td>
              <StatusBadge state={queueState(q)} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Queue({ cq }: { cq: ClusterQueue }) {
  const rows = useMemo(() => quotaRows(cq), [cq]);
  const { admitted, all, localQueues } = useQueueWorkloads(nameOf(cq));
  return (
    <div className="stack">
      <div className="card cqcard">
        <Facts cq={cq} />
        <QuotaBars rows={rows} cohort={cq.spec.cohortName !== undefined} />
        <QuotaLegend />
      </div>
      <h2>Pending, in the order they would be admitted</h2>
      <div className="card">
        <PendingTable cq={nameOf(cq)} workloads={all} />
      </div>
      <h2>Admitted</h2>
      <div className="card">
        <AdmittedTable workloads={admitted} />
      </div>
      <h2>Local queues</h2>
      <div className="card">
        <LocalQueuesTable queues={localQueues} />
      </div>
    </div>
  );
}

function ClusterQueuePage({ kind, name }: DetailPageProps) {
  return (
    <ObjectPage<ClusterQueue>
      kind={kind}
      name={name}
      state={queueState}
      tabs={(cq) => [{ id: 'queue', label: 'Queue', render: () => <Queue cq={cq} /> }]}
    />
  );
}

function LocalQueueList({ kind, namespace }: ListPageProps) {
  return (
    <ObjectList<LocalQueue>
      kind={kind}
      namespace={namespace}
      title="Local queues"
      state={queueState}
      columns={[
        { id: 'cq', header: 'Cluster queue', value: (q) => q.spec.clusterQueue, cell: (q) => <Link to={objectHref('clusterqueues', undefined, q.spec.clusterQueue, true)}>{q.spec.clusterQueue}</Link> },
        { id: 'admitted', header: 'Admitted', width: 90, align: 'right', value: (q) => q.status?.admittedWorkloads ?? 0, cell: (q) => q.status?.admittedWorkloads ?? 0 },
        { id: 'pending', header: 'Pending', width: 90, align: 'right', value: (q) => q.status?.pendingWorkloads ?? 0, cell: (q) => q.status?.pendingWorkloads ?? 0 },
      ]}
    />
  );
}

function WorkloadList({ kind, namespace }: ListPageProps) {
  return (
    <ObjectList<Workload>
      kind={kind}
      namespace={namespace}
      title="Workloads"
      state={workloadState}
      columns={[
        { id: 'queue', header: 'Queue', width: 130, value: (w) => w.spec.queueName, cell: (w) => (w.spec.queueName ? <Link to={objectHref('localqueues', w.metadata.namespace, w.spec.queueName)}>{w.spec.queueName}</Link> : <span className="muted">—</span>) },
        { id: 'admittedBy', header: 'Admitted by', width: 130, value: (w) => w.status?.admission?.clusterQueue, cell: (w) => (w.status?.admission ? <Link to={objectHref('clusterqueues', undefined, w.status.admission.clusterQueue, true)}>{w.status.admission.clusterQueue}</Link> : <span className="muted">—</span>) },
        { id: 'owner', header: 'Job', value: (w) => ownerOf(w)?.name, cell: (w) => <OwnerCell o={w} /> },
        { id: 'why', header: 'Why it waits', width: 'minmax(160px, 2fr)', value: (w) => pendingReason(w), cell: (w) => <span className="small" title={pendingReason(w)}>{pendingReason(w) ?? ''}</span> },
      ]}
    />
  );
}

function WorkloadPage({ kind, namespace, name }: DetailPageProps) {
  return (
    <ObjectPage<Workload>
      kind={kind}
      namespace={namespace}
      name={name}
      state={workloadState}
      summary={(w) => (
        <div className="cqfacts">
          <div>
            <div className="label">Queue</div>
            <div>{w.spec.queueName ?? '—'}</div>
          </div>
          <div>
            <div className="label">Cluster queue</div>
            <div>{w.status?.admission?.clusterQueue ?? '—'}</div>
          </div>
          <div>
            <div className="label">Job</div>
            <div>
              <OwnerCell o={w} />
            </div>
          </div>
          {pendingReason(w) ? (
            <div>
              <div className="label">Why it waits</div>
              <div className="pending-reason">{pendingReason(w)}</div>
            </div>
          ) : null}
        </div>
      )}
    />
  );
}

export const pages: PageDef[] = [
  { plural: 'clusterqueues', title: 'Cluster queues', section: 'Queues', order: 1, list: ClusterQueueList, detail: ClusterQueuePage },
  { plural: 'localqueues', title: 'Local queues', section: 'Queues', order: 2, list: LocalQueueList },
  { plural: 'workloads', title: 'Workloads', section: 'Queues', order: 3, list: WorkloadList, detail: WorkloadPage },
];
