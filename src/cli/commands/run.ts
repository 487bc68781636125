// `skiff run PIPELINE.yaml -p name=value [--watch]`: submits a pipeline compiled by the kfp SDK as a Run.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CliError, UsageError } from '../errors.js';
import type { KObject } from '../types.js';
import { NAMESPACE_FLAG, type Command, type Context } from './common.js';

const runsPath = (ns: string): string => `/apis/pipelines.kubeflow.org/v2beta1/namespaces/${ns}/runs`;

interface TaskStatus {
  state?: string;
  podName?: string;
  message?: string;
  cachedFrom?: string;
  transfer?: 'inputs' | 'outputs';
}

const transferNote = { inputs: 'downloading its input artifacts', outputs: 'uploading its output artifacts' } as const;

interface RunStatus {
  state?: string;
  message?: string;
  failedTask?: string;
  tasks?: Record<string, TaskStatus>;
  outputs?: { parameters?: Record<string, unknown>; artifacts?: Record<string, { uri?: string }[]> };
}

/** A `-p name=value` value, typed as the pipeline declares the parameter. */
export function typedParameter(name: string, raw: string, type: string | undefined): unknown {
  const bad = (what: string): never => {
    throw new UsageError(`parameter ${name}: "${raw}" is not ${what}`);
  };
  switch (type) {
    case 'NUMBER_INTEGER':
      return /^-?\d+$/.test(raw.trim()) ? Number(raw) : bad('an integer');
    case 'NUMBER_DOUBLE':
      return raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : bad('a number');
    case 'BOOLEAN':
      return raw === 'true' ? true : raw === 'false' ? false : bad('true or false');
    case 'LIST':
    case 'STRUCT':
      try {
        return JSON.parse(raw);
      } catch {
        return bad(`JSON (a ${type === 'LIST' ? 'list' : 'struct'})`);
      }
    default:
      return raw;
  }
}

function dnsName(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'run';
}

export const command: Command = {
  name: 'run',
  summary: 'Run a pipeline compiled by the kfp SDK',
  usage: 'skiff run PIPELINE.yaml [-p NAME=VALUE ...] [--watch] [--no-cache] [--pipeline-root URI] [-n NS]',
  description: `
Submits the compiled pipeline (PipelineSpec YAML or JSON, with its platform spec if present) as a Run.
Parameters are typed as the pipeline declares them. With --watch, prints each task's state as it
changes and exits non-zero when the run fails. Tasks are cached as the kfp SDK asks (enable_caching):
a task run before with the same inputs and command reuses its outputs; --no-cache runs every task.
--pipeline-root is where the run's artifacts go (KFP's runtime_config.pipeline_root): a directory, or
minio://bucket/path or s3://bucket/path on the S3 server of Skiff's config; without it, the namespace's
kfp-launcher ConfigMap (defaultPipelineRoot) decides, else Skiff's config.`,
  flags: [
    NAMESPACE_FLAG,
    { name: 'param', short: 'p', type: 'strings', valueName: 'NAME=VALUE', description: 'a pipeline parameter (repeatable)' },
    { name: 'watch', short: 'w', type: 'boolean', description: 'follow the run until it ends' },
    { name: 'no-cache', type: 'boolean', description: 'run every task, even those whose outputs are cached' },
    { name: 'pipeline-root', type: 'string', valueName: 'URI', description: 'where the run\'s artifacts go (a directory, minio:// or s3://)' },
  ],

  async run(ctx: Context) {
    const [file, ...extra] = ctx.args.positionals;
    if (!file) throw new UsageError('you must name a compiled pipeline file');
    if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}"`);
    let text: string;
    try {
      text = await readFile(resolve(ctx.io.cwd, file), 'utf8');
    } catch (e) {
      throw new CliError(`${file}: ${(e as Error).message}`);
    }
    // the same reader the server's KFP API uses: it also takes what PyYAML (the kfp SDK) accepts
    const { parsePipelineFile } = await import('../../api/kfp/ir.js');
    let pipelineSpec: Record<string, any>;
    let platformSpec: Record<string, any> | undefined;
    try {
      const parsed = parsePipelineFile(text, file);
      pipelineSpec = parsed.spec as Record<string, any>;
      platformSpec = parsed.platform as Record<string, any> | undefined;
    } catch (e) {
      const errors = (e as { errors?: { field: string; message: string }[] }).errors;
      const first = errors?.[0];
      throw new CliError(`${file}: ${first ? `${first.field ? `${first.field}: ` : ''}${first.message}` : (e as Error).message}`);
    }
    const declared = (pipelineSpec.root?.inputDefinitions?.parameters ?? {}) as Record<string, { parameterType?: string }>;
    const parameters: Record<string, unknown> = {};
    for (const p of ctx.args.strings('param')) {
      const i = p.indexOf('=');
      if (i <= 0) throw new UsageError(`-p wants NAME=VALUE, got "${p}"`);
      const name = p.slice(0, i);
      parameters[name] = typedParameter(name, p.slice(i + 1), declared[name]?.parameterType);
    }
    const body = {
      apiVersion: 'pipelines.kubeflow.org/v2beta1',
      kind: 'Run',
      metadata: { generateName: `${dnsName(String(pipelineSpec.pipelineInfo.name))}-` },
      spec: {
        pipelineSpec, ...(platformSpec ? { platformSpec } : {}), parameters, ...(ctx.args.boolean('no-cache') ? { enableCaching: false } : {}),
        ...(ctx.args.string('pipeline-root') ? { pipelineRoot: ctx.args.string('pipeline-root') } : {}),
      },
    };
    const created = await ctx.client.request<KObject>('POST', runsPath(ctx.namespace), { body });
    const name = String(created.metadata?.name);
    await ctx.out(`run.pipelines.kubeflow.org/${name} created\n`);
    if (!ctx.args.boolean('watch')) return 0;
    return watchRun(ctx, name);
  },
};

