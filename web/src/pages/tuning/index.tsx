// Katib's kinds (kubeflow.org/v1beta1): Experiments with their trials best-first, the objective over
// trials, parallel coordinates and the Pareto front, the Suggestion's state (why it is stuck), and a
// Trial's assignments, metric curve, job and log. `experiments` is also KFP's plural, so Katib's is
// `experiments.kubeflow.org` in URLs.
import { Fragment, lazy, Suspense, useMemo, useState } from 'react';
import { useApi, useList, useObject } from '../../api/context';
import { urlName } from '../../api/kinds';
import type { ObservationLog, Suggestion, Trial, TuningExperiment as Experiment } from '../../api/types';
import type { Pod } from '../../api/workload-types';
import { Link, useQueryParam } from '../../app/nav';
import { objectHref } from '../../app/router';
import { Age } from '../../components/Age';
import { Conditions } from '../../components/Conditions';
import type { Column } from '../../components/DataTable';
import { DataTable } from '../../components/DataTable';
import { LogView } from '../../components/LogView';
import { ObjectList } from '../../components/ObjectList';
import { ObjectPage } from '../../components/ObjectPage';
import { StatusBadge } from '../../components/Status';
import { shortDuration } from '../../components/time';
import type { DetailPageProps, ListPageProps, PageDef } from '../types';
import { NewExperiment } from './NewExperiment';
import type { TrialRow } from './view';
import {
  assignmentsText,
  bestValue,
  experimentReason,
  experimentState,
  fmt,
  lastCondition,
  metricCurves,
  metricNames,
  objectiveChart,
  objectivesOf,
  parallelLines,
  parameterAxes,
  paretoData,
  rankTrials,
  spaceText,
  strategyOf,
  trialCounts,
  trialObjective,
  trialPods,
  trialState,
} from './view';
import { XYChart } from './XYChart';
import './tuning.css';

const EXPERIMENTS = 'experiments.kubeflow.org';
const TRIALS = 'trials.kubeflow.org';
const SUGGESTIONS = 'suggestions.kubeflow.org';
const OBSERVATION_LOGS = 'observationlogs.tuning.skiff.dev';
const EXPERIMENT_LABEL = 'katib.kubeflow.org/experiment';

// echarts is loaded only when a chart that needs it is shown
const ParallelCoordinates = lazy(() => import('./EChart').then((m) => ({ default: m.ParallelCoordinates })));
const ParetoScatter = lazy(() => import('./EChart').then((m) => ({ default: m.ParetoScatter })));

/** a trial's state; early-stopped trials carry a mark of their own */
function TrialBadge({ state }: { state: string }) {
  if (state === 'EarlyStopped')
    return (
      <span className="badge tone-wait tn-earlystopped" title="Stopped early by the experiment's early-stopping rule">
        EarlyStopped
      </span>
    );
  return <StatusBadge state={state} />;
}

function useHref(plural: string): (ns: string | undefined, name: string) => string {
  const { kinds } = useApi();
  const k = kinds.plural(plural);
  const p = k ? urlName(k, kinds) : plural;
  return (ns, name) => objectHref(p, ns, name);
}

// ---- Experiments -------------------------------------------------------------------------------------

