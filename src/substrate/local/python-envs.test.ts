import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fsp, readdirSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { parsePipBootstrap, PythonEnvironments, defaultRun, ENV_MARKER, ENV_META, type RunFn } from './python-envs.js';
import { conformanceDir, corpusFiles } from '../../conformance-path.js';

const repo = fileURLToPath(new URL('../../../../', import.meta.url));
const corpus = path.join(conformanceDir(), 'kfp');
const basePython = path.join(repo, '.venv', 'bin', 'python');
const hasBase = existsSync(basePython);

const ENSUREPIP = '\nif ! [ -x "$(command -v pip)" ]; then\n    python3 -m ensurepip || python3 -m ensurepip --user || apt-get install python3-pip\nfi\n\n';
const RUNNER = ['sh', '-ec', 'program_path=$(mktemp -d)\nprintf "%s" "$0" > "$program_path/ephemeral_component.py"\n_KFP_RUNTIME=true python3 -m kfp.dsl.executor_main --component_module_path "$program_path/ephemeral_component.py" "$@"\n', 'def add(a, b):\n    return a + b\n'];
const ARGS = ['--executor_input', '{{$}}', '--function_to_execute', 'add'];
const boot = (pip: string): string[] => ['sh', '-c', `${ENSUREPIP}PIP_DISABLE_PIP_VERSION_CHECK=1 ${pip} && "$0" "$@"\n`, ...RUNNER];

const yamlFiles = (dir: string): string[] => corpusFiles(dir);

