import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { ProjectedTokens, refreshDue } from './projected-tokens.js';

it('a token is asked for again at 80 % of its lifetime, and never later than a day after it was issued', () => {
  const exp = Date.parse('2026-01-01T01:00:07Z');
  // the ServiceAccount admission plugin's 3607 s: at 2885.6 s
  assert.equal(refreshDue({ expirationTimestamp: '2026-01-01T01:00:07Z', expirationSeconds: 3607 }), exp - 3607_000 + 2885_600);
  assert.equal(refreshDue({ expirationTimestamp: '2026-01-01T01:00:07Z', expirationSeconds: 3607 }, 0.5), exp - 3607_000 + 1803_500);
  // a year's token: a day after it was issued
  const yearExp = Date.parse('2027-01-01T00:00:00Z');
  assert.equal(refreshDue({ expirationTimestamp: '2027-01-01T00:00:00Z', expirationSeconds: 365 * 86400 }), yearExp - 365 * 86400_000 + 86400_000);
});

it('a tracked token file is replaced with a fresh token when due, a failed refresh is retried, and a forgotten Pod\'s is left alone', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-tokens-'));
  const tokens = new ProjectedTokens({ fraction: 0.001 });
  try {
    const file = join(dir, 'token');
    let n = 0;
    const asked: { audience?: string; expirationSeconds: number }[] = [];
    const issue = async (req: { audience?: string; expirationSeconds: number }): Promise<{ token: string; expirationTimestamp: string; expirationSeconds: number }> => {
      asked.push(req);
      n += 1;
      return { token: `token-${n}`, expirationTimestamp: new Date(Date.now() + 600_000).toISOString(), expirationSeconds: 600 };
    };
    const first = await issue({ audience: 'vault', expirationSeconds: 600 });
    tokens.track('pod-1', file, first, issue, { audience: 'vault', expirationSeconds: 600 }, 0o640);
    // 0.1 % of 600 s: within a second or so
    const deadline = Date.now() + 30_000;
    while (n < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(n >= 3, `refreshed twice (asked ${n} times)`);
    assert.match(readFileSync(file, 'utf8'), /^token-\d+$/);
    assert.equal(statSync(file).mode & 0o777, 0o640);
    assert.deepEqual(asked[1], { audience: 'vault', expirationSeconds: 600 });
    // a refresh the cluster refuses leaves the old token, and is tried again (after 10 s)
    const other = join(dir, 'other');
    let fails = 1;
    let m = 0;
    const flaky = async (): Promise<{ token: string; expirationTimestamp: string; expirationSeconds: number }> => {
      if (fails-- > 0) throw new Error('the API server is away');
      m += 1;
      return { token: `fresh-${m}`, expirationTimestamp: new Date(Date.now() + 3600_000).toISOString(), expirationSeconds: 3600 };
    };
    tokens.track('pod-2', other, { token: 'old', expirationTimestamp: new Date(Date.now() + 600_000).toISOString(), expirationSeconds: 600 }, flaky, { expirationSeconds: 600 }, 0o644);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(other, 'old');
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(readFileSync(other, 'utf8'), 'old', 'kept while the refresh fails');
    const retryDeadline = Date.now() + 30_000;
    while (m < 1 && Date.now() < retryDeadline) await new Promise((r) => setTimeout(r, 100));
    assert.equal(readFileSync(other, 'utf8').startsWith('fresh-'), true, 'retried');
    tokens.forget('pod-2');
    tokens.forget('pod-1');
    const after = n;
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(n, after, 'no refresh after forget');
    assert.equal(tokens.size, 0);
  } finally {
    tokens.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
