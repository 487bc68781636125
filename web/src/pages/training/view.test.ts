import { describe, expect, it } from 'vitest';
import type { Pod, TrainingJob } from '../../api/workload-types';
import broken from '../../fixtures/pytorchjob-broken.json';
import ddp from '../../fixtures/pytorchjob-ddp-digits.json';
import mpi from '../../fixtures/mpijob-mpi-allreduce.json';
import tf from '../../fixtures/tfjob-tf-config-check.json';
import { elasticLines, replicaCounts, replicaGroups, runPolicyLines, stateReason, trainingState } from './view';

// recorded from `skiff up`: examples/training/pytorchjob-ddp.yaml, tfjob.yaml, mpijob-v2beta1.yaml, and a
// PyTorchJob whose Master exits 3 (restartPolicy Never) while its Worker still starts
const job = (f: { job: unknown }): TrainingJob => f.job as TrainingJob;
const pods = (f: { pods: unknown[] }): Pod[] => f.pods as Pod[];
const everyPod = [...pods(ddp), ...pods(tf), ...pods(mpi), ...pods(broken)];

describe('training view', () => {
  it('a PyTorchJob: Master then Worker, each with its own Pods by index and the operator counts', () => {
    const groups = replicaGroups(job(ddp), [...everyPod].reverse());
    expect(groups.map((g) => [g.type, g.wanted, g.state, g.counts.succeeded])).toEqual([
      ['Master', 1, 'Succeeded', 1],
      ['Worker', 2, 'Succeeded', 2],
    ]);
    expect(groups[1]?.pods.map((p) => [p.name, p.index, p.state, p.exitCodes])).toEqual([
      ['ddp-digits-worker-0', 0, 'Succeeded', '0'],
      ['ddp-digits-worker-1', 1, 'Succeeded', '0'],
    ]);
    expect(groups[0]?.restartPolicy).toBe('OnFailure');
    expect(trainingState(job(ddp))).toBe('Succeeded');
    expect(replicaCounts(job(ddp))).toBe('1 Master · 2 Worker');
  });

  it('a failed PyTorchJob: the failed Master with exit code 3 and reason, the job state and why', () => {
    const groups = replicaGroups(job(broken), everyPod);
    const master = groups[0];
    expect(master?.type).toBe('Master');
    expect(master?.state).toBe('Failed');
    expect(master?.counts.failed).toBe(1);
    expect(master?.pods.map((p) => [p.name, p.state, p.exitCodes, p.reason, p.restarts])).toEqual([['broken-master-0', 'Error', '3', 'Error', 0]]);
    expect(groups[1]?.pods.map((p) => p.name)).toEqual(['broken-worker-0']);
    expect(trainingState(job(broken))).toBe('Failed');
    expect(stateReason(job(broken))?.reason).toBe('PyTorchJobFailed');
    expect(runPolicyLines(job(broken))).toEqual([
      ['Clean Pods', 'never (Pods stay after the job ends)'],
      ['Backoff limit', '0 of 1 restarts used'],
      ['Suspended', 'no'],
    ]);
  });

  it('a TFJob: the Chief before the Workers, matched by replica type though it carries the master role', () => {
    const groups = replicaGroups(job(tf), everyPod);
    expect(groups.map((g) => [g.type, g.pods.map((p) => p.name)])).toEqual([
      ['Chief', ['tf-config-check-chief-0']],
      ['Worker', ['tf-config-check-worker-0', 'tf-config-check-worker-1']],
    ]);
  });

  it('a v2beta1 MPIJob: the Launcher by its job role; Workers cleaned up still show their counts', () => {
    const groups = replicaGroups(job(mpi), everyPod);
    expect(groups.map((g) => [g.type, g.pods.length, g.counts.succeeded, g.state])).toEqual([
      ['Launcher', 1, 1, 'Succeeded'],
      ['Worker', 0, 2, 'Succeeded'],
    ]);
    expect(runPolicyLines(job(mpi))[0]).toEqual(['Clean Pods', 'the running ones when the job ends']);
  });

  it('elastic policy in words; none when unset', () => {
    expect(elasticLines(job(ddp))).toBeUndefined();
    const elastic = { ...job(ddp), spec: { ...job(ddp).spec, elasticPolicy: { rdzvBackend: 'c10d', minReplicas: 2, maxReplicas: 4, maxRestarts: 3 } } };
    expect(elasticLines(elastic)).toEqual([['Replicas', '2 to 4'], ['Rendezvous', 'c10d'], ['Max restarts', '3']]);
  });
});
