// Pods: the list says at a glance what is ready, restarting or waiting and why; a Pod's page shows its
// containers, their logs, CPU and memory over time, volumes and conditions.
import type { Pod } from '../../api/workload-types';
import { Link } from '../../app/nav';
import { objectHref } from '../../app/router';
import { Conditions } from '../../components/Conditions';
import { ObjectList } from '../../components/ObjectList';
import { MetadataCard, ObjectPage } from '../../components/ObjectPage';
import { podState } from '../../components/Status';
import { PodUsage } from '../../components/usage/PodUsage';
import type { DetailPageProps, ListPageProps, PageDef } from '../types';
import { ContainersTable, PodLogs } from './parts';
import { pendingReason, podSummary, readyCount, restartCount, volumeSource } from './view';
import './pods.css';

function PodList({ kind, namespace }: ListPageProps) {
  return (
    <ObjectList<Pod>
      kind={kind}
      namespace={namespace}
      title="Pods"
      state={(p) => podState(p)}
      columns={[
        { id: 'ready', header: 'Ready', width: 70, value: (p) => { const r = readyCount(p); return `${r.ready}/${r.total}`; }, cell: (p) => { const r = readyCount(p); return `${r.ready}/${r.total}`; } },
        { id: 'restarts', header: 'Restarts', width: 80, align: 'right', value: (p) => restartCount(p), cell: (p) => <span className={restartCount(p) ? 'warn' : ''}>{restartCount(p)}</span> },
        {
          id: 'why',
          header: 'Why (waiting, ended)',
          value: (p) => podSummary(p).reason,
          cell: (p) => {
            const why = pendingReason(p);
            const r = why ?? podSummary(p).reason;
            return r ? <span className={why ? 'pendingwhy' : 'muted'} title={r}>{r}</span> : <span className="muted">—</span>;
          },
        },
        { id: 'node', header: 'Node', width: 120, value: (p) => p.spec?.nodeName, cell: (p) => p.spec?.nodeName ?? <span className="muted">—</span> },
      ]}
    />
  );
}

function Owner({ pod }: { pod: Pod }) {
  const ref = pod.metadata?.ownerReferences?.find((r) => r.controller) ?? pod.metadata?.ownerReferences?.[0];
  if (!ref) return <span className="muted">none</span>;
  const plural = `${ref.kind.toLowerCase()}s`;
  return <Link to={objectHref(plural, pod.metadata?.namespace, ref.name)}>{ref.kind} {ref.name}</Link>;
}

function PodSummaryCard({ pod }: { pod: Pod }) {
  const s = podSummary(pod);
  const why = pendingReason(pod);
  return (
    <div className="stack">
      {why ? (
        <div className="card whycard" role="status">
          <b>Why it is {s.state === 'Pending' ? 'pending' : 'waiting'}:</b> {why}
        </div>
      ) : null}
      <div className="card summarygrid">
        <div><div className="label">Ready</div><div className="value">{s.ready}</div></div>
        <div><div className="label">Restarts</div><div className="value">{s.restarts}</div></div>
        <div><div className="label">Node</div><div className="value">{s.node ?? '—'}</div></div>
        <div><div className="label">Pod IP</div><div className="value">{pod.status?.podIP ?? '—'}</div></div>
        <div><div className="label">Restart policy</div><div className="value">{pod.spec?.restartPolicy ?? 'Always'}</div></div>
        <div><div className="label">Owner</div><div className="value"><Owner pod={pod} /></div></div>
      </div>
    </div>
  );
}

function Volumes({ pod }: { pod: Pod }) {
  const vols = pod.spec?.volumes ?? [];
  if (!vols.length) return <p className="muted">No volumes.</p>;
  const mounts = (name: string): string =>
    [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]
      .flatMap((c) => (c.volumeMounts ?? []).filter((m) => m.name === name).map((m) => `${c.name}:${m.mountPath}${m.readOnly ? ' (ro)' : ''}`))
      .join(', ');
  return (
    <table className="plain">
      <thead>
        <tr><th>Volume</th><th>Source</th><th>Mounted at</th></tr>
      </thead>
      <tbody>
        {vols.map((v) => (
          <tr key={v.name}>
            <td>{v.name}</td>
            <td>{volumeSource(v)}</td>
            <td className="wrap"><code>{mounts(v.name) || '—'}</code></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function PodDetail({ kind, namespace, name }: DetailPageProps) {
  return (
    <ObjectPage<Pod>
      kind={kind}
      namespace={namespace}
      name={name}
      state={(p) => podState(p)}
      summary={(p) => <PodSummaryCard pod={p} />}
      tabs={(p) => [
        {
          id: 'overview',
          label: 'Containers',
          render: () => (
            <div className="stack">
              <ContainersTable pod={p} />
              {/* a Pod given GPU cards has their charts too, once its processes use them */}
              <h2>{p.spec?.containers?.some((c) => c.resources?.limits?.['nvidia.com/gpu'] !== undefined) ? 'CPU, memory and GPU' : 'CPU and memory'}</h2>
              <PodUsage namespace={p.metadata?.namespace ?? ''} pod={p.metadata?.name ?? ''} phase={p.status?.phase} />
            </div>
          ),
        },
        { id: 'logs', label: 'Logs', render: () => <PodLogs pods={[p]} namespace={p.metadata?.namespace ?? ''} /> },
        { id: 'volumes', label: 'Volumes', render: () => <Volumes pod={p} /> },
        { id: 'details', label: 'Details', render: () => <div className="stack"><MetadataCard obj={p} /><div className="card"><h3>Conditions</h3><Conditions conditions={p.status?.conditions} /></div></div> },
      ]}
    />
  );
}

export const pages: PageDef[] = [{ plural: 'pods', title: 'Pods', section: 'Workloads', order: 50, list: PodList, detail: PodDetail }];
