// Request options as kube-apiserver decodes and validates them: ListOptions (list, watch and
// deletecollection), CreateOptions, UpdateOptions, PatchOptions and DeleteOptions. The decoding follows
// k8s.io/apimachinery's query-parameter conversions and the checks follow its meta/v1 validation, so a
// refusal has the code, message and causes a client would get from a cluster.
import { ApiError, StatusReason } from '../../api/errors.js';
import type { DeleteOptions } from '../../store/store.js';

type ProblemType = 'Required' | 'Forbidden' | 'TooLong' | 'Invalid' | 'NotSupported';

/** one field.Error of apimachinery's validation */
export interface OptionProblem {
  type: ProblemType;
  field: string;
  /** the bad value, printed for Invalid and NotSupported */
  value?: unknown;
  detail: string;
}

const typeWords: Record<ProblemType, [string, string]> = {
  Required: ['Required value', 'FieldValueRequired'],
  Forbidden: ['Forbidden', 'FieldValueForbidden'],
  TooLong: ['Too long', 'FieldValueTooLong'],
  Invalid: ['Invalid value', 'FieldValueInvalid'],
  NotSupported: ['Unsupported value', 'FieldValueNotSupported'],
};

/** Go's %q: a double-quoted string with Go's escapes, which kube-apiserver's messages use */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c === 7) out += '\\a';
    else if (c === 8) out += '\\b';
    else if (c === 12) out += '\\f';
    else if (c === 11) out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else if (!isPrintable(ch)) out += c > 0xffff ? '\\U' + c.toString(16).padStart(8, '0') : '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space */
function isPrintable(ch: string): boolean {
  return ch === ' ' || /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(ch);
}

function body(p: OptionProblem): string {
  const [words] = typeWords[p.type];
  let s = words;
  if (p.type === 'Invalid' || p.type === 'NotSupported') {
    const v = p.value;
    s += ': ' + (typeof v === 'string' ? goQuote(v) : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v ?? null));
  }
  return p.detail ? `${s}: ${p.detail}` : s;
}

/** errors.NewInvalid for a meta.k8s.io options kind: 422 with one cause per problem */
export function invalidOptions(kind: string, problems: OptionProblem[]): ApiError {
  const msgs = [...new Set(problems.map((p) => `${p.field}: ${body(p)}`))];
  const agg = msgs.length === 1 ? msgs[0] : `[${msgs.join(', ')}]`;
  return new ApiError(StatusReason.Invalid, `${kind}.meta.k8s.io "" is invalid: ${agg}`, {
    group: 'meta.k8s.io',
    kind,
    causes: problems.map((p) => ({ reason: typeWords[p.type][1], message: body(p), field: p.field })),
  });
}

/**
 * A boolean query parameter as kube-apiserver converts it (runtime.Convert_Slice_string_To_bool): absent
 * is undefined; `0` and `false` in any case are false; anything else, the empty string included, is true.
 */
export function kubeBool(url: URL, name: string): boolean | undefined {
  const v = url.searchParams.get(name);
  if (v === null) return undefined;
  return !(v === '0' || v.toLowerCase() === 'false');
}

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

/** strconv.ParseInt(v, 10, 64), with its error text, which kube-apiserver answers as a 400 */
export function parseInt64(v: string): number {
  if (!/^[+-]?\d+$/.test(v)) throw new ApiError(StatusReason.BadRequest, `strconv.ParseInt: parsing ${goQuote(v)}: invalid syntax`);
  const n = BigInt(v);
  if (n < int64Min || n > int64Max) throw new ApiError(StatusReason.BadRequest, `strconv.ParseInt: parsing ${goQuote(v)}: value out of range`);
  return Number(n);
}

export function kubeInt(url: URL, name: string): number | undefined {
  const v = url.searchParams.get(name);
  return v === null ? undefined : parseInt64(v);
}

export interface KubeListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  watch: boolean;
  allowWatchBookmarks: boolean;
  resourceVersion: string;
  resourceVersionMatch: string;
  timeoutSeconds?: number;
  /** 0: no limit */
  limit: number;
  continue: string;
  sendInitialEvents?: boolean;
}

/**
 * ListOptions of a list, watch or deletecollection: decoded, defaulted as kube-apiserver does with
 * its WatchList feature on (a watch from "" or "0" sends the initial state and, with bookmarks, the
 * bookmark that ends it), then validated.
 */
export function listOptions(url: URL): KubeListOptions {
  const opts: KubeListOptions = {
    labelSelector: url.searchParams.get('labelSelector') ?? undefined,
    fieldSelector: url.searchParams.get('fieldSelector') ?? undefined,
    watch: kubeBool(url, 'watch') ?? false,
    allowWatchBookmarks: kubeBool(url, 'allowWatchBookmarks') ?? false,
    resourceVersion: url.searchParams.get('resourceVersion') ?? '',
    resourceVersionMatch: url.searchParams.get('resourceVersionMatch') ?? '',
    limit: kubeInt(url, 'limit') ?? 0,
    continue: url.searchParams.get('continue') ?? '',
  };
  const timeout = kubeInt(url, 'timeoutSeconds');
  if (timeout !== undefined) opts.timeoutSeconds = timeout;
  const initial = kubeBool(url, 'sendInitialEvents');
  if (initial !== undefined) opts.sendInitialEvents = initial;
  if (opts.sendInitialEvents === undefined && !opts.resourceVersionMatch && opts.watch && (opts.resourceVersion === '' || opts.resourceVersion === '0')) {
    opts.sendInitialEvents = true;
    opts.resourceVersionMatch = 'NotOlderThan';
  }
  const problems = opts.watch ? watchProblems(opts) : listProblems(opts);
  if (problems.length) throw invalidOptions('ListOptions', problems);
  return opts;
}

