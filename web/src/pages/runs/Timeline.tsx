// A Gantt of the run's tasks: one row per task that ran, from its start to its end (or now), rows
// virtualised so that a run of thousands of tasks scrolls as one of ten.
import { useVirtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef } from 'react';
import type { TaskStatus } from '../../api/types';
import { useNav } from '../../app/nav';
import { useTick } from '../../components/Age';
import { shortDuration } from '../../components/time';
import { label, timeTicks, timelineBars } from './graph/state';

const ROW = 26;
/** the time now; `tick` names the page tick it is read for */
const clockAt = (_tick: number): number => Date.now();

export function Timeline({ tasks }: { tasks: Record<string, TaskStatus> }) {
  const tick = useTick();
  // the clock is read again when the tasks change and on each tick (running bars grow)
  const { bars, t0, t1 } = useMemo(() => timelineBars(tasks, clockAt(tick)), [tasks, tick]);
  const { navigate } = useNav();
  const box = useRef<HTMLDivElement>(null);
  const v = useVirtualizer({ count: bars.length, getScrollElement: () => box.current, estimateSize: () => ROW, overscan: 20 });
  const span = t1 - t0;
  if (!bars.length) return <p className="muted">No task has started yet.</p>;
  const select = (path: string): void => {
    const parent = path.includes('.') ? path.slice(0, path.lastIndexOf('.')) : '';
    const q = new URLSearchParams({ task: path });
    if (parent) q.set('layer', parent);
    navigate(`${window.location.pathname}?${q}`);
  };
  const ticks = timeTicks(span);
  return (
    <div className="timeline">
      <div className="tl-axis">
        <span className="tl-name muted">{bars.length} tasks · {shortDuration(span)}</span>
        <span className="tl-track">
          {ticks.map((f) => (
            <span key={f} className="tl-tick" style={{ left: `${(f / span) * 100}%` }}>
              {shortDuration(f)}
            </span>
          ))}
        </span>
      </div>
      <div className="tl-body" ref={box} style={{ height: Math.min(560, bars.length * ROW + 4) }}>
        <div style={{ height: v.getTotalSize(), position: 'relative' }}>
          {v.getVirtualItems().map((vi) => {
            const b = bars[vi.index]!;
            const left = ((b.start - t0) / span) * 100;
            // a task shorter than the timestamps' second still gets a bar that can be seen and pointed at
            const width = `max(4px, ${((b.end - b.start) / span) * 100}%)`;
            return (
              <div key={b.path} className="tl-row" style={{ transform: `translateY(${vi.start}px)`, height: ROW }}>
                <button type="button" className="tl-name linklike" title={b.path} onClick={() => select(b.path)}>
                  {b.path}
                </button>
                <span className="tl-track">
                  <span className={`tl-bar st-${b.state.toLowerCase()} ${b.running ? 'running' : ''}`} style={{ left: `${left}%`, width }} title={`${b.path}: ${label(b.state)}, ${shortDuration(b.end - b.start)}`} />
                </span>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