describe('parsePipBootstrap', () => {
  it('parses the SDK bootstrap (kfp pin, --no-deps, quoted specs)', () => {
    const cmd = boot(`python3 -m pip install --quiet --no-warn-script-location 'kfp==2.14.6' '--no-deps' 'typing-extensions>=3.7.4'`);
    const r = parsePipBootstrap(cmd, ARGS);
    assert.ok(r);
    assert.deepEqual(r.packages, ['kfp==2.14.6', 'typing-extensions>=3.7.4']);
    assert.deepEqual(r.pipOptions, ['--no-deps']);
    assert.deepEqual(r.rest, { command: RUNNER, args: ARGS });
  });

  it('parses the use_venv bootstrap (a fresh venv over system site-packages): a cached environment is the same', () => {
    const venv = `python3 -m pip install --quiet 'yapf'  &&  \nexport PIP_DISABLE_PIP_VERSION_CHECK=1\ntmp=$(mktemp -d)\npython3 -m venv "$tmp/venv" --system-site-packages\n. "$tmp/venv/bin/activate"\n python3 -m pip install --quiet 'kfp==2.14.3' '--no-deps'`;
    const r = parsePipBootstrap(boot(venv), ARGS);
    assert.ok(r);
    assert.deepEqual(r.packages, ['yapf', 'kfp==2.14.3']);
    assert.deepEqual(r.rest, { command: RUNNER, args: ARGS });
  });

  it('handles index urls, chained installs, markers and quoting', () => {
    const cmd = boot(`python3 -m pip install --quiet --index-url https://pypi.org/simple --trusted-host https://pypi.org/simple 'yapf'  &&  python3 -m pip install --quiet --index-url https://pypi.org/simple --trusted-host https://pypi.org/simple 'kfp==2.14.3' '--no-deps' 'typing-extensions>=3.7.4,<5; python_version<"3.9"'`);
    const r = parsePipBootstrap(cmd, ARGS);
    assert.ok(r);
    assert.deepEqual(r.packages, ['yapf', 'kfp==2.14.3', 'typing-extensions>=3.7.4,<5; python_version<"3.9"']);
    // --no-deps only on the second install: dropped so yapf still gets its dependencies
    assert.deepEqual(r.pipOptions, ['--index-url', 'https://pypi.org/simple', '--trusted-host', 'https://pypi.org/simple']);
  });

  it('handles several packages, --opt=value, -i, --extra-index-url, --find-links and escaped quotes', () => {
    const r = parsePipBootstrap(boot(`python3 -m pip install -q --no-deps -i http://mirror/simple --extra-index-url=http://x/simple --find-links /wheels 'pandas' 'scikit-learn' "numpy<2" six\\=\\=1.16.0 'it'"'"'s'`), []);
    assert.ok(r);
    assert.deepEqual(r.packages, ['pandas', 'scikit-learn', 'numpy<2', 'six==1.16.0', "it's"]);
    assert.deepEqual(r.pipOptions, ['--no-deps', '--index-url', 'http://mirror/simple', '--extra-index-url', 'http://x/simple', '--find-links', '/wheels']);
    assert.deepEqual(r.rest.args, []);
  });

  it('keeps an offline install offline: --no-index with --find-links, and a package given by path', () => {
    const r = parsePipBootstrap(boot(`python3 -m pip install --quiet --no-index --find-links=/wheels 'kfp==2.14.3' '--no-deps' && python3 -m pip install --quiet --no-index /src/slow-pkg`), ARGS);
    assert.ok(r);
    assert.deepEqual(r.packages, ['kfp==2.14.3', '/src/slow-pkg']);
    // --no-deps was on one install only; --no-index on either keeps the merged install off every index
    assert.deepEqual(r.pipOptions, ['--no-index', '--find-links', '/wheels']);
  });

  it('parses the KFP v1 `(pip install || pip install --user)` form', () => {
    const pip = `PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip install --quiet --no-warn-script-location 'pyarrow==0.17.1'`;
    const cmd = ['sh', '-c', `(${pip} || ${pip} --user) && "$0" "$@"`, 'python3', '-u', '-c', 'print(1)'];
    const r = parsePipBootstrap(cmd, ['--x', '1']);
    assert.ok(r);
    assert.deepEqual(r.packages, ['pyarrow==0.17.1']);
    assert.deepEqual(r.rest, { command: ['python3', '-u', '-c', 'print(1)'], args: ['--x', '1'] });
    assert.equal(parsePipBootstrap(['sh', '-c', `(${pip} || rm -rf /) && "$0" "$@"`, 'python3'], []), undefined);
  });

  it('returns undefined for anything it does not fully understand', () => {
    assert.equal(parsePipBootstrap(['python3', '-c', 'print(1)'], []), undefined);
    assert.equal(parsePipBootstrap(['sh', '-c', 'echo hi'], ['x']), undefined);
    assert.equal(parsePipBootstrap(RUNNER, ARGS), undefined);
    // unknown pip option, extra shell, expansions, no "$0" "$@"
    assert.equal(parsePipBootstrap(boot(`python3 -m pip install --user 'x'`), []), undefined);
    assert.equal(parsePipBootstrap(boot(`python3 -m pip install 'x' ; rm -rf /`), []), undefined);
    assert.equal(parsePipBootstrap(boot(`python3 -m pip install "$PKG"`), []), undefined);
    assert.equal(parsePipBootstrap(boot(`FOO=1 python3 -m pip install 'x'`), []), undefined);
    assert.equal(parsePipBootstrap(['sh', '-c', `python3 -m pip install 'x'`, 'sh'], []), undefined);
    // conflicting --index-url between chained installs
    assert.equal(parsePipBootstrap(boot(`pip install -i http://a 'x' && pip install -i http://b 'y'`), []), undefined);
  });

  it('parses every lightweight component in the kfp conformance corpus', { skip: !existsSync(corpus) && 'no corpus' }, () => {
    let withPip = 0;
    let plain = 0;
    let unchanged = 0;
    for (const file of yamlFiles(corpus)) {
      let docs;
      try { docs = parseAllDocuments(readFileSync(file, 'utf8')); } catch { continue; }
      for (const doc of docs) {
        let js: any;
        try { js = doc.toJS(); } catch { continue; }
        const executors = js?.deploymentSpec?.executors;
        if (!executors || typeof executors !== 'object') continue;
        for (const [name, ex] of Object.entries<any>(executors)) {
          const c = ex?.container;
          if (!c || !Array.isArray(c.command)) continue;
          const command = c.command.map(String);
          const args = Array.isArray(c.args) ? c.args.map(String) : [];
          const r = parsePipBootstrap(command, args);
          const where = `${path.relative(corpus, file)} ${name}`;
          const script = command[0] === 'sh' && command[1] === '-c' ? (command[2] ?? '') : '';
          if (!command.join(' ').includes('pip install')) {
            assert.equal(r, undefined, where);
            plain++;
          } else if (!script.includes('"$0" "$@"')) {
            // hand-written scripts run unchanged
            assert.equal(r, undefined, where);
            unchanged++;
          } else {
            assert.ok(r, `bootstrap not recognised: ${where}`);
            assert.ok(r.packages.length > 0, where);
            assert.ok(r.packages.every((p) => p !== '' && !p.startsWith('-') && !p.includes("'")), `${where}: ${JSON.stringify(r.packages)}`);
            assert.deepEqual(r.rest.command, command.slice(3), where);
            assert.deepEqual(r.rest.args, args, where);
            withPip++;
          }
        }
      }
    }
    assert.ok(withPip > 50, `only ${withPip} pip bootstraps found`);
    assert.ok(plain > 0);
    // keep the count visible in the test output
    console.log(`corpus: ${withPip} bootstraps parsed, ${plain} plain containers, ${unchanged} left unchanged`);
  });
});

