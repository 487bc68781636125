// An object's YAML, read and edited in place. Saving replaces the object (the server validates it,
// with unknown fields refused); a refusal shows each cause on the line of the field it names.
import { useEffect, useMemo, useRef, useState } from 'react';
import { useApi } from '../api/context';
import { ApiError, messageOf } from '../api/errors';
import type { KindInfo } from '../api/kinds';
import type { KObject } from '../api/types';
import { lineOfField, parseYaml, toYaml } from './yaml';

interface Problem {
  line?: number;
  field?: string;
  message: string;
}

function withoutNoise(o: KObject): KObject {
  const copy = structuredClone(o) as KObject;
  if (copy.metadata) delete (copy.metadata as Record<string, unknown>).managedFields;
  return copy;
}

export function YamlEditor({ kind, object }: { kind: KindInfo; object: KObject }) {
  const { api } = useApi();
  const original = useMemo(() => toYaml(withoutNoise(object)), [object]);
  const [text, setText] = useState(original);
  const [editing, setEditing] = useState(false);
  const [problems, setProblems] = useState<Problem[]>([]);
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  // while not editing, the view follows the live object
  useEffect(() => {
    if (!editing) setText(original);
  }, [original, editing]);
  const dirty = text !== original;
  const lines = text.split('\n').length;
  const byLine = new Map<number, Problem[]>();
  for (const p of problems) if (p.line) byLine.set(p.line, [...(byLine.get(p.line) ?? []), p]);

  async function save(): Promise<void> {
    setSaved(false);
    const parsed = parseYaml(text);
    if (parsed.problems.length) return setProblems(parsed.problems);
    setSaving(true);
    try {
      await api.replace(kind, object.metadata?.namespace, object.metadata?.name ?? '', parsed.value);
      setProblems([]);
      setEditing(false);
      setSaved(true);
    } catch (e) {
      if (e instanceof ApiError) {
        const causes = e.causes.length ? e.causes : [{ message: e.message }];
        setProblems(causes.map((c) => ({ field: c.field, message: c.message ?? e.message, line: c.field ? lineOfField(text, c.field) : undefined })));
      } else setProblems([{ message: messageOf(e) }]);
    } finally {
      setSaving(false);
    }
  }

  // a refusal scrolls the editor to the first line it names
  useEffect(() => {
    const first = problems.find((p) => p.line)?.line;
    if (first) goto(first, false);
  }, [problems]);

  function goto(line: number | undefined, focus = true): void {
    const el = area.current;
    if (!el || !line) return;
    const offset = text.split('\n').slice(0, line - 1).join('\n').length + (line > 1 ? 1 : 0);
    if (focus) {
      el.focus();
      el.setSelectionRange(offset, offset);
    }
    el.scrollTop = Math.max(0, (line - 5) * 18);
    el.closest('.yaml')?.scrollIntoView({ block: 'nearest' });
  }

  return (
    <div className="yaml">
      <div className="toolbar">
        {!editing ? (
          <button type="button" onClick={() => setEditing(true)} disabled={!kind.verbs.includes('update')}>
            Edit
          </button>
        ) : (
          <>
            <button type="button" className="primary" onClick={() => void save()} disabled={saving || !dirty}>
              {saving ? 'Saving…' : 'Save'}
            </button>
            <button type="button" onClick={() => { setText(original); setEditing(false); setProblems([]); }}>
              Cancel
            </button>
          </>
        )}
        {saved && <span className="muted">Saved.</span>}
        {editing && object.metadata?.resourceVersion && <span className="muted">editing resourceVersion {object.metadata.resourceVersion}: a newer change is refused, not overwritten</span>}
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
      <div className="yaml-editor" style={{ height: `min(70vh, ${lines * 18 + 14}px)` }}>
        <div className="gutter" ref={gutter} aria-hidden>
          {Array.from({ length: lines }, (_, i) => {
            const ps = byLine.get(i + 1);
            return (
              <div key={i} className={ps ? 'bad' : ''} title={ps?.map((p) => p.message).join('\n')}>
                {i + 1}
              </div>
            );
          })}
        </div>
        <textarea
          ref={area}
          aria-label="YAML"
          spellCheck={false}
          readOnly={!editing}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
        />
      </div>
    </div>
  );
}
