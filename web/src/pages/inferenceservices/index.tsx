// InferenceServices: a list with URL, readiness, model and traffic split; a page per service with
// its endpoints, components and the Pods behind them, revisions and an adjustable canary split,
// request rate / errors / latency live from the gateway, and a "try it" box.
import { useState } from 'react';
import { useApi, useList } from '../../api/context';
import type { Condition, InferenceService, Revision, TrafficHistoryJson } from '../../api/types';
import { Age } from '../../components/Age';
import { Conditions } from '../../components/Conditions';
import { ObjectList } from '../../components/ObjectList';
import { ObjectPage } from '../../components/ObjectPage';
import { StatusBadge, podState } from '../../components/Status';
import { Link } from '../../app/nav';
import { objectHref } from '../../app/router';
import type { DetailPageProps, ListPageProps, PageDef } from '../types';
import type { ComponentView } from './model';
import { canaryPatch, canaryState, componentsOf, endpoints, runtimeOf, shortRevision, trafficRows, trafficText } from './model';
import { TrafficPanel, useTraffic } from './Traffic';
import { TryIt } from './TryIt';
import './serving.css';

function readyOf(o: InferenceService): string | undefined {
  const c = o.status?.conditions?.find((x) => x.type === 'Ready');
  if (!c) return undefined;
  return c.status === 'True' ? 'Ready' : c.reason || 'NotReady';
}

function predictorModel(o: InferenceService): string {
  const p = componentsOf(o).find((c) => c.name === 'predictor');
  const rt = runtimeOf(o);
  return [p?.format ?? (p?.image ? 'custom' : undefined), rt].filter(Boolean).join(' · ');
}

function List({ kind, namespace }: ListPageProps) {
  return (
    <ObjectList<InferenceService>
      kind={kind}
      namespace={namespace}
      title="InferenceServices"
      state={readyOf}
      columns={[
        { id: 'url', header: 'URL', width: 330, value: (o) => o.status?.url, cell: (o) => <span className="isvc-mono small">{o.status?.url ?? '—'}</span> },
        { id: 'model', header: 'Model · runtime', width: 240, value: predictorModel, cell: (o) => predictorModel(o) || <span className="muted">—</span> },
        { id: 'traffic', header: 'Traffic', width: 170, value: (o) => trafficText(o.status?.components?.predictor?.traffic), cell: (o) => trafficText(o.status?.components?.predictor?.traffic) || <span className="muted">—</span> },
      ]}
      empty={
        <>
          No InferenceServices{namespace ? ` in ${namespace}` : ''}. Deploy one with <code>kubectl apply -f examples/serving/sklearn-digits.yaml</code>.
        </>
      }
    />
  );
}

function Resources({ r }: { r: ComponentView['resources'] }) {
  const parts = [
    ...Object.entries(r?.requests ?? {}).map(([k, v]) => `${k} ${v} requested`),
    ...Object.entries(r?.limits ?? {}).map(([k, v]) => `${k} ${v} limit`),
  ];
  return parts.length ? <>{parts.join(', ')}</> : <span className="muted">none set</span>;
}

function ComponentCard({ isvc, c, pods, revisions }: { isvc: InferenceService; c: ComponentView; pods: import('../../api/types').KObject[]; revisions: Revision[] }) {
  const mine = pods.filter((p) => p.metadata?.labels?.component === c.name);
  const revs = revisions.filter((r) => r.spec.component === c.name);
  const inProcess = revs.some((r) => r.spec.serverKind === 'in-process');
  return (
    <div className="card">
      <h3 className="isvc-comp-title">{c.name}</h3>
      <dl className="kv">
        {c.format ? (
          <>
            <dt>Model format</dt>
            <dd>{c.format}</dd>
          </>
        ) : null}
        <dt>Runtime</dt>
        <dd>{c.name === 'predictor' ? runtimeOf(isvc) ?? <span className="muted">not chosen yet</span> : c.runtime ?? (c.image ? <code>{c.image}</code> : <span className="muted">—</span>)}</dd>
        <dt>Protocol</dt>
        <dd>{c.protocol.toUpperCase()}</dd>
        {c.storageUri ? (
          <>
            <dt>Storage URI</dt>
            <dd>
              <code>{c.storageUri}</code>
            </dd>
          </>
        ) : null}
        <dt>Resources</dt>
        <dd>
          <Resources r={c.resources} />
        </dd>
        <dt>Replicas</dt>
        <dd>
          min {c.minReplicas ?? 1}, max {c.maxReplicas ? c.maxReplicas : 'unlimited'}
        </dd>
        <dt>Pods</dt>
        <dd>
          {mine.length ? (
            <ul className="isvc-pods">
              {mine.map((p) => (
                <li key={p.metadata?.name}>
                  <Link to={objectHref('pods', p.metadata?.namespace, p.metadata?.name ?? '')}>{p.metadata?.name}</Link> <StatusBadge state={podState(p)} />{' '}
                  <span className="muted small">{shortRevision(p.metadata?.labels?.['serving.knative.dev/revision'])}</span>
                </li>
              ))}
            </ul>
          ) : inProcess ? (
            <span className="muted">none: the model is served inside Skiff's own process</span>
          ) : (
            <span className="muted">none running (scaled to zero, or starting)</span>
          )}
        </dd>
      </dl>
    </div>
  );
}

