// Terminals made by the real `script`, sized by the real `stty`, and the exec helpers around them.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { killExec } from './exec.js';
import { TerminalSizer, onTerminal, shellQuote, slaveOf } from './tty.js';

function run(argv: string[], env: Record<string, string>) {
  const t = onTerminal(argv, env);
  const child = spawn(t.argv[0] ?? '', t.argv.slice(1), { env: t.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  return { child, out: () => out, exited };
}

describe('onTerminal', () => {
  test('runs the argv unchanged on a terminal, with the container\'s SHELL and a TERM', async () => {
    const tricky = `it's "quoted" $HOME \\ ; exit 9`;
    const r = run(['sh', '-c', 'test -t 0 && test -t 1 && echo on-a-tty; printf "%s|%s|%s\\n" "$1" "$SHELL" "$TERM"; exit 5', 'sh', tricky], { PATH: process.env.PATH ?? '', SHELL: '/bin/zsh-of-the-image' });
    r.child.stdin.end();
    assert.equal(await r.exited, 5);
    assert.match(r.out(), /on-a-tty\r\n/);
    assert.ok(r.out().includes(`${tricky}|/bin/zsh-of-the-image|xterm\r\n`), r.out());
  });

  test('without a SHELL in the container, the command has none either', async () => {
    const r = run(['sh', '-c', 'echo "shell=${SHELL-unset}"'], { PATH: process.env.PATH ?? '', TERM: 'vt100' });
    r.child.stdin.end();
    assert.equal(await r.exited, 0);
    assert.match(r.out(), /shell=unset/);
  });

  test('shellQuote survives every byte a shell cares about', () => {
    assert.equal(shellQuote("a'b"), `'a'\\''b'`);
  });
});

describe('TerminalSizer', () => {
  test('sets the size the command reads, in order, the newest winning; input after it sees it', async () => {
    const r = run(['sh', '-c', 'read a; stty size; read b; stty size'], { PATH: process.env.PATH ?? '' });
    const sizer = new TerminalSizer(r.child);
    // sent before script has opened its terminal: it waits for it
    await sizer.resize({ width: 120, height: 40 });
    assert.ok(slaveOf(r.child.pid ?? 0), 'the terminal is found under /proc');
    r.child.stdin.write('go\n');
    const first = sizer.resize({ width: 10, height: 5 });
    const second = sizer.resize({ width: 132, height: 43 });
    await Promise.all([first, second]);
    r.child.stdin.end('go\n');
    assert.equal(await r.exited, 0);
    const sizes = [...r.out().matchAll(/^(\d+ \d+)\r$/gm)].map((m) => m[1]);
    assert.equal(sizes[1], '43 132');
    assert.ok(sizes[0] === '40 120' || sizes[0] === '5 10' || sizes[0] === '43 132', r.out());
  });

  test('a command that is gone is not waited for', async () => {
    const r = run(['true'], { PATH: process.env.PATH ?? '' });
    r.child.stdin.end();
    await r.exited;
    await new TerminalSizer(r.child).resize({ width: 1, height: 1 });
  });
});

test('killExec takes the terminal\'s session down with script', async () => {
  const marker = `sleep 7${process.pid % 1000}.25`;
  const r = run(['sh', '-c', `${marker}; echo never`], { PATH: process.env.PATH ?? '' });
  const sizer = new TerminalSizer(r.child);
  await sizer.resize({ width: 80, height: 24 }); // resolves once the terminal (and so the session) is there
  killExec(r.child);
  await r.exited;
  const alive = (): boolean => readdirSync('/proc').filter((d) => /^\d+$/.test(d)).some((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim() === marker;
    } catch {
      return false;
    }
  });
  while (alive()) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.doesNotMatch(r.out(), /never/);
});
