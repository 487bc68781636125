// The Kubeflow training kinds (PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob, MPIJob): one page
// for all of them. A job's page shows its replica types as groups with their Pods' states, restarts
// and exit codes, a live log per replica, CPU and memory per replica Pod, and the run policy.
import { Fragment } from 'react';
import { useList } from '../../api/context';
import type { Pod, TrainingJob } from '../../api/workload-types';
import { ObjectList } from '../../components/ObjectList';
import { ObjectPage } from '../../components/ObjectPage';
import { StatusBadge } from '../../components/Status';
import { useQueryParam } from '../../app/nav';
import type { DetailPageProps, ListPageProps, PageDef } from '../types';
import { PodLogs, PodTable, PodsUsage } from '../pods/parts';
import type { ReplicaGroup } from './view';
import { elasticLines, replicaCounts, replicaGroups, runPolicyLines, stateReason, trainingState } from './view';
import '../pods/pods.css';
import './training.css';

const KINDS: { plural: string; title: string }[] = [
  { plural: 'pytorchjobs', title: 'PyTorchJobs' },
  { plural: 'tfjobs', title: 'TFJobs' },
  { plural: 'mpijobs', title: 'MPIJobs' },
  { plural: 'xgboostjobs', title: 'XGBoostJobs' },
  { plural: 'paddlejobs', title: 'PaddleJobs' },
  { plural: 'jaxjobs', title: 'JAXJobs' },
];

function TrainingList({ kind, namespace }: ListPageProps) {
  const title = KINDS.find((k) => k.plural === kind.plural)?.title ?? kind.plural;
  return (
    <ObjectList<TrainingJob>
      kind={kind}
      namespace={namespace}
      title={title}
      state={trainingState}
      columns={[
        { id: 'replicas', header: 'Replicas', value: (j) => replicaCounts(j), cell: (j) => replicaCounts(j) },
        {
          id: 'progress',
          header: 'Active · succeeded · failed',
          width: 200,
          value: (j) => Object.values(j.status?.replicaStatuses ?? {}).reduce((n, s) => n + (s.succeeded ?? 0), 0),
          cell: (j) => {
            const all = Object.values(j.status?.replicaStatuses ?? {});
            const sum = (f: 'active' | 'succeeded' | 'failed'): number => all.reduce((n, s) => n + (s[f] ?? 0), 0);
            return (
              <span>
                {sum('active')} · {sum('succeeded')} · <span className={sum('failed') ? 'exitbad' : ''}>{sum('failed')}</span>
              </span>
            );
          },
        },
      ]}
    />
  );
}

function useGroups(job: TrainingJob): ReplicaGroup[] {
  const pods = useList<Pod>('pods', job.metadata?.namespace, { labelSelector: `training.kubeflow.org/job-name=${job.metadata?.name}` });
  return replicaGroups(job, pods.items);
}

const replicaLabel = (g: ReplicaGroup, p: Pod): string => {
  const i = p.metadata?.labels?.['training.kubeflow.org/replica-index'];
  return `${g.type}${i !== undefined ? ` ${i}` : ''}`;
};

function Summary({ job }: { job: TrainingJob }) {
  const groups = useGroups(job);
  const why = stateReason(job);
  return (
    <div className="stack">
      {why?.message ? (
        <div className={`card statewhy tone-line-${trainingState(job) === 'Failed' ? 'bad' : 'ok'}`}>
          <b>{why.reason}</b>: {why.message}
        </div>
      ) : null}
      <div className="replicacards" aria-label="replica types">
        {groups.map((g) => (
          <div key={g.type} className="card replicacard">
            <div className="rc-head">
              <b>{g.type}</b> <StatusBadge state={g.state} />
            </div>
            <div className="muted small">
              {g.pods.length}/{g.wanted} Pods · {g.counts.active} active · {g.counts.succeeded} succeeded · <span className={g.counts.failed ? 'exitbad' : ''}>{g.counts.failed} failed</span>
            </div>
          </div>
        ))}
      </div>
    </div>
  );
}

