// The Dockerfile cannot be built on these machines (there is no container engine): this checks what can
// be checked without one. Every path it copies from the build context exists and is not left out by
// .dockerignore; every path it copies out of the build stage exists here after a build (`npm run build`
// for dist/, the setup script for build/web), as the same commands make it there; and its entrypoint
// is `skiff up --in-cluster` with a script that the image has.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from './harness.js';

interface Instruction {
  stage: number;
  op: string;
  args: string;
}

/** instructions, continuation lines joined, each with the index of the stage it is in */
function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let stage = -1;
  const joined = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  for (const line of joined) {
    const m = /^(\S+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const op = (m[1] as string).toUpperCase();
    if (op === 'FROM') stage++;
    out.push({ stage, op, args: m[2] as string });
  }
  return out;
}

const dockerfile = parseDockerfile(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8'));
const ignored = readFileSync(join(repoRoot, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
const workdir = (stage: number): string => dockerfile.filter((i) => i.stage === stage && i.op === 'WORKDIR').at(-1)?.args ?? '/';
const finalStage = Math.max(...dockerfile.map((i) => i.stage));

interface Copy {
  stage: number;
  from?: string;
  sources: string[];
  dest: string;
}
const copies: Copy[] = dockerfile.filter((i) => i.op === 'COPY').map((i) => {
  const words = i.args.split(/\s+/);
  const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
  const paths = words.filter((w) => !w.startsWith('--'));
  return { stage: i.stage, ...(from ? { from } : {}), sources: paths.slice(0, -1), dest: posix.resolve(workdir(i.stage), paths.at(-1) as string) };
});

describe('Dockerfile', () => {
  it('copies from the build context only paths that exist and .dockerignore keeps', () => {
    const fromContext = copies.filter((c) => !c.from).flatMap((c) => c.sources);
    assert.ok(fromContext.includes('package-lock.json'), 'npm ci needs the lock file');
    for (const src of fromContext) {
      assert.ok(existsSync(join(repoRoot, src)), `${src} exists`);
      const top = src.replace(/\/.*$/, '');
      assert.ok(!ignored.includes(top) && !ignored.includes(src), `${src} is not in .dockerignore`);
    }
  });

  it('copies out of the build stage what a build makes here', () => {
    const names = new Map(dockerfile.filter((i) => i.op === 'FROM').map((i) => [/\bAS\s+(\S+)/i.exec(i.args)?.[1], i.stage]));
    const fromBuild = copies.filter((c) => c.from);
    assert.ok(fromBuild.length > 0);
    for (const c of fromBuild) {
      const stage = names.get(c.from);
      assert.notEqual(stage, undefined, `stage ${c.from} exists`);
      const base = workdir(stage as number);
      // the launcher stage's binary is a Go build of launcher/ (scripts/launcher.sh builds the same here)
      if (c.from === 'launcher') {
        assert.deepEqual(c.sources, ['/opt/skiff/launcher/skiff-launcher']);
        assert.equal(c.dest, '/usr/local/bin/skiff-launcher');
        const build = dockerfile.filter((i) => i.stage === stage && i.op === 'RUN').map((i) => i.args).join('\n');
        assert.match(build, /go build .*-o \/opt\/skiff\/launcher\/skiff-launcher/);
        assert.ok(copies.some((x) => x.stage === stage && x.sources.includes('launcher')), 'the stage copies launcher/');
        assert.ok(existsSync(join(repoRoot, 'launcher', 'go.mod')) && existsSync(join(repoRoot, 'launcher', 'go.sum')), 'launcher/ is a Go module with its sums');
        continue;
      }
      for (const src of c.sources) {
        assert.ok(src.startsWith(`${base}/`), `${src} is under the build stage's ${base}`);
        const local = src.slice(base.length + 1);
        // node_modules is npm ci's; the rest is what the build stage's commands make from the sources
        if (local === 'node_modules') continue;
        assert.ok(existsSync(join(repoRoot, local)), `${local} exists after a build (npm run build; scripts/setup.sh for build/web)`);
      }
    }
    for (const runtime of ['dist/src', 'src/api/schemas', 'build/web', 'package.json', 'node_modules']) {
      assert.ok(fromBuild.some((c) => c.sources.some((s) => s.endsWith(`/${runtime}`))), `the image has ${runtime}`);
    }
    assert.ok(existsSync(join(repoRoot, 'dist', 'src', 'cli', 'main.js')), 'the launcher\'s dist/src/cli/main.js is built');
    assert.ok(existsSync(join(repoRoot, 'dist', 'src', 'server', 'main.js')), 'the server is built');
  });

  it('runs skiff up --in-cluster as a user that is not root, from a script the image has', () => {
    const final = dockerfile.filter((i) => i.stage === finalStage);
    const entry = JSON.parse(final.find((i) => i.op === 'ENTRYPOINT')?.args ?? '[]') as string[];
    assert.equal(entry[0], 'node');
    const script = entry[1] as string;
    assert.deepEqual(entry.slice(2), ['up', '--in-cluster']);
    const copied = copies.find((c) => c.stage === finalStage && c.dest === script);
    assert.ok(copied, `${script} is copied into the image`);
    for (const src of copied.sources) assert.ok(existsSync(join(repoRoot, src)), `${src} exists`);
    const user = final.find((i) => i.op === 'USER')?.args ?? 'root';
    assert.ok(!/^(root|0)(:|$)/.test(user), `runs as ${user}`);
    // the Deployment runs as the same user
    assert.match(readFileSync(join(repoRoot, 'deploy', 'kubernetes', 'deployment.yaml'), 'utf8'), new RegExp(`runAsUser: ${user.split(':')[0]}\\b`));
  });
});