function ExperimentList({ kind, namespace }: ListPageProps) {
  const [creating, setCreating] = useState(false);
  const ns = namespace ?? 'default';
  const trialHref = useHref(TRIALS);
  return (
    <>
      {creating ? (
        <div className="page tn-newexp-wrap">
          <NewExperiment kind={kind} namespace={ns} onClose={() => setCreating(false)} />
        </div>
      ) : null}
      <ObjectList<Experiment>
        kind={kind}
        namespace={namespace}
        title="Experiments"
        state={null}
        actions={
          kind.verbs.includes('create') ? (
            <button type="button" className="primary" onClick={() => setCreating(true)} disabled={creating}>
              New experiment
            </button>
          ) : null
        }
        empty={`No Katib experiments${namespace ? ` in ${namespace}` : ''}. Start one with “New experiment”.`}
        columns={[
          { id: 'type', header: 'Type', width: 120, value: (e) => lastCondition(e)?.type, cell: (e) => <StatusBadge state={lastCondition(e)?.type ?? experimentState(e)} title={lastCondition(e)?.message} /> },
          { id: 'status', header: 'Status', width: 70, value: (e) => lastCondition(e)?.status, cell: (e) => lastCondition(e)?.status ?? '—' },
          {
            id: 'trials',
            header: 'Running · succeeded · failed',
            width: 240,
            value: (e) => trialCounts(e).succeeded,
            cell: (e) => {
              const c = trialCounts(e);
              return (
                <span>
                  {c.running} · {c.succeeded} · <span className={c.failed ? 'tn-bad' : ''}>{c.failed}</span>
                  {c.earlyStopped ? <span className="muted"> · {c.earlyStopped} stopped early</span> : null}
                </span>
              );
            },
          },
          {
            id: 'best',
            header: 'Best objective',
            width: 190,
            value: (e) => bestValue(e),
            cell: (e) => {
              const v = bestValue(e);
              const t = e.status?.currentOptimalTrial?.bestTrialName;
              return v === undefined ? (
                <span className="muted">—</span>
              ) : (
                <span title={assignmentsText(e.status?.currentOptimalTrial?.parameterAssignments)}>
                  {e.spec.objective?.objectiveMetricName} {fmt(v)}
                  {t ? (
                    <>
                      {' '}
                      <Link className="muted small" to={trialHref(e.metadata?.namespace, t)}>
                        {t}
                      </Link>
                    </>
                  ) : null}
                </span>
              );
            },
          },
          { id: 'algorithm', header: 'Algorithm', width: 130, value: (e) => e.spec.algorithm?.algorithmName, cell: (e) => e.spec.algorithm?.algorithmName ?? '—' },
        ]}
      />
    </>
  );
}

function SettingsList({ settings, inline }: { settings: { name: string; value: string }[] | undefined; inline?: boolean }) {
  if (!settings?.length) return <span className="muted">{inline ? '(default settings)' : 'defaults'}</span>;
  return (
    <div className={`chips ${inline ? 'tn-inline' : ''}`}>
      {settings.map((s) => (
        <span key={s.name} className="chip">
          {s.name}={s.value}
        </span>
      ))}
    </div>
  );
}

function useTrials(e: Experiment): Trial[] {
  const list = useList<Trial>(TRIALS, e.metadata?.namespace, { labelSelector: `${EXPERIMENT_LABEL}=${e.metadata?.name}` });
  return list.items;
}

