import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../api/errors.js';
import { deleteOptions, goQuote, kubeBool, listOptions, parseInt64, writeOptions } from './options.js';

const u = (query: string): URL => new URL(`http://x/api/v1/pods?${query}`);

function refusal(fn: () => unknown): { code: number; reason: string; message: string; causes: unknown } {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ApiError, String(e));
    const s = e.toStatus() as any;
    return { code: s.code, reason: s.reason, message: s.message, causes: s.details.causes };
  }
  assert.fail('expected a refusal');
}

describe('request options', () => {
  it('reads booleans as kube-apiserver converts them: only 0 and false (any case) are false', () => {
    for (const v of ['true', 'True', 'TRUE', '1', 't', '', 'yes']) assert.equal(kubeBool(u(`watch=${v}`), 'watch'), true, v);
    for (const v of ['false', 'False', 'FALSE', 'fAlSe', '0']) assert.equal(kubeBool(u(`watch=${v}`), 'watch'), false, v);
    assert.equal(kubeBool(u(''), 'watch'), undefined);
  });

  it('reads integers as strconv.ParseInt, with its error text in a 400', () => {
    assert.equal(parseInt64('+12'), 12);
    assert.equal(parseInt64('-3'), -3);
    assert.deepEqual(refusal(() => listOptions(u('limit=ten'))), { code: 400, reason: 'BadRequest', message: 'strconv.ParseInt: parsing "ten": invalid syntax', causes: undefined });
    assert.equal(refusal(() => listOptions(u('timeoutSeconds=99999999999999999999'))).message, 'strconv.ParseInt: parsing "99999999999999999999": value out of range');
  });

  it('turns a watch from "" or "0" into a watch-list, as kube-apiserver defaults it', () => {
    const o = listOptions(u('watch=True&allowWatchBookmarks=true'));
    assert.equal(o.watch, true);
    assert.equal(o.sendInitialEvents, true);
    assert.equal(o.resourceVersionMatch, 'NotOlderThan');
    const resumed = listOptions(u('watch=1&resourceVersion=42'));
    assert.equal(resumed.sendInitialEvents, undefined);
    assert.equal(resumed.resourceVersionMatch, '');
  });

  it('refuses the combinations kube-apiserver refuses, with ListOptions causes', () => {
    const r = refusal(() => listOptions(u('watch=true&sendInitialEvents=true&resourceVersionMatch=Exact')));
    assert.equal(r.code, 422);
    assert.equal(r.reason, 'Invalid');
    assert.equal(r.message, 'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]');
    assert.deepEqual(r.causes, [
      { reason: 'FieldValueForbidden', message: 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan', field: 'resourceVersionMatch' },
      { reason: 'FieldValueNotSupported', message: 'Unsupported value: "Exact": supported values: "NotOlderThan"', field: 'resourceVersionMatch' },
    ]);
    assert.equal(refusal(() => listOptions(u('resourceVersionMatch=NotOlderThan'))).message, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
    assert.equal(refusal(() => listOptions(u('resourceVersion=0&resourceVersionMatch=Exact'))).message, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
    assert.equal(refusal(() => listOptions(u('sendInitialEvents=true'))).message, 'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list');
    assert.equal(refusal(() => listOptions(u('watch=true&resourceVersion=5&resourceVersionMatch=NotOlderThan'))).message, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
    assert.equal(refusal(() => listOptions(u('resourceVersion=5&resourceVersionMatch=Newest'))).message, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""');
  });

  it('checks dryRun, fieldManager and fieldValidation of writes', () => {
    assert.deepEqual(writeOptions(u('dryRun=All&fieldManager=me&fieldValidation=Strict'), 'CreateOptions'), { dryRun: true, fieldManager: 'me', fieldValidation: 'Strict' });
    assert.equal(refusal(() => writeOptions(u('dryRun=true'), 'CreateOptions')).message, 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["true"]: supported values: "All"');
    assert.equal(refusal(() => writeOptions(u('fieldValidation=strict'), 'UpdateOptions')).message, 'UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"');
    assert.equal(refusal(() => writeOptions(u(`fieldManager=${'m'.repeat(129)}`), 'CreateOptions')).message, 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes');
    assert.equal(refusal(() => writeOptions(u('fieldManager=a%07b'), 'CreateOptions')).message, 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\ab": invalid character U+0007 (at position 1)');
    assert.equal(refusal(() => writeOptions(u('force=true'), 'PatchOptions', 'application/merge-patch+json')).message, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
    assert.equal(refusal(() => writeOptions(u(''), 'PatchOptions', 'application/apply-patch+yaml')).message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
    assert.equal(writeOptions(u('fieldManager=kubectl&force=true'), 'PatchOptions', 'application/apply-patch+yaml').force, true);
  });

  it('reads delete options from the body when there is one, else from the query', () => {
    assert.deepEqual(deleteOptions(u('propagationPolicy=Orphan'), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground', gracePeriodSeconds: 0, preconditions: { uid: 'u1' } }),
      { dryRun: false, propagationPolicy: 'Foreground', gracePeriodSeconds: 0, uid: 'u1' });
    assert.deepEqual(deleteOptions(u('gracePeriodSeconds=5&orphanDependents=true&dryRun=All'), undefined), { dryRun: true, gracePeriodSeconds: 5, propagationPolicy: 'Orphan' });
    assert.equal(deleteOptions(u('gracePeriodSeconds=-3'), undefined).gracePeriodSeconds, 1);
    assert.equal(refusal(() => deleteOptions(u('propagationPolicy=Later'), undefined)).message, 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Later": supported values: "Foreground", "Background", "Orphan", "nil"');
    assert.equal(refusal(() => deleteOptions(u(''), { orphanDependents: true, propagationPolicy: 'Background' })).message, 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set');
    assert.equal(refusal(() => deleteOptions(u(''), { gracePeriodSeconds: 'soon' })).message, 'json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64');
  });

  it('quotes as Go does', () => {
    assert.equal(goQuote('a"b\\c\n\u0001é'), '"a\\"b\\\\c\\n\\x01é"');
  });
});
