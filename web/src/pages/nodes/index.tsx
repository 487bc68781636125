// Nodes: what each node offers, what the Pods bound to it have asked for (requests and limits summed
// per resource, as the scheduler counts them), and what they use right now.
import { useMemo } from 'react';
import { useList } from '../../api/context';
import type { KObject } from '../../api/types';
import { Link } from '../../app/nav';
import { objectHref } from '../../app/router';
import { Conditions } from '../../components/Conditions';
import { DataTable } from '../../components/DataTable';
import { MetadataCard, ObjectPage } from '../../components/ObjectPage';
import { ObjectList } from '../../components/ObjectList';
import { StatusBadge } from '../../components/Status';
import type { Condition } from '../../api/types';
import type { DetailPageProps, ListPageProps, PageDef } from '../types';
import type { NodeLike, PodLike, PodRow, ResourceRow } from './allocation';
import { formatAmount, formatPercent, nodeAllocation, withGpuShares } from './allocation';
import { AllocationBars, AllocationLegend } from './AllocationBars';
import { GpuCards, useNodeGpus } from './GpuCards';
import { useNodeUsage } from './usage';
import './nodes.css';

interface NodeObj extends NodeLike {
  spec?: { taints?: { key: string; value?: string; effect: string }[]; unschedulable?: boolean };
  status?: NodeLike['status'] & {
    conditions?: Condition[];
    addresses?: { type: string; address: string }[];
    nodeInfo?: Record<string, string>;
  };
}

/** Ready, NotReady or SchedulingDisabled, as kubectl get nodes says it */
export function nodeState(n: NodeObj): string {
  const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
  const s = ready?.status === 'True' ? 'Ready' : ready ? 'NotReady' : 'Unknown';
  return n.spec?.unschedulable ? `${s},SchedulingDisabled` : s;
}

function usePods(): { items: PodLike[]; loaded: boolean } {
  return useList<PodLike>('pods', undefined);
}

function resourceCell(r: ResourceRow | undefined) {
  if (!r || r.allocatable === undefined) return <span className="muted">—</span>;
  return (
    <span title={`${formatAmount(r.resource, r.requests)} of ${formatAmount(r.resource, r.allocatable)} requested`}>
      {formatAmount(r.resource, r.requests)} / {formatAmount(r.resource, r.allocatable)} <span className="muted">({formatPercent(r.requestsFraction)})</span>
    </span>
  );
}

function NodesList({ kind }: ListPageProps) {
  const pods = usePods();
  const byNode = useMemo(() => {
    const m = new Map<string, PodLike[]>();
    for (const p of pods.items) {
      const n = p.spec?.nodeName;
      if (n) m.set(n, [...(m.get(n) ?? []), p]);
    }
    return m;
  }, [pods.items]);
  const alloc = (n: NodeObj, res: string): ResourceRow | undefined => nodeAllocation(n, byNode.get(n.metadata?.name ?? '') ?? []).resources.find((r) => r.resource === res);
  return (
    <ObjectList<NodeObj>
      kind={kind}
      title="Nodes"
      state={nodeState}
      columns={[
        { id: 'cpu', header: 'CPU requested', width: 'minmax(110px, 1fr)', value: (n) => alloc(n, 'cpu')?.requestsFraction, cell: (n) => resourceCell(alloc(n, 'cpu')) },
        { id: 'memory', header: 'Memory requested', width: 'minmax(150px, 1.2fr)', value: (n) => alloc(n, 'memory')?.requestsFraction, cell: (n) => resourceCell(alloc(n, 'memory')) },
        { id: 'gpu', header: 'GPUs', width: 80, value: (n) => alloc(n, 'nvidia.com/gpu')?.requests, cell: (n) => resourceCell(alloc(n, 'nvidia.com/gpu')) },
        { id: 'pods', header: 'Pods', width: 'minmax(100px, 0.8fr)', value: (n) => alloc(n, 'pods')?.requests, cell: (n) => resourceCell(alloc(n, 'pods')) },
      ]}
    />
  );
}

function PodsOnNode({ rows, resources }: { rows: PodRow[]; resources: string[] }) {
  const shown = resources.filter((r) => r !== 'pods');
  return (
    <DataTable
      label="pods on this node"
      rows={rows}
      rowKey={(p) => `${p.namespace}/${p.name}`}
      rowHref={(p) => objectHref('pods', p.namespace, p.name)}
      empty="No Pods hold resources on this node."
      height={Math.min(420, 34 * Math.max(rows.length, 2) + 4)}
      columns={[
        { id: 'name', header: 'Pod', value: (p) => p.name, cell: (p) => <Link to={objectHref('pods', p.namespace, p.name)}>{p.name}</Link> },
        { id: 'namespace', header: 'Namespace', width: 130, value: (p) => p.namespace, cell: (p) => p.namespace },
        { id: 'phase', header: 'Phase', width: 100, value: (p) => p.phase, cell: (p) => <StatusBadge state={p.phase} /> },
        ...shown.map((res) => ({
          id: `req-${res}`,
          header: `${res === 'nvidia.com/gpu' ? 'GPU' : res} req / lim`,
          width: res === 'memory' ? 150 : 120,
          align: 'right' as const,
          value: (p: PodRow) => p.requests[res] ?? 0,
          cell: (p: PodRow) =>
            p.requests[res] === undefined && p.limits[res] === undefined ? (
              <span className="muted">—</span>
            ) : (
              <span>
                {formatAmount(res, p.requests[res] ?? 0)} / {p.limits[res] === undefined ? <span className="muted">none</span> : formatAmount(res, p.limits[res])}
              </span>
            ),
        })),
      ]}
    />
  );
}