function ExperimentSummary({ e }: { e: Experiment }) {
  const trials = useTrials(e);
  const rows = useMemo(() => rankTrials(e, trials), [e, trials]);
  const trialHref = useHref(TRIALS);
  const why = experimentReason(e);
  const o = e.spec.objective ?? {};
  const objectives = objectivesOf(e);
  const c = trialCounts(e);
  const best = rows.find((r) => r.best);
  const state = experimentState(e);
  const opt = e.status?.currentOptimalTrial;
  const bestName = best?.name ?? opt?.bestTrialName;
  return (
    <div className="stack tn-summary">
      {why?.message && state !== 'Running' && state !== 'Created' ? (
        <div className={`card tn-why tn-why-${state === 'Failed' ? 'bad' : 'ok'}`}>
          <b>{why.reason}</b>: {why.message}
        </div>
      ) : null}
      <section className="card tn-best" aria-label="best trial">
        <h3>
          Best trial{' '}
          {bestName ? (
            <>
              <Link to={trialHref(e.metadata?.namespace, bestName)}>{bestName}</Link> {best ? <TrialBadge state={best.state} /> : null}
            </>
          ) : (
            <span className="muted">none yet</span>
          )}
        </h3>
        {bestName ? (
          <div className="tn-best-grid">
            <div>
              <div className="muted small">Assignments</div>
              <div className="chips">
                {(best ? Object.entries(best.params).map(([name, value]) => ({ name, value })) : opt?.parameterAssignments ?? []).map((a) => (
                  <span key={a.name} className="chip">
                    {a.name} = {a.value}
                  </span>
                ))}
              </div>
            </div>
            <div>
              <div className="muted small">Metrics</div>
              <div className="chips">
                {metricNames(e).map((m) => {
                  const v = best ? best.metrics[m] : undefined;
                  const fallback = opt?.observation?.metrics?.find((x) => x.name === m);
                  return (
                    <span key={m} className={`chip ${m === o.objectiveMetricName ? 'tn-objective' : ''}`}>
                      {m} = {v !== undefined ? fmt(v) : fallback?.latest ?? '—'}
                    </span>
                  );
                })}
              </div>
            </div>
          </div>
        ) : null}
      </section>
      <div className="tn-cards tn-facts">
        <div className="card">
          <h3>Objective</h3>
          {objectives.map((ob) => (
            <div key={ob.name}>
              <b>{ob.name}</b> <span className="muted">{ob.type} · by its {strategyOf(e, ob.name)}</span>
              {ob.name === o.objectiveMetricName && o.goal !== undefined ? (
                <span>
                  {' '}
                  · goal {o.type === 'maximize' ? '≥' : '≤'} {o.goal}
                </span>
              ) : null}
            </div>
          ))}
          {metricNames(e).length > objectives.length ? (
            <div className="muted small">also collected: {metricNames(e).filter((m) => !objectives.some((x) => x.name === m)).join(', ')}</div>
          ) : null}
        </div>
        <div className="card">
          <h3>Search</h3>
          <div>
            <b>{e.spec.algorithm?.algorithmName ?? '—'}</b> <SettingsList settings={e.spec.algorithm?.algorithmSettings} inline />
          </div>
          <div>
            <span className="muted">early stopping</span>{' '}
            {e.spec.earlyStopping?.algorithmName ? (
              <>
                <b>{e.spec.earlyStopping.algorithmName}</b> <SettingsList settings={e.spec.earlyStopping.algorithmSettings} inline />
              </>
            ) : (
              <span className="muted">none</span>
            )}
          </div>
          <div className="chips tn-params" aria-label="parameters">
            {(e.spec.parameters ?? []).map((p) => (
              <span key={p.name} className="chip" title={spaceText(p)}>
                {p.name} <span className="muted">{spaceText(p)}</span>
              </span>
            ))}
          </div>
        </div>
        <div className="card">
          <h3>Trials</h3>
          <div>
            <b>
              {c.succeeded + c.failed + c.killed + c.earlyStopped} of {e.spec.maxTrialCount ?? '∞'}
            </b>{' '}
            done · {c.running} running · {c.pending} pending <span className="muted">(≤ {e.spec.parallelTrialCount ?? 3} at once)</span>
          </div>
          <div>
            {c.succeeded} succeeded · <span className={c.failed ? 'tn-bad' : ''}>{c.failed} failed</span>
            {e.spec.maxFailedTrialCount !== undefined ? <span className="muted"> (of {e.spec.maxFailedTrialCount} allowed)</span> : null} · {c.earlyStopped} stopped early
            {c.killed ? ` · ${c.killed} killed` : ''}
          </div>
          <div className="muted">resume policy {e.spec.resumePolicy ?? 'Never'}</div>
        </div>
      </div>
    </div>
  );
}

function paramColumns(e: Experiment): Column<TrialRow>[] {
  return (e.spec.parameters ?? []).map((p) => ({
    id: `p:${p.name}`,
    header: p.name,
    width: 'minmax(80px, 1fr)',
    value: (r: TrialRow) => {
      const v = r.params[p.name];
      const n = Number(v);
      return v !== undefined && v !== '' && Number.isFinite(n) ? n : v;
    },
    cell: (r: TrialRow) => <span className="tn-mono">{r.params[p.name] ?? '—'}</span>,
  }));
}

