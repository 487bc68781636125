// The run as a live graph: one DAG level at a time (the layer is in the URL, ?layer=), state from the
// run's task records as they change, a side panel for the selected task (?task=).
import { Background, Controls, MiniMap, ReactFlow, useReactFlow, useStore } from '@xyflow/react';
import type { Edge, Node } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { Run, TaskStatus } from '../../api/types';
import { useQueryParam } from '../../app/nav';
import { useTheme } from '../../app/theme';
import type { Positions } from './graph/layout';
import { layout, NODE_H, NODE_W } from './graph/layout';
import { nodeStates } from './graph/state';
import type { Level } from './graph/static';
import { levelGraph, resolveLayer } from './graph/static';
import { TaskNode } from './TaskNode';
import type { TaskNodeData } from './TaskNode';
import { TaskPanel } from './TaskPanel';

const nodeTypes = { task: TaskNode };

/** the minimap draws each task in its state's colour (the same variables as the nodes, so both themes work) */
const TONES: Partial<Record<string, string>> = { SUCCEEDED: 'ok', CACHED: 'info', RUNNING: 'run', PENDING: 'wait', FAILED: 'bad', SKIPPED: 'off', CANCELED: 'off', CANCELING: 'off', NOT_STARTED: 'border' };

/** `value` as it was when `key` was first seen: a new key (another object) takes the new value */
function useKeptFor<T>(value: T, key: unknown): T {
  const [kept, setKept] = useState({ key, value });
  if (kept.key !== key) setKept({ key, value });
  return kept.key === key ? kept.value : value;
}

/** `loaded`: the task records have arrived (until then every task would read as not started) */
export function RunGraph({ run, tasks, loaded = true }: { run: Run; tasks: Record<string, TaskStatus>; loaded?: boolean }) {
  // a Run's spec never changes (the API refuses it), but every watch event parses a new copy: keyed
  // by the run's uid, the graph is built and laid out once instead of on every task's change
  const spec = useKeptFor(run.spec.pipelineSpec, run.metadata?.uid);
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
  const open = useCallback((path: string): void => setLayer(path || undefined), [setLayer]);
  const select = useCallback((id: string): void => setSelected(id), [setSelected]);
  const nodes: Node[] = useMemo(
    () =>
      pos
        ? level.nodes.map((n) => ({
            id: n.id,
            type: 'task',
            position: pos.nodes.get(n.id) ?? { x: 0, y: 0 },
            // the size the CSS gives every node, told to React Flow: it keeps no measured size for
            // nodes it does not own (no onNodesChange here), and the minimap draws only sized nodes
            width: NODE_W,
            height: NODE_H,
            data: { node: n, state: states.get(n.id)!, selected: n.id === selected, onSelect: select, onOpen: open } satisfies TaskNodeData,
            selected: n.id === selected,
          }))
        : [],
    [pos, level, states, selected, select, open],
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
        <div className="canvas" data-testid="run-graph" data-ready={pos && loaded && nodes.length === level.nodes.length ? 'true' : 'false'} data-layer={layerPath}>
          {level.nodes.length === 0 && !layer.error ? <div className="empty">This DAG has no tasks.</div> : null}
          {!loaded ? <div className="graphnote muted" role="status">Loading the tasks’ states…</div> : null}
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
            // each node is a button (TaskNode): the node wrapper itself need not take focus too
            nodesFocusable={false}
            edgesFocusable={false}
            onPaneClick={() => setSelected(undefined)}
            proOptions={{ hideAttribution: true }}
          >
            <Background gap={20} size={1} />
            <Controls showInteractive={false} />
            <RefitOnResize />
            {level.nodes.length > 12 ? (
              <MiniMap
                pannable
                zoomable
                ariaLabel="Overview of the whole graph"
                nodeColor={(n) => `var(--${TONES[(n.data as TaskNodeData).state?.state ?? 'NOT_STARTED'] ?? 'off'})`}
                nodeStrokeColor="var(--border)"
                nodeBorderRadius={4}
                maskColor="color-mix(in srgb, var(--bg) 70%, transparent)"
                style={{ background: 'var(--panel)', border: '1px solid var(--border)', width: 160, height: 110 }}
              />
            ) : null}
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

/**
 * Opening or closing the task panel (or resizing the window) narrows or widens the canvas: fit the
 * graph to it again, or the nodes on the right end up under the panel.
 */
function RefitOnResize() {
  const flow = useReactFlow();
  const width = useStore((st) => st.width);
  const seen = useRef<number | undefined>(undefined);
  useEffect(() => {
    const before = seen.current;
    seen.current = width;
    if (before === undefined || before === 0 || width === before) return;
    void flow.fitView({ maxZoom: 1, padding: 0.15, duration: 150 });
  }, [width, flow]);
  return null;
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