function Replicas({ job }: { job: TrainingJob }) {
  const groups = useGroups(job);
  const [, setTab] = useQueryParam('tab');
  const [, setPod] = useQueryParam('pod');
  if (!groups.length) return <p className="muted">This job has no replica specs.</p>;
  return (
    <div className="stack">
      {groups.map((g) => (
        <section key={g.type} className="card replicagroup" aria-label={`${g.type} replicas`}>
          <h3>
            {g.type} <StatusBadge state={g.state} />
            <span className="muted small">
              {g.wanted} wanted{g.restartPolicy ? ` · restart ${g.restartPolicy}` : ''}
              {g.image ? <> · <code>{g.image}</code></> : null}
            </span>
          </h3>
          <div className="muted small counts">
            status: {g.counts.active} active · {g.counts.succeeded} succeeded · {g.counts.failed} failed
          </div>
          {g.pods.length ? (
            <PodTable
              pods={g.pods.map((p) => p.pod)}
              extra={{ header: 'Replica', cell: (p) => replicaLabel(g, p) }}
              onLogs={(pod) => {
                setPod(pod);
                setTab('logs');
              }}
            />
          ) : (
            <p className="muted">{g.counts.succeeded || g.counts.failed ? 'Its Pods were cleaned up (runPolicy.cleanPodPolicy).' : 'No Pods yet.'}</p>
          )}
        </section>
      ))}
    </div>
  );
}

function Logs({ job }: { job: TrainingJob }) {
  const groups = useGroups(job);
  const pods = groups.flatMap((g) => g.pods.map((p) => p.pod));
  const label = (p: Pod): string => {
    const g = groups.find((x) => x.pods.some((y) => y.pod === p));
    return g ? replicaLabel(g, p) : p.metadata?.name ?? '';
  };
  return <PodLogs pods={pods} namespace={job.metadata?.namespace ?? ''} labelOf={label} />;
}

function Usage({ job }: { job: TrainingJob }) {
  const groups = useGroups(job);
  const pods = groups.flatMap((g) => g.pods.map((p) => p.pod));
  const label = (p: Pod): string => {
    const g = groups.find((x) => x.pods.some((y) => y.pod === p));
    return g ? `${replicaLabel(g, p)} · ${p.metadata?.name}` : p.metadata?.name ?? '';
  };
  return <PodsUsage pods={pods} labelOf={label} />;
}

function Policy({ job }: { job: TrainingJob }) {
  const elastic = elasticLines(job);
  return (
    <div className="grid2">
      <div className="card">
        <h3>Run policy</h3>
        <dl className="kv">
          {runPolicyLines(job).map(([k, v]) => (
            <Fragment key={k}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </Fragment>
          ))}
        </dl>
      </div>
      {elastic ? (
        <div className="card">
          <h3>Elastic policy</h3>
          <dl className="kv">
            {elastic.map(([k, v]) => (
              <Fragment key={k}>
                <dt>{k}</dt>
                <dd>{v}</dd>
              </Fragment>
            ))}
          </dl>
        </div>
      ) : null}
    </div>
  );
}

function TrainingDetail({ kind, namespace, name }: DetailPageProps) {
  return (
    <ObjectPage<TrainingJob>
      kind={kind}
      namespace={namespace}
      name={name}
      state={trainingState}
      summary={(j) => <Summary job={j} />}
      tabs={(j) => [
        { id: 'replicas', label: 'Replicas', render: () => <Replicas job={j} /> },
        { id: 'logs', label: 'Logs', render: () => <Logs job={j} /> },
        { id: 'usage', label: 'CPU and memory', render: () => <Usage job={j} /> },
        { id: 'policy', label: 'Policy', render: () => <Policy job={j} /> },
      ]}
    />
  );
}

export const pages: PageDef[] = KINDS.map((k, i) => ({ plural: k.plural, title: k.title, section: 'Training', order: i, list: TrainingList, detail: TrainingDetail }));
