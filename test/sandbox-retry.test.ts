// A container whose sandbox bubblewrap could not set up never ran its program: the start is made
// again, with no restart counted, as a kubelet retries a sandbox it could not create; and an exec
// into a container whose sandbox is still being made waits for it. On a busy
// machine this happens when a mount point vanishes while bwrap binds the host's root (another Pod's
// network namespace being removed from /run/netns). The server here finds, first on its PATH, a
// `bwrap` that fails the way bubblewrap does in that race a given number of times, then runs the real
// one.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TestServer, podManifest } from './harness.js';

const pods = '/api/v1/namespaces/default/pods';
const realBwrap = ['/usr/bin/bwrap', '/bin/bwrap'].find((p) => existsSync(p));

describe('a sandbox bubblewrap could not set up', { skip: !realBwrap && 'no bubblewrap here' }, () => {
  let s: TestServer;
  let dir: string;
  const failures = (): string => join(dir, 'failures-left');
  const failed = (): number => (existsSync(join(dir, 'failed')) ? readFileSync(join(dir, 'failed'), 'utf8').trim().split('\n').length : 0);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skiff-bwrap-race-'));
    // the server's probe of bwrap (no --die-with-parent) always gets the real one
    writeFileSync(join(dir, 'bwrap'), `#!/bin/sh
case " $* " in *" --die-with-parent "*)
  left=$(cat '${failures()}' 2>/dev/null || echo 0)
  if [ "$left" -gt 0 ]; then
    echo $((left - 1)) > '${failures()}'
    echo x >> '${join(dir, 'failed')}'
    echo "bwrap: Can't bind mount /oldroot/ on /newroot/: Unable to apply mount flags: remount \\"/newroot/run/netns/skiff-gone\\": No such file or directory" >&2
    exit 1
  fi;;
esac
delay=$(cat '${join(dir, 'delay')}' 2>/dev/null || echo 0)
[ "$delay" = 0 ] || sleep "$delay"
exec ${realBwrap} "$@"
`);
    chmodSync(join(dir, 'bwrap'), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `${dir}:${path ?? ''}`;
    try {
      s = await TestServer.start();
    } finally {
      process.env.PATH = path;
    }
  });

  after(async () => {
    await s?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const finished = (name: string) => s.until(`${name} finished`, async () => {
    const p = await s.get(`${pods}/${name}`);
    return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
  }, 60_000);

  it('starts the container again: it runs once, with no restart counted and only its own log', async () => {
    writeFileSync(failures(), '2');
    await s.create(pods, podManifest('raced', ['sh', '-c', 'echo ran'], { restartPolicy: 'Never' }));
    const p = await finished('raced');
    assert.equal(failed(), 2, 'the first two starts failed in bwrap');
    assert.equal(p.status.phase, 'Succeeded', JSON.stringify(p.status));
    assert.equal(p.status.containerStatuses[0].restartCount, 0);
    assert.equal((await s.req('GET', `${pods}/raced/log`)).text, 'ran\n');
    assert.match(s.output, /raced\/main: the sandbox could not be set up \(bwrap: Can't bind mount .*\); starting it again \(1 of 3\)/);
  });

  it('kubectl exec into a container whose sandbox is still being set up waits for it', async () => {
    // the Pod is Running once its process is there; bubblewrap makes the sandbox after that
    writeFileSync(join(dir, 'delay'), '2');
    try {
      await s.create(pods, podManifest('slow-sandbox', ['sleep', '3600']));
      await s.until('slow-sandbox Running', async () => ((await s.get(`${pods}/slow-sandbox`)).status?.phase === 'Running' ? true : undefined));
      const r = await s.kubectl(['exec', 'slow-sandbox', '--', 'sh', '-c', 'echo inside $HOSTNAME']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'inside slow-sandbox\n');
    } finally {
      writeFileSync(join(dir, 'delay'), '0');
    }
  });

  it('fails the Pod with bubblewrap\'s error when the sandbox never comes up', async () => {
    writeFileSync(failures(), '100');
    rmSync(join(dir, 'failed'), { force: true });
    await s.create(pods, podManifest('never', ['sh', '-c', 'echo ran'], { restartPolicy: 'Never' }));
    const p = await finished('never');
    writeFileSync(failures(), '0');
    // the first start and three more
    assert.equal(failed(), 4);
    assert.equal(p.status.phase, 'Failed');
    const term = p.status.containerStatuses[0].state.terminated;
    assert.equal(term.exitCode, 1);
    assert.equal(p.status.containerStatuses[0].restartCount, 0);
    assert.match((await s.req('GET', `${pods}/never/log`)).text, /^bwrap: Can't bind mount/);
  });
});
