// YAML for the object editor: an object as YAML (without the noise kubectl edit hides), and the line
// a server error's field path points at, so the error shows beside what caused it.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, stringify } from 'yaml';
import type { Node } from 'yaml';

export function toYaml(obj: unknown): string {
  return stringify(obj, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** `spec.template.spec.containers[0].image`, `metadata.labels['a.b/c']`, `spec.x[name=foo]` → keys */
export function fieldPath(field: string): (string | number)[] {
  const out: (string | number)[] = [];
  const re = /([^.[\]]+)|\[(\d+)\]|\[['"]([^'"]+)['"]\]|\[([^\]=]+=[^\]]*)\]/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(field))) {
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined) out.push(Number(m[2]));
    else if (m[3] !== undefined) out.push(m[3]);
    else if (m[4] !== undefined) out.push(m[4]);
  }
  return out;
}

export interface YamlProblem {
  line: number;
  message: string;
}

/** parses the editor's text; a syntax error names its line */
export function parseYaml(text: string): { value?: unknown; problems: YamlProblem[] } {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  if (doc.errors.length) {
    return { problems: doc.errors.map((e) => ({ line: lc.linePos(e.pos[0]).line, message: e.message.split('\n')[0] ?? e.message })) };
  }
  return { value: doc.toJS(), problems: [] };
}

/**
 * The 1-based line of the deepest node along `field` that exists in the text: a field that is wrong
 * points at itself; a required field that is missing points at its parent.
 */
export function lineOfField(text: string, field: string): number | undefined {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  if (doc.errors.length) return undefined;
  let node: unknown = doc.contents;
  let line: number | undefined = node && (node as Node).range ? lc.linePos((node as Node).range![0]).line : undefined;
  for (const key of fieldPath(field)) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(key));
      if (!pair) break;
      const k = pair.key as Node | null;
      if (k?.range) line = lc.linePos(k.range[0]).line;
      node = pair.value;
    } else if (isSeq(node)) {
      let item: unknown;
      if (typeof key === 'number') item = node.items[key];
      else {
        // [name=foo]: the list item whose field has that value
        const [f, v] = String(key).split('=');
        item = node.items.find((it) => isMap(it) && String((it.get(f ?? '') as unknown) ?? '') === v);
      }
      if (!item) break;
      const r = (item as Node).range;
      if (r) line = lc.linePos(r[0]).line;
      node = item;
    } else break;
  }
  return line;
}
