import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CheckpointError, checkpointDir, prepareCheckpointDir, removeTrialCheckpoints, trialDirOf } from './checkpoints.js';

describe('PBT checkpoint directories', () => {
  const root = mkdtempSync(join(tmpdir(), 'skiff-ckpt-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('suggestion_trial_dir: absent or empty means none; a relative path is refused, naming the setting', () => {
    assert.equal(trialDirOf(undefined), undefined);
    assert.equal(trialDirOf([{ name: 'n_population', value: '40' }]), undefined);
    assert.equal(trialDirOf([{ name: 'suggestion_trial_dir', value: '' }]), undefined);
    assert.equal(trialDirOf([{ name: 'n_population', value: '5' }, { name: 'suggestion_trial_dir', value: '/var/log/katib/checkpoints/' }]), '/var/log/katib/checkpoints/');
    assert.throws(() => trialDirOf([{ name: 'suggestion_trial_dir', value: 'ckpt' }]), /algorithmSettings\[suggestion_trial_dir\]: "ckpt" is not an absolute path/);
  });

  it('one directory per namespace, experiment and trial; names that would leave the root are refused', () => {
    assert.equal(checkpointDir('/d', 'kubeflow', 'simple-pbt', 'simple-pbt-abc'), '/d/kubeflow/simple-pbt/simple-pbt-abc');
    assert.throws(() => checkpointDir('/d', 'kubeflow', '..', 't'), /label katib\.kubeflow\.org\/experiment: "\.\." cannot name/);
    assert.throws(() => checkpointDir('/d', 'kubeflow', 'e', 'a/b'), /trial name: "a\/b"/);
    assert.throws(() => checkpointDir('/d', '', 'e', 't'), /namespace: ""/);
    // the kind the Trial controller fails a trial for (any other error is retried)
    assert.throws(() => checkpointDir('/d', 'n', 'e', '..'), CheckpointError);
    assert.throws(() => trialDirOf([{ name: 'suggestion_trial_dir', value: 'x' }]), CheckpointError);
  });

  it('a first-generation trial starts empty; a child starts from a copy of its parent\'s files, which it may change alone', () => {
    const first = prepareCheckpointDir(root, 'ns', 'exp', 'gen0-a');
    assert.deepEqual(first, { dir: join(root, 'ns', 'exp', 'gen0-a'), fromParent: false, parentMissing: false });
    assert.deepEqual(readdirSync(first.dir), []);
    writeFileSync(join(first.dir, 'training.ckpt'), '{"step": 21, "accuracy": 7.5}');
    mkdirSync(join(first.dir, 'sub'));
    writeFileSync(join(first.dir, 'sub', 'w.bin'), 'weights');

    const child = prepareCheckpointDir(root, 'ns', 'exp', 'gen1-a', 'gen0-a');
    assert.equal(child.fromParent, true);
    assert.equal(readFileSync(join(child.dir, 'training.ckpt'), 'utf8'), '{"step": 21, "accuracy": 7.5}');
    assert.equal(readFileSync(join(child.dir, 'sub', 'w.bin'), 'utf8'), 'weights');
    assert.ok(!existsSync(`${child.dir}.partial`));
    writeFileSync(join(child.dir, 'training.ckpt'), '{"step": 41, "accuracy": 9}');
    assert.equal(readFileSync(join(first.dir, 'training.ckpt'), 'utf8'), '{"step": 21, "accuracy": 7.5}', 'the parent\'s checkpoint is not the child\'s');

    // a second pass (the job's create was retried) keeps what the trial has
    const again = prepareCheckpointDir(root, 'ns', 'exp', 'gen1-a', 'gen0-a');
    assert.equal(again.fromParent, false);
    assert.equal(readFileSync(join(child.dir, 'training.ckpt'), 'utf8'), '{"step": 41, "accuracy": 9}');
  });

  it('a parent with no directory (it ran elsewhere, or its files were removed) leaves the child empty and says so', () => {
    const p = prepareCheckpointDir(root, 'ns', 'exp', 'orphan', 'gone');
    assert.deepEqual([p.fromParent, p.parentMissing], [false, true]);
    assert.deepEqual(readdirSync(p.dir), []);
  });

  it('a copy interrupted earlier is thrown away and made again', () => {
    prepareCheckpointDir(root, 'ns', 'exp2', 'p');
    writeFileSync(join(root, 'ns', 'exp2', 'p', 'training.ckpt'), 'parent');
    mkdirSync(join(root, 'ns', 'exp2', 'c.partial'));
    writeFileSync(join(root, 'ns', 'exp2', 'c.partial', 'junk'), 'half');
    const c = prepareCheckpointDir(root, 'ns', 'exp2', 'c', 'p');
    assert.deepEqual(readdirSync(c.dir), ['training.ckpt']);
    assert.ok(!existsSync(join(root, 'ns', 'exp2', 'c.partial')));
  });

  it('a deleted trial\'s directory goes, in whichever experiment it was; an emptied experiment directory goes too', () => {
    const a = prepareCheckpointDir(root, 'del', 'e1', 'a');
    const b = prepareCheckpointDir(root, 'del', 'e1', 'b');
    writeFileSync(join(a.dir, 'training.ckpt'), 'x');
    prepareCheckpointDir(root, 'other', 'e1', 'a');
    assert.deepEqual(removeTrialCheckpoints(root, 'del', 'a'), [a.dir]);
    assert.ok(!existsSync(a.dir));
    assert.ok(existsSync(b.dir), 'its sibling stays');
    assert.ok(existsSync(checkpointDir(root, 'other', 'e1', 'a')), 'the same name in another namespace stays');
    assert.deepEqual(removeTrialCheckpoints(root, 'del', 'b'), [b.dir]);
    assert.deepEqual(readdirSync(join(root, 'del')), []);
    assert.deepEqual(removeTrialCheckpoints(root, 'del', 'never'), []);
    assert.deepEqual(removeTrialCheckpoints(root, 'nowhere', 'a'), []);
  });

});
