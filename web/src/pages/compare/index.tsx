// Runs side by side: /ui/<ns>/compare?runs=a,b,c. Run facts, parameters, every scalar metric of every
// system.Metrics artifact (virtualised: no limit on how many), then the ClassificationMetrics, HTML
// and Markdown artifacts of each run next to each other. Live: the runs and their RunTask records
// come from watches, so a run still going fills in as it goes.
import { useMemo, useState } from 'react';
import { useList } from '../../api/context';
import type { Run, RunTask } from '../../api/types';
import { Link, useQueryParam } from '../../app/nav';
import { href, objectHref } from '../../app/router';
import { ArtifactView } from '../../artifacts';
import { RUN_LABEL, taskRecordsByRun } from '../../artifacts/model';
import { DataTable, type Column } from '../../components/DataTable';
import { StatusBadge } from '../../components/Status';
import { between } from '../../components/time';
import type { PageDef } from '../types';
import type { Comparison, MetricRow } from './compare';
import { buildComparison, parseRunList } from './compare';
import './compare.css';

function fmt(n: number | undefined): string {
  if (n === undefined) return '—';
  return Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(6)));
}

export function Compare({ namespace }: { namespace?: string }) {
  const [runsParam, setRunsParam] = useQueryParam('runs');
  const names = useMemo(() => parseRunList(runsParam), [runsParam]);
  const all = useList<Run>('runs', namespace, { enabled: namespace !== undefined });
  // set-based selector: only the compared runs' task records, not every run's
  const selector = names.length ? `${RUN_LABEL} in (${names.join(',')})` : undefined;
  const records = useList<RunTask>('runtasks', namespace, { labelSelector: selector, enabled: namespace !== undefined && names.length > 0 });
  const c = useMemo(
    () => buildComparison(names, all.items.filter((r) => names.includes(r.metadata.name ?? '')), taskRecordsByRun(records.items)),
    [names, all.items, records.items],
  );
  const setNames = (next: string[]): void => setRunsParam(next.join(','));

  if (!namespace) {
    return (
      <section className="page">
        <h1>Compare runs</h1>
        <p className="notice bad">Choose a namespace: runs are compared within one.</p>
      </section>
    );
  }
  return (
    <section className="page compare">
      <header className="listhead">
        <div>
          <nav className="crumbs" aria-label="Breadcrumb">
            <Link to={href({ namespace, plural: 'runs' })}>Runs</Link>
          </nav>
          <h1>Compare runs</h1>
        </div>
        <AddRun runs={all.items} chosen={names} onAdd={(n) => setNames([...names, n])} />
      </header>
      {names.length === 0 ? (
        <p className="notice">No runs chosen yet: add runs above, or select them in the runs list and press Compare.</p>
      ) : (
        <>
          <RunsTable c={c} namespace={namespace} loaded={all.loaded} onRemove={(n) => setNames(names.filter((x) => x !== n))} />
          <ParamsTable c={c} />
          <MetricsTable c={c} />
          <Panels c={c} namespace={namespace} />
        </>
      )}
    </section>
  );
}

function AddRun({ runs, chosen, onAdd }: { runs: Run[]; chosen: string[]; onAdd: (name: string) => void }) {
  const [pick, setPick] = useState('');
  const options = runs
    .filter((r) => r.metadata.name && !chosen.includes(r.metadata.name))
    .sort((a, b) => String(b.metadata.creationTimestamp ?? '').localeCompare(String(a.metadata.creationTimestamp ?? '')));
  return (
    <form
      className="actions"
      onSubmit={(e) => {
        e.preventDefault();
        if (pick) onAdd(pick);
        setPick('');
      }}
    >
      <select aria-label="Run to add" value={pick} onChange={(e) => setPick(e.target.value)}>
        <option value="">{options.length ? 'Add a run…' : 'No other runs'}</option>
        {options.map((r) => (
          <option key={r.metadata.name} value={r.metadata.name}>
            {r.metadata.name} ({r.status?.state ?? 'PENDING'})
          </option>
        ))}
      </select>
      <button type="submit" disabled={!pick}>
        Add
      </button>
    </form>
  );
}

