// PBT's checkpoints, as Katib hands them from trial to trial. With the algorithm setting
// `suggestion_trial_dir` (Katib's PBT requires it), every trial's primary container gets a
// directory of its own mounted at that path, and a trial labelled
// pbt.suggestion.katib.kubeflow.org/parent starts with a copy of its parent's directory there:
// the training program simply resumes from whatever checkpoint it finds in the directory.
//
// Katib keeps these directories on the Suggestion's PersistentVolumeClaim (subPath
// <experiment>/<trial>) and its PBT service copies the parent's directory when it plans the trial.
// Skiff keeps them on this machine under the data dir, <dataDir>/tuning/checkpoints/<namespace>/
// <experiment>/<trial>, mounted into the container as a hostPath volume named
// `suggestion-volume` (Katib's name), and the Trial controller makes the copy just before it
// creates the trial's job. A trial's directory lives as long as the Trial: a FromVolume experiment
// restarted with a larger maxTrialCount continues from its last generation's checkpoints, as
// Katib's does from its volume, and deleting the Experiment (which takes its Trials) removes them,
// as deleting Katib's Suggestion removes its claim.
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Setting } from '../../api/tuning-types.js';

/** the algorithm setting that asks for per-trial checkpoint directories, and where they are mounted */
export const TrialDirSetting = 'suggestion_trial_dir';
/** the volume Katib mounts them as */
export const SuggestionVolume = 'suggestion-volume';

/** a setting or name that cannot make a checkpoint directory: the trial fails, saying which */
export class CheckpointError extends Error {
  override readonly name = 'CheckpointError';
}

/** the mount path the algorithm settings ask for, when they ask */
export function trialDirOf(settings: readonly Setting[] | undefined): string | undefined {
  const v = settings?.find((s) => s.name === TrialDirSetting)?.value;
  if (v === undefined || v === '') return undefined;
  if (!v.startsWith('/')) throw new CheckpointError(`spec.algorithm.algorithmSettings[${TrialDirSetting}]: "${v}" is not an absolute path`);
  return v;
}

// object names become directory names: one segment each, never a way out of the root
function segment(what: string, name: string | undefined): string {
  if (!name || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) throw new CheckpointError(`${what}: "${String(name)}" cannot name a checkpoint directory`);
  return name;
}

/** where one trial's checkpoints live on this machine */
export function checkpointDir(root: string, namespace: string, experiment: string, trial: string): string {
  return join(root, segment('namespace', namespace), segment(`label katib.kubeflow.org/experiment`, experiment), segment('trial name', trial));
}

export interface Prepared {
  dir: string;
  /** the parent's directory was copied in */
  fromParent: boolean;
  /** a parent was named but has no directory here: the trial starts empty */
  parentMissing: boolean;
}

/**
 * Makes the trial's directory once: empty, or a copy of its parent's. A directory already there is
 * kept as it is (an earlier pass made it, or the trial already wrote into it); the copy goes
 * through a temporary name, so an interrupted copy is never taken for a finished one.
 */
export function prepareCheckpointDir(root: string, namespace: string, experiment: string, trial: string, parent?: string): Prepared {
  const dir = checkpointDir(root, namespace, experiment, trial);
  if (existsSync(dir)) return { dir, fromParent: false, parentMissing: false };
  const from = parent ? checkpointDir(root, namespace, experiment, parent) : undefined;
  const parentThere = from !== undefined && existsSync(from) && statSync(from).isDirectory();
  if (!parentThere) {
    mkdirSync(dir, { recursive: true });
    return { dir, fromParent: false, parentMissing: from !== undefined };
  }
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  cpSync(from, partial, { recursive: true, preserveTimestamps: true });
  renameSync(partial, dir);
  return { dir, fromParent: true, parentMissing: false };
}

/**
 * Removes a deleted trial's directory (its experiment is no longer known from its labels, so every
 * experiment's directory in the namespace is looked in), and the experiment's directory once empty.
 */
export function removeTrialCheckpoints(root: string, namespace: string, trial: string): string[] {
  const nsDir = join(root, segment('namespace', namespace));
  segment('trial name', trial);
  if (!existsSync(nsDir)) return [];
  const removed: string[] = [];
  for (const experiment of readdirSync(nsDir)) {
    const expDir = join(nsDir, experiment);
    for (const dir of [join(expDir, trial), join(expDir, `${trial}.partial`)]) {
      if (!existsSync(dir)) continue;
      rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    }
    try {
      if (readdirSync(expDir).length === 0) rmdirSync(expDir);
    } catch {
      // another trial's directory appeared meanwhile, or the directory went: either way it stays right
    }
  }
  return removed;
}
