import { describe, expect, it } from 'vitest';
import type { Pod } from '../../api/workload-types';
import broken from '../../fixtures/pytorchjob-broken.json';
import pending from '../../fixtures/pod-pending.json';
import { containerRows, describeState, pendingReason, podSummary, readyCount, volumeSource } from './view';

// recorded from `skiff up`: a Pod asking for 1000 CPUs, and a PyTorchJob's Master that exited 3
const greedy = pending as unknown as Pod;
const [failedMaster, initializingWorker] = broken.pods as unknown as Pod[];

describe('pods view', () => {
  it('a Pod the scheduler cannot place says why, from its PodScheduled condition', () => {
    expect(pendingReason(greedy)).toMatch(/^Unschedulable: 0\/1 nodes are available: Insufficient cpu/);
    expect(podSummary(greedy)).toMatchObject({ state: 'Pending', ready: '0/1', restarts: 0, exitCodes: '' });
    expect(podSummary(greedy).node).toBeUndefined();
    expect(containerRows(greedy)).toMatchObject([{ name: 'main', init: false, requests: 'cpu 1000', limits: '—', state: { label: 'Not started' } }]);
  });

  it('a failed container: exit code and reason; a waiting one: its reason', () => {
    expect(podSummary(failedMaster!)).toMatchObject({ state: 'Error', exitCodes: '3', reason: 'Error', node: 'local' });
    expect(pendingReason(failedMaster!)).toBeUndefined();
    expect(containerRows(failedMaster!)[0]?.state).toMatchObject({ phase: 'Terminated', label: 'Error', exitCode: 3 });
    expect(pendingReason(initializingWorker!)).toBe('PodInitializing');
    expect(readyCount(initializingWorker!)).toEqual({ ready: 0, total: 1 });
  });

  it('states and volumes in words', () => {
    expect(describeState({ terminated: { exitCode: 137, reason: 'OOMKilled' } })).toMatchObject({ label: 'OOMKilled', exitCode: 137 });
    expect(describeState({ terminated: { exitCode: 0 } }).label).toBe('Completed');
    expect(describeState({ waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } })).toMatchObject({ phase: 'Waiting', label: 'CrashLoopBackOff', detail: 'back-off 10s' });
    expect(volumeSource({ name: 'd', persistentVolumeClaim: { claimName: 'data', readOnly: true } })).toBe('PersistentVolumeClaim data (read-only)');
    expect(volumeSource({ name: 'c', emptyDir: { sizeLimit: '1Gi' } })).toBe('emptyDir, 1Gi');
  });
});
