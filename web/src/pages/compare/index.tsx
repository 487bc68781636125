// Compare runs (/ui/<ns>/compare?runs=a,b,c): parameters, every scalar metric, and the rich artifacts
// of each run next to each other. Runs can be added and removed on the page.
import { useMemo, useState } from 'react';
import { useList } from '../../api/context';
import type { Run } from '../../api/types';
import { ArtifactView } from '../../artifacts';
import { fmt } from '../../artifacts';
import { Link, useQueryParam } from '../../app/nav';
import { href, objectHref } from '../../app/router';
import { DataTable } from '../../components/DataTable';
import { StatusBadge } from '../../components/Status';
import { between } from '../../components/time';
import { runLabel } from '../runs/RunList';
import type { PageDef } from '../types';
import type { Row } from './compare';
import { compareRuns } from './compare';
import './compare.css';

function cell(v: string | number | undefined) {
  if (v === undefined) return <span className="muted">—</span>;
  return typeof v === 'number' ? fmt(v) : v;
}

function RowsTable({ label, rows, runs, empty }: { label: string; rows: Row[]; runs: Run[]; empty: string }) {
  if (!rows.length) return <p className="muted">{empty}</p>;
  return (
    <DataTable<Row>
      label={label}
      rows={rows}
      rowKey={(r) => r.key}
      height={Math.min(420, 34 * rows.length + 4)}
      columns={[
        { id: 'key', header: label === 'metrics' ? 'Metric (task/output/name)' : 'Parameter', width: 'minmax(200px, 1.5fr)', value: (r) => r.key, cell: (r) => <span className={r.differs ? 'differs' : ''} title={r.key}>{r.key}</span> },
        ...runs.map((run, i) => ({
          id: `r${i}`,
          header: runLabel(run),
          value: (r: Row) => r.values[i],
          cell: (r: Row) => <span className={`${r.best === i ? 'best' : ''} ${r.differs ? 'differs' : ''}`}>{cell(r.values[i])}</span>,
        })),
      ]}
    />
  );
}

function Compare({ namespace }: { namespace?: string }) {
  const [param, setParam] = useQueryParam('runs');
  const names = useMemo(() => (param ?? '').split(',').map((s) => s.trim()).filter(Boolean), [param]);
  const all = useList<Run>('runs', namespace);
  const runs = names.map((n) => all.items.find((r) => r.metadata?.name === n)).filter((r): r is Run => r !== undefined);
  const missing = all.loaded ? names.filter((n) => !runs.some((r) => r.metadata?.name === n)) : [];
  const c = useMemo(() => compareRuns(runs), [runs]);
  const [adding, setAdding] = useState('');
  const others = all.items.filter((r) => !names.includes(r.metadata?.name ?? ''));
  const set = (list: string[]): void => setParam(list.join(',') || undefined);
  return (
    <section className="page compare">
      <header className="listhead">
        <h1>Compare runs</h1>
        <div className="actions">
          <select aria-label="Add a run" value={adding} onChange={(e) => setAdding(e.target.value)}>
            <option value="">Add a run…</option>
            {others.map((r) => (
              <option key={r.metadata?.name} value={r.metadata?.name}>
                {runLabel(r)}
              </option>
            ))}
          </select>
          <button type="button" disabled={!adding} onClick={() => { set([...names, adding]); setAdding(''); }}>
            Add
          </button>
        </div>
      </header>
      {missing.length ? <div className="notice bad">No run named {missing.join(', ')} in {namespace ?? 'any namespace'}.</div> : null}
      {!all.loaded ? <p className="muted">Loading…</p> : runs.length === 0 ? <p className="muted">Pick runs on the <Link to={href({ namespace, plural: 'runs' })}>runs page</Link>, or add one above.</p> : null}
      {runs.length ? (
        <>
          <div className="cmp-runs" style={{ gridTemplateColumns: `repeat(${runs.length}, minmax(200px, 1fr))` }}>
            {runs.map((r) => (
              <div key={r.metadata?.name} className="card">
                <div className="art-head">
                  <Link to={objectHref('runs', r.metadata?.namespace, r.metadata?.name ?? '')}>{runLabel(r)}</Link>
                  <button type="button" className="iconbtn" aria-label={`Remove ${runLabel(r)} from the comparison`} onClick={() => set(names.filter((n) => n !== r.metadata?.name))}>
                    ✕
                  </button>
                </div>
                <StatusBadge state={r.status?.state ?? 'PENDING'} /> <span className="muted small">{String(r.spec.pipelineSpec?.pipelineInfo?.name ?? '')} · {between(r.status?.startedAt, r.status?.finishedAt)}</span>
              </div>
            ))}
          </div>
          <h2>Parameters</h2>
          <RowsTable label="parameters" rows={c.parameters} runs={runs} empty="None of these runs takes parameters." />
          <h2>Metrics</h2>
          <RowsTable label="metrics" rows={c.metrics} runs={runs} empty="No system.Metrics artifacts in these runs." />
          {c.panels.length ? <h2>Artifacts</h2> : null}
          {c.panels.map((p) => (
            <div key={p.key} className="cmp-panel">
              <h3>
                {p.key} <span className="chip">{p.schema}</span>
              </h3>
              <div className="cmp-cells" style={{ gridTemplateColumns: `repeat(${runs.length}, minmax(0, 1fr))` }}>
                {p.cells.map((x, i) => (
                  <div key={i}>
                    {x ? <ArtifactView compact artifact={x.artifact} namespace={runs[i]!.metadata?.namespace ?? 'default'} run={runs[i]!.metadata?.name ?? ''} task={p.task} output={p.output} index={x.index} /> : <p className="muted">Not in {runLabel(runs[i]!)}.</p>}
                  </div>
                ))}
              </div>
            </div>
          ))}
        </>
      ) : null}
    </section>
  );
}

export const pages: PageDef[] = [{ plural: 'compare', title: 'Compare runs', page: Compare }];