function RunsTable({ c, namespace, loaded, onRemove }: { c: Comparison; namespace: string; loaded: boolean; onRemove: (name: string) => void }) {
  return (
    <div className="card compare-scroll">
      <table className="plain compare-table" aria-label="Runs">
        <thead>
          <tr>
            <th scope="col">Run</th>
            {c.runs.map((r) => (
              <th key={r.name} scope="col">
                <span className="compare-runhead">
                  <Link to={objectHref('runs', namespace, r.name)}>{r.name}</Link>
                  <button type="button" className="linklike small" aria-label={`Remove ${r.name} from the comparison`} onClick={() => onRemove(r.name)}>
                    ✕
                  </button>
                </span>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          <tr>
            <th scope="row">State</th>
            {c.runs.map((r) => (
              <td key={r.name}>{r.missing ? <span className="error">{loaded ? 'not found' : '…'}</span> : <StatusBadge state={r.state ?? 'PENDING'} />}</td>
            ))}
          </tr>
          <tr>
            <th scope="row">Pipeline</th>
            {c.runs.map((r) => (
              <td key={r.name}>{r.pipeline ?? '—'}</td>
            ))}
          </tr>
          <tr>
            <th scope="row">Duration</th>
            {c.runs.map((r) => (
              <td key={r.name}>{r.startedAt ? between(r.startedAt, r.finishedAt) : '—'}</td>
            ))}
          </tr>
          <tr>
            <th scope="row">Started</th>
            {c.runs.map((r) => (
              <td key={r.name} className="small">
                {r.startedAt ? new Date(r.startedAt).toLocaleString() : '—'}
              </td>
            ))}
          </tr>
        </tbody>
      </table>
    </div>
  );
}

function ParamsTable({ c }: { c: Comparison }) {
  const differing = c.params.filter((p) => p.differs).length;
  return (
    <section>
      <h2>
        Parameters <span className="muted small">{c.params.length ? `${differing} of ${c.params.length} differ` : ''}</span>
      </h2>
      {c.params.length === 0 ? (
        <p className="muted">None of these runs has parameters.</p>
      ) : (
        <div className="card compare-scroll">
          <table className="plain compare-table" aria-label="Parameters">
            <thead>
              <tr>
                <th scope="col">Parameter</th>
                {c.runs.map((r) => (
                  <th key={r.name} scope="col">
                    {r.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {c.params.map((p) => (
                <tr key={p.name} className={p.differs ? 'differs' : undefined}>
                  <th scope="row">
                    {p.name}
                    {p.differs ? <span className="visually-hidden"> (differs)</span> : null}
                  </th>
                  {p.values.map((v, i) => (
                    <td key={c.runs[i]?.name ?? i} className="mono">
                      {v ?? <span className="muted">—</span>}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function MetricsTable({ c }: { c: Comparison }) {
  const columns = useMemo<Column<MetricRow>[]>(
    () => [
      {
        id: 'metric',
        header: 'task / output / metric',
        width: 'minmax(220px, 2fr)',
        value: (m) => m.key,
        cell: (m) => (
          <span className={m.differs ? 'metric-key differs' : 'metric-key'} title={m.lowerIsBetter ? 'lower is better' : 'higher is better'}>
            {m.key}
          </span>
        ),
      },
      ...c.runs.map((r, i) => ({
        id: `run-${i}`,
        header: r.name,
        align: 'right' as const,
        width: 'minmax(110px, 1fr)',
        value: (m: MetricRow) => m.values[i],
        cell: (m: MetricRow) =>
          m.best.includes(i) ? (
            <span className="best" title={m.lowerIsBetter ? 'lowest (best)' : 'highest (best)'}>
              {fmt(m.values[i])} ★
            </span>
          ) : (
            <span className={m.values[i] === undefined ? 'muted' : undefined}>{fmt(m.values[i])}</span>
          ),
      })),
    ],
    [c.runs],
  );
  return (
    <section>
      <h2>
        Metrics <span className="muted small">from every system.Metrics artifact; ★ best (lower for losses and errors)</span>
      </h2>
      {c.metricErrors.map((e) => (
        <p key={e} className="artifact-error" role="alert">
          {e}
        </p>
      ))}
      <DataTable
        rows={c.metrics}
        columns={columns}
        rowKey={(m) => m.key}
        label="Metrics"
        empty="None of these runs has logged metrics (yet)."
        height={Math.min(420, Math.max(1, c.metrics.length) * 34 + 2)}
      />
    </section>
  );
}

const TYPE_TITLES: Record<string, string> = {
  'system.ClassificationMetrics': 'Classification metrics',
  'system.HTML': 'HTML',
  'system.Markdown': 'Markdown',
};

function Panels({ c, namespace }: { c: Comparison; namespace: string }) {
  if (c.panels.length === 0) return null;
  return (
    <section className="stack">
      <h2>Artifacts</h2>
      {c.panels.map((p) => (
        <div key={`${p.type} ${p.key}`} className="compare-panelrow">
          <h3>
            {TYPE_TITLES[p.type] ?? p.type} <span className="muted small mono">{p.key}</span>
          </h3>
          <div className="compare-panels" style={{ gridTemplateColumns: `repeat(${c.runs.length}, minmax(300px, 1fr))` }}>
            {p.refs.map((ref, i) => {
              const run = c.runs[i]?.name ?? '';
              return ref ? (
                <div key={run} className="compare-cell">
                  <div className="small muted">{run}</div>
                  <ArtifactView artifact={ref.artifact} namespace={namespace} run={run} task={ref.task} output={ref.output} index={ref.index} compact />
                </div>
              ) : (
                <div key={run} className="compare-cell">
                  <div className="small muted">{run}</div>
                  <p className="card muted">No such artifact in this run.</p>
                </div>
              );
            })}
          </div>
        </div>
      ))}
    </section>
  );
}

export const pages: PageDef[] = [{ plural: 'compare', title: 'Compare runs', page: Compare }];
