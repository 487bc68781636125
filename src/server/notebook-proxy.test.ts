import assert from 'node:assert/strict';
import { it } from 'node:test';
import { matchNotebook, upstreamHeaders, upstreamPath } from './notebook-proxy.js';

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
