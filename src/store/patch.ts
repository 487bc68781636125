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

function unescape(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

function parsePointer(path: unknown): string[] {
  if (typeof path !== 'string' || (path !== '' && !path.startsWith('/'))) throw new ApiError(StatusReason.BadRequest, `invalid JSON pointer ${JSON.stringify(path)}`);
  return path === '' ? [] : path.slice(1).split('/').map(unescape);
}

function parentOf(doc: unknown, tokens: string[]): { parent: any; key: string } {
  let cur: any = doc;
  for (const t of tokens.slice(0, -1)) {
    if (cur === null || typeof cur !== 'object' || !(t in cur)) throw new ApiError(StatusReason.BadRequest, `JSON patch: path /${tokens.join('/')} does not exist`);
    cur = cur[t];
  }
  return { parent: cur, key: tokens[tokens.length - 1] ?? '' };
}

function getAt(doc: unknown, tokens: string[]): unknown {
  let cur: any = doc;
  for (const t of tokens) {
    if (cur === null || typeof cur !== 'object' || !(t in cur)) throw new ApiError(StatusReason.BadRequest, `JSON patch: path /${tokens.join('/')} does not exist`);
    cur = cur[t];
  }
  return cur;
}

export function applyJsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw new ApiError(StatusReason.BadRequest, 'a JSON patch must be an array of operations');
  let doc = clone(target);
  for (const op of ops as any[]) {
    const tokens = parsePointer(op?.path);
    const put = (value: unknown, insert: boolean): void => {
      if (tokens.length === 0) {
        doc = clone(value);
        return;
      }
      const { parent, key } = parentOf(doc, tokens);
      if (Array.isArray(parent)) {
        const i = key === '-' ? parent.length : Number(key);
        if (!Number.isInteger(i) || i < 0 || i > parent.length) throw new ApiError(StatusReason.BadRequest, `JSON patch: index ${key} out of range`);
        if (insert) parent.splice(i, 0, clone(value));
        else parent[i] = clone(value);
      } else if (parent !== null && typeof parent === 'object') {
        parent[key] = clone(value);
      } else throw new ApiError(StatusReason.BadRequest, `JSON patch: cannot set ${op.path}`);
    };
    switch (op?.op) {
      case 'add': put(op.value, true); break;
      case 'replace': getAt(doc, tokens); put(op.value, false); break;
      case 'remove': getAt(doc, tokens); removeAt(doc, tokens); break;
      case 'move': { const from = parsePointer(op.from); const v = getAt(doc, from); removeAt(doc, from); put(v, true); break; }
      case 'copy': put(getAt(doc, parsePointer(op.from)), true); break;
      case 'test': if (!deepEqual(getAt(doc, tokens), op.value)) throw new ApiError(StatusReason.Invalid, `JSON patch test failed at ${op.path}`); break;
      default: throw new ApiError(StatusReason.BadRequest, `JSON patch: unknown operation ${JSON.stringify(op?.op)}`);
    }
  }
  return doc;
}

function removeAt(doc: unknown, tokens: string[]): void {
  const { parent, key } = parentOf(doc, tokens);
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[key];
}
