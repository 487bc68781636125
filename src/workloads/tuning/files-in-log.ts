// Katib's File and TensorFlowEvent collectors on a cluster. On one machine Skiff reads what a trial
// wrote on its metrics volume from the disk; a Pod on a cluster node (a kubelet, or a `skiff node`
// agent on another machine) writes to a disk Skiff cannot see, and the API server's only way to a
// finished container is its log. So on a cluster the primary container's command runs under `sh`
// (as Katib's own pod webhook wraps it for its collectors), which, after the command, writes the
// metrics file (or every file under the metrics directory) to the log in base64 between two marker
// lines, and keeps the command's exit code. The collector reads them back from the log through the
// API server (`filesFromLogs`). The image needs `sh`, `find`, `sort` and `base64`, as most have.
import type { Container } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import type { PodFile, PodFileSource, PodLogSource } from '../../substrate/substrate.js';

export const filesBegin = '<<< skiff: katib metrics files >>>';
export const filesEnd = '<<< skiff: end of katib metrics files >>>';
const fileLine = '=== ';

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** the script that runs the command (its arguments), then writes the files at `path` to its output */
export function filesInLogScript(path: string): string {
  return [
    '"$@"; rc=$?',
    `p=${shellQuote(path)}`,
    `echo ${shellQuote(filesBegin)}`,
    `{ if [ -d "$p" ]; then find "$p" -type f | sort; elif [ -f "$p" ]; then echo "$p"; fi; } | while IFS= read -r f; do echo "${fileLine}$f"; base64 "$f"; done`,
    `echo ${shellQuote(filesEnd)}`,
    'exit $rc',
  ].join('\n');
}

/**
 * The primary container of a trial on a cluster: its command (and args) run under the script above.
 * Throws when it has no command: its image's entrypoint is not known here.
 */
export function wrapForFilesInLog(c: Container, path: string, kind: string): void {
  if (!c.command?.length) {
    throw new Error(`the ${kind} metrics collector on a cluster runs the primary container's command under sh to read ${path} after it, and container ${c.name} has no command (its image's entrypoint is not known to Skiff)`);
  }
  c.command = ['sh', '-c', filesInLogScript(path), 'katib-trial', ...c.command, ...(c.args ?? [])];
  delete c.args;
}

/**
 * The files a wrapped container wrote to its log: the last block between the markers (a command that
 * printed the markers itself comes before it). [] when there is none yet.
 */
export function parseFilesInLog(log: string, path: string): PodFile[] {
  const lines = log.split('\n').map((l) => l.replace(/\r$/, ''));
  const end = lines.lastIndexOf(filesEnd);
  if (end < 0) return [];
  const begin = lines.lastIndexOf(filesBegin, end);
  if (begin < 0) return [];
  const out: PodFile[] = [];
  let current: { path: string; b64: string[] } | undefined;
  const flush = (): void => {
    if (current) out.push({ path: current.path, data: Buffer.from(current.b64.join(''), 'base64') });
  };
  for (const l of lines.slice(begin + 1, end)) {
    if (l.startsWith(fileLine)) {
      flush();
      current = { path: l.slice(fileLine.length), b64: [] };
    } else if (current) current.b64.push(l.trim());
  }
  flush();
  const base = path.replace(/\/+$/, '') || '/';
  return out.filter((f) => f.path === base || f.path.startsWith(base === '/' ? '/' : `${base}/`));
}

/** A container's whole log, or undefined when it has none yet (it has not started). */
export async function wholeLog(logs: PodLogSource, pod: StoredObject, container: string | undefined, signal?: AbortSignal): Promise<string | undefined> {
  const ac = new AbortController();
  const stop = (): void => ac.abort();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    const it = await logs.logs(pod, { container }, ac.signal);
    let text = '';
    for await (const chunk of it) text += chunk;
    return text;
  } catch (e) {
    if (/waiting to start|not found|not valid/i.test((e as Error).message)) return undefined;
    throw e;
  } finally {
    signal?.removeEventListener('abort', stop);
    ac.abort();
  }
}

/** Files read back from the logs of wrapped containers, through the Pods' log source (the cluster's API server). */
export function filesFromLogs(logs: PodLogSource): PodFileSource {
  return {
    async readPodFiles(pod: StoredObject, container: string, path: string, signal?: AbortSignal): Promise<PodFile[]> {
      // a container that has not started has no log, and no files, yet
      const text = await wholeLog(logs, pod, container, signal);
      return text === undefined ? [] : parseFilesInLog(text, path);
    },
  };
}
