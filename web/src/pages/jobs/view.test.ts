import { describe, expect, it } from 'vitest';
import type { Job, Pod } from '../../api/workload-types';
import flaky from '../../fixtures/job-flaky.json';
import pi from '../../fixtures/job-pi.json';
import { completions, duration, failureBudget, jobPods, jobState, podIndex } from './view';

// recorded from `skiff up` running examples/core/pi-indexed-job.yaml and flaky-job.yaml
const piJob = pi.job as unknown as Job;
const piPods = pi.pods as unknown as Pod[];
const flakyJob = flaky.job as unknown as Job;

describe('jobs view', () => {
  it('an Indexed Job: its Pods in index order, progress and duration', () => {
    const shuffled = [...piPods].reverse();
    const pods = jobPods(piJob, [...shuffled, ...(flaky.pods as unknown as Pod[])]);
    expect(pods.map(podIndex)).toEqual(['0', '1', '2', '3']);
    expect(jobState(piJob)).toBe('Complete');
    expect(completions(piJob)).toBe('4/4');
    expect(duration(piJob)).toBe('1s');
  });

  it('the failure budget names the limit, the indexes and the pod failure policy in words', () => {
    const b = failureBudget(flakyJob);
    expect(b.text).toBe('0 of 1');
    expect(b.exhausted).toBe(false);
    expect(b.rules).toEqual(['exit code in [42] → ignore (not counted)']);
    expect(failureBudget(piJob).completedIndexes).toBe('0-3');
  });

  it('a Job that failed past its limit, and one still running', () => {
    const failed: Job = { ...flakyJob, status: { failed: 2, conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' } as never] } };
    expect(jobState(failed)).toBe('Failed');
    expect(failureBudget(failed).exhausted).toBe(true);
    const running: Job = { ...flakyJob, status: { active: 3, startTime: '2026-01-01T00:00:00Z' } };
    expect(jobState(running)).toBe('Running');
    expect(duration(running, Date.parse('2026-01-01T00:01:30Z'))).toBe('1m30s');
  });
});
