// The Trial controller and PBT's checkpoint directories, on the real store with the real Job
// controller: the directory mounted where suggestion_trial_dir says, seeded from the parent's.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Job } from '../../api/batch.js';
import type { Condition } from '../../api/conditions.js';
import { Kinds } from '../../api/index.js';
import type { Setting, Suggestion, Trial } from '../../api/tuning-types.js';
import { TuningApiVersion, TuningLabels } from '../../api/tuning-types.js';
import { Manager } from '../../control/controller.js';
import { TestEnv } from '../../testing/fake-agent.js';
import { PBT_LABELS } from './algorithms/pbt.js';
import { checkpointDir } from './checkpoints.js';
import { ScriptedPodFiles, ScriptedPodLogs, makeTrial } from './testing.js';
import { addTrialController } from './trial-controller.js';

let env: TestEnv;
let root: string;
const managers: Manager[] = [];

beforeEach(async () => {
  env = await TestEnv.start();
  root = mkdtempSync(join(tmpdir(), 'skiff-pbt-ckpt-'));
  env.agent.script = () => undefined; // pods stay running: only the job's shape matters here
  env.runController();
  const mgr = new Manager(env.client);
  addTrialController(mgr, { client: env.client, recorder: env.recorder, podLogs: new ScriptedPodLogs(), podFiles: new ScriptedPodFiles(), pollMs: 10, checkpointRoot: root });
  mgr.start();
  managers.push(mgr);
});

afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
  await env.close();
  rmSync(root, { recursive: true, force: true });
});

async function suggestion(name: string, settings: Setting[]): Promise<void> {
  const s: Suggestion = {
    apiVersion: TuningApiVersion, kind: 'Suggestion',
    metadata: { name, namespace: 'default', labels: { [TuningLabels.experiment]: name } },
    spec: { algorithm: { algorithmName: 'pbt', algorithmSettings: settings }, requests: 0, resumePolicy: 'FromVolume' },
  };
  await env.client.create(s);
}

async function jobOf(trial: Trial): Promise<Job> {
  await env.client.create(trial);
  return env.waitFor(`job ${trial.metadata.name}`, async () => env.job(trial.metadata.name as string)) as Promise<Job>;
}

const pbtSettings: Setting[] = [
  { name: 'suggestion_trial_dir', value: '/var/log/katib/checkpoints/' },
  { name: 'n_population', value: '5' },
  { name: 'truncation_threshold', value: '0.2' },
];

describe('PBT checkpoints on the trial job', () => {
  it('the primary container gets its own directory at suggestion_trial_dir; a child\'s starts as a copy of its parent\'s', async () => {
    await suggestion('exp', pbtSettings);
    const parentJob = await jobOf(makeTrial('exp-parent', { labels: { [PBT_LABELS.generation]: '0' } }));
    const parentDir = checkpointDir(root, 'default', 'exp', 'exp-parent');
    const spec = parentJob.spec.template.spec;
    assert.deepEqual(spec.volumes, [{ name: 'suggestion-volume', hostPath: { path: parentDir, type: 'DirectoryOrCreate' } }]);
    assert.deepEqual(spec.containers[0]?.volumeMounts, [{ name: 'suggestion-volume', mountPath: '/var/log/katib/checkpoints/' }]);
    assert.deepEqual(readdirSync(parentDir), [], 'a first-generation trial starts with an empty directory');
    // what the parent's program left behind
    writeFileSync(join(parentDir, 'training.ckpt'), '{"step": 21, "accuracy": 12.5}');

    const childJob = await jobOf(makeTrial('exp-child', { labels: { [PBT_LABELS.generation]: '1', [PBT_LABELS.parent]: 'exp-parent' } }));
    const childDir = checkpointDir(root, 'default', 'exp', 'exp-child');
    assert.equal((childJob.spec.template.spec.volumes?.[0] as { hostPath?: { path: string } }).hostPath?.path, childDir);
    assert.equal(readFileSync(join(childDir, 'training.ckpt'), 'utf8'), '{"step": 21, "accuracy": 12.5}');
    assert.ok(!env.recorder.reasons().includes('CheckpointNotFound'));

    // deleting the trials (as deleting their Experiment does) removes their directories
    await env.client.delete(Kinds.Trial, { namespace: 'default', name: 'exp-parent' });
    await env.waitFor('the parent\'s directory to go', async () => !existsSync(parentDir));
    assert.ok(existsSync(childDir));
    await env.client.delete(Kinds.Trial, { namespace: 'default', name: 'exp-child' });
    await env.waitFor('the experiment\'s directory to go', async () => !existsSync(join(root, 'default', 'exp')));
  });

  it('a parent without a directory: the child starts empty, and a Warning says why', async () => {
    await suggestion('exp', pbtSettings);
    await jobOf(makeTrial('exp-orphan', { labels: { [PBT_LABELS.parent]: 'exp-gone' } }));
    assert.deepEqual(readdirSync(checkpointDir(root, 'default', 'exp', 'exp-orphan')), []);
    const ev = await env.waitFor('the warning', async () => env.recorder.events.find((e) => e.reason === 'CheckpointNotFound'));
    assert.equal(ev.type, 'Warning');
    assert.equal(ev.object, 'Trial/exp-orphan');
    assert.match(ev.message, /parent trial exp-gone left no checkpoint directory/);
  });

  it('without suggestion_trial_dir (or without a Suggestion) nothing is mounted and no directory is made', async () => {
    await suggestion('other', [{ name: 'random_state', value: '1' }]);
    const t = makeTrial('other-1');
    t.metadata.labels = { [TuningLabels.experiment]: 'other' };
    const job = await jobOf(t);
    assert.equal(job.spec.template.spec.volumes, undefined);
    const lone = makeTrial('lone-1');
    lone.metadata.labels = { [TuningLabels.experiment]: 'nosuggestion' };
    assert.equal((await jobOf(lone)).spec.template.spec.volumes, undefined);
    assert.deepEqual(readdirSync(root), []);
  });

  it('a relative suggestion_trial_dir fails the trial, naming the setting', async () => {
    await suggestion('rel', [{ name: 'suggestion_trial_dir', value: 'ckpt' }]);
    const t = makeTrial('rel-1');
    t.metadata.labels = { [TuningLabels.experiment]: 'rel' };
    await env.client.create(t);
    const failed = await env.waitFor('the trial to fail', async () => {
      const got = await env.client.find<Trial>(Kinds.Trial, { namespace: 'default', name: 'rel-1' });
      return (got?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === 'Failed' && c.status === 'True');
    });
    assert.match(failed.message ?? '', /suggestion_trial_dir\]: "ckpt" is not an absolute path/);
    assert.ok(!existsSync(join(root, 'default')));
  });

});
