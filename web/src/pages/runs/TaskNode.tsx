// One task on the run graph: its state as colour and word, its kind as an icon, its duration; a loop
// shows how many iterations it has and in which states, with a bar of their shares; a sub-DAG or
// condition says it can be opened. The node is a button (and "open" a second one), so the graph is
// reachable from the keyboard like the rest of the page.
import { Handle, Position } from '@xyflow/react';
import type { NodeProps } from '@xyflow/react';
import { between } from '../../components/time';
import type { NodeState, Shown } from './graph/state';
import { countsText, label } from './graph/state';
import type { GraphNode } from './graph/static';
import { isPseudo } from './graph/static';

export interface TaskNodeData extends Record<string, unknown> {
  node: GraphNode;
  state: NodeState;
  selected: boolean;
  onSelect: (id: string) => void;
  onOpen: (id: string) => void;
}

const ICONS: Record<GraphNode['kind'], string> = { container: '▣', importer: '⇩', dag: '◇', condition: '⋔', loop: '↻', inputs: '→', outputs: '→' };
const KIND_WORDS: Record<GraphNode['kind'], string> = { container: 'task', importer: 'importer', dag: 'sub-pipeline', condition: 'condition', loop: 'loop', inputs: 'inputs', outputs: 'outputs' };
/** the loop bar's segments, left to right: what is done first */
const BAR: Shown[] = ['SUCCEEDED', 'CACHED', 'SKIPPED', 'FAILED', 'CANCELED', 'CANCELING', 'RUNNING', 'PENDING', 'NOT_STARTED'];

function loopLine(it: NonNullable<NodeState['iterations']>): string {
  const c = it.counts;
  const done = (c.SUCCEEDED ?? 0) + (c.CACHED ?? 0) + (c.SKIPPED ?? 0);
  const parts = [it.total ? `${done}/${it.total} done` : 'no iterations yet'];
  if (c.RUNNING) parts.push(`${c.RUNNING} running`);
  if (c.FAILED) parts.push(`${c.FAILED} failed`);
  return parts.join(' · ');
}

/** a sub-DAG's progress in a few words: what is done, and what runs or failed inside */
function insideLine(c: Partial<Record<Shown, number>>): string {
  const done = (c.SUCCEEDED ?? 0) + (c.CACHED ?? 0);
  const parts = [`${done} task${done === 1 ? '' : 's'} done`];
  if (c.RUNNING) parts.push(`${c.RUNNING} running`);
  if (c.FAILED) parts.push(`${c.FAILED} failed`);
  return parts.join(' · ');
}

export function TaskNode({ data }: NodeProps) {
  const { node, state, selected, onSelect, onOpen } = data as TaskNodeData;
  if (isPseudo(node)) return <IoNode node={node} />;
  const st = state.status;
  const openable = node.kind === 'dag' || node.kind === 'condition';
  const it = node.kind === 'loop' ? state.iterations : undefined;
  const words = `${node.label}, ${KIND_WORDS[node.kind]}: ${label(state.state)}${it ? `, ${countsText(it.counts)}` : ''}${state.inside ? `, inside: ${countsText(state.inside)}` : ''}`;
  return (
    <div className={`tasknode st-${state.state.toLowerCase()} kind-${node.kind} ${selected ? 'sel' : ''}`} data-task={node.id} title={`${words}${st?.message ? `\n${st.message}` : ''}`}>
      <Handle type="target" position={Position.Top} />
      <button type="button" className="tn-main nodrag" aria-label={words} aria-pressed={selected} onClick={() => onSelect(node.id)} onDoubleClick={() => openable && onOpen(node.id)}>
        <span className="tn-top">
          <span className="tn-icon" aria-hidden>
            {ICONS[node.kind]}
          </span>
          <span className="tn-name">{node.label}</span>
        </span>
        <span className="tn-sub">
          {it ? (
            loopLine(it)
          ) : (
            <>
              {label(state.state)}
              {st?.startedAt ? ` · ${between(st.startedAt, st.finishedAt)}` : ''}
              {st?.attempt ? ` · attempt ${st.attempt + 1}` : ''}
              {state.inside ? ` · ${insideLine(state.inside)}` : ''}
            </>
          )}
        </span>
      </button>
      {openable ? (
        <button type="button" className="tn-open nodrag" aria-label={`Open ${node.label}`} title={`Open ${node.label}: its tasks as a graph`} onClick={() => onOpen(node.id)}>
          ›
        </button>
      ) : null}
      {it && it.total ? (
        <span className="tn-bar" aria-hidden>
          {BAR.filter((s) => it.counts[s]).map((s) => (
            <i key={s} className={`st-${s.toLowerCase()}`} style={{ width: `${((it.counts[s] ?? 0) / it.total) * 100}%` }} />
          ))}
        </span>
      ) : null}
      <Handle type="source" position={Position.Bottom} />
    </div>
  );
}

/** where the layer's values come in (the pipeline's or the sub-DAG's inputs) or go out: no state, nothing to open */
function IoNode({ node }: { node: GraphNode }) {
  const names = node.names ?? [];
  const text = names.length > 3 ? `${names.slice(0, 3).join(', ')} +${names.length - 3}` : names.join(', ');
  return (
    <div className={`tasknode kind-${node.kind}`} data-task={node.id} role="group" aria-label={`${node.label}: ${names.join(', ')}`} title={`${node.label}: ${names.join(', ')}`}>
      {node.kind === 'outputs' ? <Handle type="target" position={Position.Top} /> : null}
      <span className="tn-main">
        <span className="tn-top">
          <span className="tn-name">{node.label}</span>
        </span>
        <span className="tn-sub">{text}</span>
      </span>
      {node.kind === 'inputs' ? <Handle type="source" position={Position.Bottom} /> : null}
    </div>
  );
}
