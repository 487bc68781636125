// A pipeline run's page: its graph, live; a timeline; its parameters and outputs; terminate and retry.
import { useEffect, useMemo } from 'react';
import { useApi, useList, useObject } from '../../api/context';
import type { KObject, Run } from '../../api/types';
import { Link } from '../../app/nav';
import { href, objectHref } from '../../app/router';
import { ObjectPage } from '../../components/ObjectPage';
import { between } from '../../components/time';
import type { DetailPageProps } from '../types';
import { elk } from './graph/elk';
import { taskRecords } from './graph/state';
import { RunGraph } from './RunGraph';
import { runLabel } from './RunList';
import { Timeline } from './Timeline';

const FINISHED = new Set(['SUCCEEDED', 'FAILED', 'CANCELED', 'SKIPPED']);

function useTasks(run: Run) {
  const name = run.metadata?.name ?? '';
  // while a run runs each task's record is its own RunTask; when it ends they fold into its status
  const live = !run.status?.tasks;
  const rts = useList('runtasks', run.metadata?.namespace, { labelSelector: `pipelines.kubeflow.org/run=${name}`, enabled: live });
  const tasks = useMemo(() => taskRecords(run, live ? rts.items : []), [run, live, rts.items]);
  return { tasks, loaded: !live || rts.loaded };
}

function GraphTab({ run }: { run: Run }) {
  const { tasks, loaded } = useTasks(run);
  return <RunGraph run={run} tasks={tasks} loaded={loaded} />;
}

function TimelineTab({ run }: { run: Run }) {
  return <Timeline tasks={useTasks(run).tasks} />;
}

function Values({ values, empty }: { values: Record<string, unknown> | undefined; empty: string }) {
  const e = Object.entries(values ?? {});
  if (!e.length) return <p className="muted">{empty}</p>;
  return (
    <table className="plain">
      <tbody>
        {e.map(([k, v]) => (
          <tr key={k}>
            <td className="pk">{k}</td>
            <td>
              <code className="pv">{typeof v === 'string' ? v : JSON.stringify(v)}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Summary({ run }: { run: Run }) {
  const st = run.status;
  const labels = run.metadata?.labels ?? {};
  const exp = labels['pipelines.kubeflow.org/experiment-id'];
  // the label holds the experiment's id; people know it by its display name
  const experiment = useObject<KObject & { spec?: { displayName?: string } }>('experiments', run.metadata?.namespace, exp).object;
  const pipeline = String(run.spec.pipelineSpec?.pipelineInfo?.name ?? '');
  const counts = st?.taskCounts ? Object.entries(st.taskCounts).map(([k, v]) => `${v} ${k.toLowerCase()}`).join(' · ') : '';
  return (
    <div className="card runsummary">
      <dl className="kv">
        <dt>Pipeline</dt>
        <dd>{pipeline || '—'}</dd>
        {exp ? (
          <>
            <dt>Experiment</dt>
            <dd>
              <Link to={objectHref('experiments', run.metadata?.namespace, exp)}>{experiment?.spec?.displayName || exp}</Link>
            </dd>
          </>
        ) : null}
        <dt>Duration</dt>
        <dd>{between(st?.startedAt, st?.finishedAt)}{st?.startedAt && !st.finishedAt ? ' so far' : ''}</dd>
        {counts ? (
          <>
            <dt>Tasks</dt>
            <dd>{counts}</dd>
          </>
        ) : null}
      </dl>
      {st?.state === 'FAILED' && (st.failedTask || st.message) ? (
        <div className="notice bad">
          {st.failedTask ? (
            <>
              Task <Link to={`?task=${encodeURIComponent(st.failedTask)}${st.failedTask.includes('.') ? `&layer=${encodeURIComponent(st.failedTask.slice(0, st.failedTask.lastIndexOf('.')))}` : ''}`}>{st.failedTask}</Link> failed
              {st.message ? ': ' : ''}
            </>
          ) : null}
          {/* the controller's message names the task again: say it once */}
          {st.failedTask && st.message ? st.message.replace(`task ${st.failedTask} failed: `, '') : st.message}
        </div>
      ) : null}
    </div>
  );
}

function Actions({ run }: { run: Run }) {
  const { api, kinds } = useApi();
  const kind = kinds.plural('runs')!;
  const state = run.status?.state ?? 'PENDING';
  const ns = run.metadata?.namespace;
  const name = run.metadata?.name ?? '';
  const fail = (e: Error): void => window.alert(e.message);
  return (
    <>
      <Link to={href({ namespace: ns, plural: 'compare', query: { runs: name } })}>Compare</Link>
      {!FINISHED.has(state) && !run.spec.terminate ? (
        <button type="button" onClick={() => window.confirm(`Terminate run ${name}? Its unfinished tasks are stopped.`) && api.patch(kind, ns, name, { spec: { terminate: true } }).catch(fail)}>
          Terminate
        </button>
      ) : null}
      {state === 'FAILED' || state === 'CANCELED' ? (
        <button type="button" onClick={() => void api.patch(kind, ns, name, { spec: { retryGeneration: (run.spec.retryGeneration ?? 0) + 1 } }).catch(fail)}>
          Retry
        </button>
      ) : null}
    </>
  );
}

export function RunDetail({ kind, namespace, name }: DetailPageProps) {
  // start ELK's worker now: fetching and parsing its script then overlaps with the run's own fetch
  // instead of following it on the way to the first paint
  useEffect(() => {
    void elk();
  }, []);
  return (
    <ObjectPage<Run>
      kind={kind}
      namespace={namespace}
      name={name}
      title={runLabel}
      state={(r) => r.status?.state ?? 'PENDING'}
      summary={(r) => <Summary run={r} />}
      actions={(r) => <Actions run={r} />}
      tabs={(r) => [
        { id: 'graph', label: 'Graph', render: () => <GraphTab run={r} /> },
        { id: 'timeline', label: 'Timeline', render: () => <TimelineTab run={r} /> },
        {
          id: 'io',
          label: 'Parameters & outputs',
          render: () => (
            <div className="grid2">
              <div className="card">
                <h3>Parameters</h3>
                <Values values={r.spec.parameters} empty="This run takes no parameters." />
              </div>
              <div className="card">
                <h3>Outputs</h3>
                <Values values={r.status?.outputs?.parameters} empty="No output parameters (yet)." />
              </div>
            </div>
          ),
        },
      ]}
    />
  );
}
