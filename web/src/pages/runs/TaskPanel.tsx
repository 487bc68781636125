// The selected task: what it read and wrote, its Pod and live log, its timing and attempts; for a
// loop, its iterations (virtualised: a loop of thousands stays usable); for a sub-DAG, a way in.
import type { Run, RunOutputs, TaskStatus } from '../../api/types';
import { ArtifactView } from '../../artifacts';
import { Link } from '../../app/nav';
import { objectHref } from '../../app/router';
import { Age } from '../../components/Age';
import { DataTable } from '../../components/DataTable';
import { LogView } from '../../components/LogView';
import { StatusBadge } from '../../components/Status';
import { between } from '../../components/time';
import { iterationsOf, label, shownState } from './graph/state';
import type { GraphNode } from './graph/static';

function Value({ v }: { v: unknown }) {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return <code className="pv" title={s}>{s.length > 300 ? `${s.slice(0, 300)}…` : s}</code>;
}

function Params({ title, params }: { title: string; params: Record<string, unknown> | undefined }) {
  const entries = Object.entries(params ?? {});
  if (!entries.length) return null;
  return (
    <div className="psec">
      <h4>{title}</h4>
      <table className="plain">
        <tbody>
          {entries.map(([k, v]) => (
            <tr key={k}>
              <td className="pk">{k}</td>
              <td>
                <Value v={v} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Artifacts({ title, io, run, path, ns }: { title: string; io: RunOutputs | undefined; run: string; path: string; ns: string }) {
  const entries = Object.entries(io?.artifacts ?? {}).filter(([, l]) => l.length);
  if (!entries.length) return null;
  return (
    <div className="psec">
      <h4>{title}</h4>
      {entries.flatMap(([output, list]) => list.map((a, i) => <ArtifactView key={`${output}/${i}`} artifact={a} namespace={ns} run={run} task={path} output={output} index={i} />))}
    </div>
  );
}

export function TaskPanel({ run, path, node, tasks, onClose, onOpen }: { run: Run; path: string; node?: GraphNode; tasks: Record<string, TaskStatus>; onClose: () => void; onOpen: (layer: string) => void }) {
  const t = tasks[path];
  const ns = run.metadata?.namespace ?? 'default';
  const name = run.metadata?.name ?? '';
  const state = shownState(t);
  const iterations = node?.kind === 'loop' ? iterationsOf(tasks, path) : [];
  return (
    <aside className="taskpanel" aria-label={`Task ${node?.label ?? path}`}>
      <header>
        <div>
          <h3>{node?.label ?? path.split('.').pop()}</h3>
          <div className="muted small">{path}</div>
        </div>
        <StatusBadge state={label(state)} />
        <button type="button" className="iconbtn" aria-label="Close the task panel" onClick={onClose}>
          ✕
        </button>
      </header>
      <dl className="kv">
        <dt>Kind</dt>
        <dd>{t?.kind ?? node?.kind ?? 'task'}</dd>
        {node?.image ? (
          <>
            <dt>Image</dt>
            <dd>
              <code>{node.image}</code>
            </dd>
          </>
        ) : null}
        <dt>Started</dt>
        <dd>{t?.startedAt ? <><Age ts={t.startedAt} /> ago</> : '—'}</dd>
        <dt>Duration</dt>
        <dd>{t?.startedAt ? between(t.startedAt, t.finishedAt) + (t.finishedAt ? '' : ' so far') : '—'}</dd>
        {t?.attempt ? (
          <>
            <dt>Attempt</dt>
            <dd>{t.attempt + 1}{t.retryAt ? <> · next at {t.retryAt}</> : null}</dd>
          </>
        ) : null}
        {t?.podName ? (
          <>
            <dt>Pod</dt>
            <dd>
              <Link to={objectHref('pods', ns, t.podName)}>{t.podName}</Link>
            </dd>
          </>
        ) : null}
        {t?.cachedFrom ? (
          <>
            <dt>Cached from</dt>
            <dd>
              <Link to={objectHref('runs', ns, t.cachedFrom.split('/')[0] ?? '')}>{t.cachedFrom}</Link>
            </dd>
          </>
        ) : null}
        {node?.condition ? (
          <>
            <dt>Condition</dt>
            <dd>
              <code>{node.condition}</code>
            </dd>
          </>
        ) : null}
        {node?.iterator ? (
          <>
            <dt>Iterates over</dt>
            <dd>
              <code>{node.iterator.items}</code>
            </dd>
          </>
        ) : null}
      </dl>
      {t?.message ? <div className={`notice ${state === 'FAILED' ? 'bad' : ''}`}>{t.message}</div> : null}
      {node && (node.kind === 'dag' || node.kind === 'condition') ? (
        <button type="button" className="primary" onClick={() => onOpen(path)}>
          Open {node.kind === 'condition' ? 'the condition’s tasks' : 'the sub-pipeline'}
        </button>
      ) : null}
      {node?.kind === 'loop' ? (
        <div className="psec">
          <h4>Iterations</h4>
          <DataTable
            label="iterations"
            rows={iterations}
            rowKey={(r) => r.path}
            height={Math.min(320, 34 * Math.max(2, iterations.length) + 4)}
            empty="No iteration has started."
            columns={[
              { id: 'i', header: '#', width: 64, value: (r) => r.index, cell: (r) => <button type="button" className="linklike" onClick={() => onOpen(r.path)}>{r.index}</button> },
              { id: 'state', header: 'State', value: (r) => shownState(r.status), cell: (r) => <StatusBadge state={label(shownState(r.status))} /> },
              { id: 'dur', header: 'Duration', width: 90, value: (r) => r.status.startedAt, cell: (r) => between(r.status.startedAt, r.status.finishedAt) },
            ]}
          />
        </div>
      ) : null}
      <Params title="Input parameters" params={t?.inputs?.parameters} />
      <Artifacts title="Input artifacts" io={t?.inputs} run={name} path={path} ns={ns} />
      <Params title="Output parameters" params={t?.outputs?.parameters} />
      <Artifacts title="Output artifacts" io={t?.outputs} run={name} path={path} ns={ns} />
      {t?.podName ? (
        <div className="psec">
          <h4>Log</h4>
          <LogView namespace={ns} pod={t.podName} height={300} />
        </div>
      ) : null}
    </aside>
  );
}
