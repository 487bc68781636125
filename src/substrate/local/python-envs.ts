// Cached Python environments for KFP lightweight components: the local substrate's image pulls.
//
// The kfp SDK compiles a lightweight Python component into
//   sh -c "<ensurepip block> PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip install ... && \"$0\" \"$@\"" \
//      sh -ec "<run the component>" "<python source>" <args...>
// Running that pip install for every task is slow and would mutate a shared environment
// when tasks run concurrently. Instead Skiff recognises the bootstrap (parsePipBootstrap),
// installs each distinct package set once into a cached virtualenv layered over the base
// environment (PythonEnvironments.ensure), and runs the rest of the command with that
// env's bin/ first on PATH.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { after } from '../../util/timers.js';

// ---------------------------------------------------------------------------------------
// Parsing the SDK's pip bootstrap

export interface PipBootstrap {
  /** Requirement specifiers, in order of appearance, de-duplicated. */
  packages: string[];
  /** Pip options that affect what gets installed (`--no-deps`, `--index-url X`, ...). */
  pipOptions: string[];
  /** What `"$0" "$@"` would have run: the command and args with the bootstrap removed. */
  rest: { command: string[]; args: string[] };
}

interface Token { text: string; quoted: boolean; op?: '&&' }

const ENSUREPIP_BLOCK = /^\s*if\s+!\s+\[\s+-x\s+"\$\(command -v pip\)"\s+\];\s*then\s*\n[\s\S]*?\n\s*fi\s*\n/;
const EXEC_REST = /&&\s*"\$0"\s+"\$@"\s*$/;
/** `use_venv=True`: a fresh venv over the system site-packages, activated, before the kfp install */
const VENV_BLOCK = /&&\s*export\s+PIP_DISABLE_PIP_VERSION_CHECK=1\s+tmp=\$\(mktemp -d\)\s+python3 -m venv "\$tmp\/venv" --system-site-packages\s+\. "\$tmp\/venv\/bin\/activate"\s+/;
/** Options that only change pip's chatter; dropped. */
const NOISE_FLAGS = new Set(['-q', '-qq', '-qqq', '--quiet', '--no-warn-script-location', '--disable-pip-version-check', '--no-cache-dir', '--no-input']);
/** Flags kept (affect what is installed). */
const KEPT_FLAGS = new Set(['--no-deps', '--pre', '--no-index']);
/** Options taking a value, mapped to their long form. */
const VALUE_OPTS = new Map<string, string>([
  ['--index-url', '--index-url'], ['-i', '--index-url'],
  ['--extra-index-url', '--extra-index-url'],
  ['--trusted-host', '--trusted-host'],
  ['--find-links', '--find-links'], ['-f', '--find-links'],
]);
const PIP_COMMANDS = [['python3', '-m', 'pip', 'install'], ['python', '-m', 'pip', 'install'], ['pip', 'install'], ['pip3', 'install']];

/**
 * Tokenises a small, safe subset of POSIX sh: words with '...' / "..." quoting and
 * backslash escapes, and the `&&` operator. Returns undefined on anything else
 * (expansions, other operators, command separators), so unknown scripts run unchanged.
 */