function Allocation({ node }: { node: NodeObj }) {
  const pods = usePods();
  const usage = useNodeUsage(node.metadata?.name);
  const counted = useMemo(() => nodeAllocation(node, pods.items, usage.usage), [node, pods.items, usage.usage]);
  // the cards' shares change with the Pods on the node: read again when those do
  const gpus = useNodeGpus(node.metadata?.name, podsVersion(counted.pods));
  const a = useMemo(() => withGpuShares(counted, gpus.cards), [counted, gpus.cards]);
  const invalid = [...a.invalid, ...a.pods.flatMap((p) => p.invalid.map((i) => `${p.namespace}/${p.name}: ${i}`))];
  return (
    <div className="stack">
      <div className="card">
        <h3>Allocated resources</h3>
        <p className="muted small" style={{ marginTop: 0 }}>
          Requests and limits of the {a.podCount} unfinished Pod{a.podCount === 1 ? '' : 's'} bound to this node, against what it can allocate.
          {usage.error ? ` Actual use is not available: ${usage.error}` : usage.timestamp ? ` In use: a sample taken at ${new Date(usage.timestamp).toLocaleTimeString()}.` : ''}
        </p>
        <AllocationBars rows={a.resources} />
        <AllocationLegend withUsage={usage.usage !== undefined} />
        {invalid.length ? (
          <div className="notice bad" style={{ marginTop: 8 }}>
            Not counted, not a quantity: {invalid.join('; ')}
          </div>
        ) : null}
      </div>
      <GpuCards gpus={gpus} />
      <h2>Pods on this node</h2>
      <PodsOnNode rows={a.pods} resources={a.resources.map((r) => r.resource).filter((r) => ['cpu', 'memory'].includes(r) || a.pods.some((p) => p.requests[r] !== undefined || p.limits[r] !== undefined))} />
    </div>
  );
}

/** the cards' shares change with the Pods on the node: their names and phases key the re-read */
export function podsVersion(pods: { namespace: string; name: string; phase?: string }[]): string {
  return pods.map((p) => `${p.namespace}/${p.name}:${p.phase ?? ''}`).join(',');
}

function NodeDetails({ node }: { node: NodeObj }) {
  const taints = node.spec?.taints ?? [];
  const info = node.status?.nodeInfo ?? {};
  const cap = node.status?.capacity ?? {};
  const al = node.status?.allocatable ?? {};
  return (
    <div className="stack">
      <div className="grid2">
        <div className="card">
          <h3>Capacity and allocatable</h3>
          <table className="plain">
            <thead>
              <tr>
                <th>Resource</th>
                <th>Capacity</th>
                <th>Allocatable</th>
              </tr>
            </thead>
            <tbody>
              {[...new Set([...Object.keys(cap), ...Object.keys(al)])].map((k) => (
                <tr key={k}>
                  <td>{k}</td>
                  <td>{String(cap[k] ?? '—')}</td>
                  <td>{String(al[k] ?? '—')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <div className="card">
          <h3>System</h3>
          <dl className="kv">
            {(node.status?.addresses ?? []).map((a) => (
              <FragmentKV key={`${a.type}`} k={a.type} v={a.address} />
            ))}
            {Object.entries(info).map(([k, v]) => (
              <FragmentKV key={k} k={k} v={v} />
            ))}
          </dl>
        </div>
      </div>
      <div className="card">
        <h3>Taints</h3>
        {taints.length ? (
          <div className="chips">
            {taints.map((t) => (
              <span key={`${t.key}:${t.effect}`} className="chip taint">
                {t.key}
                {t.value ? `=${t.value}` : ''}:{t.effect}
              </span>
            ))}
          </div>
        ) : (
          <span className="muted">none: any Pod may be scheduled here{node.spec?.unschedulable ? ' (but the node is cordoned)' : ''}</span>
        )}
      </div>
      <MetadataCard obj={node as KObject} />
      <div className="card">
        <h3>Conditions</h3>
        <Conditions conditions={node.status?.conditions} />
      </div>
    </div>
  );
}

function FragmentKV({ k, v }: { k: string; v: string }) {
  return (
    <>
      <dt>{k}</dt>
      <dd>{v}</dd>
    </>
  );
}

function NodePage({ kind, name }: DetailPageProps) {
  return (
    <ObjectPage<NodeObj>
      kind={kind}
      name={name}
      state={nodeState}
      tabs={(n) => [
        { id: 'allocation', label: 'Allocation', render: () => <Allocation node={n} /> },
        { id: 'details', label: 'Details', render: () => <NodeDetails node={n} /> },
      ]}
    />
  );
}

export const pages: PageDef[] = [{ plural: 'nodes', title: 'Nodes', section: 'Cluster', order: 1, list: NodesList, detail: NodePage }];
