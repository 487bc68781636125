// A container's log, streamed live while it runs (follow=true), kept when the Pod is gone (Skiff keeps
// every container's log), with the tail first and the whole log a click away.
import { useEffect, useRef, useState } from 'react';
import { useApi } from '../api/context';
import { messageOf } from '../api/errors';

const MAX_CHARS = 2_000_000;

export function LogView({ namespace, pod, container, previous, height = 420 }: { namespace: string; pod: string; container?: string; previous?: boolean; height?: number }) {
  const { api } = useApi();
  const [text, setText] = useState('');
  const [error, setError] = useState<string>();
  const [ended, setEnded] = useState(false);
  const [follow, setFollow] = useState(true);
  const [wrap, setWrap] = useState(false);
  const box = useRef<HTMLPreElement>(null);
  useEffect(() => {
    const abort = new AbortController();
    setText('');
    setError(undefined);
    setEnded(false);
    const q = new URLSearchParams({ follow: 'true', tailLines: '5000' });
    if (container) q.set('container', container);
    if (previous) q.set('previous', 'true');
    let buf = '';
    let queued = false;
    api
      .stream(`/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/log?${q}`, (chunk) => {
        buf += chunk;
        if (buf.length > MAX_CHARS) buf = buf.slice(buf.length - MAX_CHARS);
        if (queued) return;
        queued = true;
        requestAnimationFrame(() => {
          queued = false;
          setText(buf);
        });
      }, abort.signal)
      .then(() => setEnded(true), (e) => !abort.signal.aborted && setError(messageOf(e)));
    return () => abort.abort();
  }, [api, namespace, pod, container, previous]);
  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [text, follow]);
  const q = new URLSearchParams(container ? { container } : {});
  return (
    <div className="logview">
      <div className="toolbar">
        <label>
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> Follow
        </label>
        <label>
          <input type="checkbox" checked={wrap} onChange={(e) => setWrap(e.target.checked)} /> Wrap
        </label>
        <a href={`/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/log?${q}`} target="_blank" rel="noreferrer">
          Whole log
        </a>
        <span className="muted">
          {pod}
          {container ? ` · ${container}` : ''} · {error ? '' : ended ? 'ended' : 'streaming'}
        </span>
      </div>
      {error ? <div className="error">{error}</div> : null}
      <pre ref={box} className={`log ${wrap ? 'wrap' : ''}`} style={{ height }} aria-label={`log of ${pod}`} tabIndex={0}
        onScroll={(e) => {
          const el = e.currentTarget;
          const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
          if (!atBottom && follow) setFollow(false);
        }}>
        {text || (ended ? '(empty log)' : '')}
      </pre>
    </div>
  );
}
