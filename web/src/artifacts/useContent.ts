// Reads an artifact's content back from the server, capped: previews never fetch a whole large file.
import { useEffect, useState } from 'react';
import { authHeaders } from '../api/session';
import { contentUrl, sizeFromHeaders } from './model';

export interface Content {
  bytes?: Uint8Array;
  /** the file's whole size, from Content-Range */
  size?: number;
  error?: string;
  loading: boolean;
}

export function useContent(run: string, task: string, output: string, index: number, cap: number, enabled = true): Content {
  const [state, setState] = useState<Content>({ loading: enabled });
  useEffect(() => {
    if (!enabled) return;
    const ac = new AbortController();
    setState({ loading: true });
    (async () => {
      const res = await fetch(contentUrl(run, task, output, index, cap), { signal: ac.signal, headers: authHeaders() });
      if (!res.ok) {
        const text = await res.text();
        let message = text.trim() || `${res.status} ${res.statusText}`;
        try {
          message = (JSON.parse(text) as { message?: string }).message ?? message;
        } catch {
          /* not JSON: the text is the message */
        }
        setState({ loading: false, error: message });
        return;
      }
      const bytes = new Uint8Array(await res.arrayBuffer());
      setState({ loading: false, bytes, size: sizeFromHeaders(res.headers.get('content-range'), bytes.length) });
    })().catch((e: unknown) => {
      if (!ac.signal.aborted) setState({ loading: false, error: e instanceof Error ? e.message : String(e) });
    });
    return () => ac.abort();
  }, [run, task, output, index, cap, enabled]);
  return state;
}
