// CPU and memory samples of some Pods of a namespace, live: ONE request to Skiff's usage history with
// ?watch=true for all of them (a browser opens at most six connections to a server, and every live
// list already holds one), which sends what it kept, then each new sample as it is taken. No
// polling; it reconnects after a drop.
import { useEffect, useState } from 'react';
import { useApi } from '../../api/context';
import { messageOf } from '../../api/errors';
import type { UsageSample, UsageWatchLine } from '../../api/workload-types';
import { mergeSamples } from './series';

export interface UsageState {
  /** by Pod name */
  samples: Record<string, UsageSample[]>;
  error?: string;
  /** the stream has answered */
  connected: boolean;
}

/** the samples of each line, by Pod: what a chunk of the stream adds */
export function parseUsageLines(lines: string[]): Record<string, UsageSample[]> {
  const out: Record<string, UsageSample[]> = {};
  for (const line of lines) {
    if (!line.trim()) continue;
    const msg = JSON.parse(line) as UsageWatchLine;
    if (msg.pod && msg.sample) (out[msg.pod] ??= []).push(msg.sample);
  }
  return out;
}

export function useUsage(namespace: string | undefined, pods: string[]): UsageState {
  const { api } = useApi();
  const [state, setState] = useState<UsageState>({ samples: {}, connected: false });
  const key = [...pods].sort().join(',');
  useEffect(() => {
    setState({ samples: {}, connected: false });
    if (!namespace || !key) return;
    const abort = new AbortController();
    let retry: ReturnType<typeof setTimeout> | undefined;
    const q = new URLSearchParams({ watch: 'true' });
    for (const p of key.split(',')) q.append('pod', p);
    const path = `/skiff/v1/namespaces/${encodeURIComponent(namespace)}/usage?${q}`;
    const open = (): void => {
      let buf = '';
      api
        .stream(path, (chunk) => {
          buf += chunk;
          const lines = buf.split('\n');
          buf = lines.pop() ?? '';
          const incoming = parseUsageLines(lines);
          setState((s) => {
            const samples = { ...s.samples };
            for (const [pod, list] of Object.entries(incoming)) samples[pod] = mergeSamples(samples[pod] ?? [], list);
            return { samples, connected: true };
          });
        }, abort.signal)
        .then(
          () => {
            // the server ended the stream (it restarted): open it again a little later
            if (!abort.signal.aborted) retry = setTimeout(open, 3000);
          },
          (e) => {
            if (abort.signal.aborted) return;
            setState((s) => ({ ...s, error: messageOf(e) }));
            retry = setTimeout(open, 5000);
          },
        );
    };
    open();
    return () => {
      abort.abort();
      if (retry) clearTimeout(retry);
    };
  }, [api, namespace, key]);
  return state;
}
