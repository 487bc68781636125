// Sets of field paths, as server-side apply records who owns what: a tree whose edges are path
// elements in Kubernetes' FieldsV1 spelling (`f:name` a field, `k:{"name":"main"}` a list element by
// its keys, `v:"x"` a set element by value, `i:0` an element by index) and whose nodes say whether
// the path itself is in the set. `metadata.managedFields[].fieldsV1` is this tree as JSON, with `.`
// marking a node that is itself a member and has children.
import { isPlainObject } from '../util/objects.js';

export type PathElement = string;
export type FieldPath = PathElement[];

export function fieldPE(name: string): PathElement {
  return `f:${name}`;
}

export function keyPE(keys: Record<string, unknown>): PathElement {
  const sorted: Record<string, unknown> = {};
  for (const k of Object.keys(keys).sort()) sorted[k] = keys[k];
  return `k:${JSON.stringify(sorted)}`;
}

export function valuePE(v: unknown): PathElement {
  return `v:${JSON.stringify(v)}`;
}

const kindRank: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

function comparePE(a: PathElement, b: PathElement): number {
  const ka = kindRank[a[0] ?? ''] ?? 4;
  const kb = kindRank[b[0] ?? ''] ?? 4;
  if (ka !== kb) return ka - kb;
  if (a.startsWith('i:') && b.startsWith('i:')) return Number(a.slice(2)) - Number(b.slice(2));
  return a < b ? -1 : a > b ? 1 : 0;
}

/** a value as Kubernetes prints it inside a path: strings quoted, the rest as JSON */
function valueString(v: unknown): string {
  return JSON.stringify(v);
}

/** `.spec.containers[name="main"].image`: a path as kube-apiserver's conflict messages print it */
export function pathString(path: FieldPath): string {
  return path
    .map((pe) => {
      const body = pe.slice(2);
      switch (pe[0]) {
        case 'f':
          return `.${body}`;
        case 'k': {
          const keys = JSON.parse(body) as Record<string, unknown>;
          return `[${Object.keys(keys).sort().map((k) => `${k}=${valueString(keys[k])}`).join(',')}]`;
        }
        case 'v':
          return `[=${valueString(JSON.parse(body))}]`;
        default:
          return `[${body}]`;
      }
    })
    .join('');
}

export class FieldSet {
  /** whether the path leading here is itself in the set */
  member = false;
  readonly children = new Map<PathElement, FieldSet>();

  static of(...paths: FieldPath[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  insert(path: FieldPath): void {
    if (path.length === 0) return;
    const [head, ...rest] = path as [PathElement, ...PathElement[]];
    let next = this.children.get(head);
    if (!next) {
      next = new FieldSet();
      this.children.set(head, next);
    }
    if (rest.length) next.insert(rest);
    else next.member = true;
  }

  has(path: FieldPath): boolean {
    const n = this.at(path);
    return !!n && n.member && path.length > 0;
  }

  /** the subtree under a path (empty when absent) */
  at(path: FieldPath): FieldSet | undefined {
    if (path.length === 0) return this;
    const [head, ...rest] = path as [PathElement, ...PathElement[]];
    return this.children.get(head)?.at(rest);
  }

  child(pe: PathElement): FieldSet {
    return this.children.get(pe) ?? new FieldSet();
  }

  empty(): boolean {
    return !this.member && this.children.size === 0;
  }

  clone(): FieldSet {
    const s = new FieldSet();
    s.member = this.member;
    for (const [pe, c] of this.children) s.children.set(pe, c.clone());
    return s;
  }

  union(other: FieldSet): FieldSet {
    const s = this.clone();
    s.member ||= other.member;
    for (const [pe, c] of other.children) {
      const mine = s.children.get(pe);
      s.children.set(pe, mine ? mine.union(c) : c.clone());
    }
    return s;
  }

  difference(other: FieldSet): FieldSet {
    const s = new FieldSet();
    s.member = this.member && !other.member;
    for (const [pe, c] of this.children) {
      const theirs = other.children.get(pe);
      const d = theirs ? c.difference(theirs) : c.clone();
      if (!d.empty()) s.children.set(pe, d);
    }
    return s;
  }

  intersection(other: FieldSet): FieldSet {
    const s = new FieldSet();
    s.member = this.member && other.member;
    for (const [pe, c] of this.children) {
      const theirs = other.children.get(pe);
      if (!theirs) continue;
      const i = c.intersection(theirs);
      if (!i.empty()) s.children.set(pe, i);
    }
    return s;
  }

  /** only the paths under (or at) one of `prefixes` */
  filter(keep: (path: FieldPath) => boolean): FieldSet {
    const out = new FieldSet();
    for (const p of this.paths()) if (keep(p)) out.insert(p);
    return out;
  }

  /** every member path, in Kubernetes' order (fields, then keys, values, indices) */
  paths(prefix: FieldPath = []): FieldPath[] {
    const out: FieldPath[] = [];
    if (this.member && prefix.length) out.push(prefix);
    for (const pe of [...this.children.keys()].sort(comparePE)) {
      out.push(...(this.children.get(pe) as FieldSet).paths([...prefix, pe]));
    }
    return out;
  }

  /** the FieldsV1 JSON of this set */
  toJSON(): Record<string, unknown> {
    return this.emit(false);
  }

  private emit(includeSelf: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (includeSelf && this.member && this.children.size) out['.'] = {};
    for (const pe of [...this.children.keys()].sort(comparePE)) {
      const c = this.children.get(pe) as FieldSet;
      out[pe] = c.children.size ? c.emit(true) : {};
    }
    return out;
  }

  /** reads FieldsV1 JSON; undefined when it is not one */
  static fromJSON(json: unknown): FieldSet | undefined {
    if (!isPlainObject(json)) return undefined;
    const s = new FieldSet();
    for (const [key, v] of Object.entries(json)) {
      if (key === '.') {
        s.member = true;
        continue;
      }
      if (!/^[fkvi]:/.test(key)) return undefined;
      const c = FieldSet.fromJSON(v);
      if (!c) return undefined;
      if (c.children.size === 0) c.member = true;
      s.children.set(key, c);
    }
    return s;
  }
}
