// Pieces the Pod, Job and training job pages share: a table of Pods, the log of one picked Pod and
// container (the pick lives in the URL), and the containers of a Pod.
import type { ReactNode } from 'react';
import { useQueryParam } from '../../app/nav';
import { Link } from '../../app/nav';
import { objectHref } from '../../app/router';
import { Age } from '../../components/Age';
import { LogView } from '../../components/LogView';
import { StatusBadge } from '../../components/Status';
import type { Pod } from '../../api/workload-types';
import { UsageCharts } from '../../components/usage/PodUsage';
import { useUsage } from '../../components/usage/useUsage';
import { sharedRange } from '../../components/usage/series';
import { containerRows, podSummary } from './view';
import type { StateText } from './view';
import './pods.css';

export function StateCell({ s }: { s: StateText }) {
  return (
    <span className="ctrstate">
      <StatusBadge state={s.label} />
      {s.exitCode !== undefined ? <span className={s.exitCode === 0 ? 'muted' : 'exitbad'}>exit {s.exitCode}</span> : null}
      {s.since ? (
        <span className="muted small">
          <Age ts={s.since} /> ago
        </span>
      ) : null}
      {s.detail ? <span className="muted small wrap">{s.detail}</span> : null}
    </span>
  );
}

/** the Pods of a Job or replica type: a plain table (they are few), each row linking to the Pod */
export function PodTable({ pods, extra, onLogs }: { pods: Pod[]; extra?: { header: string; cell: (p: Pod) => ReactNode }; onLogs?: (pod: string) => void }) {
  if (!pods.length) return <p className="muted">No Pods.</p>;
  return (
    <table className="plain podtable">
      <thead>
        <tr>
          {extra ? <th>{extra.header}</th> : null}
          <th>Pod</th>
          <th>State</th>
          <th>Ready</th>
          <th>Restarts</th>
          <th>Exit codes</th>
          <th>Reason</th>
          <th>Node</th>
          <th>Age</th>
          {onLogs ? <th /> : null}
        </tr>
      </thead>
      <tbody>
        {pods.map((p) => {
          const s = podSummary(p);
          return (
            <tr key={p.metadata?.uid ?? s.name}>
              {extra ? <td>{extra.cell(p)}</td> : null}
              <td>
                <Link to={objectHref('pods', s.namespace, s.name)}>{s.name}</Link>
              </td>
              <td>
                <StatusBadge state={s.state} />
              </td>
              <td>{s.ready}</td>
              <td className={s.restarts ? 'warn' : ''}>{s.restarts}</td>
              <td>{s.exitCodes ? <span className={/^0(, 0)*$/.test(s.exitCodes) ? '' : 'exitbad'}>{s.exitCodes}</span> : <span className="muted">—</span>}</td>
              <td className="wrap reasoncell">{s.reason ?? <span className="muted">—</span>}</td>
              <td>{s.node ?? <span className="muted">—</span>}</td>
              <td>
                <Age ts={s.created} />
              </td>
              {onLogs ? (
                <td>
                  <button type="button" className="linklike" onClick={() => onLogs(s.name)} aria-label={`logs of ${s.name}`}>
                    Logs
                  </button>
                </td>
              ) : null}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** pick a Pod (and a container) and read its log, streamed live */
export function PodLogs({ pods, namespace, labelOf }: { pods: Pod[]; namespace: string; labelOf?: (p: Pod) => string }) {
  const [picked, setPicked] = useQueryParam('pod');
  const [container, setContainer] = useQueryParam('container');
  const [prev, setPrev] = useQueryParam('previous');
  if (!pods.length) return <p className="muted">No Pods yet: logs appear once a Pod starts.</p>;
  const pod = pods.find((p) => p.metadata?.name === picked) ?? pods[0];
  if (!pod) return null;
  const name = pod.metadata?.name ?? '';
  const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.name);
  const ctr = container && containers.includes(container) ? container : pod.spec?.containers?.[0]?.name;
  const restarted = (pod.status?.containerStatuses ?? []).some((c) => c.name === ctr && c.restartCount > 0);
  return (
    <div className="podlogs">
      <div className="podpicker" role="group" aria-label="Pod">
        {pods.map((p) => {
          const n = p.metadata?.name ?? '';
          const s = podSummary(p);
          return (
            <button key={n} type="button" aria-pressed={p === pod} className={p === pod ? 'picked' : ''} onClick={() => { setPicked(n); setContainer(undefined); setPrev(undefined); }}>
              <span>{labelOf ? labelOf(p) : n}</span> <StatusBadge state={s.state} />
            </button>
          );
        })}
      </div>
      <div className="toolbar">
        {containers.length > 1 ? (
          <label>
            Container{' '}
            <select value={ctr} onChange={(e) => setContainer(e.target.value)}>
              {containers.map((c) => (
                <option key={c}>{c}</option>
              ))}
            </select>
          </label>
        ) : null}
        {restarted ? (
          <label>
            <input type="checkbox" checked={prev === 'true'} onChange={(e) => setPrev(e.target.checked ? 'true' : undefined)} /> Previous run (before the last restart)
          </label>
        ) : null}
      </div>
      <LogView key={`${name}/${ctr}/${prev}`} namespace={namespace} pod={name} container={ctr} previous={prev === 'true' && restarted} height={380} />
    </div>
  );
}

export function ContainersTable({ pod }: { pod: Pod }) {
  const rows = containerRows(pod);
  return (
    <table className="plain ctrtable">
      <thead>
        <tr>
          <th>Container</th>
          <th>Image and command</th>
          <th>State</th>
          <th>Restarts</th>
          <th>Last state</th>
          <th>Requests</th>
          <th>Limits</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={`${r.init}/${r.name}`}>
            <td>
              <b>{r.name}</b>
              {r.init ? <span className="kindtag small">init</span> : null}
              {r.ready ? <span className="muted small"> ready</span> : null}
            </td>
            <td className="wrap">
              <code>{r.image ?? '—'}</code>
              {r.command ? <div className="cmd" title={r.command}>{r.command}</div> : null}
            </td>
            <td>
              <StateCell s={r.state} />
            </td>
            <td className={r.restarts ? 'warn' : ''}>{r.restarts}</td>
            <td>{r.last ? <StateCell s={r.last} /> : <span className="muted">—</span>}</td>
            <td>{r.requests}</td>
            <td>{r.limits}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** CPU and memory of each Pod in a group, one row of charts per Pod */
export function PodsUsage({ pods, labelOf }: { pods: Pod[]; labelOf?: (p: Pod) => string }) {
  const usage = useUsage(pods[0]?.metadata?.namespace, pods.map((p) => p.metadata?.name ?? ''));
  const xRange = sharedRange(usage.samples);
  if (!pods.length) return <p className="muted">No Pods.</p>;
  return (
    <div className="stack">
      {pods.length > 1 ? <p className="muted small usagenote">One time axis for every Pod, so the replicas line up.</p> : null}
      {pods.map((p) => (
        <section key={p.metadata?.uid} className="podusage">
          <h3>
            <Link to={objectHref('pods', p.metadata?.namespace, p.metadata?.name ?? '')}>{labelOf ? labelOf(p) : p.metadata?.name}</Link> <StatusBadge state={podSummary(p).state} />
          </h3>
          <UsageCharts samples={usage.samples[p.metadata?.name ?? ''] ?? []} phase={p.status?.phase} height={130} error={usage.error} xRange={xRange} />
        </section>
      ))}
    </div>
  );
}
