// skiff-launcher for tests: the static Go binary scripts/launcher.sh builds from launcher/ into the
// cache the other test binaries live in. It is KFP's launcher inside a task Pod on a cluster; without
// it the tests that need it are skipped, saying so.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** where scripts/launcher.sh puts the binary */
export function launcherBinary(): string {
  return join(process.env.SKIFF_K8S_HOME ?? join(homedir(), '.cache', 'skiff-k8s'), 'bin', 'skiff-launcher');
}

/** false when the binary is there; else why the tests that need it are skipped (for `describe`'s `skip`) */
export function launcherSkip(): string | false {
  return existsSync(launcherBinary()) ? false : `skiff-launcher is not built: run bash scripts/launcher.sh to build ${launcherBinary()}`;
}
