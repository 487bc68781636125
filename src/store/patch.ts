// JSON merge patch (RFC 7386) and JSON patch (RFC 6902) over plain JSON values.
import { ApiError, StatusReason } from '../api/errors.js';
import { clone, deepEqual } from '../api/meta.js';
import { isPlainObject } from '../util/objects.js';

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return clone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/**
 * A JSON patch that does not apply to the document, worded as the JSON patch library kube-apiserver
 * uses words it (kube-apiserver answers these 422).
 */
export class JsonPatchError extends Error {}

function unescape(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

function parsePointer(path: string): string[] {
  return path === '' ? [] : path.replace(/^\//, '').split('/').map(unescape);
}

type Container = Record<string, unknown> | unknown[];

function isContainer(v: unknown): v is Container {
  return v !== null && typeof v === 'object';
}

/** the container holding the pointer's last token, or undefined when the way there is missing */
function findParent(doc: unknown, tokens: string[]): { parent: Container; key: string } | undefined {
  let cur: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) {
      const i = Number(t);
      if (!/^-?\d+$/.test(t) || i < 0 || i >= cur.length) return undefined;
      cur = cur[i];
    } else if (isContainer(cur)) {
      if (!(t in cur)) return undefined;
      cur = (cur as Record<string, unknown>)[t];
    } else {
      return undefined;
    }
  }
  return isContainer(cur) ? { parent: cur, key: tokens[tokens.length - 1] ?? '' } : undefined;
}

function invalidIndex(key: string): JsonPatchError {
  return new JsonPatchError(`Unable to access invalid index: ${key}: invalid index referenced`);
}

function getIn(parent: Container, key: string): { found: boolean; value?: unknown } {
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (!/^\d+$/.test(key) || i >= parent.length) return { found: false };
    return { found: true, value: parent[i] };
  }
  return key in parent ? { found: true, value: parent[key] } : { found: false };
}

function addIn(parent: Container, key: string, value: unknown): void {
  if (!Array.isArray(parent)) {
    parent[key] = value;
    return;
  }
  if (key === '-') {
    parent.push(value);
    return;
  }
  if (!/^-?\d+$/.test(key)) throw new JsonPatchError(`value was not a proper array index: '${key}': strconv.Atoi: parsing ${JSON.stringify(key)}: invalid syntax`);
  const i = Number(key);
  if (i < 0 || i > parent.length) throw invalidIndex(key);
  parent.splice(i, 0, value);
}

function removeIn(parent: Container, key: string): void {
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (!/^\d+$/.test(key) || i >= parent.length) throw invalidIndex(key);
    parent.splice(i, 1);
    return;
  }
  if (!(key in parent)) throw new JsonPatchError(`Unable to remove nonexistent key: ${key}: missing value`);
  delete parent[key];
}

export function applyJsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw new ApiError(StatusReason.BadRequest, 'a JSON patch must be an array of operations');
  // the document is wrapped so that the root itself has a parent
  const root: Record<string, unknown> = { doc: clone(target) };
  const at = (path: string): string[] => ['doc', ...parsePointer(path)];
  for (const op of ops as any[]) {
    const kind = op?.op;
    const path = op?.path;
    if (!['add', 'remove', 'replace', 'move', 'copy', 'test'].includes(kind)) throw new JsonPatchError(`Unexpected kind: ${kind ?? 'unknown'}`);
    if (typeof path !== 'string') throw new JsonPatchError(`${kind} operation failed to decode path: missing value`);
    if ((kind === 'add' || kind === 'replace' || kind === 'test') && !('value' in op)) throw new JsonPatchError('operation, missing value field: missing value');
    const tokens = at(path);
    const place = findParent(root, tokens);
    switch (kind) {
      case 'add':
        if (!place) throw new JsonPatchError(`add operation does not apply: doc is missing path: "${path}": missing value`);
        try {
          addIn(place.parent, place.key, clone(op.value));
        } catch (e) {
          throw new JsonPatchError(`error in add for path: '${path}': ${(e as Error).message}`);
        }
        break;
      case 'remove':
        if (!place) throw new JsonPatchError(`remove operation does not apply: doc is missing path: "${path}": missing value`);
        try {
          removeIn(place.parent, place.key);
        } catch (e) {
          throw new JsonPatchError(`error in remove for path: '${path}': ${(e as Error).message}`);
        }
        break;
      case 'replace':
        if (!place) throw new JsonPatchError(`replace operation does not apply: doc is missing path: ${path}: missing value`);
        if (!getIn(place.parent, place.key).found) throw new JsonPatchError(`replace operation does not apply: doc is missing key: ${path}: missing value`);
        if (Array.isArray(place.parent)) place.parent[Number(place.key)] = clone(op.value);
        else place.parent[place.key] = clone(op.value);
        break;
      case 'test': {
        const got = place ? getIn(place.parent, place.key) : { found: false };
        if (!got.found) {
          if (op.value === null) break;
          throw new JsonPatchError(`test operation does not apply: is missing path: ${path}: missing value`);
        }
        if (!deepEqual(got.value, op.value)) throw new JsonPatchError(`testing value ${path} failed: test failed`);
        break;
      }
      case 'move':
      case 'copy': {
        if (typeof op.from !== 'string') throw new JsonPatchError(`${kind} operation failed to decode from: operation, missing from field: missing value`);
        const fromPlace = findParent(root, at(op.from));
        const got = fromPlace ? getIn(fromPlace.parent, fromPlace.key) : { found: false };
        if (!fromPlace || !got.found) throw new JsonPatchError(`${kind} operation does not apply: doc is missing from path: ${op.from}: missing value`);
        if (kind === 'move') removeIn(fromPlace.parent, fromPlace.key);
        const dest = findParent(root, tokens);
        if (!dest) throw new JsonPatchError(`${kind} operation does not apply: doc is missing destination path: ${path}: missing value`);
        try {
          addIn(dest.parent, dest.key, clone(got.value));
        } catch (e) {
          throw new JsonPatchError(`error in ${kind} for path: '${path}': ${(e as Error).message}`);
        }
        break;
      }
    }
  }
  return root.doc;
}