function Overview({ isvc, pods, revisions }: { isvc: InferenceService; pods: import('../../api/types').KObject[]; revisions: Revision[] }) {
  const eps = endpoints(isvc, window.location.origin);
  return (
    <div className="stack">
      <div className="card">
        <h3>Endpoints</h3>
        <dl className="kv">
          {eps.map((e) => (
            <div key={e.label} className="isvc-kvrow">
              <dt>{e.label}</dt>
              <dd>
                <code>{e.url}</code>
              </dd>
            </div>
          ))}
          {Object.entries(isvc.status?.components ?? {}).map(([name, st]) =>
            st.restUrl ? (
              <div key={name} className="isvc-kvrow">
                <dt className="isvc-comp-title">{name} only</dt>
                <dd>
                  <code>{st.restUrl}</code>
                </dd>
              </div>
            ) : null,
          )}
        </dl>
        <p className="muted small">
          From a shell:{' '}
          <code>
            curl -d @body.json {eps[0]?.url}
            {componentsOf(isvc)[0]?.protocol === 'v2' ? `/v2/models/${isvc.metadata?.name}/infer` : `/v1/models/${isvc.metadata?.name}:predict`}
          </code>
        </p>
      </div>
      <div className="card">
        <h3>Conditions</h3>
        <Conditions conditions={isvc.status?.conditions as Condition[] | undefined} />
        {isvc.status?.modelStatus?.lastFailureInfo?.message ? <div className="notice bad">Model: {isvc.status.modelStatus.lastFailureInfo.reason}: {isvc.status.modelStatus.lastFailureInfo.message}</div> : null}
      </div>
      <div className="isvc-comps">
        {componentsOf(isvc).map((c) => (
          <ComponentCard key={c.name} isvc={isvc} c={c} pods={pods} revisions={revisions} />
        ))}
      </div>
    </div>
  );
}

