// Actual use of a node from the metrics API, read once when a page opens: allocation is live from the
// watch, use is a snapshot (its history and charts belong to the metrics pages).
import { useEffect, useState } from 'react';
import { useApi } from '../../api/context';
import { ApiError, messageOf } from '../../api/errors';

export interface NodeUsage {
  usage?: Record<string, string>;
  timestamp?: string;
  error?: string;
}

export function useNodeUsage(name: string | undefined): NodeUsage {
  const { api } = useApi();
  const [state, setState] = useState<NodeUsage>({});
  useEffect(() => {
    if (!name) return;
    let live = true;
    api.json<{ usage?: Record<string, string>; timestamp?: string }>(`/apis/metrics.k8s.io/v1beta1/nodes/${encodeURIComponent(name)}`).then(
      (m) => live && setState({ usage: m.usage, timestamp: m.timestamp }),
      (e) => live && setState({ error: e instanceof ApiError && e.code === 404 ? 'the metrics API has no sample of this node yet (it takes one every few seconds); reopen the page to see it.' : messageOf(e) }),
    );
    return () => {
      live = false;
    };
  }, [api, name]);
  return state;
}
