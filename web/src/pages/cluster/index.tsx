// The cluster at a glance: each node's allocation, the Pods that are not running and why, Pods by
// phase, and the latest warnings from every namespace.
import { useMemo } from 'react';
import { useList } from '../../api/context';
import { Link } from '../../app/nav';
import { href, objectHref } from '../../app/router';
import { Age } from '../../components/Age';
import { StatusBadge, toneOf } from '../../components/Status';
import { EventsTable } from '../events';
import type { PageDef } from '../types';
import type { NodeLike, PendingPod, PodLike } from '../nodes/allocation';
import { nodeAllocation, pendingPods, phaseCounts, withGpuShares } from '../nodes/allocation';
import { AllocationBars, AllocationLegend } from '../nodes/AllocationBars';
import { nodeState, podsVersion } from '../nodes';
import { GpuCards, useNodeGpus } from '../nodes/GpuCards';
import { useNodeUsage } from '../nodes/usage';
import './cluster.css';

function NodeCard({ node, pods }: { node: NodeLike; pods: PodLike[] }) {
  const usage = useNodeUsage(node.metadata?.name);
  const counted = useMemo(() => nodeAllocation(node, pods, usage.usage), [node, pods, usage.usage]);
  const name = node.metadata?.name ?? '';
  const gpus = useNodeGpus(name, podsVersion(counted.pods));
  const a = useMemo(() => withGpuShares(counted, gpus.cards), [counted, gpus.cards]);
  return (
    <div className="card nodecard">
      <h3>
        <Link to={objectHref('nodes', undefined, name, true)}>{name}</Link> <StatusBadge state={nodeState(node)} />
        <span className="muted small">
          {a.podCount} Pod{a.podCount === 1 ? ' holds' : 's hold'} resources here
        </span>
      </h3>
      <AllocationBars rows={a.resources} />
      <AllocationLegend withUsage={usage.usage !== undefined} />
      <GpuCards gpus={gpus} />
    </div>
  );
}

const WAIT_TONE: Record<string, string> = { Unschedulable: 'bad', ContainerCreating: 'wait', Starting: 'wait', NotScheduled: 'wait' };
/** a pending list is short unless something is badly wrong; past this many, say so and link to all Pods */
const PENDING_SHOWN = 50;

function Pending({ rows, loaded }: { rows: PendingPod[]; loaded: boolean }) {
  if (!loaded) return <p className="muted">Loading…</p>;
  if (!rows.length) return <div className="notice">No Pod is waiting: every Pod is placed and started.</div>;
  return (
    <div className="card pending">
      <table className="plain" aria-label="pending pods">
        <thead>
          <tr>
            <th>Pod</th>
            <th>Namespace</th>
            <th>Why</th>
            <th>Message</th>
            <th>Waiting</th>
          </tr>
        </thead>
        <tbody>
          {rows.slice(0, PENDING_SHOWN).map((p) => (
            <tr key={`${p.namespace}/${p.name}`} data-pod={p.name}>
              <td>
                <Link to={objectHref('pods', p.namespace, p.name)}>{p.name}</Link>
              </td>
              <td>{p.namespace}</td>
              <td>
                <span className={`badge tone-${WAIT_TONE[p.reason] ?? toneOf(p.reason)}`}>{p.reason}</span>
              </td>
              <td className="wrap pending-msg">{p.message}</td>
              <td>
                <Age ts={p.since} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length > PENDING_SHOWN ? (
        <p className="muted small">
          Showing the {PENDING_SHOWN} waiting longest of {rows.length}. <Link to={href({ plural: 'pods' })}>See every Pod</Link>
        </p>
      ) : null}
    </div>
  );
}

const PHASE_TONE: Record<string, string> = { Pending: 'wait', Running: 'run', Succeeded: 'ok', Failed: 'bad', Unknown: 'off' };

function ClusterOverview() {
  const nodes = useList<NodeLike>('nodes', undefined);
  const pods = useList<PodLike>('pods', undefined);
  const pending = useMemo(() => pendingPods(pods.items), [pods.items]);
  const phases = useMemo(() => phaseCounts(pods.items), [pods.items]);
  const warnings = useMemo(() => ({ type: 'Warning' }), []);
  return (
    <section className="page">
      <header className="listhead">
        <h1>Cluster</h1>
        <div className="actions small">
          <Link to={href({ cluster: true, plural: 'nodes' })}>Nodes</Link>
          <Link to={href({ plural: 'pods' })}>All Pods</Link>
          <Link to={href({ plural: 'events' })}>All Events</Link>
        </div>
      </header>
      <div className="phasebar" aria-label="Pods by phase">
        {phases.map((p) => (
          <div key={p.phase} className={`phasecount ${p.count ? `tone-${PHASE_TONE[p.phase] ?? 'info'}` : 'zero'}`} data-phase={p.phase}>
            <span className="n">{pods.loaded ? p.count : '…'}</span> <span>{p.phase}</span>
          </div>
        ))}
      </div>
      {nodes.items.map((n) => (
        <NodeCard key={n.metadata?.name} node={n} pods={pods.items} />
      ))}
      {nodes.loaded && nodes.items.length === 0 ? <div className="notice">No nodes registered: Pods cannot be scheduled until the node agent reports.</div> : null}
      <h2>
        Pending Pods <span className="muted small">({pending.length})</span>
      </h2>
      <Pending rows={pending} loaded={pods.loaded} />
      <h2>Recent warnings</h2>
      <EventsTable filter={warnings} height={260} showNamespace />
    </section>
  );
}

export const pages: PageDef[] = [{ plural: 'cluster-overview', title: 'Overview', section: 'Cluster', order: 0, page: ClusterOverview, cluster: true }];
