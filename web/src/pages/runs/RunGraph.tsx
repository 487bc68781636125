// The run as a live graph: one DAG level at a time (the layer is in the URL, ?layer=), state from the
// run's task records as they change, a side panel for the selected task (?task=).
import { Background, Controls, MiniMap, ReactFlow } from '@xyflow/react';
import type { Edge, Node } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useEffect, useMemo, useState } from 'react';
import type { Run, TaskStatus } from '../../api/types';
import { useQueryParam } from '../../app/nav';
import { useTheme } from '../../app/theme';
import type { Positions } from './graph/layout';
import { layout } from './graph/layout';
import { nodeStates } from './graph/state';
import type { Level } from './graph/static';
import { levelGraph, resolveLayer } from './graph/static';
import { TaskNode } from './TaskNode';
import type { TaskNodeData } from './TaskNode';
import { TaskPanel } from './TaskPanel';

const nodeTypes = { task: TaskNode };

export function RunGraph({ run, tasks }: { run: Run; tasks: Record<string, TaskStatus> }) {
  const spec = run.spec.pipelineSpec;
  const [layerParam, setLayer] = useQueryParam('layer');
  const [selected, setSelected] = useQueryParam('task');
  const layerPath = layerParam ?? '';
  const layer = useMemo(() => resolveLayer(spec, layerPath), [spec, layerPath]);
  const level: Level = useMemo(() => levelGraph(spec, layer.component, layerPath), [spec, layer, layerPath]);
  const states = useMemo(() => nodeStates(level, tasks), [level, tasks]);
  const [pos, setPos] = useState<Positions>();
  const [layoutError, setLayoutError] = useState<string>();
  const theme = useTheme();
  useEffect(() => {
    let live = true;
    setPos(undefined);
    layout(level).then(
      (p) => live && setPos(p),
      (e: Error) => live && setLayoutError(e.message),
    );
    return () => {
      live = false;
    };
  }, [level]);
  const nodes: Node[] = useMemo(
    () =>
      pos
        ? level.nodes.map((n) => ({
            id: n.id,
            type: 'task',
            position: pos.nodes.get(n.id) ?? { x: 0, y: 0 },
            data: { node: n, state: states.get(n.id)!, selected: n.id === selected } satisfies TaskNodeData,
            selected: n.id === selected,
            ariaLabel: `${n.label}: ${states.get(n.id)?.state.toLowerCase()}`,
          }))
        : [],
    [pos, level, states, selected],
  );
  const edges: Edge[] = useMemo(
    () =>
      level.edges.map((e) => {
        const target = states.get(e.target)?.state;
        return {
          id: e.id,
          source: e.source,
          target: e.target,
          label: e.label || undefined,
          type: 'smoothstep',
          animated: target === 'RUNNING',
          className: `edge-${e.kind}`,
          labelBgPadding: [4, 2] as [number, number],
          labelBgBorderRadius: 3,
        };
      }),
    [level, states],
  );
  const open = (path: string): void => {
    setLayer(path || undefined);
  };
  const selectedNode = level.nodes.find((n) => n.id === selected);
  return (
    <div className="rungraph">
      <nav className="layers" aria-label="Pipeline layers">
        {layer.crumbs.map((c, i) => (
          <span key={c.path}>
            {i > 0 ? <span className="muted"> / </span> : null}
            {i === layer.crumbs.length - 1 ? (
              <b>{c.label}</b>
            ) : (
              <button type="button" className="linklike" onClick={() => open(c.path)}>
                {c.label}
              </button>
            )}
          </span>
        ))}
        {layer.iterationOf ? <span className="muted"> · one iteration of the loop; the others are listed in the loop's panel</span> : null}
      </nav>
      {layer.error ? <div className="notice bad">{layer.error}</div> : null}
      {layoutError ? <div className="notice bad">The graph could not be laid out: {layoutError}</div> : null}
      <div className={`graphwrap ${selected ? 'with-panel' : ''}`}>
        <div className="canvas" data-testid="run-graph" data-ready={pos && nodes.length === level.nodes.length ? 'true' : 'false'} data-layer={layerPath}>
          {level.nodes.length === 0 && !layer.error ? <div className="empty">This DAG has no tasks.</div> : null}
          <ReactFlow
            key={layerPath}
            nodes={nodes}
            edges={edges}
            nodeTypes={nodeTypes}
            colorMode={theme}
            fitView
            fitViewOptions={{ maxZoom: 1, padding: 0.15 }}
            minZoom={0.1}
            nodesDraggable={false}
            nodesConnectable={false}
            onNodeClick={(_, n) => setSelected(n.id)}
            onNodeDoubleClick={(_, n) => {
              const gn = level.nodes.find((x) => x.id === n.id);
              if (gn && (gn.kind === 'dag' || gn.kind === 'condition')) open(gn.id);
            }}
            onPaneClick={() => setSelected(undefined)}
            proOptions={{ hideAttribution: true }}
          >
            <Background gap={20} size={1} />
            <Controls showInteractive={false} />
            {level.nodes.length > 12 ? <MiniMap pannable zoomable /> : null}
          </ReactFlow>
        </div>
        {selected ? (
          <TaskPanel
            run={run}
            path={selected}
            node={selectedNode}
            tasks={tasks}
            onClose={() => setSelected(undefined)}
            onOpen={(p) => {
              setSelected(undefined);
              open(p);
            }}
          />
        ) : null}
      </div>
      <Legend />
    </div>
  );
}

function Legend() {
  const items: [string, string][] = [
    ['succeeded', 'Succeeded'],
    ['running', 'Running'],
    ['pending', 'Pending'],
    ['failed', 'Failed'],
    ['cached', 'Cached'],
    ['skipped', 'Skipped (condition false)'],
    ['not_started', 'Not started'],
  ];
  return (
    <div className="legend" aria-label="Legend">
      {items.map(([k, l]) => (
        <span key={k} className={`lg st-${k}`}>
          <i />
          {l}
        </span>
      ))}
      <span className="lg">▣ task · ↻ loop · ◇ sub-pipeline · ⋔ condition</span>
    </div>
  );
}
