// "Try it": sends a V1 or V2 request through the gateway's path form and shows the answer, its
// status and how long it took. The body starts from the model's V2 metadata where the server has it.
import { useEffect, useState } from 'react';
import { authHeaders } from '../../api/session';
import type { InferenceService } from '../../api/types';
import type { ModelMetadata } from './model';
import { exampleRequest } from './model';

interface Answer {
  status: number;
  ms: number;
  body: string;
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export function TryIt({ isvc, defaultProtocol }: { isvc: InferenceService; defaultProtocol: 'v1' | 'v2' }) {
  const ns = isvc.metadata?.namespace ?? 'default';
  const name = isvc.metadata?.name ?? '';
  const base = `/serving/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
  const [protocol, setProtocol] = useState(defaultProtocol);
  const [meta, setMeta] = useState<ModelMetadata | undefined>();
  const [metaNote, setMetaNote] = useState<string>('');
  const [path, setPath] = useState(() => exampleRequest(defaultProtocol, name).path);
  const [body, setBody] = useState(() => exampleRequest(defaultProtocol, name).body);
  const [edited, setEdited] = useState(false);
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<Answer | undefined>();
  const [failure, setFailure] = useState<string | undefined>();

  // the model's inputs, once: a server without V2 metadata leaves the generic example
  useEffect(() => {
    const ctl = new AbortController();
    fetch(`${base}/v2/models/${encodeURIComponent(name)}`, { signal: ctl.signal, headers: authHeaders() })
      .then(async (r) => {
        if (!r.ok) return setMetaNote(`no model metadata (${r.status}); the example is generic`);
        const m = (await r.json()) as ModelMetadata;
        setMeta(m);
        setMetaNote(m.inputs?.length ? `example shaped from the model's inputs: ${m.inputs.map((i) => `${i.name} ${i.datatype}[${i.shape.join(',')}]`).join(', ')}` : '');
      })
      .catch(() => undefined);
    return () => ctl.abort();
  }, [base, name]);

  useEffect(() => {
    if (edited) return;
    const ex = exampleRequest(protocol, name, meta);
    setPath(ex.path);
    setBody(ex.body);
  }, [protocol, meta, name, edited]);

  const send = async (): Promise<void> => {
    setBusy(true);
    setFailure(undefined);
    const started = performance.now();
    try {
      const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...authHeaders() }, body });
      const text = await r.text();
      setAnswer({ status: r.status, ms: performance.now() - started, body: pretty(text) });
    } catch (e) {
      setAnswer(undefined);
      setFailure(`the request did not complete: ${(e as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  const bodyError = (() => {
    try {
      JSON.parse(body);
      return undefined;
    } catch (e) {
      return `the body is not valid JSON: ${(e as Error).message}`;
    }
  })();

  return (
    <div className="isvc-tryit">
      <div className="card">
        <div className="isvc-tryit-row">
          <div className="isvc-window" role="group" aria-label="protocol">
            {(['v1', 'v2'] as const).map((p) => (
              <button key={p} type="button" className={p === protocol ? 'active' : ''} aria-pressed={p === protocol} onClick={() => { setEdited(false); setProtocol(p); }}>
                {p === 'v1' ? 'V1 predict' : 'V2 infer'}
              </button>
            ))}
          </div>
          <label className="isvc-path">
            <span className="muted">POST {base}</span>
            <input aria-label="request path" value={path} onChange={(e) => { setEdited(true); setPath(e.target.value); }} spellCheck={false} />
          </label>
        </div>
        {metaNote ? <p className="muted small">{metaNote}</p> : null}
        <textarea aria-label="request body" className="isvc-body" value={body} rows={8} spellCheck={false} onChange={(e) => { setEdited(true); setBody(e.target.value); }} />
        {bodyError ? <div className="notice bad small">{bodyError}</div> : null}
        <div className="isvc-tryit-row">
          <button type="button" className="primary" disabled={busy || !!bodyError} onClick={() => void send()}>
            {busy ? 'Sending…' : 'Send'}
          </button>
          {edited ? (
            <button type="button" onClick={() => setEdited(false)}>
              Reset example
            </button>
          ) : null}
        </div>
      </div>
      {failure ? <div className="notice bad">{failure}</div> : null}
      {answer ? (
        <div className="card" aria-live="polite">
          <h3>
            Answer <span className={`badge tone-${answer.status < 300 ? 'ok' : answer.status < 500 ? 'wait' : 'bad'}`} data-testid="tryit-status">{answer.status}</span>{' '}
            <span className="muted small">{answer.ms.toFixed(1)} ms</span>
          </h3>
          <pre className="isvc-answer" data-testid="tryit-answer">{answer.body}</pre>
        </div>
      ) : null}
    </div>
  );
}
