// What `sh` is in this machine's images. Images' shells (busybox ash, and bash itself) accept `[[ ]]`
// and other extensions that KFP's container components and many Job scripts use; this machine's
// /bin/sh may be dash, which does not. So a directory whose `sh` is bash goes first on every
// container's default PATH; bash invoked as `sh` runs in POSIX mode.
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

/** `<root>/bin` holding `sh` → /bin/bash, or undefined where there is no bash */
export function shellShim(root: string): string | undefined {
  if (!existsSync('/bin/bash')) return undefined;
  const dir = join(root, 'bin');
  const sh = join(dir, 'sh');
  try {
    mkdirSync(dir, { recursive: true });
    if (!existsSync(sh)) symlinkSync('/bin/bash', sh);
    return dir;
  } catch {
    // another server on the same data dir made it first
    return existsSync(sh) ? dir : undefined;
  }
}
