// Request rate, errors and latency percentiles over the last minutes, live from the gateway's
// traffic stream (one long request; each bucket arrives as it fills — no polling).
import { useEffect, useState } from 'react';
import { useApi } from '../../api/context';
import type { TrafficEvent, TrafficHistoryJson } from '../../api/types';
import { useTick } from '../../components/Age';
import { mergeBucket, trafficCharts } from './series';
import { TimeChart } from './TimeChart';

export function useTraffic(namespace: string, name: string): { history?: TrafficHistoryJson; error?: string } {
  const { api } = useApi();
  const [state, setState] = useState<{ history?: TrafficHistoryJson; error?: string }>({});
  useEffect(() => {
    const ctl = new AbortController();
    let retry: ReturnType<typeof setTimeout> | undefined;
    let delay = 1000;
    const connect = (): void => {
      let buf = '';
      api
        .stream(
          `/skiff/v1/namespaces/${encodeURIComponent(namespace)}/inferenceservices/${encodeURIComponent(name)}/traffic?watch=true`,
          (chunk) => {
            buf += chunk;
            let nl: number;
            while ((nl = buf.indexOf('\n')) >= 0) {
              const line = buf.slice(0, nl);
              buf = buf.slice(nl + 1);
              if (!line.trim()) continue;
              const e = JSON.parse(line) as TrafficEvent;
              delay = 1000;
              if (e.type === 'HISTORY') setState({ history: e.history });
              else setState((s) => (s.history ? { history: mergeBucket(s.history, e.bucket) } : s));
            }
          },
          ctl.signal,
        )
        .catch((e: Error) => {
          if (!ctl.signal.aborted) setState((s) => ({ ...s, error: e.message }));
        })
        .finally(() => {
          // the stream ended (server restart, lost connection): connect again, backing off
          if (ctl.signal.aborted) return;
          retry = setTimeout(connect, delay);
          delay = Math.min(delay * 2, 30_000);
        });
    };
    connect();
    return () => {
      ctl.abort();
      if (retry) clearTimeout(retry);
    };
  }, [api, namespace, name]);
  return state;
}

const WINDOWS = [
  { seconds: 300, label: '5 min' },
  { seconds: 900, label: '15 min' },
  { seconds: 1800, label: '30 min' },
];

export function TrafficPanel({ state }: { namespace: string; name: string; state: { history?: TrafficHistoryJson; error?: string } }) {
  const { history, error } = state;
  const [windowSeconds, setWindow] = useState(300);
  useTick(); // slides the window as time passes
  if (!history) return error ? <div className="notice bad">Traffic history: {error}</div> : <p className="muted">Loading traffic…</p>;
  const c = trafficCharts(history, Date.now(), windowSeconds);
  return (
    <div className="stack isvc-traffic">
      {error ? <div className="notice bad">Traffic history: {error} (reconnecting)</div> : null}
      <div className="isvc-traffic-head">
        <div className="isvc-totals" aria-live="polite">
          <span>
            <b data-testid="traffic-requests">{c.totals.requests}</b> requests
          </span>
          <span className={c.totals.errors ? 'tone-bad-text' : ''}>
            <b>{c.totals.errors}</b> 5xx
          </span>
          <span>
            <b>{c.totals.rejected}</b> 4xx
          </span>
          <span className="muted">in the last {WINDOWS.find((w) => w.seconds === windowSeconds)?.label}, {history.bucketSeconds} s buckets</span>
        </div>
        <div className="isvc-window" role="group" aria-label="time window">
          {WINDOWS.map((w) => (
            <button key={w.seconds} type="button" className={w.seconds === windowSeconds ? 'active' : ''} aria-pressed={w.seconds === windowSeconds} onClick={() => setWindow(w.seconds)}>
              {w.label}
            </button>
          ))}
        </div>
      </div>
      <div className="card">
        <h3>Requests and errors per second</h3>
        <TimeChart label="requests per second" data={c.rate} unit="/s" />
      </div>
      <div className="card">
        <h3>Latency at the gateway</h3>
        <TimeChart label="latency percentiles in milliseconds" data={c.latency} unit=" ms" points />
      </div>
    </div>
  );
}
