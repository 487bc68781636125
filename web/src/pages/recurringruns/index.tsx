// Recurring runs: a pipeline on a cron or an interval; enable, disable, and the runs each made.
import { useApi } from '../../api/context';
import type { KObject } from '../../api/types';
import { Age } from '../../components/Age';
import { ObjectList } from '../../components/ObjectList';
import { ObjectPage } from '../../components/ObjectPage';
import { RunList } from '../runs/RunList';
import type { DetailPageProps, ListPageProps, PageDef } from '../types';

interface RecurringRun extends KObject {
  spec: { displayName?: string; mode?: string; maxConcurrency?: number; trigger: { cronSchedule?: { cron: string }; periodicSchedule?: { intervalSecond: number } } };
  status?: { lastScheduledTime?: string; nextScheduledTime?: string; runCount?: number; message?: string };
}

const trigger = (r: RecurringRun): string => (r.spec.trigger?.cronSchedule ? `cron ${r.spec.trigger.cronSchedule.cron}` : r.spec.trigger?.periodicSchedule ? `every ${r.spec.trigger.periodicSchedule.intervalSecond}s` : '—');
const mode = (r: RecurringRun): string => (r.spec.mode === 'DISABLE' ? 'Disabled' : 'Enabled');

function List({ kind, namespace }: ListPageProps) {
  return (
    <ObjectList<RecurringRun>
      kind={kind}
      namespace={namespace}
      title="Recurring runs"
      displayName={(r) => r.spec.displayName ?? ''}
      state={mode}
      columns={[
        { id: 'trigger', header: 'Trigger', value: trigger, cell: trigger },
        { id: 'runs', header: 'Runs', width: 70, align: 'right', value: (r) => r.status?.runCount ?? 0, cell: (r) => r.status?.runCount ?? 0 },
        { id: 'next', header: 'Next', width: 110, value: (r) => r.status?.nextScheduledTime, cell: (r) => r.status?.nextScheduledTime?.replace('T', ' ').replace('Z', '') ?? '—' },
      ]}
    />
  );
}

function Detail({ kind, namespace, name }: DetailPageProps) {
  const { api, kinds } = useApi();
  const runs = kinds.plural('runs');
  return (
    <ObjectPage<RecurringRun>
      kind={kind}
      namespace={namespace}
      name={name}
      state={mode}
      summary={(r) => (
        <div className="card">
          <dl className="kv">
            <dt>Trigger</dt>
            <dd>{trigger(r)}</dd>
            <dt>Max concurrency</dt>
            <dd>{r.spec.maxConcurrency ?? 1}</dd>
            <dt>Runs made</dt>
            <dd>{r.status?.runCount ?? 0}</dd>
            <dt>Last fired</dt>
            <dd>{r.status?.lastScheduledTime ? <><Age ts={r.status.lastScheduledTime} /> ago</> : '—'}</dd>
            <dt>Next</dt>
            <dd>{r.status?.nextScheduledTime ?? '—'}</dd>
          </dl>
          {r.status?.message ? <div className="notice">{r.status.message}</div> : null}
        </div>
      )}
      actions={(r) => (
        <button type="button" onClick={() => void api.json(`/apis/v2beta1/recurringruns/${encodeURIComponent(name)}:${r.spec.mode === 'DISABLE' ? 'enable' : 'disable'}`, { method: 'POST' }).catch((e: Error) => window.alert(e.message))}>
          {r.spec.mode === 'DISABLE' ? 'Enable' : 'Disable'}
        </button>
      )}
      tabs={() => (runs ? [{ id: 'runs', label: 'Runs', render: () => <RunListOf kind={runs} namespace={namespace} name={name} /> }] : [])}
    />
  );
}

function RunListOf({ kind, namespace, name }: { kind: NonNullable<ReturnType<ReturnType<typeof useApi>['kinds']['plural']>>; namespace?: string; name: string }) {
  return <RunList kind={kind} namespace={namespace} title="Runs it made" selector={`pipelines.kubeflow.org/recurring-run-id=${name}`} />;
}

export const pages: PageDef[] = [{ plural: 'recurringruns', title: 'Recurring runs', section: 'Pipelines', order: 40, list: List, detail: Detail }];
