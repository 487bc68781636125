// batch/v1 Jobs: progress in the list; on a Job's page its Pods (by index for Indexed Jobs) with
// their ends, a live log per Pod, CPU and memory per Pod, and the failure budget left.
import { useList } from '../../api/context';
import type { Job, Pod } from '../../api/workload-types';
import { ObjectList } from '../../components/ObjectList';
import { ObjectPage } from '../../components/ObjectPage';
import { StatusBadge } from '../../components/Status';
import type { DetailPageProps, ListPageProps, PageDef } from '../types';
import { PodLogs, PodTable, PodsUsage } from '../pods/parts';
import { completions, duration, failureBudget, jobPods, jobState, podIndex } from './view';
import '../pods/pods.css';

function JobList({ kind, namespace }: ListPageProps) {
  return (
    <ObjectList<Job>
      kind={kind}
      namespace={namespace}
      title="Jobs"
      state={jobState}
      columns={[
        { id: 'completions', header: 'Completions', width: 110, value: (j) => completions(j), cell: (j) => completions(j) },
        { id: 'active', header: 'Active', width: 70, align: 'right', value: (j) => j.status?.active ?? 0, cell: (j) => j.status?.active ?? 0 },
        { id: 'succeeded', header: 'Succeeded', width: 90, align: 'right', value: (j) => j.status?.succeeded ?? 0, cell: (j) => j.status?.succeeded ?? 0 },
        { id: 'failed', header: 'Failed', width: 70, align: 'right', value: (j) => j.status?.failed ?? 0, cell: (j) => <span className={j.status?.failed ? 'exitbad' : ''}>{j.status?.failed ?? 0}</span> },
        { id: 'duration', header: 'Duration', width: 90, value: (j) => j.status?.startTime, cell: (j) => duration(j) },
      ]}
    />
  );
}

function usePodsOf(job: Job): Pod[] {
  const uid = job.metadata?.uid ?? '';
  const pods = useList<Pod>('pods', job.metadata?.namespace, { labelSelector: `batch.kubernetes.io/controller-uid=${uid}` });
  return jobPods(job, pods.items);
}

function Summary({ job }: { job: Job }) {
  const b = failureBudget(job);
  const indexed = job.spec?.completionMode === 'Indexed';
  return (
    <div className="card summarygrid">
      <div><div className="label">Completions</div><div className="value">{completions(job)}{indexed ? ' (Indexed)' : ''}</div></div>
      <div><div className="label">Parallelism</div><div className="value">{job.spec?.parallelism ?? 1}</div></div>
      <div><div className="label">Active · ready</div><div className="value">{job.status?.active ?? 0} · {job.status?.ready ?? 0}</div></div>
      <div><div className="label">Succeeded · failed</div><div className="value">{job.status?.succeeded ?? 0} · <span className={job.status?.failed ? 'exitbad' : ''}>{job.status?.failed ?? 0}</span></div></div>
      <div><div className="label">Duration</div><div className="value">{duration(job)}</div></div>
      <div><div className="label">Failures of backoffLimit</div><div className={`value ${b.exhausted ? 'exitbad' : ''}`}>{b.text}</div></div>
      {b.completedIndexes ? <div><div className="label">Completed indexes</div><div className="value">{b.completedIndexes}</div></div> : null}
      {b.failedIndexes ? <div><div className="label">Failed indexes</div><div className="value exitbad">{b.failedIndexes}</div></div> : null}
      {b.perIndex ? <div><div className="label">Per-index limit</div><div className="value">{b.perIndex}</div></div> : null}
      {job.spec?.activeDeadlineSeconds ? <div><div className="label">Deadline</div><div className="value">{job.spec.activeDeadlineSeconds}s</div></div> : null}
      {job.spec?.ttlSecondsAfterFinished !== undefined ? <div><div className="label">Deleted after finishing</div><div className="value">{job.spec.ttlSecondsAfterFinished}s</div></div> : null}
      {job.spec?.suspend ? <div><div className="label">Suspended</div><div className="value"><StatusBadge state="Suspended" /></div></div> : null}
      {b.rules.length ? (
        <div className="wide">
          <div className="label">Pod failure policy</div>
          <ul className="rules">{b.rules.map((r) => <li key={r}>{r}</li>)}</ul>
        </div>
      ) : null}
    </div>
  );
}

function PodsTab({ job }: { job: Job }) {
  const pods = usePodsOf(job);
  const indexed = job.spec?.completionMode === 'Indexed';
  return <PodTable pods={pods} {...(indexed ? { extra: { header: 'Index', cell: (p: Pod) => podIndex(p) ?? '—' } } : {})} />;
}

function LogsTab({ job }: { job: Job }) {
  const pods = usePodsOf(job);
  const indexed = job.spec?.completionMode === 'Indexed';
  return <PodLogs pods={pods} namespace={job.metadata?.namespace ?? ''} {...(indexed ? { labelOf: (p: Pod) => `#${podIndex(p)} ${p.metadata?.name}` } : {})} />;
}

function UsageTab({ job }: { job: Job }) {
  const pods = usePodsOf(job);
  return <PodsUsage pods={pods} />;
}

function JobDetail({ kind, namespace, name }: DetailPageProps) {
  return (
    <ObjectPage<Job>
      kind={kind}
      namespace={namespace}
      name={name}
      state={jobState}
      summary={(j) => <Summary job={j} />}
      tabs={(j) => [
        { id: 'pods', label: 'Pods', render: () => <PodsTab job={j} /> },
        { id: 'logs', label: 'Logs', render: () => <LogsTab job={j} /> },
        { id: 'usage', label: 'CPU and memory', render: () => <UsageTab job={j} /> },
      ]}
    />
  );
}

export const pages: PageDef[] = [{ plural: 'jobs', title: 'Jobs', section: 'Workloads', order: 20, list: JobList, detail: JobDetail }];