function TrialsTab({ e }: { e: Experiment }) {
  const trials = useTrials(e);
  const rows = useMemo(() => rankTrials(e, trials), [e, trials]);
  const trialHref = useHref(TRIALS);
  const obj = e.spec.objective?.objectiveMetricName;
  const columns: Column<TrialRow>[] = [
    {
      id: 'name',
      header: 'Trial',
      width: 'minmax(160px, 1.6fr)',
      value: (r) => r.name,
      cell: (r) => (
        <>
          <Link to={trialHref(e.metadata?.namespace, r.name)}>{r.name}</Link>
          {r.best ? <span className="chip tn-bestmark">best</span> : null}
        </>
      ),
    },
    { id: 'state', header: 'State', width: 150, value: (r) => r.state, cell: (r) => <TrialBadge state={r.state} /> },
    ...paramColumns(e),
    ...metricNames(e).map(
      (m): Column<TrialRow> => ({
        id: `m:${m}`,
        header: `${m} (${strategyOf(e, m)})`,
        width: 'minmax(90px, 1fr)',
        align: 'right',
        value: (r) => r.metrics[m],
        cell: (r) => <span className={`tn-mono ${m === obj ? 'tn-objective' : ''}`}>{fmt(r.metrics[m])}</span>,
      }),
    ),
    { id: 'duration', header: 'Duration', width: 90, align: 'right', value: (r) => r.durationMs, cell: (r) => (r.durationMs === undefined ? '—' : shortDuration(r.durationMs)) },
  ];
  return (
    <DataTable
      label="trials"
      rows={rows}
      columns={columns}
      rowKey={(r) => r.name}
      rowHref={(r) => trialHref(e.metadata?.namespace, r.name)}
      empty="No trials yet: the Suggestion has not given any assignments."
      height="calc(100vh - 330px)"
    />
  );
}

function ChartsTab({ e }: { e: Experiment }) {
  const trials = useTrials(e);
  const rows = useMemo(() => rankTrials(e, trials), [e, trials]);
  const [by, setBy] = useQueryParam('x');
  const mode = by === 'time' ? 'time' : 'index';
  const type = objectivesOf(e)[0]?.type ?? 'minimize';
  const chart = objectiveChart(rows, type, mode);
  const axes = parameterAxes(e, rows);
  const lines = parallelLines(axes, rows);
  const pareto = paretoData(e, rows);
  const obj = e.spec.objective?.objectiveMetricName ?? 'objective';
  return (
    <div className="stack">
      <section className="card" aria-label="objective over trials">
        <div className="tn-chart-head">
          <h3>
            {obj} over trials <span className="muted small">({type}; {chart.points} trials with a value)</span>
          </h3>
          <div className="tn-seg" role="group" aria-label="x axis">
            <button type="button" aria-pressed={mode === 'index'} onClick={() => setBy(undefined)}>
              Trial number
            </button>
            <button type="button" aria-pressed={mode === 'time'} onClick={() => setBy('time')}>
              Completion time
            </button>
          </div>
        </div>
        {chart.points ? (
          <XYChart
            x={chart.x}
            time={mode === 'time'}
            xLabel={mode === 'time' ? 'completed' : 'trial'}
            yLabel={obj}
            label={`${obj} of each trial and the best so far`}
            count={chart.points}
            series={[{ label: 'best so far', color: '--text', values: chart.bestLine, stepped: true }, ...chart.groups.map((g) => ({ label: g.state, color: g.color, values: g.values, points: true }))]}
          />
        ) : (
          <p className="muted">No trial has reported {obj} yet.</p>
        )}
      </section>
      <section className="card" aria-label="parameters against the objective">
        <h3>
          Parameters against {obj} <span className="muted small">(one line per trial; the best is thickest)</span>
        </h3>
        {lines.length ? (
          <Suspense fallback={<p className="muted">Loading the chart…</p>}>
            <ParallelCoordinates axes={axes} lines={lines} label={`parallel coordinates of ${axes.map((a) => a.name).join(', ')}`} />
          </Suspense>
        ) : (
          <p className="muted">No trials yet.</p>
        )}
      </section>
      {pareto ? (
        <section className="card" aria-label="Pareto front">
          <h3>
            {pareto.x.name} against {pareto.y.name} <span className="muted small">({pareto.front.length} trials on the Pareto front)</span>
          </h3>
          <Suspense fallback={<p className="muted">Loading the chart…</p>}>
            <ParetoScatter data={pareto} label={`${pareto.x.name} against ${pareto.y.name} with the Pareto front`} />
          </Suspense>
        </section>
      ) : null}
    </div>
  );
}

function suggestionState(s: Suggestion): string {
  const conds = s.status?.conditions ?? [];
  for (const t of ['Failed', 'Succeeded', 'Restarting', 'Running', 'DeploymentReady', 'Created']) if (conds.some((c) => c.type === t && c.status === 'True')) return t;
  return 'Pending';
}

