import assert from 'node:assert/strict';
import { it } from 'node:test';
import { matchNotebook, sessionCookie, upstreamHeaders, upstreamPath, withoutCookie } from './notebook-proxy.js';

it('notebook proxy: routes /notebook/<ns>/<name>/… and keeps the prefix, as Jupyter serves under NB_PREFIX', () => {
  const r = matchNotebook('/notebook/team-a/nb/api/kernels?x=1');
  assert.deepEqual(r, { namespace: 'team-a', name: 'nb', rest: '/api/kernels?x=1' });
  assert.equal(upstreamPath(r, undefined), '/notebook/team-a/nb/api/kernels?x=1');
  assert.deepEqual(matchNotebook('/notebook/team-a/nb'), { namespace: 'team-a', name: 'nb', rest: '' });
  assert.equal(matchNotebook('/notebook/team-a'), undefined);
  assert.equal(matchNotebook('/api/v1/pods'), undefined);
});

it('notebook proxy: http-rewrite-uri replaces the prefix as Istio\'s rewrite does', () => {
  const r = matchNotebook('/notebook/team-a/code/static/app.js');
  assert.ok(r);
  assert.equal(upstreamPath(r, '/'), '/static/app.js');
  assert.equal(upstreamPath({ ...r, rest: '/' }, '/'), '/');
  assert.equal(upstreamPath({ ...r, rest: '/?folder=/home' }, '/'), '/?folder=/home');
  assert.equal(upstreamPath(r, '/base'), '/base/static/app.js');
});

it('notebook proxy: Skiff\'s credentials stay behind; the annotation\'s headers are set', () => {
  const h = upstreamHeaders({ headers: { authorization: 'Bearer secret', host: 'skiff:8080', connection: 'keep-alive', 'x-rstudio-root-path': 'old', cookie: '_xsrf=1' }, socket: { remoteAddress: '127.0.0.1' } }, { 'X-RStudio-Root-Path': '/notebook/team-a/rs/' });
  assert.deepEqual(h, { host: 'skiff:8080', 'x-rstudio-root-path': '/notebook/team-a/rs/', cookie: '_xsrf=1', 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'http' });
});

it('notebook proxy: the notebook cookie stays behind too, Jupyter\'s own cookies pass', () => {
  const h = upstreamHeaders({ headers: { cookie: '_xsrf=1; skiff-notebook-token=alice-token; username-x=2' } }, {});
  assert.equal(h.cookie, '_xsrf=1; username-x=2');
  assert.equal(upstreamHeaders({ headers: { cookie: 'skiff-notebook-token=alice-token' } }, {}).cookie, undefined);
  assert.equal(withoutCookie('a=1;skiff-notebook-token=t;b', 'skiff-notebook-token'), 'a=1; b');
});

it('notebook proxy: the session cookie is HttpOnly, SameSite=Strict and scoped to /notebook/; clearing it expires it', () => {
  assert.equal(sessionCookie('tok,1', false), 'skiff-notebook-token=tok%2C1; Path=/notebook/; HttpOnly; SameSite=Strict');
  assert.equal(sessionCookie(undefined, true), 'skiff-notebook-token=; Max-Age=0; Path=/notebook/; HttpOnly; SameSite=Strict; Secure');
});