function listProblems(o: KubeListOptions): OptionProblem[] {
  const out: OptionProblem[] = [];
  const match = o.resourceVersionMatch;
  if (match) {
    if (!o.resourceVersion) out.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch is forbidden unless resourceVersion is provided' });
    if (o.continue) out.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch is forbidden when continue is provided' });
    if (match !== 'Exact' && match !== 'NotOlderThan') out.push({ type: 'NotSupported', field: 'resourceVersionMatch', value: match, detail: 'supported values: "Exact", "NotOlderThan", ""' });
    if (match === 'Exact' && o.resourceVersion === '0') out.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"' });
  }
  if (o.sendInitialEvents !== undefined) out.push({ type: 'Forbidden', field: 'sendInitialEvents', detail: 'sendInitialEvents is forbidden for list' });
  return out;
}

function watchProblems(o: KubeListOptions): OptionProblem[] {
  const out: OptionProblem[] = [];
  const match = o.resourceVersionMatch;
  if (o.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    out.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan' });
  }
  if (match) {
    if (o.sendInitialEvents === undefined) out.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided' });
    if (match !== 'NotOlderThan') out.push({ type: 'NotSupported', field: 'resourceVersionMatch', value: match, detail: 'supported values: "NotOlderThan"' });
    if (o.continue) out.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch is forbidden when continue is provided' });
  }
  return out;
}

export type FieldValidation = '' | 'Ignore' | 'Warn' | 'Strict';

/** CreateOptions, UpdateOptions or PatchOptions: what a write's query parameters ask */
export interface WriteOptions {
  dryRun: boolean;
  fieldManager: string;
  /**
   * how unknown and duplicate fields are treated; '' is the server's default (Warn). Checking the
   * body against the kind's schema is the job of fields.ts (validateBodyFields).
   */
  fieldValidation: FieldValidation;
  /** PatchOptions.force, for apply patches only */
  force?: boolean;
}

const fieldManagerMaxLength = 128;

