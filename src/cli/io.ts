/** Where the CLI reads and writes; injectable so tests can run `main()` in-process. */

/** Writes text; may return a promise to signal back-pressure (awaited by streaming commands). */
export type Writer = (text: string) => void | Promise<void>;

export interface CliIO {
  stdout: Writer;
  stderr: Writer;
  /** Reads all of standard input (for `-f -`). */
  readStdin: () => Promise<string>;
  env: Record<string, string | undefined>;
  /** Base directory for relative file arguments. */
  cwd: string;
  /** Aborting it ends long-running commands (`get -w`, `logs -f`, `wait`, `up`) cleanly. */
  signal?: AbortSignal;
  /** Milliseconds since the epoch; injectable for deterministic ages. */
  now: () => number;
}

function streamWriter(stream: NodeJS.WriteStream): Writer {
  return (text: string) => {
    if (stream.write(text)) return;
    return new Promise<void>((resolve) => {
      const done = (): void => {
        stream.off('drain', done);
        stream.off('error', done);
        stream.off('close', done);
        resolve();
      };
      stream.once('drain', done);
      stream.once('error', done);
      stream.once('close', done);
    });
  };
}

async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

export function defaultIO(): CliIO {
  return {
    stdout: streamWriter(process.stdout),
    stderr: streamWriter(process.stderr),
    readStdin: readProcessStdin,
    env: process.env,
    cwd: process.cwd(),
    now: () => Date.now(),
  };
}

export function resolveIO(partial: Partial<CliIO> | undefined): CliIO {
  const base = defaultIO();
  if (!partial) return base;
  const io: CliIO = { ...base };
  for (const [k, v] of Object.entries(partial)) {
    if (v !== undefined) (io as unknown as Record<string, unknown>)[k] = v;
  }
  return io;
}