function SuggestionView({ s }: { s: Suggestion }) {
  const state = suggestionState(s);
  const conds = s.status?.conditions ?? [];
  const notOk = conds.filter((c) => c.status !== 'True' && c.message);
  const failed = conds.find((c) => c.type === 'Failed' && c.status === 'True');
  return (
    <div className="stack">
      {failed || notOk.length ? (
        <div className={`card tn-why tn-why-${failed ? 'bad' : 'wait'}`} role="status">
          {(failed ? [failed] : notOk).map((c) => (
            <div key={c.type}>
              <b>{c.reason || c.type}</b>: {c.message}
            </div>
          ))}
        </div>
      ) : null}
      <div className="card">
        <dl className="kv">
          <dt>State</dt>
          <dd>
            <StatusBadge state={state} />
          </dd>
          <dt>Algorithm</dt>
          <dd>
            <b>{s.spec.algorithm?.algorithmName ?? '—'}</b> <SettingsList settings={s.spec.algorithm?.algorithmSettings} />
          </dd>
          <dt>Assignments</dt>
          <dd>
            {s.status?.suggestionCount ?? 0} given of {s.spec.requests ?? 0} asked for
          </dd>
          {s.status?.algorithmSettings?.length ? (
            <>
              <dt>Algorithm state</dt>
              <dd>
                <SettingsList settings={s.status.algorithmSettings} />
              </dd>
            </>
          ) : null}
        </dl>
      </div>
      <div className="card">
        <h3>Conditions</h3>
        <Conditions conditions={conds} />
      </div>
    </div>
  );
}

function SuggestionTab({ e }: { e: Experiment }) {
  const live = useObject<Suggestion>(SUGGESTIONS, e.metadata?.namespace, e.metadata?.name);
  const sHref = useHref(SUGGESTIONS);
  if (!live.object) return <p className="muted">{live.loaded ? 'No Suggestion yet: the experiment controller makes one, named as the experiment, when the experiment starts.' : 'Loading…'}</p>;
  return (
    <div className="stack">
      <SuggestionView s={live.object} />
      <Link to={sHref(e.metadata?.namespace, e.metadata?.name ?? '')}>Open the Suggestion</Link>
    </div>
  );
}

function ExperimentDetail({ kind, namespace, name }: DetailPageProps) {
  return (
    <ObjectPage<Experiment>
      kind={kind}
      namespace={namespace}
      name={name}
      state={experimentState}
      summary={(e) => <ExperimentSummary e={e} />}
      tabs={(e) => [
        { id: 'trials', label: `Trials (${e.status?.trials ?? 0})`, render: () => <TrialsTab e={e} /> },
        { id: 'charts', label: 'Charts', render: () => <ChartsTab e={e} /> },
        { id: 'suggestion', label: 'Suggestion', render: () => <SuggestionTab e={e} /> },
      ]}
    />
  );
}

// ---- Trials ------------------------------------------------------------------------------------------

function TrialList({ kind, namespace }: ListPageProps) {
  const expHref = useHref(EXPERIMENTS);
  return (
    <ObjectList<Trial>
      kind={kind}
      namespace={namespace}
      title="Trials"
      state={null}
      columns={[
        { id: 'type', header: 'Type', width: 150, value: (t) => trialState(t), cell: (t) => <TrialBadge state={trialState(t)} /> },
        {
          id: 'experiment',
          header: 'Experiment',
          width: 170,
          value: (t) => t.metadata?.labels?.[EXPERIMENT_LABEL],
          cell: (t) => {
            const x = t.metadata?.labels?.[EXPERIMENT_LABEL];
            return x ? <Link to={expHref(t.metadata?.namespace, x)}>{x}</Link> : '—';
          },
        },
        {
          id: 'assignments',
          header: 'Assignments',
          width: 'minmax(200px, 2fr)',
          value: (t) => assignmentsText(t.spec.parameterAssignments),
          cell: (t) => (
            <span className="tn-mono small" title={assignmentsText(t.spec.parameterAssignments)}>
              {assignmentsText(t.spec.parameterAssignments)}
            </span>
          ),
        },
        {
          id: 'objective',
          header: 'Objective',
          width: 150,
          value: (t) => trialObjective(t).value,
          cell: (t) => {
            const o = trialObjective(t);
            return o.name && o.value !== undefined ? `${o.name} ${fmt(o.value)}` : '—';
          },
        },
      ]}
    />
  );
}

