import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { CliError, UsageError } from '../errors.js';
import type { Command } from './common.js';
import { expandHome } from './up.js';

export const command: Command = {
  name: 'kubeconfig',
  summary: 'Print the kubeconfig that points kubectl and Kubernetes clients at Skiff',
  usage: 'skiff kubeconfig [--path] [--data-dir DIR]',
  description: `
'skiff up' writes a kubeconfig into its data directory each time it starts (context "skiff", namespace
"default"); this prints it, or with --path where it is, so that kubectl, the Kubernetes client libraries
and the Kubeflow SDKs reach Skiff unchanged.`,
  examples: `
  KUBECONFIG=$(skiff kubeconfig --path) kubectl get pods
  skiff kubeconfig > ~/.kube/skiff.yaml`,
  flags: [
    { name: 'path', type: 'boolean', description: 'print the file\'s path instead of its contents' },
    { name: 'data-dir', type: 'string', valueName: 'DIR', description: 'the data directory of skiff up (default $SKIFF_DATA_DIR or ~/.skiff)' },
  ],

  async run(ctx) {
    const a = ctx.args;
    if (a.positionals.length > 0) throw new UsageError(`unexpected argument "${a.positionals[0]}"`);
    const dataDir = resolve(ctx.io.cwd, expandHome(a.string('data-dir') ?? ctx.io.env.SKIFF_DATA_DIR ?? `${homedir()}/.skiff`));
    const { kubeconfigPath } = await import('../../server/kube/incluster.js');
    const file = kubeconfigPath(dataDir);
    if (!existsSync(file)) throw new CliError(`no kubeconfig in ${dataDir}: it is written by 'skiff up --data-dir ${dataDir}' when it starts`);
    await ctx.out(a.boolean('path') ? `${file}\n` : readFileSync(file, 'utf8'));
    return 0;
  },
};
