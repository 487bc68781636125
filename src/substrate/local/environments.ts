// What an image name means on one machine: an environment (interpreter, PATH, variables). The default
// environment is the one Skiff was set up with; config can send image names elsewhere.

export interface Environment {
  /** directories put in front of PATH (a virtualenv's bin/) */
  path?: string[];
  env?: Record<string, string>;
  /** what runs when a container gives no command (an image's ENTRYPOINT) */
  entrypoint?: string[];
  workingDir?: string;
}

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