function TrialSummary({ t }: { t: Trial }) {
  const { kinds } = useApi();
  const expHref = useHref(EXPERIMENTS);
  const state = trialState(t);
  const conds = t.status?.conditions ?? [];
  const why = conds.find((c) => c.type === state && c.status === 'True');
  const exp = t.metadata?.labels?.[EXPERIMENT_LABEL];
  const run = t.spec.runSpec;
  const runKind = run ? kinds.of(run.apiVersion, run.kind ?? '') : undefined;
  const metrics = t.status?.observation?.metrics ?? [];
  const obj = t.spec.objective?.objectiveMetricName;
  return (
    <div className="stack tn-summary">
      {why?.message || state === 'EarlyStopped' ? (
        <div className={`card tn-why tn-why-${['Failed', 'MetricsUnavailable'].includes(state) ? 'bad' : 'ok'} ${state === 'EarlyStopped' ? 'tn-es' : ''}`}>
          <TrialBadge state={state} /> <b>{why?.reason}</b>
          {why?.message ? `: ${why.message}` : ''}
        </div>
      ) : null}
      <div className="tn-cards">
        <div className="card">
          <h3>Assignments</h3>
          <dl className="kv">
            {(t.spec.parameterAssignments ?? []).map((a) => (
              <Fragment key={a.name}>
                <dt>{a.name}</dt>
                <dd className="tn-mono">{a.value}</dd>
              </Fragment>
            ))}
          </dl>
        </div>
        <div className="card">
          <h3>Observation</h3>
          {metrics.length ? (
            <table className="plain" aria-label="observation">
              <thead>
                <tr>
                  <th>Metric</th>
                  <th>min</th>
                  <th>max</th>
                  <th>latest</th>
                </tr>
              </thead>
              <tbody>
                {metrics.map((m) => (
                  <tr key={m.name} className={m.name === obj ? 'tn-objective' : ''}>
                    <td>{m.name}</td>
                    <td className="tn-mono">{m.min}</td>
                    <td className="tn-mono">{m.max}</td>
                    <td className="tn-mono">{m.latest}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p className="muted">No metrics reported yet.</p>
          )}
        </div>
        <div className="card">
          <h3>Runs as</h3>
          <dl className="kv">
            <dt>Experiment</dt>
            <dd>{exp ? <Link to={expHref(t.metadata?.namespace, exp)}>{exp}</Link> : '—'}</dd>
            <dt>Job</dt>
            <dd>
              {run ? (
                runKind ? (
                  <Link to={objectHref(urlName(runKind, kinds), t.metadata?.namespace, t.metadata?.name ?? '', !runKind.namespaced)}>
                    {run.kind} {t.metadata?.name}
                  </Link>
                ) : (
                  `${run.kind} ${t.metadata?.name}`
                )
              ) : (
                '—'
              )}
            </dd>
            <dt>Ran</dt>
            <dd>
              {t.status?.startTime ? (
                <>
                  started <Age ts={t.status.startTime} /> ago
                  {t.status.completionTime ? <> · took {shortDuration(Date.parse(t.status.completionTime) - Date.parse(t.status.startTime))}</> : null}
                </>
              ) : (
                'not started'
              )}
            </dd>
            {t.spec.earlyStoppingRules?.length ? (
              <>
                <dt>Early stopping</dt>
                <dd>
                  {t.spec.earlyStoppingRules.map((r) => (
                    <div key={r.name} className="tn-mono small">
                      stop when {r.name} {{ less: '<', greater: '>', equal: '=' }[r.comparison] ?? r.comparison} {r.value}
                      {r.startStep ? ` from step ${r.startStep}` : ''}
                    </div>
                  ))}
                </dd>
              </>
            ) : null}
          </dl>
        </div>
      </div>
    </div>
  );
}

function MetricsTab({ t }: { t: Trial }) {
  const log = useObject<ObservationLog>(OBSERVATION_LOGS, t.metadata?.namespace, t.metadata?.name);
  const obj = t.spec.objective?.objectiveMetricName;
  const curves = metricCurves(log.object?.spec.metricLogs ?? [], obj ? [obj] : []);
  const palette = ['--accent', '--ok', '--wait', '--bad', '--run', '--muted'];
  if (!curves.points) return <p className="muted">{log.loaded || !log.object ? 'No metric values recorded for this trial yet.' : 'Loading…'}</p>;
  return (
    <section className="card" aria-label="metrics over time">
      <h3>
        Reported metrics <span className="muted small">({curves.points} values)</span>
      </h3>
      <XYChart
        x={curves.x}
        time={curves.by === 'time'}
        xLabel={curves.by === 'time' ? 'time' : 'step'}
        yLabel="value"
        label={`metrics ${curves.series.map((s) => s.name).join(', ')} over ${curves.by === 'time' ? 'time' : 'steps'}`}
        count={curves.points}
        series={curves.series.map((s, i) => ({ label: s.name, color: palette[i % palette.length]!, values: s.values }))}
      />
    </section>
  );
}

function LogsTab({ t }: { t: Trial }) {
  const pods = useList<Pod>('pods', t.metadata?.namespace);
  const mine = trialPods(t, pods.items);
  const [chosen, setChosen] = useQueryParam('pod');
  const pod = mine.find((p) => p.metadata?.name === chosen) ?? mine[0];
  if (!pod) return <p className="muted">{pods.loaded ? 'No Pod of this trial\u2019s job is left (it has not started, or the job was deleted after it ended).' : 'Loading…'}</p>;
  const container = t.spec.primaryContainerName && pod.spec?.containers?.some((c) => c.name === t.spec.primaryContainerName) ? t.spec.primaryContainerName : undefined;
  return (
    <div className="stack">
      {mine.length > 1 ? (
        <div className="tn-seg" role="group" aria-label="Pod">
          {mine.map((p) => (
            <button key={p.metadata?.name} type="button" aria-pressed={p === pod} onClick={() => setChosen(p.metadata?.name)}>
              {p.metadata?.name}
            </button>
          ))}
        </div>
      ) : null}
      <LogView namespace={t.metadata?.namespace ?? ''} pod={pod.metadata?.name ?? ''} container={container} />
    </div>
  );
}

function TrialDetail({ kind, namespace, name }: DetailPageProps) {
  return (
    <ObjectPage<Trial>
      kind={kind}
      namespace={namespace}
      name={name}
      state={trialState}
      summary={(t) => <TrialSummary t={t} />}
      tabs={(t) => [
        { id: 'metrics', label: 'Metrics', render: () => <MetricsTab t={t} /> },
        { id: 'logs', label: 'Logs', render: () => <LogsTab t={t} /> },
      ]}
    />
  );
}

// ---- Suggestions -------------------------------------------------------------------------------------

function SuggestionList({ kind, namespace }: ListPageProps) {
  return (
    <ObjectList<Suggestion>
      kind={kind}
      namespace={namespace}
      title="Suggestions"
      state={suggestionState}
      columns={[
        { id: 'algorithm', header: 'Algorithm', width: 140, value: (s) => s.spec.algorithm?.algorithmName, cell: (s) => s.spec.algorithm?.algorithmName ?? '—' },
        { id: 'given', header: 'Given · asked', width: 130, value: (s) => s.status?.suggestionCount, cell: (s) => `${s.status?.suggestionCount ?? 0} · ${s.spec.requests ?? 0}` },
        { id: 'why', header: 'Message', value: (s) => lastCondition(s)?.message, cell: (s) => <span className="muted small">{lastCondition(s)?.message}</span> },
      ]}
    />
  );
}

function SuggestionDetail({ kind, namespace, name }: DetailPageProps) {
  return <ObjectPage<Suggestion> kind={kind} namespace={namespace} name={name} state={suggestionState} tabs={(s) => [{ id: 'state', label: 'State', render: () => <SuggestionView s={s} /> }]} />;
}

export const pages: PageDef[] = [
  { plural: EXPERIMENTS, title: 'Experiments', section: 'Tuning', order: 50, list: ExperimentList, detail: ExperimentDetail },
  // Katib's other plurals have no namesake in another group: the URL names them bare
  { plural: 'trials', title: 'Trials', section: 'Tuning', order: 51, list: TrialList, detail: TrialDetail },
  { plural: 'suggestions', title: 'Suggestions', section: 'Tuning', order: 52, list: SuggestionList, detail: SuggestionDetail },
];
