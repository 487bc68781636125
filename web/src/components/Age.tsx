import { useEffect, useState } from 'react';
import { age } from './time';

/** a live age: re-renders every few seconds (one timer per page, shared) */
let tick = 0;
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;
function useTick(): number {
  const [, set] = useState(tick);
  useEffect(() => {
    const l = (): void => set(tick);
    listeners.add(l);
    timer ??= setInterval(() => {
      tick++;
      for (const f of listeners) f();
    }, 5000);
    return () => {
      listeners.delete(l);
      if (listeners.size === 0 && timer) {
        clearInterval(timer);
        timer = undefined;
      }
    };
  }, []);
  return tick;
}

export function Age({ ts }: { ts: string | undefined }) {
  useTick();
  return <time dateTime={ts} title={ts}>{age(ts)}</time>;
}

export { useTick };