async function watchRun(ctx: Context, name: string): Promise<number> {
  const seen = new Map<string, string>();
  const show = async (task: string, t: TaskStatus): Promise<void> => {
    const line = `${t.state ?? 'PENDING'}${t.transfer ? ` (${transferNote[t.transfer]})` : ''}${t.message ? `: ${t.message}` : ''}`;
    if (seen.get(task) === line) return;
    seen.set(task, line);
    await ctx.out(`  ${task.padEnd(32)} ${line}${t.cachedFrom ? ` (cached from ${t.cachedFrom})` : ''}\n`);
  };
  // while the run runs, each task's record is a RunTask of its own: follow those for live progress
  const tasksDone = new AbortController();
  const stopTasks = (): void => tasksDone.abort();
  ctx.signal?.addEventListener('abort', stopTasks);
  const following = (async () => {
    const path = `/apis/pipelines.kubeflow.org/v2beta1/namespaces/${ctx.namespace}/runtasks`;
    for await (const ev of ctx.client.watch(path, { labelSelector: `pipelines.kubeflow.org/run=${name}` }, tasksDone.signal)) {
      const o = ev.object as KObject & { spec?: { path?: string }; status?: TaskStatus };
      if ((ev.type === 'ADDED' || ev.type === 'MODIFIED') && o.spec?.path && o.status) await show(o.spec.path, o.status);
    }
  })().catch(() => undefined);
  try {
    return await followRun(ctx, name, show);
  } finally {
    stopTasks();
    ctx.signal?.removeEventListener('abort', stopTasks);
    await following;
  }
}

async function followRun(ctx: Context, name: string, show: (task: string, t: TaskStatus) => Promise<void>): Promise<number> {
  let status: RunStatus = {};
  for (;;) {
    for await (const ev of ctx.client.watch(runsPath(ctx.namespace), { fieldSelector: `metadata.name=${name}` }, ctx.signal)) {
      if (ev.type === 'ERROR') break;
      status = ((ev.object as KObject).status ?? {}) as RunStatus;
      for (const [task, t] of Object.entries(status.tasks ?? {}).sort()) await show(task, t);
      if (status.state === 'SUCCEEDED' || status.state === 'FAILED' || status.state === 'CANCELED') {
        await ctx.out(`run ${name} ${status.state}${status.message ? `: ${status.message}` : ''}\n`);
        for (const [k, v] of Object.entries(status.outputs?.parameters ?? {})) await ctx.out(`  output ${k} = ${JSON.stringify(v)}\n`);
        for (const [k, list] of Object.entries(status.outputs?.artifacts ?? {})) for (const a of list) await ctx.out(`  output ${k}: ${a.uri ?? ''}\n`);
        return status.state === 'SUCCEEDED' ? 0 : 1;
      }
    }
    if (ctx.signal?.aborted) return 130;
  }
}
