// What an image name means on one machine: an environment (interpreter, PATH, variables). The default
// environment is the one Skiff was set up with; config can send image names elsewhere.

import { join } from 'node:path';

export interface Environment {
  /** directories put in front of PATH (a virtualenv's bin/) */
  path?: string[];
  env?: Record<string, string>;
  /** what runs when a container gives no command (an image's ENTRYPOINT) */
  entrypoint?: string[];
  workingDir?: string;
  /** directories the image carries (its ADD/COPY): bound read-only at `path` inside the container */
  files?: ImageFiles[];
  /** empty writable directories the image has (its `RUN mkdir`): each container gets its own */
  dirs?: string[];
}

export interface ImageFiles {
  /** where the container sees them */
  path: string;
  /** the directory on this machine */
  source: string;
}

/** a directory an image puts into a container's filesystem, as the sandbox binds it */
export interface ImageBind { source: string; target: string; readOnly: boolean }

export interface EnvironmentRule {
  /** image name pattern; `*` matches any run of characters */
  image: string;
  environment: Environment;
}

function globToRegExp(glob: string): RegExp {
  return new RegExp('^' + glob.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$');
}

export class Environments {
  private readonly rules: { re: RegExp; env: Environment }[];

  constructor(rules: EnvironmentRule[], private readonly fallback: Environment) {
    rules.forEach((r, i) => checkRule(r, `environments[${i}]`));
    this.rules = rules.map((r) => ({ re: globToRegExp(r.image), env: r.environment }));
  }

  forImage(image: string | undefined): Environment {
    const hit = this.rules.find((r) => r.re.test(image ?? ''));
    return hit ? { ...this.fallback, ...hit.env, env: { ...this.fallback.env, ...hit.env.env } } : this.fallback;
  }

  /** the base variables of a container in this environment */
  baseEnv(image: string | undefined): Record<string, string> {
    const e = this.forImage(image);
    const path = [...(e.path ?? []), process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'].join(':');
    const base: Record<string, string> = { PATH: path };
    for (const k of ['HOME', 'LANG', 'LC_ALL', 'TZ', 'USER']) {
      const v = process.env[k];
      if (v !== undefined) base[k] = v;
    }
    return { ...base, ...e.env };
  }
}

const absolute = (v: unknown): boolean => typeof v === 'string' && v.startsWith('/');

/** a rule from the config: a wrong one stops the server at start, naming the field */
function checkRule(r: EnvironmentRule, at: string): void {
  if (typeof r?.image !== 'string' || !r.image) throw new Error(`${at}.image: an image name pattern is required`);
  const e = r.environment;
  if (typeof e !== 'object' || e === null) throw new Error(`${at}.environment: required (an object)`);
  if (e.files !== undefined) {
    if (!Array.isArray(e.files)) throw new Error(`${at}.environment.files: must be a list of {path, source}`);
    e.files.forEach((f, j) => {
      if (!absolute(f?.path)) throw new Error(`${at}.environment.files[${j}].path: "${String(f?.path)}" is not an absolute path`);
      if (!absolute(f.source)) throw new Error(`${at}.environment.files[${j}].source: "${String(f.source)}" is not an absolute path`);
    });
  }
  if (e.dirs !== undefined) {
    if (!Array.isArray(e.dirs)) throw new Error(`${at}.environment.dirs: must be a list of paths`);
    e.dirs.forEach((d, j) => {
      if (!absolute(d)) throw new Error(`${at}.environment.dirs[${j}]: "${String(d)}" is not an absolute path`);
    });
  }
}

/** where a container's image directories (`dirs`) live on this machine, under its Pod's directory */
export function imageDirsOf(podDir: string, container: string): string {
  return join(podDir, 'image', container);
}

/** the host directory behind one of an image's `dirs` in a container */
export function imageDirOnHost(podDir: string, container: string, dir: string): string {
  return join(imageDirsOf(podDir, container), encodeURIComponent(dir));
}

/**
 * What an image puts into its container's filesystem: its files read-only, then its empty
 * directories, writable, the container's own (see imageDirOnHost). The Pod's volumes are bound
 * after these, so a volume mounted over an image directory hides it, as on a cluster.
 */
export function imageBinds(env: Environment, podDir: string, container: string): ImageBind[] {
  const files = (env.files ?? []).map((f) => ({ source: f.source, target: f.path, readOnly: true }));
  const dirs = (env.dirs ?? []).map((d) => ({ source: imageDirOnHost(podDir, container, d), target: d, readOnly: false }));
  return [...files, ...dirs];
}