function tokenize(src: string): Token[] | undefined {
  const out: Token[] = [];
  let i = 0;
  let cur: Token | undefined;
  const push = (): void => { if (cur) out.push(cur); cur = undefined; };
  while (i < src.length) {
    const c = src[i]!;
    if (c === ' ' || c === '\t') { push(); i++; continue; }
    if (c === '\\') {
      const n = src[i + 1];
      if (n === undefined) return undefined;
      if (n === '\n') { i += 2; continue; } // line continuation
      cur ??= { text: '', quoted: false };
      cur.text += n; cur.quoted = true; i += 2; continue;
    }
    if (c === "'") {
      const end = src.indexOf("'", i + 1);
      if (end < 0) return undefined;
      cur ??= { text: '', quoted: false };
      cur.text += src.slice(i + 1, end); cur.quoted = true; i = end + 1; continue;
    }
    if (c === '"') {
      cur ??= { text: '', quoted: false };
      cur.quoted = true;
      i++;
      for (;;) {
        const d = src[i];
        if (d === undefined) return undefined;
        if (d === '"') { i++; break; }
        if (d === '$' || d === '`') return undefined;
        if (d === '\\') {
          const n = src[i + 1];
          if (n === undefined) return undefined;
          if (n === '\n') { i += 2; continue; }
          cur.text += '"\\$`'.includes(n) ? n : d + n; i += 2; continue;
        }
        cur.text += d; i++;
      }
      continue;
    }
    if (c === '&' && src[i + 1] === '&') { push(); out.push({ text: '&&', quoted: false, op: '&&' }); i += 2; continue; }
    if (c === '#' && !cur) return undefined;
    if ('\n;|&<>()$`*?[]{}~'.includes(c)) return undefined;
    cur ??= { text: '', quoted: false };
    cur.text += c; i++;
  }
  push();
  return out;
}

interface Segment { packages: string[]; flags: Set<string>; values: Array<[string, string]> }

function parseSegment(tokens: Token[]): Segment | undefined {
  let i = 0;
  // leading environment assignments: only the one the SDK emits
  while (i < tokens.length && !tokens[i]!.quoted && /^[A-Za-z_][A-Za-z0-9_]*=/.test(tokens[i]!.text)) {
    if (!tokens[i]!.text.startsWith('PIP_DISABLE_PIP_VERSION_CHECK=')) return undefined;
    i++;
  }
  const head = tokens.slice(i).map((t) => t.text);
  const cmd = PIP_COMMANDS.find((p) => p.every((w, k) => head[k] === w));
  if (!cmd) return undefined;
  const words = head.slice(cmd.length);
  const seg: Segment = { packages: [], flags: new Set(), values: [] };
  for (let k = 0; k < words.length; k++) {
    const w = words[k]!.trim();
    if (w === '') continue;
    if (!w.startsWith('-')) { seg.packages.push(w); continue; }
    if (NOISE_FLAGS.has(w)) continue;
    if (KEPT_FLAGS.has(w)) { seg.flags.add(w); continue; }
    const eq = w.indexOf('=');
    const name = eq > 0 ? w.slice(0, eq) : w;
    const long = VALUE_OPTS.get(name);
    if (!long) return undefined; // an option we don't understand: leave the command alone
    let value: string | undefined;
    if (eq > 0) value = w.slice(eq + 1);
    else { k++; value = words[k]; }
    if (value === undefined || value.trim() === '') return undefined;
    seg.values.push([long, value.trim()]);
  }
  return seg;
}

/**
 * Recognises the kfp SDK's pip bootstrap at the start of a container command
 * (`sh -c <script> sh -ec ...` whose script is `[ensurepip block] pip install ... && "$0" "$@"`).
 * Returns undefined for anything else; the command should then run unchanged.
 *
 * Several chained `pip install` commands are merged into one set. `--no-deps` is kept only if
 * every pip command with packages had it (so a dependency-resolving install stays one).
 */
