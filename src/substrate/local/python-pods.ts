// Lightweight Python components on this machine. The kfp SDK compiles one into
//   sh -c "<pip install PACKAGES> && \"$0\" \"$@\"" sh -ec "<run the component>" <source> <args...>
// and the Run controller writes that Pod as KFP's backend would. Here the pip step is this node's
// image pull: the packages are installed once into a cached environment (python-envs.ts) before the
// container starts, off the reconcile path, and the container runs the rest of the command in it.
// A component that needs nothing beyond the base environment is forked from the warm zygote.
import { dirname } from 'node:path';
import type { Container, Pod } from '../../api/core-types.js';
import type { PythonEnvironments } from './python-envs.js';
import { parsePipBootstrap } from './python-envs.js';
import type { PythonZygote } from './zygote.js';
import { lightweightComponent } from './zygote.js';

/** What a container's pip bootstrap asks for. */
export interface PythonPull {
  /** beyond kfp: the component's own kfp pin is served by the base environment's kfp */
  packages: string[];
  pipOptions: string[];
  /** the command with the bootstrap removed (what `"$0" "$@"` would have run) */
  rest: { command: string[]; args: string[] };
}

/** How a container starts instead of as written: its argv and what its environment gains. */
export interface PythonLaunch {
  command: string[];
  args: string[];
  env: Record<string, string>;
  /** put first on PATH (the cached environment's bin/) */
  pathPrefix?: string;
  /** the work runs in a child of the warm zygote, which lives outside any sandbox: the container's
   *  own process only relays its stdio, signals and exit status, so it needs no sandbox either */
  forked?: boolean;
}

/** The kfp pin: the executor contract is the same across kfp 2.x, so one kfp serves every run. */
const isKfp = (spec: string): boolean => /^kfp\s*([<>=!~;[]|$)/i.test(spec.trim());

export class PythonPods {
  constructor(private readonly envs: PythonEnvironments | undefined, private readonly zygote: PythonZygote | undefined) {}

  /** The bootstrap of a container this node can serve from its cache, or undefined (it runs as written). */
  pull(spec: Container): PythonPull | undefined {
    if (!this.envs) return undefined;
    const boot = parsePipBootstrap(spec.command ?? [], spec.args ?? []);
    if (!boot) return undefined;
    return { packages: boot.packages.filter((p) => !isKfp(p)), pipOptions: boot.pipOptions, rest: boot.rest };
  }

  /** Whether the pull's environment is built already (then preparing it is a quick look on disk). */
  present(pull: PythonPull): boolean {
    return pull.packages.length === 0 || Boolean(this.envs?.present(pull.packages, pull.pipOptions));
  }

  /** Builds (or finds) the environment: the slow part, a pip install. Its bin/, unless the base serves. */
  async prepare(pull: PythonPull): Promise<{ binDir?: string }> {
    if (!this.envs || pull.packages.length === 0) return {};
    const e = await this.envs.ensure(pull.packages, pull.pipOptions);
    // e.g. `typing-extensions; python_version<"3.9"`: nothing to add to the base environment
    return e.baseSatisfies ? {} : { binDir: e.binDir };
  }

  /** How the container starts once its environment is there; undefined: as written. */
  async launch(pod: Pod, spec: Container, pulled?: { pull: PythonPull; binDir?: string }): Promise<PythonLaunch | undefined> {
    const command = pulled?.pull.rest.command ?? spec.command ?? [];
    const args = pulled?.pull.rest.args ?? spec.args ?? [];
    if (pulled?.binDir) return { command, args, env: { VIRTUAL_ENV: dirname(pulled.binDir) }, pathPrefix: pulled.binDir };
    return (await this.fork(pod, command, args)) ?? (pulled ? { command, args, env: {} } : undefined);
  }

  /**
   * A lightweight component on the base environment, in a Pod with no volumes of its own (a forked
   * child lives in the server's mount namespace, not the Pod's sandbox), starts as a child forked
   * from the warm zygote: the interpreter and kfp's executor are already loaded. Same argv,
   * environment, working directory, stdout and stderr as the interpreter it replaces.
   */
  private async fork(pod: Pod, command: string[], args: string[]): Promise<PythonLaunch | undefined> {
    const zygote = this.zygote;
    if (!zygote || (pod.spec.volumes?.length ?? 0) > 0 || (pod.spec.initContainers?.length ?? 0) > 0) return undefined;
    const lw = lightweightComponent(command, args);
    if (!lw || !(await zygote.ensure())) return undefined;
    const file = zygote.componentFile(lw.source);
    return {
      command: [zygote.client, '-m', 'kfp.dsl.executor_main', '--component_module_path', file],
      args: lw.args,
      env: { _KFP_RUNTIME: 'true', SKIFF_ZYGOTE: zygote.socket, SKIFF_PYTHON: zygote.python },
      forked: true,
    };
  }
}
