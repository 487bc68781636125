// Objects walked by their schema, as server-side apply sees them: which fields an object sets (its
// field set), what changed between two versions of it, the merge of an applied configuration into a
// live object, and the removal of fields no one owns any more. Lists merge by their
// x-kubernetes-list-type (`map` by x-kubernetes-list-map-keys, `set` by value, `atomic` whole), maps
// by x-kubernetes-map-type (granular unless `atomic`); where a kind has no schema for a value, maps are
// granular and lists atomic, as Kubernetes deduces them.
import { clone, deepEqual } from './meta.js';
import type { SchemaCatalog, SchemaNode } from './openapi-schemas.js';
import { FieldSet, fieldPE, keyPE, pathString, valuePE } from './fieldset.js';
import type { FieldPath, PathElement } from './fieldset.js';
import { isPlainObject } from '../util/objects.js';

type Json = unknown;
type JsonMap = Record<string, unknown>;

/** a schema position; `node` undefined means the shape is deduced from the value */
export class Shape {
  constructor(readonly catalog: SchemaCatalog, readonly node: SchemaNode | undefined) {}

  private get n(): SchemaNode | undefined {
    return this.catalog.deref(this.node);
  }

  kind(value: Json): 'scalar' | 'list' | 'map' {
    const n = this.n;
    if (n && !n['x-kubernetes-int-or-string']) {
      if (n.type === 'array') return 'list';
      if (n.type === 'object' || n.properties || n.additionalProperties) {
        if (isPlainObject(value) || value === undefined || value === null) return 'map';
      } else if (n.type) return 'scalar';
    }
    if (Array.isArray(value)) return 'list';
    if (isPlainObject(value)) return 'map';
    return 'scalar';
  }

  /** atomic, set or map: how a list's elements are told apart */
  listType(): 'atomic' | 'set' | 'map' {
    const n = this.n;
    if (!n || n.type !== 'array') return 'atomic';
    const t = n['x-kubernetes-list-type'];
    if (t) return t;
    const strategy = String(n['x-kubernetes-patch-strategy'] ?? '');
    if (strategy.split(',').includes('merge')) return n['x-kubernetes-patch-merge-key'] ? 'map' : 'set';
    return 'atomic';
  }

  listKeys(): string[] {
    const n = this.n;
    const keys = n?.['x-kubernetes-list-map-keys'];
    if (keys?.length) return keys;
    const mk = n?.['x-kubernetes-patch-merge-key'];
    return typeof mk === 'string' ? [mk] : [];
  }

  mapAtomic(): boolean {
    return this.n?.['x-kubernetes-map-type'] === 'atomic';
  }

  /** whether `name` is a declared field (a struct's) rather than a key of a free-form map */
  declares(name: string): boolean {
    return !!this.n?.properties?.[name];
  }

  field(name: string): Shape {
    if (!this.n) return new Shape(this.catalog, undefined);
    return new Shape(this.catalog, this.catalog.field(this.n, name));
  }

  items(): Shape {
    return new Shape(this.catalog, this.n ? this.catalog.items(this.n) : undefined);
  }

  /** the path element of a list element; undefined for a map-list element that lacks its keys */
  elementPE(item: Json, index: number): PathElement | undefined {
    const type = this.listType();
    if (type === 'set') return valuePE(item);
    if (type === 'map') {
      if (!isPlainObject(item)) return undefined;
      const keys: Record<string, unknown> = {};
      const itemShape = this.items();
      for (const k of this.listKeys()) {
        const v = item[k] ?? itemShape.field(k).defaultValue();
        if (v === undefined) continue;
        keys[k] = v;
      }
      return Object.keys(keys).length ? keyPE(keys) : undefined;
    }
    return `i:${index}`;
  }

  defaultValue(): unknown {
    return this.n?.default;
  }
}

function isEmpty(v: Json): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isPlainObject(v)) return Object.keys(v).length === 0;
  return false;
}

/** the elements of a list by path element (first occurrence wins), in list order */
function indexList(list: Json, shape: Shape): Map<PathElement, Json> {
  const out = new Map<PathElement, Json>();
  if (!Array.isArray(list)) return out;
  list.forEach((item, i) => {
    const pe = shape.elementPE(item, i);
    if (pe !== undefined && !out.has(pe)) out.set(pe, item);
  });
  return out;
}

