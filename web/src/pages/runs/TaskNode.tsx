// One task on the run graph: its state as colour and word, its kind as an icon, its duration; a loop
// shows how many iterations it has and in which states; a sub-DAG or condition says it can be opened.
import { Handle, Position } from '@xyflow/react';
import type { NodeProps } from '@xyflow/react';
import { between } from '../../components/time';
import type { NodeState } from './graph/state';
import { countsText, label } from './graph/state';
import type { GraphNode } from './graph/static';

export interface TaskNodeData extends Record<string, unknown> {
  node: GraphNode;
  state: NodeState;
  selected: boolean;
}

const ICONS: Record<GraphNode['kind'], string> = { container: '▣', importer: '⇩', dag: '◇', condition: '⋔', loop: '↻' };

export function TaskNode({ data }: NodeProps) {
  const { node, state } = data as TaskNodeData;
  const st = state.status;
  const openable = node.kind === 'dag' || node.kind === 'condition' || node.kind === 'loop';
  return (
    <div className={`tasknode st-${state.state.toLowerCase()} kind-${node.kind} ${(data as TaskNodeData).selected ? 'sel' : ''}`} title={`${node.label} — ${label(state.state)}${st?.message ? `\n${st.message}` : ''}`}>
      <Handle type="target" position={Position.Top} />
      <div className="tn-top">
        <span className="tn-icon" aria-hidden>
          {ICONS[node.kind]}
        </span>
        <span className="tn-name">{node.label}</span>
        {openable ? <span className="tn-open" aria-hidden>›</span> : null}
      </div>
      <div className="tn-sub">
        {node.kind === 'loop' && state.iterations ? (
          <span>
            {state.iterations.total} iteration{state.iterations.total === 1 ? '' : 's'}
            {state.iterations.total ? ` · ${countsText(state.iterations.counts)}` : ''}
          </span>
        ) : (
          <span>
            {label(state.state)}
            {st?.startedAt ? ` · ${between(st.startedAt, st.finishedAt)}` : ''}
            {st?.attempt ? ` · attempt ${st.attempt + 1}` : ''}
          </span>
        )}
      </div>
      <Handle type="source" position={Position.Bottom} />
    </div>
  );
}
