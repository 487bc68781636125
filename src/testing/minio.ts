// A MinIO server for tests: on a free loopback port, over a temporary directory, with its own
// credentials, stopped (and its directory removed) by `stop`. The binary is built by
// `scripts/minio.sh` (or `SKIFF_S3=1 scripts/setup.sh`) into a cache outside the repository; without
// it the tests that need S3 are skipped, saying so.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, closeSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';

// Skiff runs on Node 20; the SDK's notice about its own future releases is noise in test output
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** where scripts/minio.sh puts the binary */
export function minioBinary(): string {
  return join(process.env.SKIFF_K8S_HOME ?? join(homedir(), '.cache', 'skiff-k8s'), 'bin', 'minio');
}

/** false when MinIO can run here; else why the S3 tests are skipped (for `describe`'s `skip`) */
export function minioSkip(): string | false {
  return existsSync(minioBinary()) ? false : `MinIO is not built: run scripts/minio.sh (or SKIFF_S3=1 scripts/setup.sh) to build ${minioBinary()}`;
}

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => (typeof addr === 'object' && addr ? ok(addr.port) : fail(new Error('no port'))));
    });
  });
}

export interface MinioOptions {
  accessKey?: string;
  secretKey?: string;
  /** buckets made once it is ready */
  buckets?: string[];
}

export class MinioServer {
  private constructor(
    readonly endpoint: string,
    readonly accessKey: string,
    readonly secretKey: string,
    readonly dir: string,
    private readonly proc: ChildProcess,
  ) {}

  static async start(opts: MinioOptions = {}): Promise<MinioServer> {
    const bin = minioBinary();
    if (!existsSync(bin)) throw new Error(minioSkip() || 'MinIO is not built');
    const dir = mkdtempSync(join(tmpdir(), 'skiff-minio-'));
    const accessKey = opts.accessKey ?? 'skiff-test';
    const secretKey = opts.secretKey ?? 'skiff-test-secret';
    // a port can be taken between finding it and MinIO binding it: try a few
    for (let attempt = 0; ; attempt++) {
      const [port, consolePort] = [await freePort(), await freePort()];
      const log = openSync(join(dir, 'minio.log'), 'a');
      const proc = spawn(bin, ['server', join(dir, 'data'), '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'], {
        env: { ...process.env, MINIO_ROOT_USER: accessKey, MINIO_ROOT_PASSWORD: secretKey, MINIO_BROWSER: 'off', MINIO_UPDATE: 'off' },
        stdio: ['ignore', log, log],
      });
      closeSync(log);
      const endpoint = `http://127.0.0.1:${port}`;
      const s = new MinioServer(endpoint, accessKey, secretKey, dir, proc);
      const stopOnExit = (): void => void proc.kill('SIGKILL');
      process.once('exit', stopOnExit);
      proc.once('exit', () => process.off('exit', stopOnExit));
      if (await s.waitReady(30_000)) {
        if (opts.buckets?.length) await s.makeBuckets(opts.buckets);
        return s;
      }
      proc.kill('SIGKILL');
      if (attempt >= 2) {
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`MinIO did not become ready on ${endpoint}; see its log in ${join(dir, 'minio.log')}`);
      }
    }
  }

  private async waitReady(timeoutMs: number): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) return false;
      try {
        const r = await fetch(`${this.endpoint}/minio/health/ready`, { signal: AbortSignal.timeout(2_000) });
        if (r.ok) return true;
      } catch {
        // not listening yet
      }
      await new Promise((ok) => setTimeout(ok, 100));
    }
    return false;
  }

  async makeBuckets(names: string[]): Promise<void> {
    const c = new S3Client({ endpoint: this.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: this.accessKey, secretAccessKey: this.secretKey } });
    try {
      for (const Bucket of names) await c.send(new CreateBucketCommand({ Bucket }));
    } finally {
      c.destroy();
    }
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      const exited = new Promise((ok) => this.proc.once('exit', ok));
      this.proc.kill('SIGTERM');
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