function fieldManagerProblems(manager: string, field = 'fieldManager'): OptionProblem[] {
  const out: OptionProblem[] = [];
  if (Buffer.byteLength(manager) > fieldManagerMaxLength) out.push({ type: 'TooLong', field, detail: `may not be more than ${fieldManagerMaxLength} bytes` });
  let pos = 0;
  for (const ch of manager) {
    if (!isPrintable(ch)) {
      const hex = (ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
      out.push({ type: 'Invalid', field, value: manager, detail: `invalid character U+${hex} (at position ${pos})` });
    }
    pos += Buffer.byteLength(ch);
  }
  return out;
}

function dryRunProblems(values: string[]): OptionProblem[] {
  return values.every((v) => v === 'All') ? [] : [{ type: 'NotSupported', field: 'dryRun', value: values, detail: 'supported values: "All"' }];
}

const fieldValidations = ['', 'Ignore', 'Strict', 'Warn'];

/** the media types of server-side apply, which alone take `force` and require `fieldManager` */
export function isApplyPatch(contentType: string | undefined): boolean {
  const ct = (contentType ?? '').toLowerCase();
  return ct.startsWith('application/apply-patch+yaml') || ct.startsWith('application/apply-patch+cbor');
}

/**
 * The options of a create (POST), update (PUT) or patch (PATCH). For a patch, `contentType` is the
 * request's: apply patches require a fieldManager, the others refuse `force`.
 */
export function writeOptions(url: URL, kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions', contentType?: string): WriteOptions {
  const dryRun = url.searchParams.getAll('dryRun');
  const opts: WriteOptions = {
    dryRun: dryRun.length > 0,
    fieldManager: url.searchParams.get('fieldManager') ?? '',
    fieldValidation: (url.searchParams.get('fieldValidation') ?? '') as FieldValidation,
  };
  const problems: OptionProblem[] = [];
  if (kind === 'PatchOptions') {
    const force = kubeBool(url, 'force');
    if (isApplyPatch(contentType)) {
      if (!opts.fieldManager) problems.push({ type: 'Required', field: 'fieldManager', detail: 'is required for apply patch' });
      if (force !== undefined) opts.force = force;
    } else if (force !== undefined) {
      problems.push({ type: 'Forbidden', field: 'force', detail: 'may not be specified for non-apply patch' });
    }
  }
  problems.push(...fieldManagerProblems(opts.fieldManager), ...dryRunProblems(dryRun));
  if (!fieldValidations.includes(opts.fieldValidation)) {
    problems.push({ type: 'NotSupported', field: 'fieldValidation', value: opts.fieldValidation, detail: 'supported values: "", "Ignore", "Strict", "Warn"' });
  }
  if (problems.length) throw invalidOptions(kind, problems);
  return opts;
}

/** DeleteOptions with the dry-run flag the store does not take */
export interface KubeDeleteOptions extends DeleteOptions {
  dryRun: boolean;
}

const policies = ['Foreground', 'Background', 'Orphan'];

/** a JSON value where DeleteOptions wants a type, as Go's decoder words the refusal */
function wrongType(v: unknown, field: string, goType: string): ApiError {
  const got = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v;
  return new ApiError(StatusReason.BadRequest, `json: cannot unmarshal ${got} into Go struct field DeleteOptions.${field} of type ${goType}`);
}

/**
 * DeleteOptions of a delete or deletecollection: from the body when there is one (kubectl sends one),
 * else from the query; then validated as kube-apiserver does.
 */
export function deleteOptions(url: URL, bodyValue: unknown): KubeDeleteOptions {
  let grace: number | undefined;
  let orphan: boolean | undefined;
  let policy: string | undefined;
  let dryRun: string[] = [];
  let uid: string | undefined;
  let rv: string | undefined;
  if (bodyValue !== undefined) {
    if (bodyValue === null || typeof bodyValue !== 'object' || Array.isArray(bodyValue)) throw new ApiError(StatusReason.BadRequest, 'decoded object cannot be converted to DeleteOptions');
    const b = bodyValue as Record<string, unknown>;
    if (b.kind !== undefined && b.kind !== 'DeleteOptions') throw new ApiError(StatusReason.BadRequest, 'decoded object cannot be converted to DeleteOptions');
    if (b.gracePeriodSeconds !== undefined && b.gracePeriodSeconds !== null) {
      if (typeof b.gracePeriodSeconds !== 'number') throw wrongType(b.gracePeriodSeconds, 'gracePeriodSeconds', 'int64');
      if (!Number.isInteger(b.gracePeriodSeconds)) throw new ApiError(StatusReason.BadRequest, `json: cannot unmarshal number ${b.gracePeriodSeconds} into Go struct field DeleteOptions.gracePeriodSeconds of type int64`);
      grace = b.gracePeriodSeconds;
    }
    if (b.orphanDependents !== undefined && b.orphanDependents !== null) {
      if (typeof b.orphanDependents !== 'boolean') throw wrongType(b.orphanDependents, 'orphanDependents', 'bool');
      orphan = b.orphanDependents;
    }
    if (b.propagationPolicy !== undefined && b.propagationPolicy !== null) {
      if (typeof b.propagationPolicy !== 'string') throw wrongType(b.propagationPolicy, 'propagationPolicy', 'v1.DeletionPropagation');
      policy = b.propagationPolicy;
    }
    if (b.dryRun !== undefined && b.dryRun !== null) {
      if (!Array.isArray(b.dryRun)) throw wrongType(b.dryRun, 'dryRun', '[]string');
      dryRun = b.dryRun.map((v) => (typeof v === 'string' ? v : String(v)));
    }
    const pre = b.preconditions as Record<string, unknown> | undefined | null;
    if (pre !== undefined && pre !== null) {
      if (typeof pre !== 'object' || Array.isArray(pre)) throw wrongType(pre, 'preconditions', 'v1.Preconditions');
      if (typeof pre.uid === 'string') uid = pre.uid;
      if (typeof pre.resourceVersion === 'string') rv = pre.resourceVersion;
    }
  } else {
    grace = kubeInt(url, 'gracePeriodSeconds');
    orphan = kubeBool(url, 'orphanDependents');
    policy = url.searchParams.get('propagationPolicy') ?? undefined;
    dryRun = url.searchParams.getAll('dryRun');
  }
  const problems: OptionProblem[] = [];
  if (orphan !== undefined && policy !== undefined) problems.push({ type: 'Invalid', field: 'propagationPolicy', value: policy, detail: 'orphanDependents and deletionPropagation cannot be both set' });
  if (policy !== undefined && !policies.includes(policy)) problems.push({ type: 'NotSupported', field: 'propagationPolicy', value: policy, detail: 'supported values: "Foreground", "Background", "Orphan", "nil"' });
  problems.push(...dryRunProblems(dryRun));
  if (problems.length) throw invalidOptions('DeleteOptions', problems);
  const out: KubeDeleteOptions = { dryRun: dryRun.length > 0 };
  // as kube-apiserver's delete: a negative grace period is one second
  if (grace !== undefined) out.gracePeriodSeconds = grace < 0 ? 1 : grace;
  if (policy !== undefined) out.propagationPolicy = policy as KubeDeleteOptions['propagationPolicy'];
  else if (orphan !== undefined) out.propagationPolicy = orphan ? 'Orphan' : 'Background';
  if (uid !== undefined) out.uid = uid;
  if (rv !== undefined) out.resourceVersion = rv;
  return out;
}
