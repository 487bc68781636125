// A node's GPU cards and the shares placed on each: memory and compute held per card, and by which
// Pod's container (GET /skiff/v1/nodes/<node>/gpus). Read again whenever a Pod on the node changes,
// since shares come and go with Pods.
import { useEffect, useState } from 'react';
import { useApi } from '../../api/context';
import { messageOf } from '../../api/errors';
import type { GpuCardUsage, NodeGpuUsage } from '../../api/workload-types';
import { Link } from '../../app/nav';
import { objectHref } from '../../app/router';
import { formatPercent } from './allocation';

export interface NodeGpus {
  cards?: GpuCardUsage[];
  error?: string;
}

export function useNodeGpus(node: string | undefined, version: string): NodeGpus {
  const { api } = useApi();
  const [state, setState] = useState<NodeGpus>({});
  useEffect(() => {
    if (!node) return;
    let live = true;
    api.json<NodeGpuUsage>(`/skiff/v1/nodes/${encodeURIComponent(node)}/gpus`).then(
      (r) => live && setState({ cards: r.cards }),
      (e) => live && setState({ error: messageOf(e) }),
    );
    return () => {
      live = false;
    };
  }, [api, node, version]);
  return state;
}

function Meter({ label, used, of, text }: { label: string; used: number; of: number; text: string }) {
  const f = of > 0 ? used / of : undefined;
  return (
    <div className="alloc-row" data-resource={label}>
      <div className="alloc-name">{label}</div>
      <div className={`alloc-bar ${f !== undefined && f > 1 ? 'over' : f !== undefined && f >= 0.85 ? 'high' : ''}`} role="meter" aria-label={`${label}: ${text}`} aria-valuemin={0} aria-valuemax={of} aria-valuenow={used}>
        <div className="alloc-requests" style={{ width: `${Math.max(0, Math.min(1, f ?? 0)) * 100}%` }} />
      </div>
      <div className="alloc-text small">
        <b>{text}</b> <span className="muted">({formatPercent(f)})</span>
      </div>
    </div>
  );
}

function Card({ card }: { card: GpuCardUsage }) {
  return (
    <div className="card gpucard" data-gpu={card.index}>
      <h4>
        GPU {card.index} <span className="muted small">{card.type}</span>
        <span className="muted small">
          {card.used.shares} of {card.shares} shares
        </span>
      </h4>
      <div className="alloc">
        <Meter label="memory" used={card.used.memoryMiB} of={card.memoryMiB} text={`${card.used.memoryMiB} / ${card.memoryMiB} MiB`} />
        <Meter label="cores" used={card.used.cores} of={card.cores} text={`${card.used.cores} / ${card.cores}%`} />
        {card.utilization ? <Meter label="in use" used={card.utilization.gpuPercent} of={100} text={`${card.utilization.gpuPercent}% · ${card.utilization.memoryUsedMiB} MiB`} /> : null}
      </div>
      {card.allocations.length ? (
        <table className="plain small" aria-label={`shares of GPU ${card.index}`}>
          <thead>
            <tr>
              <th>Pod</th>
              <th>Container</th>
              <th>Memory</th>
              <th>Cores</th>
            </tr>
          </thead>
          <tbody>
            {card.allocations.map((a) => (
              <tr key={`${a.namespace}/${a.pod}/${a.container}`} data-pod={a.pod}>
                <td>
                  <Link to={objectHref('pods', a.namespace, a.pod)}>{`${a.namespace}/${a.pod}`}</Link>
                </td>
                <td>{a.container}</td>
                <td>{a.exclusive ? 'whole card' : `${a.memoryMiB} MiB`}</td>
                <td>{a.exclusive ? 'whole card' : a.cores === 0 ? 'unlimited' : `${a.cores}%`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted small">No Pod holds a share of this card.</p>
      )}
    </div>
  );
}

/** nothing when the node has no cards: most nodes have none, and an empty section says nothing */
export function GpuCards({ gpus }: { gpus: NodeGpus }) {
  if (gpus.error) return <div className="notice bad">GPU shares are not available: {gpus.error}</div>;
  if (!gpus.cards?.length) return null;
  return (
    <div className="gpucards" aria-label="GPU cards">
      {gpus.cards.map((c) => (
        <Card key={c.index} card={c} />
      ))}
    </div>
  );
}
