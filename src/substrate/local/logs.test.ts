// Log files written by hand (exact timestamps) and by the real shim.
import { after, before, describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { followLog, logTail, readLog, type LogOptions } from './logs.js';
import { launch } from './process.js';

const repo = fileURLToPath(new URL('../../../../', import.meta.url));
let base = '';
let files = 0;

before(() => {
  execFileSync('bash', [path.join(repo, 'scripts/build-native.sh')], { stdio: 'inherit' });
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-logs-test-'));
});
after(() => {
  fs.rmSync(base, { recursive: true, force: true });
});

/** an RFC3339Nano timestamp `secondsAgo` in the past */
function ts(secondsAgo: number, nanos = 123456789): string {
  const d = new Date(Math.floor(Date.now() / 1000) * 1000 - secondsAgo * 1000);
  return d.toISOString().replace(/\.\d{3}Z$/, `.${String(nanos).padStart(9, '0')}Z`);
}

function logFile(lines: string[]): string {
  const file = path.join(base, `log-${++files}.log`);
  fs.writeFileSync(file, lines.map((l) => l + '\n').join(''));
  return file;
}

const T1 = '2026-01-02T03:04:05.000000001Z';
const T2 = '2026-01-02T03:04:06.100000000Z';
const T3 = '2026-01-02T03:04:07.999999999Z';
const T4 = '2026-01-02T03:04:08.5Z';

const sample = () => logFile([
  `${T1} stdout F first line`,
  `${T2} stderr F an error`,
  `${T3} stdout P a long `,
  `${T3} stdout P line in `,
  `${T4} stdout F three pieces`,
  `${T4} stdout F `,
  `${T4} stdout F last, with spaces  `,
]);

void describe('readLog', () => {
  void test('content only; P chunks joined with the line they continue', async () => {
    assert.equal(await readLog(sample(), {}),
      'first line\nan error\na long line in three pieces\n\nlast, with spaces  \n');
  });

  void test('timestamps: the first entry of each line gives its timestamp', async () => {
    assert.equal(await readLog(sample(), { timestamps: true }), [
      `${T1} first line`, `${T2} an error`, `${T3} a long line in three pieces`, `${T4} `, `${T4} last, with spaces  `, '',
    ].join('\n'));
  });

  void test('tailLines counts whole lines, P chunks included', async () => {
    const f = sample();
    assert.equal(await readLog(f, { tailLines: 1 }), 'last, with spaces  \n');
    assert.equal(await readLog(f, { tailLines: 3 }), 'a long line in three pieces\n\nlast, with spaces  \n');
    assert.equal(await readLog(f, { tailLines: 4 }), 'an error\na long line in three pieces\n\nlast, with spaces  \n');
    assert.equal(await readLog(f, { tailLines: 5 }), await readLog(f, {}));
    assert.equal(await readLog(f, { tailLines: 500 }), await readLog(f, {}));
    assert.equal(await readLog(f, { tailLines: 0 }), '');
    assert.equal(await readLog(f, { tailLines: 2, timestamps: true }), `${T4} \n${T4} last, with spaces  \n`);
  });

  void test('a trailing P entry is a line without its newline, and counts for tailLines', async () => {
    const f = logFile([`${T1} stdout F one`, `${T2} stdout P two `, `${T3} stdout P still two`]);
    assert.equal(await readLog(f, {}), 'one\ntwo still two');
    assert.equal(await readLog(f, { tailLines: 1 }), 'two still two');
    assert.equal(await readLog(f, { tailLines: 1, timestamps: true }), `${T2} two still two`);
  });

  void test('an incomplete last line (being written) is left out', async () => {
    const f = logFile([`${T1} stdout F one`]);
    fs.appendFileSync(f, `${T2} stdout F tw`);
    assert.equal(await readLog(f, {}), 'one\n');
    assert.equal(await readLog(f, { tailLines: 1 }), 'one\n');
  });

  void test('sinceSeconds keeps lines whose first entry is recent enough', async () => {
    const f = logFile([
      `${ts(100)} stdout F old`,
      `${ts(100)} stdout P old start `,
      `${ts(1)} stdout F of a line that ends late`,
      `${ts(5)} stdout F recent`,
      `${ts(0)} stdout F now`,
    ]);
    assert.equal(await readLog(f, { sinceSeconds: 10 }), 'recent\nnow\n');
    assert.equal(await readLog(f, { sinceSeconds: 1000 }), 'old\nold start of a line that ends late\nrecent\nnow\n');
    assert.equal(await readLog(f, { sinceSeconds: 10, tailLines: 1 }), 'now\n');
  });

  void test('limitBytes cuts the output', async () => {
    const f = sample();
    assert.equal(await readLog(f, { limitBytes: 13 }), 'first line\nan');
    assert.equal(await readLog(f, { limitBytes: 0 }), '');
    assert.equal((await readLog(f, { limitBytes: 10, timestamps: true })), T1.slice(0, 10));
  });

  void test('a missing file reads as empty', async () => {
    assert.equal(await readLog(path.join(base, 'nope.log'), {}), '');
  });

  void test('multi-byte characters split across P chunks come out whole', async () => {
    const euro = Buffer.from('€', 'utf8'); // 3 bytes
    const file = path.join(base, `log-${++files}.log`);
    fs.writeFileSync(file, Buffer.concat([
      Buffer.from(`${T1} stdout P a`), euro.subarray(0, 1), Buffer.from('\n'),
      Buffer.from(`${T2} stdout F `), euro.subarray(1), Buffer.from('b\n'),
    ]));
    assert.equal(await readLog(file, {}), 'a€b\n');
  });

  void test('tailLines on a large file reads backwards, across chunk boundaries', async () => {
    const file = path.join(base, `log-${++files}.log`);
    const lines: string[] = [];
    for (let i = 0; i < 20000; i++) {
      // some lines in pieces, of varied lengths, so entries straddle the 64 KiB read chunks
      if (i % 7 === 0) lines.push(`${T1} stdout P line ${i} `, `${T1} stdout P ${'x'.repeat(i % 300)} `);
      lines.push(`${T2} stdout F line ${i} end`);
    }
    fs.writeFileSync(file, lines.join('\n') + '\n');
    const all = (await readLog(file, {})).split('\n');
    assert.equal(all.length, 20001);
    for (const n of [1, 7, 100, 1234, 19999, 20000]) {
      assert.equal(await readLog(file, { tailLines: n }), all.slice(-n - 1).join('\n'), `tail ${n}`);
    }
  });

  void test('tailLines does not read the whole file', async () => {
    // A sparse 8 GiB hole, then a few lines: reading it all would take far too long.
    const file = path.join(base, `log-${++files}.log`);
    const fd = fs.openSync(file, 'w');
    fs.ftruncateSync(fd, 8 * 1024 ** 3);
    fs.closeSync(fd);
    fs.appendFileSync(file, `\n${T1} stdout F a\n${T2} stdout F b\n${T3} stdout F c\n`);
    // count what readLog reads through the file handle it opens
    let bytesRead = 0;
    const open = fs.promises.open;
    const spy = mock.method(fs.promises, 'open', async (...args: Parameters<typeof open>) => {
      const fh = await open(...args);
      const read = fh.read.bind(fh) as (...a: unknown[]) => Promise<fs.promises.FileReadResult<Buffer>>;
      (fh as { read: unknown }).read = async (...a: unknown[]) => {
        const r = await read(...a);
        bytesRead += r.bytesRead;
        return r;
      };
      return fh;
    });
    try {
      assert.equal(await readLog(file, { tailLines: 2 }), 'b\nc\n');
    } finally {
      spy.mock.restore();
    }
    assert.equal(spy.mock.callCount(), 1);
    assert.ok(bytesRead > 0 && bytesRead < 1024 ** 2, `read ${bytesRead} bytes of an 8 GiB file for two lines`);
  });

  void test('reads what the shim wrote, long lines and partial output included', async () => {
    const dir = path.join(base, `shim-${++files}`);
    const log = `${dir}.log`;
    const p = await launch({
      stateDir: dir, logFile: log, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      argv: ['sh', '-c', 'echo one; echo two >&2; head -c 40000 /dev/zero | tr "\\0" y; echo; printf "no newline"'],
    });
    const keep = setInterval(() => {}, 1000);
    try { await p.exited(); } finally { clearInterval(keep); }
    // stdout and stderr are separate pipes: their relative order is whatever the shim read first.
    const all = await readLog(log, {});
    assert.ok(all === `one\ntwo\n${'y'.repeat(40000)}\nno newline` || all === `two\none\n${'y'.repeat(40000)}\nno newline`,
      `unexpected log: ${all.slice(0, 80)}`);
    assert.equal(await readLog(log, { tailLines: 2 }), `${'y'.repeat(40000)}\nno newline`);
    const stamped = (await readLog(log, { timestamps: true })).split('\n');
    assert.match(stamped[0] ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z (one|two)$/);
  });
});

async function collect(file: string, opts: LogOptions, isDone: () => boolean, signal = new AbortController().signal): Promise<string> {
  let out = '';
  for await (const chunk of followLog(file, opts, isDone, signal)) out += chunk;
  return out;
}

void describe('followLog', () => {
  void test('yields the existing content (tailLines honoured), then lines appended later, then ends when done', async () => {
    const f = logFile([`${T1} stdout F old 1`, `${T1} stdout F old 2`, `${T1} stdout F old 3`]);
    let done = false;
    const seen: string[] = [];
    const following = (async () => {
      for await (const chunk of followLog(f, { tailLines: 2 }, () => done, new AbortController().signal)) seen.push(chunk);
    })();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(seen, ['old 2\nold 3\n']);
    fs.appendFileSync(f, `${T2} stdout F new 1\n`);
    await new Promise((r) => setTimeout(r, 150));
    assert.deepEqual(seen.join(''), 'old 2\nold 3\nnew 1\n');
    fs.appendFileSync(f, `${T2} stdout P half \n`);
    fs.appendFileSync(f, `${T2} stdout P and \n`);
    await new Promise((r) => setTimeout(r, 150));
    assert.deepEqual(seen.join(''), 'old 2\nold 3\nnew 1\nhalf and ', 'partial output is passed on as it comes');
    fs.appendFileSync(f, `${T3} stdout F half\n${T3} stdout F final`); // the last one not yet complete
    fs.appendFileSync(f, '\n');
    done = true;
    await following;
    assert.equal(seen.join(''), 'old 2\nold 3\nnew 1\nhalf and half\nfinal\n');
  });

  void test('timestamps prefix only the start of each line while following', async () => {
    const f = logFile([`${T1} stdout P a`]);
    let done = false;
    const out = collect(f, { timestamps: true }, () => done);
    await new Promise((r) => setTimeout(r, 50));
    fs.appendFileSync(f, `${T2} stdout F b\n${T3} stdout F c\n`);
    done = true;
    assert.equal(await out, `${T1} ab\n${T3} c\n`);
  });

  void test('waits for a file that does not exist yet', async () => {
    const f = path.join(base, `later-${++files}.log`);
    let done = false;
    const out = collect(f, {}, () => done);
    await new Promise((r) => setTimeout(r, 150));
    fs.writeFileSync(f, `${T1} stdout F hello\n`);
    await new Promise((r) => setTimeout(r, 150));
    done = true;
    assert.equal(await out, 'hello\n');
  });

  void test('ends when aborted, and at limitBytes', async () => {
    const f = logFile([`${T1} stdout F one`]);
    const ac = new AbortController();
    const out = collect(f, {}, () => false, ac.signal);
    await new Promise((r) => setTimeout(r, 50));
    ac.abort();
    assert.equal(await out, 'one\n');

    const g = logFile([`${T1} stdout F one`]);
    const limited = collect(g, { limitBytes: 6 }, () => false);
    await new Promise((r) => setTimeout(r, 50));
    fs.appendFileSync(g, `${T2} stdout F two\n`);
    assert.equal(await limited, 'one\ntw');
  });

  void test('follows a running container to its end', async () => {
    const dir = path.join(base, `shim-${++files}`);
    const log = `${dir}.log`;
    const p = await launch({
      stateDir: dir, logFile: log, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      argv: ['sh', '-c', 'for i in 1 2 3 4 5; do echo "tick $i"; sleep 0.05; done; echo bye >&2'],
    });
    let exited = false;
    void p.exited().then(() => { exited = true; });
    const chunks: string[] = [];
    for await (const c of followLog(log, {}, () => exited, new AbortController().signal)) chunks.push(c);
    assert.equal(chunks.join(''), 'tick 1\ntick 2\ntick 3\ntick 4\ntick 5\nbye\n');
    assert.ok(chunks.length > 1, 'lines arrived while it ran, not all at the end');
  });
});

describe('logTail (terminationMessagePolicy FallbackToLogsOnError)', () => {
  test('a short log is its own message, without trailing blank lines', () => {
    assert.equal(logTail('starting\nTraceback (most recent call last):\nValueError: bad\n\n'), 'starting\nTraceback (most recent call last):\nValueError: bad');
  });
  test('a long one keeps at most its last 2048 bytes, from a whole line', () => {
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i} ${'x'.repeat(20)}`);
    const tail = logTail(lines.join('\n') + '\n');
    assert.ok(Buffer.byteLength(tail) <= 2048, String(Buffer.byteLength(tail)));
    assert.match(tail, /^line \d+ x+\n/);
    assert.ok(tail.endsWith(lines.at(-1) ?? ''));
  });
  test('multi-byte characters cut at the edge do not leave a broken one in front', () => {
    const tail = logTail('é'.repeat(1500) + '\nRuntimeError: ünïcode');
    assert.equal(tail, 'RuntimeError: ünïcode');
    const oneLine = logTail('é'.repeat(1500));
    assert.ok(!oneLine.startsWith('\uFFFD') && oneLine.length === 1024, String(oneLine.length));
  });
});
