// skiff-launcher (launcher/, built by scripts/launcher.sh), the binary that is KFP's launcher inside a
// task Pod on a cluster, run as a child process against a real MinIO: the inputs downloaded where the
// plan says before the command, the outputs uploaded after a zero exit (an artifact file, a directory,
// a customPath from the executor output, a parameter file, the executor output), nothing uploaded
// after a non-zero one, its exit code passed through, signals passed to the command, the S3
// credentials kept from it, and its errors naming what failed. Skipped, saying why, without the
// binary or MinIO.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { launcherBinary, launcherSkip } from '../src/testing/launcher-binary.js';
import { MinioServer, minioSkip } from '../src/testing/minio.js';

const skip = launcherSkip() || minioSkip();
/** why the launcher cannot be PID 1 of a PID namespace here (unshare needs the privilege), or false */
const pid1Skip = ((): string | false => {
  const r = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true'], { encoding: 'utf8', timeout: 60_000 });
  return r.status === 0 ? false : `unshare --pid --fork cannot run here: ${(r.error?.message ?? r.stderr).trim()}`;
})();

interface Plan {
  pipelineRoot: string;
  downloads: { name: string; uri: string; path: string }[];
  outputPaths: string[];
  artifacts: Record<string, { artifacts: { name: string; type?: Record<string, string>; uri: string; metadata?: Record<string, unknown>; customPath?: string }[] }>;
  parameterFiles: { path: string; uri: string }[];
  executorOutput: { path: string; uri: string };
}

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

async function waitFor(file: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!existsSync(file)) {
    if (Date.now() > until) throw new Error(`${file} did not appear`);
    await new Promise((ok) => setTimeout(ok, 50));
  }
}

