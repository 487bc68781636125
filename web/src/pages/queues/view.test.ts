import { describe, expect, it } from 'vitest';
import type { ClusterQueue, Workload } from '../../api/types';
import { ownerOf, pendingReason, queueState, quotaRows, workloadState } from './view';

const cq: ClusterQueue = {
  apiVersion: 'kueue.x-k8s.io/v1beta2',
  kind: 'ClusterQueue',
  metadata: { name: 'team' },
  spec: {
    cohortName: 'org',
    resourceGroups: [{ coveredResources: ['cpu', 'memory'], flavors: [{ name: 'default', resources: [{ name: 'cpu', nominalQuota: '2', borrowingLimit: '1' }, { name: 'memory', nominalQuota: '1Gi' }] }] }],
  },
  status: {
    conditions: [{ type: 'Active', status: 'True', reason: 'Ready', message: '', lastTransitionTime: '' }],
    flavorsUsage: [{ name: 'default', resources: [{ name: 'cpu', total: '2500m', borrowed: '500m' }, { name: 'memory', total: '512Mi' }] }],
    flavorsReservation: [{ name: 'default', resources: [{ name: 'cpu', total: '3' }] }],
  },
};

const c = (type: string, status: 'True' | 'False', reason: string, message = '') => ({ type, status, reason, message, lastTransitionTime: '' });

describe('queues view', () => {
  it('pairs each flavor and resource of the spec with its usage', () => {
    expect(quotaRows(cq)).toEqual([
      { flavor: 'default', resource: 'cpu', nominal: 2, borrowingLimit: 1, used: 2.5, borrowed: 0.5, reserved: 3 },
      { flavor: 'default', resource: 'memory', nominal: 2 ** 30, used: 2 ** 29, borrowed: 0, reserved: 0 },
    ]);
    expect(quotaRows({ ...cq, spec: {} })).toEqual([]);
    expect(queueState(cq)).toBe('Active');
    expect(queueState({ status: { conditions: [c('Active', 'False', 'FlavorNotFound')] } })).toBe('FlavorNotFound');
  });

  it('says where a Workload stands, why it waits, and which job owns it', () => {
    const waiting: Workload = {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Workload',
      metadata: { name: 'job-b', ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'b', uid: 'u', controller: true }] },
      spec: { podSets: [], queueName: 'q' },
      status: { conditions: [c('QuotaReserved', 'False', 'Pending', "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed")] },
    };
    expect(workloadState(waiting)).toBe('Pending');
    expect(pendingReason(waiting)).toMatch(/insufficient unused quota/);
    expect(ownerOf(waiting)).toEqual({ kind: 'Job', name: 'b', plural: 'jobs' });
    const admitted: Workload = { ...waiting, status: { conditions: [c('QuotaReserved', 'True', 'QuotaReserved'), c('Admitted', 'True', 'Admitted')] } };
    expect(workloadState(admitted)).toBe('Admitted');
    expect(pendingReason(admitted)).toBeUndefined();
    expect(workloadState({ ...admitted, status: { conditions: [...(admitted.status?.conditions ?? []), c('Finished', 'True', 'Succeeded')] } })).toBe('Finished');
  });
});
