// "New experiment": an Experiment written as YAML, created through the API. The server's refusal shows
// each cause on the line of the field it names, as the object editor does for a saved object.
import { useRef, useState } from 'react';
import { useApi } from '../../api/context';
import { ApiError, messageOf } from '../../api/errors';
import type { KindInfo } from '../../api/kinds';
import { urlName } from '../../api/kinds';
import type { KObject } from '../../api/types';
import { useNav } from '../../app/nav';
import { objectHref } from '../../app/router';
import { lineOfField, parseYaml } from '../../components/yaml';
import { exampleExperiment } from './template';

interface Problem {
  line?: number;
  field?: string;
  message: string;
}

export function NewExperiment({ kind, namespace, onClose }: { kind: KindInfo; namespace: string; onClose: () => void }) {
  const { api, kinds } = useApi();
  const { navigate } = useNav();
  const [text, setText] = useState(() => exampleExperiment(namespace));
  const [problems, setProblems] = useState<Problem[]>([]);
  const [busy, setBusy] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const lines = text.split('\n').length;
  const byLine = new Map<number, Problem[]>();
  for (const p of problems) if (p.line) byLine.set(p.line, [...(byLine.get(p.line) ?? []), p]);

  function goto(line: number | undefined): void {
    const el = area.current;
    if (!el || !line) return;
    const offset = text.split('\n').slice(0, line - 1).join('\n').length + (line > 1 ? 1 : 0);
    el.focus();
    el.setSelectionRange(offset, offset);
    el.scrollTop = Math.max(0, (line - 5) * 18);
  }

  async function create(): Promise<void> {
    const parsed = parseYaml(text);
    if (parsed.problems.length) return setProblems(parsed.problems);
    const obj = parsed.value as KObject | undefined;
    if (!obj || typeof obj !== 'object') return setProblems([{ message: 'The YAML is not an object.' }]);
    const ns = obj.metadata?.namespace ?? namespace;
    setBusy(true);
    try {
      const made = await api.create<KObject>(kind, ns, obj);
      setProblems([]);
      onClose();
      navigate(objectHref(urlName(kind, kinds), made.metadata?.namespace ?? ns, made.metadata?.name ?? ''));
    } catch (e) {
      if (e instanceof ApiError) {
        const causes = e.causes.length ? e.causes : [{ message: e.message }];
        const found = causes.map((c) => ({ field: c.field, message: c.message ?? e.message, line: c.field ? lineOfField(text, c.field) : undefined }));
        setProblems(found);
        const first = found.find((p) => p.line)?.line;
        if (first && area.current) area.current.scrollTop = Math.max(0, (first - 5) * 18);
      } else setProblems([{ message: messageOf(e) }]);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card tn-newexp" aria-label="New experiment">
      <div className="tn-newexp-head">
        <h3>New experiment</h3>
        <span className="muted small">A random search over a batch Job that prints <code>loss=…</code>; edit it, or paste one of Katib&apos;s.</span>
      </div>
      {problems.length > 0 && (
        <ul className="problems" role="alert">
          {problems.map((p, i) => (
            <li key={i}>
              {p.line ? (
                <button type="button" className="linklike" onClick={() => goto(p.line)}>
                  line {p.line}
                </button>
              ) : null}
              {p.field ? <code>{p.field}</code> : null} {p.message}
            </li>
          ))}
        </ul>
      )}
      <div className="yaml-editor" style={{ height: `min(60vh, ${lines * 18 + 14}px)` }}>
        <div className="gutter" ref={gutter} aria-hidden>
          {Array.from({ length: lines }, (_, i) => {
            const ps = byLine.get(i + 1);
            return (
              <div key={i} className={ps ? 'bad' : ''} data-line={i + 1} title={ps?.map((p) => p.message).join('\n')}>
                {i + 1}
              </div>
            );
          })}
        </div>
        <textarea
          ref={area}
          aria-label="Experiment YAML"
          spellCheck={false}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
        />
      </div>
      <div className="toolbar tn-newexp-actions">
        <button type="button" className="primary" disabled={busy} onClick={() => void create()}>
          {busy ? 'Creating…' : 'Create'}
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </section>
  );
}