describe('skiff-launcher, KFP\'s launcher inside a task Pod, against MinIO', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-launcher-bin-'));
  let minio: MinioServer;
  let s3: S3Client;

  /**
   * runs the launcher with a plan and the S3 settings (`env` overrides them; undefined removes one);
   * `started` gets a function that signals it; `pid1`: as PID 1 of a PID namespace of its own, as in
   * a container
   */
  const launch = (args: string[], plan: unknown, env: Record<string, string | undefined> = {}, started?: (kill: (s: NodeJS.Signals) => void) => void, pid1 = false): Promise<Result> => {
    const e: Record<string, string | undefined> = {
      ...process.env,
      SKIFF_LAUNCHER_PLAN: typeof plan === 'string' ? plan : JSON.stringify(plan),
      SKIFF_S3_ENDPOINT: minio.endpoint,
      SKIFF_S3_ACCESS_KEY_ID: minio.accessKey,
      SKIFF_S3_SECRET_ACCESS_KEY: minio.secretKey,
      ...env,
    };
    for (const k of Object.keys(e)) if (e[k] === undefined) delete e[k];
    return new Promise((ok, fail) => {
      const p = pid1
        ? spawn('unshare', ['--pid', '--fork', '--mount-proc', launcherBinary(), ...args], { env: e as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] })
        : spawn(launcherBinary(), args, { env: e as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      p.once('error', fail);
      p.once('close', (code, signal) => ok({ code, signal, stdout, stderr }));
      // in its namespace the launcher is the child unshare forked
      const launcher = (): number => (pid1 ? Number(readFileSync(`/proc/${p.pid}/task/${p.pid}/children`, 'utf8').trim().split(/\s+/)[0]) : (p.pid as number));
      started?.((s) => process.kill(launcher(), s));
    });
  };
  const put = async (bucket: string, key: string, body: string): Promise<void> => {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  };
  const get = async (bucket: string, key: string): Promise<string> => {
    const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return (await r.Body?.transformToString()) ?? '';
  };
  const keys = async (bucket: string, prefix: string): Promise<string[]> => {
    const r = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    return (r.Contents ?? []).map((o) => o.Key as string).sort();
  };
  /** a plan with nothing to do but the pipeline root */
  const emptyPlan = (root = 'minio://mlpipeline/v2', t = join(dir, 'empty')): Plan => ({
    pipelineRoot: root, downloads: [], outputPaths: [], artifacts: {}, parameterFiles: [],
    executorOutput: { path: join(t, 'output_metadata.json'), uri: `${root}/empty/output_metadata.json` },
  });

  before(async () => {
    minio = await MinioServer.start({ buckets: ['mlpipeline'] });
    s3 = new S3Client({ endpoint: minio.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey } });
  });
  after(async () => {
    s3?.destroy();
    await minio?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('downloads a single object and the objects under a prefix where the plan says, before the command, which sees them', async () => {
    await put('mlpipeline', 'v2/p/produce/1/data', 'dataset bytes');
    await put('mlpipeline', 'v2/p/produce/1/model/conf/c.json', '{"k":1}');
    await put('mlpipeline', 'v2/p/produce/1/model/w.bin', 'weights');
    await put('mlpipeline', 'v2/p/produce/1/model/empty/', ''); // a folder marker: left out
    const t = join(dir, 'download');
    const plan: Plan = {
      ...emptyPlan('minio://mlpipeline/v2', t),
      downloads: [
        { name: 'data', uri: 'minio://mlpipeline/v2/p/produce/1/data', path: join(t, 'minio/mlpipeline/v2/p/produce/1/data') },
        { name: 'model', uri: 's3://mlpipeline/v2/p/produce/1/model', path: join(t, 's3/mlpipeline/v2/p/produce/1/model') },
      ],
      outputPaths: [join(t, 'minio/mlpipeline/v2/p/consume/2/out'), join(t, 'minio/mlpipeline/v2/p/consume/2/output_parameters/Output')],
    };
    const seen = join(t, 'seen');
    const r = await launch(['run', '--', 'sh', '-c', 'cat "$1" "$2/conf/c.json" "$2/w.bin" > "$3"; ls "$4" > /dev/null && echo component-stdout', 'sh',
      plan.downloads[0]!.path, plan.downloads[1]!.path, seen, join(t, 'minio/mlpipeline/v2/p/consume/2/output_parameters')], plan);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(seen, 'utf8'), 'dataset bytes{"k":1}weights');
    // the command's stdout is all there is on stdout; the launcher's progress goes to stderr
    assert.equal(r.stdout, 'component-stdout\n');
    assert.match(r.stderr, /skiff-launcher: downloaded input artifact data \(1 object\)/);
    assert.match(r.stderr, /skiff-launcher: downloaded input artifact model \(2 objects\)/);
    assert.equal(existsSync(join(plan.downloads[1]!.path, 'empty')), false);
    // the output folders are made (the parents of outputPaths), not the outputs themselves
    assert.ok(statSync(join(t, 'minio/mlpipeline/v2/p/consume/2')).isDirectory());
    assert.equal(existsSync(join(t, 'minio/mlpipeline/v2/p/consume/2/out')), false);
  });

  it('fails for an input that is not there, naming it, and never runs the command', async () => {
    const t = join(dir, 'missing');
    const plan: Plan = { ...emptyPlan('minio://mlpipeline/v2', t), downloads: [{ name: 'data', uri: 'minio://mlpipeline/v2/none/data', path: join(t, 'data') }] };
    const ran = join(t, 'ran');
    const r = await launch(['run', '--', 'sh', '-c', `mkdir -p ${t} && touch ${ran}`], plan);
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim(), 'skiff-launcher: its input artifact data: minio://mlpipeline/v2/none/data does not exist');
    assert.equal(existsSync(ran), false);
    // a URI of another scheme is an error naming it
    const gs: Plan = { ...plan, downloads: [{ name: 'data', uri: 'gs://b/k', path: join(t, 'data') }] };
    const r2 = await launch(['run', '--', 'true'], gs);
    assert.equal(r2.code, 1);
    assert.match(r2.stderr, /^skiff-launcher: downloading its input artifact data \(gs:\/\/b\/k\): gs:\/\/b\/k is not an s3:\/\/ or minio:\/\/ URI$/m);
  });

  it('uploads an artifact file, an artifact directory, a customPath the executor output names, a parameter file and the executor output after a zero exit', async () => {
    const t = join(dir, 'upload');
    const root = 'minio://mlpipeline/v2';
    const base = `${root}/p/consume/3`;
    // KFP's executor input has no customPath; paths under /minio are the plan's to choose, so the
    // provisioned artifacts here point into the test's folder (the merge keeps them)
    const plan: Plan = {
      ...emptyPlan(root, t),
      outputPaths: [join(t, 'file'), join(t, 'dir'), join(t, 'params/Output'), join(t, 'output_metadata.json')],
      artifacts: {
        file: { artifacts: [{ name: 'file', type: { schemaTitle: 'system.Dataset' }, uri: `${base}/file`, metadata: {}, customPath: join(t, 'file') }] },
        dir: { artifacts: [{ name: 'dir', type: { schemaTitle: 'system.Model' }, uri: `${base}/dir`, metadata: {}, customPath: join(t, 'dir') }] },
        moved: { artifacts: [{ name: 'moved', type: { schemaTitle: 'system.Artifact' }, uri: `${base}/moved`, metadata: {}, customPath: join(t, 'not-here') }] },
        unwritten: { artifacts: [{ name: 'unwritten', uri: `${base}/unwritten`, customPath: join(t, 'unwritten') }] },
      },
      parameterFiles: [{ path: join(t, 'params/Output'), uri: `${base}/output_parameters/Output` }, { path: join(t, 'params/Unwritten'), uri: `${base}/output_parameters/Unwritten` }],
      executorOutput: { path: join(t, 'output_metadata.json'), uri: `${base}/output_metadata.json` },
    };
    const executorOutput = JSON.stringify({ artifacts: { moved: { artifacts: [{ name: 'moved', uri: `${base}/moved`, metadata: { rows: 2 }, customPath: join(t, 'elsewhere/moved.txt') }] } } });
    const script = [
      `printf file-bytes > ${t}/file`,
      `mkdir -p ${t}/dir/sub ${t}/elsewhere`,
      `printf a > ${t}/dir/a.txt`, `printf b > ${t}/dir/sub/b.txt`,
      `printf moved-bytes > ${t}/elsewhere/moved.txt`,
      `printf 42 > ${t}/params/Output`,
      `printf '%s' '${executorOutput}' > ${t}/output_metadata.json`,
    ].join(' && ');
    const r = await launch(['run', '--', 'sh', '-c', script], plan);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    assert.deepEqual(await keys('mlpipeline', 'v2/p/consume/3/'), [
      'v2/p/consume/3/dir/a.txt', 'v2/p/consume/3/dir/sub/b.txt', 'v2/p/consume/3/file', 'v2/p/consume/3/moved',
      'v2/p/consume/3/output_metadata.json', 'v2/p/consume/3/output_parameters/Output',
    ]);
    assert.equal(await get('mlpipeline', 'v2/p/consume/3/file'), 'file-bytes');
    assert.equal(await get('mlpipeline', 'v2/p/consume/3/dir/sub/b.txt'), 'b');
    assert.equal(await get('mlpipeline', 'v2/p/consume/3/moved'), 'moved-bytes');
    assert.equal(await get('mlpipeline', 'v2/p/consume/3/output_parameters/Output'), '42');
    assert.equal(await get('mlpipeline', 'v2/p/consume/3/output_metadata.json'), executorOutput);
    assert.match(r.stderr, /uploaded output artifact dir \(2 objects\)/);
  });

  it('uploads from the local path of an artifact\'s URI (/minio/<bucket>/<key>) when nothing names a customPath', async (t) => {
    // the path KFP's components write to is fixed by the URI; a test can use it only where /minio can be made
    const bucket = `skiff-lt-${process.pid}-${Date.now().toString(36)}`;
    const madeMinio = !existsSync('/minio');
    try {
      mkdirSync(`/minio/${bucket}`, { recursive: true });
    } catch (e) {
      t.skip(`cannot make /minio/${bucket} here (${(e as NodeJS.ErrnoException).code}): the path an artifact's URI gives`);
      return;
    }
    try {
      await minio.makeBuckets([bucket]);
      const root = `minio://${bucket}/v2`;
      const plan: Plan = {
        ...emptyPlan(root, join(dir, 'derived')),
        outputPaths: [`/minio/${bucket}/v2/t/model`, `/minio/${bucket}/v2/t/data`],
        artifacts: {
          model: { artifacts: [{ name: 'model', uri: `${root}/t/model`, metadata: {} }] },
          data: { artifacts: [{ name: 'data', uri: `${root}/t/data`, metadata: {} }] },
        },
      };
      const r = await launch(['run', '--', 'sh', '-c', `printf w > /minio/${bucket}/v2/t/model && mkdir -p /minio/${bucket}/v2/t/data/x && printf d > /minio/${bucket}/v2/t/data/x/part-0`], plan);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(await keys(bucket, ''), ['v2/t/data/x/part-0', 'v2/t/model']);
      assert.equal(await get(bucket, 'v2/t/model'), 'w');
    } finally {
      rmSync(`/minio/${bucket}`, { recursive: true, force: true });
      if (madeMinio) {
        try {
          rmdirSync('/minio');
        } catch {
          // another test has a folder there now
        }
      }
    }
  });

  it('passes a non-zero exit code through and uploads nothing; a command killed by a signal is 128+signal; one that cannot start is 127', async () => {
    const t = join(dir, 'fails');
    const base = 'minio://mlpipeline/v2/p/fails/4';
    const plan: Plan = {
      ...emptyPlan('minio://mlpipeline/v2', t),
      outputPaths: [join(t, 'out')],
      artifacts: { out: { artifacts: [{ name: 'out', uri: `${base}/out`, customPath: join(t, 'out') }] } },
      parameterFiles: [{ path: join(t, 'Output'), uri: `${base}/Output` }],
      executorOutput: { path: join(t, 'output_metadata.json'), uri: `${base}/output_metadata.json` },
    };
    const r = await launch(['run', '--', 'sh', '-c', `printf x > ${t}/out; printf 1 > ${t}/Output; echo '{}' > ${t}/output_metadata.json; echo failing >&2; exit 3`], plan);
    assert.equal(r.code, 3);
    assert.match(r.stderr, /^failing$/m);
    assert.match(r.stderr, /skiff-launcher: sh exited with 3; nothing uploaded/);
    assert.deepEqual(await keys('mlpipeline', 'v2/p/fails/'), []);
    const killed = await launch(['run', '--', 'sh', '-c', 'kill -KILL $$'], plan);
    assert.equal(killed.code, 137);
    assert.deepEqual(await keys('mlpipeline', 'v2/p/fails/'), []);
    const missing = await launch(['run', '--', join(t, 'no-such-command'), 'arg'], plan);
    assert.equal(missing.code, 127);
    assert.match(missing.stderr, new RegExp(`^skiff-launcher: starting ${join(t, 'no-such-command')}: .*no such file or directory$`, 'm'));
  });

  it('says when the pipeline root\'s bucket does not exist and when the endpoint refuses the credentials, before the command', async () => {
    const ran = join(dir, 'bucket-ran');
    const r = await launch(['run', '--', 'touch', ran], emptyPlan('minio://no-such-bucket/v2'));
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim(), `skiff-launcher: the bucket no-such-bucket does not exist at S3 endpoint ${minio.endpoint}`);
    const bad = await launch(['run', '--', 'touch', ran], emptyPlan(), { SKIFF_S3_SECRET_ACCESS_KEY: 'not-the-secret' });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr.trim(), new RegExp(`^skiff-launcher: checking the bucket mlpipeline: the S3 endpoint ${minio.endpoint} refused the credentials of access key id "${minio.accessKey}" \\((SignatureDoesNotMatch|InvalidAccessKeyId|AccessDenied)\\)$`));
    assert.doesNotMatch(bad.stderr, /not-the-secret/);
    const unknown = await launch(['run', '--', 'touch', ran], emptyPlan(), { SKIFF_S3_ACCESS_KEY_ID: 'nobody' });
    assert.match(unknown.stderr.trim(), /refused the credentials of access key id "nobody" \((InvalidAccessKeyId|AccessDenied|SignatureDoesNotMatch)\)$/);
    assert.equal(existsSync(ran), false);
  });

  it('names the malformed field of its plan, and the missing S3 setting', async () => {
    const plan = emptyPlan();
    const cases: [unknown, string][] = [
      [{ ...plan, downloads: [{ uri: 3 }] }, 'SKIFF_LAUNCHER_PLAN: downloads is missing or malformed'],
      [{ ...plan, pipelineRoot: '/local/root' }, 'SKIFF_LAUNCHER_PLAN: pipelineRoot (an s3:// or minio:// URI) is missing or malformed'],
      [{ ...plan, executorOutput: undefined }, 'SKIFF_LAUNCHER_PLAN: executorOutput is missing or malformed'],
      [{ ...plan, parameterFiles: [{ path: '/x' }] }, 'SKIFF_LAUNCHER_PLAN: parameterFiles is missing or malformed'],
    ];
    for (const [p, message] of cases) {
      const r = await launch(['run', '--', 'true'], p);
      assert.equal(r.code, 1);
      assert.equal(r.stderr.trim(), `skiff-launcher: ${message}`);
    }
    const notJson = await launch(['run', '--', 'true'], '{');
    assert.match(notJson.stderr, /^skiff-launcher: SKIFF_LAUNCHER_PLAN is not JSON: /);
    const unset = await launch(['run', '--', 'true'], plan, { SKIFF_LAUNCHER_PLAN: undefined });
    assert.equal(unset.stderr.trim(), 'skiff-launcher: SKIFF_LAUNCHER_PLAN is not set');
    const noEndpoint = await launch(['run', '--', 'true'], plan, { SKIFF_S3_ENDPOINT: undefined });
    assert.match(noEndpoint.stderr.trim(), /^skiff-launcher: SKIFF_S3_ENDPOINT is not set/);
    const badEndpoint = await launch(['run', '--', 'true'], plan, { SKIFF_S3_ENDPOINT: 'ftp://x' });
    assert.match(badEndpoint.stderr.trim(), /^skiff-launcher: SKIFF_S3_ENDPOINT: "ftp:\/\/x" is not an http:\/\/ or https:\/\/ URL/);
    const noSecret = await launch(['run', '--', 'true'], plan, { SKIFF_S3_SECRET_ACCESS_KEY: undefined });
    assert.equal(noSecret.stderr.trim(), 'skiff-launcher: SKIFF_S3_SECRET_ACCESS_KEY is not set');
    // an executor output that is not JSON fails the upload, naming the file
    const t = join(dir, 'bad-output');
    const eo = { ...emptyPlan('minio://mlpipeline/v2', t) };
    const r = await launch(['run', '--', 'sh', '-c', `mkdir -p ${t} && echo '{not json' > ${t}/output_metadata.json`], eo);
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`^skiff-launcher: its executor output ${join(t, 'output_metadata.json')}: failed to unmarshal ExecutorOutput: `, 'm'));
  });

  it('copies itself to an executable that runs --version, and says its version', async () => {
    const version = await launch(['--version'], emptyPlan());
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^skiff-launcher \S+\n$/);
    const dest = join(dir, 'copy', 'kfp-launcher', 'launch');
    const r = await launch(['copy', dest], emptyPlan());
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout + r.stderr, '');
    assert.equal(statSync(dest).mode & 0o777, 0o755);
    const copied = await new Promise<string>((ok, fail) => {
      const p = spawn(dest, ['--version'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      p.stdout.on('data', (d: Buffer) => (out += d.toString()));
      p.once('error', fail);
      p.once('close', () => ok(out));
    });
    assert.equal(copied, version.stdout);
    // again, over the first copy
    assert.equal((await launch(['copy', dest], emptyPlan())).code, 0);
    const usage = await launch(['frobnicate'], emptyPlan());
    assert.equal(usage.code, 1);
    assert.match(usage.stderr, /skiff-launcher: unknown subcommand "frobnicate"/);
  });

  it('keeps its own variables and the S3 credentials from the command\'s environment, and passes the rest', async () => {
    const t = join(dir, 'env');
    mkdirSync(t, { recursive: true });
    const r = await launch(['run', '--', 'sh', '-c', `env > ${t}/env`], emptyPlan(), { SKIFF_TEST_PASSED: 'yes', SKIFF_LAUNCHER_EXTRA: 'x' });
    assert.equal(r.code, 0, r.stderr);
    const env = readFileSync(join(t, 'env'), 'utf8');
    assert.match(env, /^SKIFF_TEST_PASSED=yes$/m);
    assert.match(env, /^PATH=/m);
    assert.doesNotMatch(env, /SKIFF_S3_|SKIFF_LAUNCHER_/);
    assert.doesNotMatch(env, new RegExp(minio.secretKey));
  });

  it('passes SIGTERM to the command, which exits as it likes; nothing is uploaded after a non-zero exit', async () => {
    const t = join(dir, 'signal');
    mkdirSync(t, { recursive: true });
    const plan: Plan = { ...emptyPlan('minio://mlpipeline/v2', t), executorOutput: { path: join(t, 'output_metadata.json'), uri: 'minio://mlpipeline/v2/p/signal/output_metadata.json' } };
    const script = `trap 'echo got-term > ${t}/term; exit 7' TERM; echo '{}' > ${t}/output_metadata.json; touch ${t}/ready; while :; do sleep 0.1; done`;
    const r = await launch(['run', '--', 'sh', '-c', script], plan, {}, (kill) => {
      void waitFor(join(t, 'ready')).then(() => kill('SIGTERM'));
    });
    assert.equal(r.code, 7, r.stderr);
    assert.equal(readFileSync(join(t, 'term'), 'utf8'), 'got-term\n');
    assert.deepEqual(await keys('mlpipeline', 'v2/p/signal/'), []);
  });

  it('as PID 1 of its container: reaps what the command leaves behind, passes SIGTERM on and the exit code through, uploads after a zero exit', { skip: pid1Skip }, async () => {
    const t = join(dir, 'pid1');
    mkdirSync(t, { recursive: true });
    const plan: Plan = { ...emptyPlan('minio://mlpipeline/v2', t), executorOutput: { path: join(t, 'output_metadata.json'), uri: 'minio://mlpipeline/v2/p/pid1/output_metadata.json' } };
    // an orphan: the inner sh exits at once, its background subshell becomes PID 1's child and exits
    // later; then the command looks (for up to 10s) for a zombie left in the namespace
    const script = [
      `sh -c '(sleep 0.2; touch ${t}/orphan-done) & exit 0'`,
      `while [ ! -e ${t}/orphan-done ]; do sleep 0.1; done`,
      'i=0; while [ $i -lt 100 ]; do z=0; for f in /proc/[0-9]*/stat; do read -r l < "$f" 2>/dev/null || continue; case "$l" in *") Z "*) z=1;; esac; done; [ $z = 0 ] && break; i=$((i+1)); sleep 0.1; done',
      `echo $z > ${t}/zombie`, `echo '{}' > ${t}/output_metadata.json`,
    ].join('; ');
    const r = await launch(['run', '--', 'sh', '-c', script], plan, {}, undefined, true);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(t, 'zombie'), 'utf8'), '0\n', 'a process the command left behind stayed a zombie');
    assert.deepEqual(await keys('mlpipeline', 'v2/p/pid1/'), ['v2/p/pid1/output_metadata.json']);
    const failing = await launch(['run', '--', 'sh', '-c', 'exit 5'], plan, {}, undefined, true);
    assert.equal(failing.code, 5);
    // the kernel drops a signal PID 1 has no handler for: the launcher's handlers pass it on
    const term = await launch(['run', '--', 'sh', '-c', `trap 'echo got-term > ${t}/term; exit 9' TERM; touch ${t}/ready; while :; do sleep 0.1; done`], plan, {}, (kill) => {
      void waitFor(join(t, 'ready')).then(() => kill('SIGTERM'));
    }, true);
    assert.equal(term.code, 9, term.stderr);
    assert.equal(readFileSync(join(t, 'term'), 'utf8'), 'got-term\n');
  });
});