export function parsePipBootstrap(command: string[], args: string[]): PipBootstrap | undefined {
  if (command.length < 4 || command[0] !== 'sh' || command[1] !== '-c') return undefined;
  let script = command[2]!;
  if (!script.includes('pip install') || !EXEC_REST.test(script)) return undefined;
  // a cached environment is what use_venv asks for: the packages, isolated from other tasks
  script = script.replace(ENSUREPIP_BLOCK, '').replace(EXEC_REST, '').replace(VENV_BLOCK, '&& ').trim();
  // KFP v1 components: `(pip install ... || pip install ... --user) && "$0" "$@"`
  const v1 = /^\(\s*([\s\S]*?)\s*\|\|\s*([\s\S]*?)\s*\)$/.exec(script);
  if (v1) {
    if (v1[2] !== `${v1[1]} --user`) return undefined;
    script = v1[1]!;
  }
  const tokens = tokenize(script);
  if (!tokens || tokens.length === 0) return undefined;

  const segments: Segment[] = [];
  let cur: Token[] = [];
  for (const t of [...tokens, { text: '&&', quoted: false, op: '&&' as const }]) {
    if (t.op) {
      if (cur.length === 0) return undefined;
      const seg = parseSegment(cur);
      if (!seg) return undefined;
      segments.push(seg);
      cur = [];
    } else cur.push(t);
  }

  const packages: string[] = [];
  for (const s of segments) for (const p of s.packages) if (!packages.includes(p)) packages.push(p);
  const withPackages = segments.filter((s) => s.packages.length > 0);
  const pipOptions: string[] = [];
  if (withPackages.length > 0 && withPackages.every((s) => s.flags.has('--no-deps'))) pipOptions.push('--no-deps');
  if (segments.some((s) => s.flags.has('--pre'))) pipOptions.push('--pre');
  // an offline install (`--no-index --find-links DIR`) stays offline: the merged set never reaches
  // an index that one of the bootstrap's installs kept away from
  if (segments.some((s) => s.flags.has('--no-index'))) pipOptions.push('--no-index');
  const seen = new Set<string>();
  let indexUrl: string | undefined;
  for (const s of segments) {
    for (const [opt, val] of s.values) {
      if (opt === '--index-url') {
        if (indexUrl !== undefined && indexUrl !== val) return undefined; // conflicting indexes: can't merge
        indexUrl = val;
      }
      const key = `${opt}\0${val}`;
      if (seen.has(key)) continue;
      seen.add(key);
      pipOptions.push(opt, val);
    }
  }
  return { packages, pipOptions, rest: { command: command.slice(3), args: [...args] } };
}

// ---------------------------------------------------------------------------------------
// Cached environments

export interface RunResult { code: number | null; stdout: string; stderr: string }
export type RunFn = (cmd: string, args: string[], opts: { env: NodeJS.ProcessEnv; timeoutMs?: number }) => Promise<RunResult>;

export interface PythonEnvironmentsOptions {
  /** Directory holding the cached envs, e.g. `<dataDir>/python-envs`. */
  root: string;
  /** Python of the base environment, e.g. `<repo>/.venv/bin/python`. */
  basePython: string;
  log?: (m: string) => void;
  /** Process runner (injectable for tests). */
  run?: RunFn;
  /** Limit for one pip install, default 10 minutes. */
  installTimeoutMs?: number;
}

export interface EnsuredEnv {
  /** `<env>/bin`: put first on PATH (and set VIRTUAL_ENV to its parent) to use the env. */
  binDir: string;
  /** True when this call (or the in-flight build it joined) created the env. */
  fresh: boolean;
  /** True when nothing had to be installed: the base environment already satisfies the packages. */
  baseSatisfies?: boolean;
}

export const ENV_MARKER = '.skiff-complete';
export const ENV_META = 'skiff-env.json';

