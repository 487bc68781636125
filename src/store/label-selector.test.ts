import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../api/errors.js';
import { parseLabels } from './label-selector.js';
import { matchLabels, parseLabelSelector } from './selectors.js';

function refused(s: string): string {
  try {
    parseLabels(s);
  } catch (e) {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.code, 400);
    return e.message;
  }
  assert.fail(`"${s}" was accepted`);
}

describe('label selectors', () => {
  it('parses every form Kubernetes accepts', () => {
    assert.deepEqual(parseLabels('a=b, c==d,e!=f , g in (y,x,x), h notin (z),i,!j,k>3,l<2,m=,n in ()'), [
      { key: 'a', op: '=', value: 'b' },
      { key: 'c', op: '=', value: 'd' },
      { key: 'e', op: '!=', value: 'f' },
      { key: 'g', op: 'in', values: ['x', 'y'] },
      { key: 'h', op: 'notin', values: ['z'] },
      { key: 'i', op: 'exists' },
      { key: 'j', op: '!exists' },
      { key: 'k', op: 'gt', value: 3 },
      { key: 'l', op: 'lt', value: 2 },
      { key: 'm', op: '=', value: '' },
      { key: 'n', op: 'in', values: [''] },
    ]);
    assert.deepEqual(parseLabels('example.com/app in (in, notin)'), [{ key: 'example.com/app', op: 'in', values: ['in', 'notin'] }]);
  });

  it('matches as Kubernetes does, Gt and Lt on integer labels only', () => {
    const sel = parseLabelSelector('tier in (a,b),!gone,n>3');
    assert.equal(matchLabels(sel, { tier: 'a', n: '4' }), true);
    assert.equal(matchLabels(sel, { tier: 'a', n: '3' }), false);
    assert.equal(matchLabels(sel, { tier: 'a', n: 'four' }), false);
    assert.equal(matchLabels(sel, { tier: 'c', n: '9' }), false);
    assert.equal(matchLabels(sel, { tier: 'b', n: '9', gone: '' }), false);
  });

  it('refuses with the parser errors of kube-apiserver', () => {
    assert.equal(refused('app=a b'), "found 'b', expected: ',' or 'end of string'");
    assert.equal(refused('app in (a,b'), "unable to parse requirement: found '', expected: ',' or ')'");
    assert.equal(refused('app in a'), "unable to parse requirement: found 'a' expected: '('");
    assert.equal(refused('app ~ a'), "unable to parse requirement: found '~', expected: in, notin, =, ==, !=, gt, lt");
    assert.equal(refused(',app'), "found ',', expected: !, identifier, or 'end of string'");
    assert.equal(refused('app,'), "found '', expected: identifier after ','");
    assert.equal(refused('!app=x'), "found '=', expected: ',' or 'end of string'");
    assert.equal(refused('n>x'), `unable to parse requirement: values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer`);
  });

  it('refuses invalid keys and values with the validation texts of Kubernetes', () => {
    assert.equal(refused('-app=x'), `unable to parse requirement: <nil>: Invalid value: "-app": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`);
    assert.equal(refused('app=-x'), `unable to parse requirement: values[0][app]: Invalid value: "-x": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`);
    assert.match(refused('Example.com/app'), /^unable to parse requirement: <nil>: Invalid value: "Example\.com\/app": prefix part a lowercase RFC 1123 subdomain/);
  });
});