function CanaryControl({ isvc }: { isvc: InferenceService }) {
  const { api, kinds } = useApi();
  const kind = kinds.plural('inferenceservices');
  const state = canaryState(isvc);
  const current = state.percent ?? 100;
  const [draft, setDraft] = useState<number | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const value = draft ?? current;
  const apply = async (percent: number | null): Promise<void> => {
    if (!kind) return;
    setBusy(true);
    setError(undefined);
    try {
      await api.patch(kind, isvc.metadata?.namespace, isvc.metadata?.name ?? '', canaryPatch(percent));
      setDraft(undefined);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const setNumber = (v: string): void => {
    const n = Number(v);
    setDraft(Number.isFinite(n) ? Math.max(0, Math.min(100, Math.round(n))) : current);
  };
  return (
    <div className="card isvc-canary">
      <h3>Canary</h3>
      <p className="muted small">
        {state.percent === undefined ? (
          <>No canary is set: the latest ready revision ({shortRevision(state.latest)}) takes all of the predictor's traffic. Set a percent before changing the model to roll the next revision out gradually.</>
        ) : state.percent === 0 && state.rollbackTo === undefined ? (
          <>spec.predictor.canaryTrafficPercent is 0: traffic is pinned on the previous revision. Promote to send it all to {shortRevision(state.latest)}.</>
        ) : (
          <>
            spec.predictor.canaryTrafficPercent is {state.percent}: the latest ready revision ({shortRevision(state.latest)}) takes {state.percent}% of the predictor's traffic
            {state.rollbackTo ? <>, {shortRevision(state.rollbackTo)} the rest</> : null}.
          </>
        )}
      </p>
      <div className="isvc-canary-row">
        <input type="range" min={0} max={100} step={1} value={value} aria-label="canary traffic percent" onChange={(e) => setDraft(Number(e.target.value))} disabled={busy} />
        <input type="number" min={0} max={100} step={1} value={value} aria-label="canary traffic percent (number)" className="isvc-pct" onChange={(e) => setNumber(e.target.value)} disabled={busy} />
        <span>%</span>
        <button type="button" className="primary" disabled={busy || draft === undefined || draft === state.percent} onClick={() => void apply(value)}>
          Set canary to {value}%
        </button>
        {draft !== undefined ? (
          <button type="button" onClick={() => setDraft(undefined)} disabled={busy}>
            Cancel
          </button>
        ) : null}
      </div>
      <div className="isvc-canary-row">
        <button type="button" disabled={busy || !state.canPromote} onClick={() => void apply(null)} title="Remove canaryTrafficPercent: the latest revision takes 100%">
          Promote {shortRevision(state.latest)}
        </button>
        <button type="button" className="danger" disabled={busy || !state.canRollback} onClick={() => void apply(0)} title="Set canaryTrafficPercent to 0: traffic goes back to the previous rolled-out revision">
          Roll back{state.rollbackTo ? ` to ${shortRevision(state.rollbackTo)}` : ''}
        </button>
        {!state.canRollback && !state.rollbackTo ? <span className="muted small">no earlier revision to roll back to</span> : null}
      </div>
      {error ? (
        <div className="notice bad" role="alert">
          The server refused the change: {error}
        </div>
      ) : null}
    </div>
  );
}

function SplitBar({ isvc }: { isvc: InferenceService }) {
  const rows = trafficRows(isvc.status?.components?.predictor).filter((r) => r.percent > 0);
  if (!rows.length) return <p className="muted">No traffic is routed yet.</p>;
  return (
    <div className="isvc-split" aria-label={`traffic split: ${trafficText(isvc.status?.components?.predictor?.traffic)}`} data-testid="traffic-split">
      {rows.map((r, i) => (
        <div key={r.revision} className={`isvc-split-part isvc-split-${i % 4}`} style={{ flexGrow: r.percent }} title={`${r.revision}: ${r.percent}%`}>
          {r.percent}% {shortRevision(r.revision)}
        </div>
      ))}
    </div>
  );
}

function Revisions({ isvc, revisions, history }: { isvc: InferenceService; revisions: Revision[]; history?: TrafficHistoryJson }) {
  const byName = new Map(revisions.map((r) => [r.metadata?.name ?? '', r]));
  const recent = new Map<string, number>();
  for (const b of history?.buckets ?? []) for (const [r, c] of Object.entries(b.revisions)) recent.set(r, (recent.get(r) ?? 0) + c.requests);
  const sections = Object.entries(isvc.status?.components ?? {});
  return (
    <div className="stack">
      <div className="card">
        <h3>Predictor traffic split</h3>
        <SplitBar isvc={isvc} />
      </div>
      <CanaryControl isvc={isvc} />
      {sections.map(([comp, st]) => (
        <div className="card" key={comp}>
          <h3 className="isvc-comp-title">{comp} revisions</h3>
          <table className="plain">
            <thead>
              <tr>
                <th>Revision</th>
                <th>Traffic</th>
                <th>Tag</th>
                <th>Role</th>
                <th>Ready</th>
                <th>Model</th>
                <th title="requests in the last 30 minutes">Recent requests</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              {trafficRows(st).map((r) => {
                const rev = byName.get(r.revision);
                return (
                  <tr key={r.revision}>
                    <td>
                      <b>{shortRevision(r.revision)}</b> <span className="muted small isvc-mono">{r.revision}</span>
                    </td>
                    <td>{r.percent}%</td>
                    <td>{r.tag ?? ''}</td>
                    <td className="small">{r.roles.join(', ')}</td>
                    <td>{rev ? <StatusBadge state={rev.status?.ready ? 'Ready' : rev.status?.modelState || 'Pending'} /> : <span className="muted">—</span>}</td>
                    <td className="small wrap isvc-mono">{rev?.spec.storageUri ?? ''}</td>
                    <td>{recent.get(r.revision) ?? 0}</td>
                    <td>{rev ? <Age ts={rev.metadata?.creationTimestamp} /> : null}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ))}
    </div>
  );
}

function Detail({ kind, namespace, name }: DetailPageProps) {
  const ns = namespace ?? 'default';
  const selector = `serving.kserve.io/inferenceservice=${name}`;
  const pods = useList('pods', ns, { labelSelector: selector });
  const revisions = useList<Revision>('revisions', ns, { labelSelector: selector });
  // one stream for the page: the charts keep counting while another tab is open
  const traffic = useTraffic(ns, name);
  return (
    <ObjectPage<InferenceService>
      kind={kind}
      namespace={namespace}
      name={name}
      state={readyOf}
      summary={(o) => (
        <div className="isvc-summary muted">
          <span>
            <code>{o.status?.url ?? '—'}</code>
          </span>
          <span>{predictorModel(o)}</span>
          <span>traffic {trafficText(o.status?.components?.predictor?.traffic) || '—'}</span>
        </div>
      )}
      tabs={(o) => [
        { id: 'overview', label: 'Overview', render: () => <Overview isvc={o} pods={pods.items} revisions={revisions.items} /> },
        { id: 'traffic', label: 'Revisions & traffic', render: () => <Revisions isvc={o} revisions={revisions.items} history={traffic.history} /> },
        { id: 'metrics', label: 'Metrics', render: () => <TrafficPanel namespace={ns} name={name} state={traffic} /> },
        { id: 'try', label: 'Try it', render: () => <TryIt isvc={o} defaultProtocol={componentsOf(o).find((c) => c.name === 'predictor')?.protocol ?? 'v1'} /> },
      ]}
    />
  );
}

export const pages: PageDef[] = [{ plural: 'inferenceservices', title: 'InferenceServices', section: 'Serving', order: 1, list: List, detail: Detail }];