/** the fields a value sets (what an applier comes to own), as Kubernetes' ToFieldSet counts them */
export function toFieldSet(value: Json, shape: Shape): FieldSet {
  const set = new FieldSet();
  const walk = (v: Json, s: Shape, path: FieldPath): void => {
    const kind = s.kind(v);
    if (kind === 'scalar') {
      set.insert(path);
    } else if (kind === 'list') {
      if (s.listType() === 'atomic' || !Array.isArray(v)) {
        set.insert(path);
        return;
      }
      for (const [pe, item] of indexList(v, s)) {
        const p = [...path, pe];
        walk(item, s.items(), p);
        set.insert(p);
      }
    } else {
      if (s.mapAtomic() || !isPlainObject(v)) {
        set.insert(path);
        return;
      }
      for (const [k, val] of Object.entries(v)) {
        const p = [...path, fieldPE(k)];
        walk(val, s.field(k), p);
        if (val === null || (isPlainObject(val) && Object.keys(val).length === 0) || !s.declares(k)) set.insert(p);
      }
    }
  };
  walk(value, shape, []);
  return set;
}

export interface Comparison {
  added: FieldSet;
  removed: FieldSet;
  modified: FieldSet;
}

/** what changed from `lhs` to `rhs`, field by field */
export function compare(lhs: Json, rhs: Json, shape: Shape): Comparison {
  const cmp: Comparison = { added: new FieldSet(), removed: new FieldSet(), modified: new FieldSet() };
  const leaf = (l: Json, r: Json, path: FieldPath): void => {
    if (l === undefined) cmp.added.insert(path);
    else if (r === undefined) cmp.removed.insert(path);
    else if (!deepEqual(l, r)) cmp.modified.insert(path);
  };
  const walk = (l: Json, r: Json, s: Shape, path: FieldPath): void => {
    const lk = l === undefined ? undefined : s.kind(l);
    const rk = r === undefined ? undefined : s.kind(r);
    const kind = lk ?? rk;
    if ((lk && rk && lk !== rk) || kind === 'scalar') return leaf(l, r, path);
    if (kind === 'list') {
      if (s.listType() === 'atomic' || (isEmpty(l) && isEmpty(r)) || (l !== undefined && l !== null && !Array.isArray(l)) || (r !== undefined && r !== null && !Array.isArray(r))) return leaf(l, r, path);
      const li = indexList(l, s);
      const ri = indexList(r, s);
      for (const pe of new Set([...li.keys(), ...ri.keys()])) walk(li.get(pe), ri.get(pe), s.items(), [...path, pe]);
    } else {
      if (s.mapAtomic() || (isEmpty(l) && isEmpty(r)) || (l !== undefined && l !== null && !isPlainObject(l)) || (r !== undefined && r !== null && !isPlainObject(r))) return leaf(l, r, path);
      const lm = (l ?? {}) as JsonMap;
      const rm = (r ?? {}) as JsonMap;
      for (const k of new Set([...Object.keys(lm), ...Object.keys(rm)])) walk(lm[k], rm[k], s.field(k), [...path, fieldPE(k)]);
    }
    if (path.length) {
      if (l === undefined) cmp.added.insert(path);
      else if (r === undefined) cmp.removed.insert(path);
    }
  };
  walk(lhs, rhs, shape, []);
  return cmp;
}

/**
 * The applied configuration `rhs` merged into `lhs`: list elements matched by their keys (the
 * applied order wins for shared elements, live-only elements keep their place), maps key by key,
 * atomic values replaced.
 */
export function merge(lhs: Json, rhs: Json, shape: Shape): Json {
  if (rhs === undefined) return clone(lhs);
  if (lhs === undefined || lhs === null) return clone(rhs);
  const lk = shape.kind(lhs);
  const rk = shape.kind(rhs);
  if (lk !== rk || rk === 'scalar') return clone(rhs);
  if (rk === 'list') {
    if (shape.listType() === 'atomic' || !Array.isArray(lhs) || !Array.isArray(rhs)) return clone(rhs);
    return mergeList(lhs, rhs, shape);
  }
  if (shape.mapAtomic() || !isPlainObject(lhs) || !isPlainObject(rhs)) return clone(rhs);
  const out: JsonMap = {};
  for (const k of new Set([...Object.keys(lhs), ...Object.keys(rhs)])) {
    const v = merge(lhs[k], rhs[k], shape.field(k));
    if (v !== undefined) out[k] = v;
  }
  return out;
}