export const defaultRun: RunFn = (cmd, args, opts) => new Promise((resolve, reject) => {
  const child = spawn(cmd, args, { env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
  child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
  const timer = opts.timeoutMs ? after(opts.timeoutMs, () => { child.kill('SIGKILL'); }) : undefined;
  child.on('error', (e) => { timer?.clear(); reject(e); });
  child.on('close', (code) => { timer?.clear(); resolve({ code, stdout, stderr }); });
});

// Prints a JSON list of the requirements (argv[1]: JSON list) not satisfied by what this
// interpreter sees. Uses `packaging` (or pip's vendored copy).
const CHECK_SCRIPT = `
import json, sys
import importlib.metadata as md
try:
    from packaging.requirements import Requirement
except Exception:
    from pip._vendor.packaging.requirements import Requirement
missing = []
for spec in json.loads(sys.argv[1]):
    try:
        r = Requirement(spec)
    except Exception:
        missing.append(spec); continue
    if r.marker is not None and not r.marker.evaluate():
        continue
    if r.url or r.extras:
        missing.append(spec); continue
    try:
        v = md.version(r.name)
    except Exception:
        missing.append(spec); continue
    if not r.specifier.contains(v, prereleases=True):
        missing.append(spec)
print(json.dumps(missing))
`;

const SITE_SCRIPT = `
import json, os, site, sysconfig
print(json.dumps({"purelib": sysconfig.get_paths()["purelib"], "site": [p for p in site.getsitepackages() if os.path.isdir(p)]}))
`;

function tail(s: string, lines = 20): string {
  return s.trimEnd().split('\n').slice(-lines).join('\n');
}

function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' };
  delete env.PYTHONHOME;
  delete env.PYTHONPATH;
  delete env.VIRTUAL_ENV;
  return env;
}

async function exists(p: string): Promise<boolean> {
  try { await fsp.stat(p); return true; } catch { return false; }
}

export class PythonEnvironments {
  private readonly root: string;
  private readonly basePython: string;
  private readonly log: (m: string) => void;
  private readonly run: RunFn;
  private readonly installTimeoutMs: number;
  private readonly inflight = new Map<string, Promise<EnsuredEnv>>();

  constructor(opts: PythonEnvironmentsOptions) {
    this.root = path.resolve(opts.root);
    this.basePython = opts.basePython;
    this.log = opts.log ?? (() => {});
    this.run = opts.run ?? defaultRun;
    this.installTimeoutMs = opts.installTimeoutMs ?? 10 * 60_000;
  }

  /** Normalised key material: sorted, trimmed, de-duplicated packages plus options and base. */
  static normalise(packages: string[], pipOptions: string[]): { packages: string[]; pipOptions: string[] } {
    const pk = [...new Set(packages.map((p) => p.trim()).filter((p) => p !== ''))].sort();
    return { packages: pk, pipOptions: pipOptions.map((o) => o.trim()) };
  }

  /** The env directory a package set maps to (it may not exist yet). */
  dirFor(packages: string[], pipOptions: string[]): string {
    const n = PythonEnvironments.normalise(packages, pipOptions);
    const key = createHash('sha256').update(JSON.stringify({ ...n, base: this.basePython })).digest('hex');
    return path.join(this.root, key.slice(0, 16));
  }

  /** Whether the env for this package set is already built (nothing to wait for). */
  present(packages: string[], pipOptions: string[]): boolean {
    return existsSync(path.join(this.dirFor(packages, pipOptions), ENV_MARKER));
  }

  async ensure(packages: string[], pipOptions: string[]): Promise<EnsuredEnv> {
    const dir = this.dirFor(packages, pipOptions);
    const binDir = path.join(dir, 'bin');
    if (await exists(path.join(dir, ENV_MARKER))) return { binDir, fresh: false, baseSatisfies: await this.nothingInstalled(dir) };
    let p = this.inflight.get(dir);
    if (!p) {
      p = this.build(dir, PythonEnvironments.normalise(packages, pipOptions)).finally(() => this.inflight.delete(dir));
      this.inflight.set(dir, p);
    }
    return p;
  }

  private readonly installedCache = new Map<string, boolean>();

  private async nothingInstalled(dir: string): Promise<boolean> {
    let v = this.installedCache.get(dir);
    if (v === undefined) {
      try {
        v = (JSON.parse(await fsp.readFile(path.join(dir, ENV_META), 'utf8')) as { installed?: boolean }).installed === false;
      } catch {
        v = false;
      }
      this.installedCache.set(dir, v);
    }
    return v;
  }

  private async py(cmd: string, args: string[], what: string, timeoutMs = 120_000): Promise<RunResult> {
    const r = await this.run(cmd, args, { env: childEnv(), timeoutMs });
    if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code ?? 'signal'}):\n${tail(r.stderr + '\n' + r.stdout)}`);
    return r;
  }

  private async build(dir: string, n: { packages: string[]; pipOptions: string[] }): Promise<EnsuredEnv> {
    const binDir = path.join(dir, 'bin');
    if (await exists(path.join(dir, ENV_MARKER))) return { binDir, fresh: false, baseSatisfies: await this.nothingInstalled(dir) };
    const tmp = `${dir}.tmp-${process.pid}`;
    const started = Date.now();
    await fsp.mkdir(this.root, { recursive: true });
    await fsp.rm(tmp, { recursive: true, force: true });
    try {
      // 1. bare venv (no pip of its own: it sees the base env's pip through the .pth below)
      await this.py(this.basePython, ['-m', 'venv', '--without-pip', tmp], 'python -m venv');
      const py = path.join(tmp, 'bin', 'python');
      // 2. layer the base env's site dirs under it. addsitedir (not a bare path line) so the
      //    base's own .pth files are processed too. The env's site-packages stays first on
      //    sys.path, so what is installed into it shadows the base.
      const base = JSON.parse((await this.py(this.basePython, ['-c', SITE_SCRIPT], 'reading base site-packages')).stdout) as { site: string[] };
      const mine = JSON.parse((await this.py(py, ['-c', SITE_SCRIPT], 'reading env site-packages')).stdout) as { purelib: string };
      await fsp.mkdir(mine.purelib, { recursive: true });
      await fsp.writeFile(path.join(mine.purelib, '_skiff_base.pth'),
        `import site; list(map(site.addsitedir, ${JSON.stringify(base.site)}))\n`);
      // 3. install only what the layered env doesn't already satisfy
      let installed = false;
      if (n.packages.length > 0) {
        const missing = JSON.parse((await this.py(py, ['-c', CHECK_SCRIPT, JSON.stringify(n.packages)], 'checking requirements')).stdout) as string[];
        if (missing.length > 0) {
          this.log(`python-envs: installing ${n.packages.join(' ')} into ${path.basename(dir)} (unsatisfied: ${missing.join(' ')})`);
          await this.py(py, ['-m', 'pip', 'install', '--quiet', '--no-warn-script-location', '--disable-pip-version-check', ...n.pipOptions, ...n.packages],
            `pip install ${n.packages.join(' ')}`, this.installTimeoutMs);
          installed = true;
        }
      }
      await this.relocateScripts(path.join(tmp, 'bin'), tmp, dir);
      // 4. metadata, then the marker last
      await fsp.writeFile(path.join(tmp, ENV_META), JSON.stringify({
        packages: n.packages, pipOptions: n.pipOptions, basePython: this.basePython, installed, createdAt: new Date().toISOString(),
      }, null, 2) + '\n');
      await fsp.writeFile(path.join(tmp, ENV_MARKER), '');
      // 5. publish atomically; another process may have won the race
      try {
        await fsp.rename(tmp, dir);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
        if (await exists(path.join(dir, ENV_MARKER))) {
          await fsp.rm(tmp, { recursive: true, force: true });
          return { binDir, fresh: false, baseSatisfies: await this.nothingInstalled(dir) };
        }
        // an incomplete directory that isn't ours to wait for (never published by us): replace it
        await fsp.rm(dir, { recursive: true, force: true });
        await fsp.rename(tmp, dir);
      }
      this.log(`python-envs: ready ${path.basename(dir)} in ${Date.now() - started} ms`);
      return { binDir, fresh: true, baseSatisfies: !installed };
    } catch (e) {
      await fsp.rm(tmp, { recursive: true, force: true }).catch(() => {});
      throw e;
    }
  }

  /** Console scripts and activate files name the build dir; point them at the final one. */
  private async relocateScripts(bin: string, from: string, to: string): Promise<void> {
    for (const name of await fsp.readdir(bin)) {
      const f = path.join(bin, name);
      const st = await fsp.lstat(f);
      if (!st.isFile() || st.size > 1_000_000) continue;
      const text = await fsp.readFile(f, 'utf8');
      if (!text.includes(from)) continue;
      await fsp.writeFile(f, text.split(from).join(to));
    }
  }
}
