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
import { countsText, iterationRows, label, nodeState, shownState } from './graph/state';
import type { GraphNode } from './graph/static';
import { taskAt } from './graph/static';

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

/** a loop's literal items, shortened: a list of thousands would push the rest of the panel away */
function Items({ items, literal }: { items: string; literal?: boolean }) {
  if (!literal) return <code>{items.replace(/^pipelinechannel--/, '')}</code>;
  let n: number | undefined;
  try {
    const v: unknown = JSON.parse(items);
    if (Array.isArray(v)) n = v.length;
  } catch {
    n = undefined;
  }
  return (
    <>
      {n !== undefined ? <span className="muted">{n} item{n === 1 ? '' : 's'}: </span> : null}
      <code className="pv" title={items.length > 80 ? `${items.slice(0, 2000)}${items.length > 2000 ? '…' : ''}` : undefined}>
        {items.length > 80 ? `${items.slice(0, 80)}…` : items}
      </code>
    </>
  );
}

export function TaskPanel({ run, path, node, tasks, onClose, onOpen }: { run: Run; path: string; node?: GraphNode; tasks: Record<string, TaskStatus>; onClose: () => void; onOpen: (layer: string) => void }) {
  const t = tasks[path];
  const ns = run.metadata?.namespace ?? 'default';
  const name = run.metadata?.name ?? '';
  const state = shownState(t);
  const loop = node?.kind === 'loop' ? nodeState(node, tasks).iterations : undefined;
  const iterations = loop ? iterationRows(tasks, path, loop.total) : [];
  if (!node && !t && !taskAt(run.spec.pipelineSpec, path)) {
    // a shared link to a task that is not there (a typo, or a link from another pipeline's run)
    return (
      <aside className="taskpanel" aria-label={`Task ${path}`}>
        <header>
          <div>
            <h3>{path}</h3>
          </div>
          <button type="button" className="iconbtn" aria-label="Close the task panel" onClick={onClose}>
            ✕
          </button>
        </header>
        <div className="notice bad" role="status">
          This run’s pipeline has no task <code>{path}</code>.
        </div>
      </aside>
    );
  }
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
              <Items items={node.iterator.items} literal={node.iterator.literal} />
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
          {loop?.total ? <p className="muted small">{countsText(loop.counts)}. Open one to see its tasks as a graph.</p> : null}
          <DataTable
            label="iterations"
            rows={iterations}
            rowKey={(r) => r.path}
            height={Math.min(320, 34 * Math.max(2, iterations.length) + 4)}
            empty="No iteration has started."
            columns={[
              { id: 'i', header: '#', width: 64, value: (r) => r.index, cell: (r) => <button type="button" className="linklike" aria-label={`Open iteration ${r.index}`} onClick={() => onOpen(r.path)}>{r.index}</button> },
              { id: 'state', header: 'State', value: (r) => shownState(r.status), cell: (r) => <StatusBadge state={label(shownState(r.status))} title={r.status?.message} /> },
              { id: 'dur', header: 'Duration', width: 90, value: (r) => r.status?.startedAt, cell: (r) => (r.status?.startedAt ? between(r.status.startedAt, r.status.finishedAt) : '—') },
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