function mergeList(lhs: Json[], rhs: Json[], shape: Shape): Json[] {
  const pesOf = (list: Json[]): PathElement[] => {
    const seen = new Set<PathElement>();
    const out: PathElement[] = [];
    list.forEach((item, i) => {
      const pe = shape.elementPE(item, i) ?? `i:${i}`;
      if (!seen.has(pe)) {
        seen.add(pe);
        out.push(pe);
      }
    });
    return out;
  };
  const lIndex = new Map<PathElement, Json>();
  lhs.forEach((item, i) => {
    const pe = shape.elementPE(item, i) ?? `i:${i}`;
    if (!lIndex.has(pe)) lIndex.set(pe, item);
  });
  const rIndex = new Map<PathElement, Json>();
  rhs.forEach((item, i) => {
    const pe = shape.elementPE(item, i) ?? `i:${i}`;
    if (!rIndex.has(pe)) rIndex.set(pe, item);
  });
  const lPEs = pesOf(lhs);
  const rPEs = pesOf(rhs);
  // elements both sides have, in the applied order: each is emitted where the applied list has it
  const shared = rPEs.filter((pe) => lIndex.has(pe));
  let nextShared = 0;
  const done = new Set<PathElement>();
  const out: Json[] = [];
  const emit = (pe: PathElement): void => {
    done.add(pe);
    out.push(merge(lIndex.get(pe), rIndex.get(pe), shape.items()));
  };
  let li = 0;
  let ri = 0;
  while (li < lPEs.length || ri < rPEs.length) {
    const lpe = lPEs[li];
    const rpe = rPEs[ri];
    if (lpe !== undefined && rpe !== undefined) {
      if (lpe === rpe) {
        emit(lpe);
        li++;
        ri++;
        nextShared++;
        continue;
      }
      if (rIndex.has(lpe) && shared[nextShared] !== undefined && shared[nextShared] !== lpe) {
        li++;
        continue;
      }
    }
    if (lpe !== undefined) {
      if (!rIndex.has(lpe)) {
        emit(lpe);
        li++;
        continue;
      }
      if (done.has(lpe)) li++;
    }
    if (rpe !== undefined) {
      emit(rpe);
      ri++;
      if (shared[nextShared] === rpe) nextShared++;
    }
  }
  return out;
}

/** `value` without the fields in `set` (a member removes its whole subtree); emptied containers go too */
export function removeItems(value: Json, set: FieldSet, shape: Shape): Json {
  if (set.empty()) return value;
  const kind = shape.kind(value);
  if (kind === 'list' && Array.isArray(value)) {
    if (shape.listType() === 'atomic') return value;
    const out: Json[] = [];
    value.forEach((item, i) => {
      const pe = shape.elementPE(item, i);
      if (pe === undefined) {
        out.push(item);
        return;
      }
      const sub = set.children.get(pe);
      if (sub?.member) return;
      out.push(sub ? removeItems(item, sub, shape.items()) : item);
    });
    return out.length ? out : undefined;
  }
  if (kind === 'map' && isPlainObject(value)) {
    if (shape.mapAtomic()) return value;
    const out: JsonMap = {};
    for (const [k, v] of Object.entries(value)) {
      const sub = set.children.get(fieldPE(k));
      if (sub?.member) continue;
      const kept = sub ? removeItems(v, sub, shape.field(k)) : v;
      if (kept !== undefined) out[k] = kept;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return value;
}

/**
 * Why a value cannot be typed by its schema, as Kubernetes words it (an associative list's element
 * without its keys, two elements with the same keys), or undefined when it can.
 */
export function typeError(value: Json, shape: Shape): string | undefined {
  const walk = (v: Json, s: Shape, path: FieldPath): string | undefined => {
    const kind = s.kind(v);
    if (kind === 'list' && Array.isArray(v) && s.listType() !== 'atomic') {
      const seen = new Set<PathElement>();
      for (let i = 0; i < v.length; i++) {
        const item = v[i];
        if (s.listType() === 'map') {
          if (!isPlainObject(item)) return `${pathString(path)}: element ${i}: expected map, got ${JSON.stringify(item)}`;
          for (const k of s.listKeys()) {
            if (item[k] === undefined && s.items().field(k).defaultValue() === undefined) {
              return `${pathString(path)}: element ${i}: associative list with keys has an element that omits key field ${JSON.stringify(k)} (and doesn't have default value)`;
            }
          }
        }
        const pe = s.elementPE(item, i);
        if (pe === undefined) continue;
        if (seen.has(pe)) return `${pathString(path)}: duplicate entries for key ${pathString([pe])}`;
        seen.add(pe);
        const inner = walk(item, s.items(), [...path, pe]);
        if (inner) return inner;
      }
    } else if (kind === 'map' && isPlainObject(v) && !s.mapAtomic()) {
      for (const [k, val] of Object.entries(v)) {
        const inner = walk(val, s.field(k), [...path, fieldPE(k)]);
        if (inner) return inner;
      }
    }
    return undefined;
  };
  return walk(value, shape, []);
}
