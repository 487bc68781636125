// Following a CRI log as attach does: only what is appended, each piece on its own stream, whole
// lines and pieces of long ones as written, until the container is done.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import type { OutputChunk } from '../substrate.js';
import { entryOutput, followOutput } from './attach.js';

test('entryOutput: F entries end their line, P entries are pieces of one', () => {
  assert.deepEqual(entryOutput(Buffer.from('2026-01-01T00:00:00.000000001Z stdout F hello world')), { stream: 'stdout', data: Buffer.from('hello world\n') });
  assert.deepEqual(entryOutput(Buffer.from('2026-01-01T00:00:00.000000001Z stderr P half')), { stream: 'stderr', data: Buffer.from('half') });
  assert.deepEqual(entryOutput(Buffer.from('2026-01-01T00:00:00.000000001Z stdout F')), { stream: 'stdout', data: Buffer.from('\n') });
  assert.equal(entryOutput(Buffer.from('garbage')), null);
});

test('followOutput yields what is appended after it starts, by stream, until done', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-attach-test-'));
  try {
    const file = path.join(dir, '0.log');
    const ts = '2026-01-01T00:00:00.000000001Z';
    fs.writeFileSync(file, `${ts} stdout F before attaching\n`);
    let done = false;
    const abort = new AbortController();
    const got: OutputChunk[] = [];
    const reading = (async () => {
      for await (const c of followOutput(file, () => done, abort.signal)) got.push(c);
    })();
    // written in pieces, a line split mid-entry as a writer's flushes may split it
    fs.appendFileSync(file, `${ts} stdout F one\n${ts} stdout P tw`);
    const text = (): string => got.map((c) => `${c.stream}:${c.data.toString()}`).join('');
    while (!text().includes('one')) await new Promise((r) => setTimeout(r, 10));
    fs.appendFileSync(file, `o\n${ts} stdout F  three\n${ts} stderr F oops\n`);
    while (!text().includes('oops')) await new Promise((r) => setTimeout(r, 10));
    done = true;
    await reading;
    assert.equal(text(), 'stdout:one\nstdout:two three\nstderr:oops\n');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
