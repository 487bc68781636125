import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Container } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import type { PodLogSource } from '../../substrate/substrate.js';
import { filesBegin, filesEnd, filesFromLogs, parseFilesInLog, wrapForFilesInLog } from './files-in-log.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-files-in-log-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** runs a wrapped container's command with the machine's sh, as a node would: its output and exit code */
function runWrapped(c: Container): { out: string; code: number | null } {
  const [cmd, ...args] = c.command ?? [];
  const r = spawnSync(cmd as string, [...args, ...(c.args ?? [])], { encoding: 'utf8' });
  return { out: r.stdout + r.stderr, code: r.status };
}

describe('Katib\'s File and TensorFlowEvent collectors on a cluster: the files in the log', () => {
  it('runs the command under sh, then writes the metrics file to the log, and keeps the exit code', () => {
    const file = join(dir, "it's here", 'metrics.log');
    const c: Container = { name: 'training', image: 'python:3.11', command: ['sh', '-c'], args: [`mkdir -p "$(dirname "$0")" && printf 'accuracy=0.9\\nloss=0.1\\n' > "$0"; echo trained; exit 3`, file] };
    wrapForFilesInLog(c, file, 'File');
    assert.equal(c.args, undefined);
    assert.deepEqual(c.command?.slice(0, 2), ['sh', '-c']);
    const { out, code } = runWrapped(c);
    assert.equal(code, 3, out);
    assert.match(out, /^trained\n/);
    assert.deepEqual(parseFilesInLog(out, file).map((f) => [f.path, f.data.toString()]), [[file, 'accuracy=0.9\nloss=0.1\n']]);
  });

  it('writes every file under a directory (TensorFlow event files are binary), and nothing when there is none', () => {
    const events = join(dir, 'tfevent');
    mkdirSync(join(events, 'train'), { recursive: true });
    const binary = Buffer.from([0, 1, 2, 255, 10, 13, 0x7f]);
    writeFileSync(join(events, 'train', 'events.out.tfevents.1'), binary);
    writeFileSync(join(events, 'events.out.tfevents.0'), Buffer.alloc(70_000, 7));
    const c: Container = { name: 'training', command: ['true'] };
    wrapForFilesInLog(c, events, 'TensorFlowEvent');
    const { out, code } = runWrapped(c);
    assert.equal(code, 0);
    const files = parseFilesInLog(out, events);
    assert.deepEqual(files.map((f) => f.path), [join(events, 'events.out.tfevents.0'), join(events, 'train', 'events.out.tfevents.1')]);
    assert.deepEqual(files[1]?.data, binary);
    assert.equal(files[0]?.data.length, 70_000);
    // a path that is not there: the markers with nothing between them
    const none: Container = { name: 'training', command: ['true'] };
    wrapForFilesInLog(none, join(dir, 'absent'), 'File');
    const r = runWrapped(none);
    assert.deepEqual(parseFilesInLog(r.out, join(dir, 'absent')), []);
    assert.ok(r.out.includes(filesEnd));
  });

  it('reads the last block only, and only the files under the path asked for', () => {
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    const log = [`${filesBegin}`, '=== /m/metrics.log', b64('accuracy=1.0'), filesEnd, 'printed by the command', filesBegin, '=== /m/metrics.log', b64('accuracy=0.5'), '=== /other/x', b64('x'), filesEnd, ''].join('\n');
    assert.deepEqual(parseFilesInLog(log, '/m/metrics.log').map((f) => f.data.toString()), ['accuracy=0.5']);
    assert.deepEqual(parseFilesInLog(log, '/m').map((f) => f.path), ['/m/metrics.log']);
    // a block not ended yet (the container is running, or it was killed) is no block
    assert.deepEqual(parseFilesInLog(`${filesBegin}\n=== /m/metrics.log\n${b64('a')}\n`, '/m/metrics.log'), []);
  });

  it('refuses a container with no command: its image\'s entrypoint is not known', () => {
    assert.throws(() => wrapForFilesInLog({ name: 'training', image: 'x', args: ['--epochs=1'] }, '/var/log/katib/metrics.log', 'File'),
      /the File metrics collector on a cluster runs the primary container's command under sh to read \/var\/log\/katib\/metrics.log after it, and container training has no command/);
  });

  it('reads the files through the Pods\' log source; a container not started yet has none', async () => {
    const b64 = Buffer.from('loss=0.25').toString('base64');
    const logs: PodLogSource = {
      async logs(pod: StoredObject) {
        if (pod.metadata.name === 'waiting') throw new Error('container "training" in pod "waiting" is waiting to start: ContainerCreating');
        return (async function* () {
          yield `epoch 1\n${filesBegin}\n=== /var/log/katib/metrics.log\n`;
          yield `${b64}\n${filesEnd}\n`;
        })();
      },
    };
    const source = filesFromLogs(logs);
    const pod = (name: string): StoredObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: name, resourceVersion: '1', creationTimestamp: '' } }) as StoredObject;
    assert.deepEqual((await source.readPodFiles(pod('done'), 'training', '/var/log/katib/metrics.log')).map((f) => f.data.toString()), ['loss=0.25']);
    assert.deepEqual(await source.readPodFiles(pod('waiting'), 'training', '/var/log/katib/metrics.log'), []);
  });
});