describe('PythonEnvironments', { skip: !hasBase && 'no .venv (run scripts/setup.sh)' }, () => {
  const counting = (): { run: RunFn; calls: string[][] } => {
    const calls: string[][] = [];
    return { calls, run: (cmd, args, opts) => { calls.push([cmd, ...args]); return defaultRun(cmd, args, opts); } };
  };
  const tmpRoot = (): Promise<string> => fsp.mkdtemp(path.join(os.tmpdir(), 'skiff-pyenv-'));

  it('builds an env over the base without network when the base satisfies everything, then caches it', async () => {
    const root = await tmpRoot();
    try {
      const { run, calls } = counting();
      const envs = new PythonEnvironments({ root, basePython, run });
      let t = Date.now();
      const a = await envs.ensure(['kfp', ' typing-extensions>=3.7.4 ', 'six; python_version<"3"'], []);
      const freshMs = Date.now() - t;
      assert.equal(a.fresh, true);
      assert.ok(!calls.some((c) => c.includes('pip') && c.includes('install')), 'no pip install when satisfied');
      const dir = path.dirname(a.binDir);
      assert.ok(existsSync(path.join(dir, ENV_MARKER)));
      const meta = JSON.parse(await fsp.readFile(path.join(dir, ENV_META), 'utf8'));
      assert.deepEqual(meta.packages, ['kfp', 'six; python_version<"3"', 'typing-extensions>=3.7.4']);
      assert.equal(meta.installed, false);
      assert.deepEqual(readdirSync(root), [path.basename(dir)], 'no tmp dirs left');

      const r = await defaultRun(path.join(a.binDir, 'python'), ['-c', 'import sys, kfp; print(kfp.__version__, sys.prefix)'], { env: process.env });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim().split(' ')[1], dir);

      const n = calls.length;
      t = Date.now();
      const b = await envs.ensure(['typing-extensions>=3.7.4', 'six; python_version<"3"', 'kfp'], []);
      const cachedMs = Date.now() - t;
      assert.deepEqual(b, { binDir: a.binDir, fresh: false, baseSatisfies: true });
      assert.equal(calls.length, n, 'no process for a cached env');
      // a second manager (another process, after restart) sees the same env
      const again = await new PythonEnvironments({ root, basePython, run }).ensure(['kfp', 'typing-extensions>=3.7.4', 'six; python_version<"3"'], []);
      assert.deepEqual(again, { binDir: a.binDir, fresh: false, baseSatisfies: true });
      assert.equal(calls.length, n);
      console.log(`ensure(): fresh ${freshMs} ms, cached ${cachedMs} ms`);
    } finally { await fsp.rm(root, { recursive: true, force: true }); }
  });

  it('builds once for concurrent ensure() calls of the same set', async () => {
    const root = await tmpRoot();
    try {
      const { run, calls } = counting();
      const envs = new PythonEnvironments({ root, basePython, run });
      const rs = await Promise.all([1, 2, 3, 4].map(() => envs.ensure(['kfp'], ['--no-deps'])));
      assert.equal(new Set(rs.map((r) => r.binDir)).size, 1);
      assert.equal(calls.filter((c) => c.includes('venv')).length, 1, 'one venv created');
      // different options -> a different env
      const other = await envs.ensure(['kfp'], []);
      assert.notEqual(other.binDir, rs[0]!.binDir);
    } finally { await fsp.rm(root, { recursive: true, force: true }); }
  });

  it('uses the winner when another process published the env first', async () => {
    const root = await tmpRoot();
    try {
      const first = new PythonEnvironments({ root, basePython });
      const a = await first.ensure(['kfp'], []);
      // simulate a race: the second manager's existence check passes, then the rename loses
      const dir = path.dirname(a.binDir);
      const { run } = counting();
      const marker = path.join(dir, ENV_MARKER);
      await fsp.rename(marker, marker + '.hidden');
      const racing: RunFn = async (cmd, args, opts) => {
        const r = await run(cmd, args, opts);
        if (existsSync(marker + '.hidden')) await fsp.rename(marker + '.hidden', marker);
        return r;
      };
      const b = await new PythonEnvironments({ root, basePython, run: racing }).ensure(['kfp'], []);
      assert.deepEqual({ binDir: b.binDir, fresh: b.fresh }, { binDir: a.binDir, fresh: false });
      assert.deepEqual(readdirSync(root), [path.basename(dir)], 'loser cleaned up its tmp dir');
    } finally { await fsp.rm(root, { recursive: true, force: true }); }
  });

  it('a failed install throws with pip output and leaves nothing behind', async () => {
    const root = await tmpRoot();
    try {
      const envs = new PythonEnvironments({ root, basePython });
      await assert.rejects(
        envs.ensure(['skiff-no-such-package-xyz==0.0.1'], ['--no-index']),
        (e: Error) => /pip install/.test(e.message) && /skiff-no-such-package-xyz/i.test(e.message),
      );
      assert.deepEqual(readdirSync(root), []);
    } finally { await fsp.rm(root, { recursive: true, force: true }); }
  });

  it('installs a package the base env lacks (PyPI)', { skip: process.env.SKIFF_OFFLINE === '1' && 'offline' }, async (t) => {
    const root = await tmpRoot();
    try {
      const envs = new PythonEnvironments({ root, basePython });
      const started = Date.now();
      let a;
      try {
        a = await envs.ensure(['iniconfig==2.0.0'], []);
      } catch (e) {
        if (/NewConnectionError|Temporary failure|Network is unreachable|No matching distribution/i.test(String(e))) return void t.skip(`PyPI cannot be reached: ${String(e).slice(0, 200)}`);
        throw e;
      }
      console.log(`ensure(iniconfig==2.0.0) with a real install: ${Date.now() - started} ms`);
      assert.equal(a.fresh, true);
      const r = await defaultRun(path.join(a.binDir, 'python'), ['-c', 'import iniconfig, kfp; print(iniconfig.__file__)'], { env: process.env });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout.startsWith(path.dirname(a.binDir)), r.stdout);
      const base = await defaultRun(basePython, ['-c', 'import iniconfig'], { env: process.env });
      assert.notEqual(base.code, 0, 'the base env was not modified');
    } finally { await fsp.rm(root, { recursive: true, force: true }); }
  });
});
