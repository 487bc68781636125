// An object's YAML, read and edited in place. Saving replaces the object (the server validates it,
// with unknown fields refused); a refusal shows each cause on the line of the field it names.
import { useEffect, useMemo, useRef, useState } from 'react';
import { useApi } from '../api/context';
import { ApiError, messageOf } from '../api/errors';
import type { KindInfo } from '../api/kinds';
import type { KObject } from '../api/types';
import { lineOfField, parseYaml, toYaml } from './yaml';

export interface Problem {
  line?: number;
  field?: string;
  message: string;
}

/** A failed write as problems, each on the line of `text` holding the field it names. */
export function problemsOf(e: unknown, text: string): Problem[] {
  if (!(e instanceof ApiError)) return [{ message: messageOf(e) }];
  const causes = e.causes.length ? e.causes : [{ message: e.message }];
  return causes.map((c) => ({ field: c.field, message: c.message ?? e.message, line: c.field ? lineOfField(text, c.field) : undefined }));
}

/** Puts the caret on `line` of the textarea (when `focus`) and scrolls it into view. */
export function gotoLine(el: HTMLTextAreaElement | null, line: number | undefined, focus = true): void {
  if (!el || !line) return;
  const offset = el.value.split('\n').slice(0, line - 1).join('\n').length + (line > 1 ? 1 : 0);
  if (focus) {
    el.focus();
    el.setSelectionRange(offset, offset);
  }
  el.scrollTop = Math.max(0, (line - 5) * 18);
  el.closest('.yaml')?.scrollIntoView({ block: 'nearest' });
}

/**
 * YAML in a textarea with a line-number gutter; the problems are listed above it, and each marks its
 * line in the gutter (a click on "line N" goes there).
 */
export function YamlText({ text, onChange, readOnly, problems, label, maxHeight, areaRef }: {
  text: string;
  onChange: (text: string) => void;
  readOnly?: boolean;
  problems: Problem[];
  label: string;
  /** CSS length the editor may grow to */
  maxHeight: string;
  areaRef: React.RefObject<HTMLTextAreaElement | null>;
}) {
  const gutter = useRef<HTMLDivElement>(null);
  const lines = text.split('\n').length;
  const byLine = new Map<number, Problem[]>();
  for (const p of problems) if (p.line) byLine.set(p.line, [...(byLine.get(p.line) ?? []), p]);
  return (
    <>
      {problems.length > 0 && (
        <ul className="problems" role="alert">
          {problems.map((p, i) => (
            <li key={i}>
              {p.line ? (
                <button type="button" className="linklike" onClick={() => gotoLine(areaRef.current, p.line)}>
                  line {p.line}
                </button>
              ) : null}
              {p.field ? <code>{p.field}</code> : null} {p.message}
            </li>
          ))}
        </ul>
      )}
      <div className="yaml-editor" style={{ height: `min(${maxHeight}, ${lines * 18 + 14}px)` }}>
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
          ref={areaRef}
          aria-label={label}
          spellCheck={false}
          readOnly={readOnly}
          value={text}
          onChange={(e) => onChange(e.target.value)}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
        />
      </div>
    </>
  );
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
  // while not editing, the view follows the live object
  useEffect(() => {
    if (!editing) setText(original);
  }, [original, editing]);
  const dirty = text !== original;

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
      setProblems(problemsOf(e, text));
    } finally {
      setSaving(false);
    }
  }

  // a refusal scrolls the editor to the first line it names
  useEffect(() => {
    const first = problems.find((p) => p.line)?.line;
    if (first) gotoLine(area.current, first, false);
  }, [problems]);

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
      <YamlText text={text} onChange={setText} readOnly={!editing} problems={problems} label="YAML" maxHeight="70vh" areaRef={area} />
    </div>
  );
}
