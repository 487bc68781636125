// skiff-launcher for tests: the static Go binary scripts/launcher.sh builds from launcher/ into the
// cache the other test binaries live in. It is KFP's launcher inside a task Pod on a cluster; without
// it (or with one built from other sources than launcher/) the tests that need it are skipped, saying so.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** where scripts/launcher.sh puts the binary */
export function launcherBinary(): string {
  return join(process.env.SKIFF_K8S_HOME ?? join(homedir(), '.cache', 'skiff-k8s'), 'bin', 'skiff-launcher');
}

/** the build script of the checkout this module is in (src/testing or dist/src/testing), if it has one */
function buildScript(): string | undefined {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const script = join(dir, 'scripts', 'launcher.sh');
    if (existsSync(script) && existsSync(join(dir, 'launcher', 'go.mod'))) return script;
  }
  return undefined;
}

let stale: boolean | undefined;

/**
 * false when the binary is there and built from this checkout's launcher/ (its --version names the
 * hash of those files, as `scripts/launcher.sh --check` sees); else why the tests that need it are
 * skipped (for `describe`'s `skip`).
 */
export function launcherSkip(): string | false {
  const bin = launcherBinary();
  if (!existsSync(bin)) return `skiff-launcher is not built: run bash scripts/launcher.sh to build ${bin}`;
  const script = buildScript();
  if (script && stale === undefined) stale = spawnSync('bash', [script, '--check'], { stdio: 'ignore', timeout: 60_000 }).status !== 0;
  return stale ? `${bin} was built from other sources than launcher/: run bash scripts/launcher.sh to rebuild it` : false;
}
