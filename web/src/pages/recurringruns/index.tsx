// Recurring runs: a pipeline on a cron or an interval; enable, disable, and the runs each made.
import { useEffect, useState } from 'react';
import { useApi } from '../../api/context';
import type { KObject } from '../../api/types';
import { Link } from '../../app/nav';
import { href } from '../../app/router';
import { Age } from '../../components/Age';
import { shortDuration } from '../../components/time';
import { ObjectList } from '../../components/ObjectList';
import { ObjectPage } from '../../components/ObjectPage';
import { RunList } from '../runs/RunList';
import type { DetailPageProps, ListPageProps, PageDef } from '../types';

interface RecurringRun extends KObject {
  spec: { displayName?: string; description?: string; mode?: string; maxConcurrency?: number; experimentId?: string; pipelineVersionReference?: { pipelineId?: string; pipelineVersionId?: string }; runtimeConfig?: { parameters?: Record<string, unknown> }; trigger: { cronSchedule?: { cron: string }; periodicSchedule?: { intervalSecond: number } } };
  status?: { lastScheduledTime?: string; nextScheduledTime?: string; runCount?: number; message?: string };
}

const trigger = (r: RecurringRun): string => (r.spec.trigger?.cronSchedule ? `cron ${r.spec.trigger.cronSchedule.cron}` : r.spec.trigger?.periodicSchedule ? `every ${shortDuration(r.spec.trigger.periodicSchedule.intervalSecond * 1000)}` : '—');
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

/**
 * a KFP object's display name (its name is a UUID), read once: a watch per name would hold one of
 * the six connections a browser keeps to the server
 */
function DisplayName({ plural, namespace, id }: { plural: string; namespace?: string; id: string }) {
  const { api, kinds } = useApi();
  const [name, setName] = useState<string>();
  useEffect(() => {
    const kind = kinds.plural(plural);
    if (!kind) return;
    let stop = false;
    api.get<KObject & { spec?: { displayName?: string } }>(kind, namespace, id).then(
      (o) => !stop && setName(o.spec?.displayName),
      () => undefined,
    );
    return () => {
      stop = true;
    };
  }, [api, kinds, plural, namespace, id]);
  return <>{name ?? id.slice(0, 8)}</>;
}

function Detail({ kind, namespace, name }: DetailPageProps) {
  const { api, kinds } = useApi();
  const runs = kinds.plural('runs');
  return (
    <ObjectPage<RecurringRun>
      kind={kind}
      namespace={namespace}
      name={name}
      title={(r) => r.spec.displayName ?? name}
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
            <dd>{r.spec.mode === 'DISABLE' ? 'none while disabled' : r.status?.nextScheduledTime ? new Date(r.status.nextScheduledTime).toLocaleString() : '—'}</dd>
            <dt>Pipeline</dt>
            <dd>
              {r.spec.pipelineVersionReference?.pipelineId ? (
                <Link to={href({ namespace, plural: 'pipelines', name: r.spec.pipelineVersionReference.pipelineId, query: { version: r.spec.pipelineVersionReference.pipelineVersionId } })}>
                  <DisplayName plural="pipelines" namespace={namespace} id={r.spec.pipelineVersionReference.pipelineId} />
                </Link>
              ) : (
                'sent inline with the recurring run'
              )}
            </dd>
            <dt>Experiment</dt>
            <dd>{r.spec.experimentId ? <Link to={href({ namespace, plural: 'experiments', name: r.spec.experimentId })}>
                  <DisplayName plural="experiments" namespace={namespace} id={r.spec.experimentId} />
                </Link> : '—'}</dd>
            <dt>Parameters</dt>
            <dd>
              {Object.keys(r.spec.runtimeConfig?.parameters ?? {}).length ? (
                <div className="chips">
                  {Object.entries(r.spec.runtimeConfig?.parameters ?? {}).map(([k, v]) => (
                    <span key={k} className="chip">
                      {k}={JSON.stringify(v)}
                    </span>
                  ))}
                </div>
              ) : (
                'the defaults'
              )}
            </dd>
          </dl>
          {r.status?.message ? <div className="notice">{r.status.message}</div> : null}
        </div>
      )}
      actions={(r) => (
        <button type="button" onClick={() => void api.json(`/apis/v2beta1/recurringruns/${encodeURIComponent(name)}:${r.spec.mode === 'DISABLE' ? 'enable' : 'disable'}`, { method: 'POST' }).catch((e: Error) => window.alert(e.message))}>
          {r.spec.mode === 'DISABLE' ? 'Enable' : 'Disable'}
        </button>
      )}
      tabs={(r) => (runs ? [{ id: 'runs', label: 'Runs', render: () => <RunListOf kind={runs} namespace={namespace} name={name} next={r.spec.mode === 'DISABLE' ? undefined : r.status?.nextScheduledTime} /> }] : [])}
    />
  );
}

function RunListOf({ kind, namespace, name, next }: { kind: NonNullable<ReturnType<ReturnType<typeof useApi>['kinds']['plural']>>; namespace?: string; name: string; next?: string }) {
  return (
    <RunList
      kind={kind}
      namespace={namespace}
      title="Runs it made"
      selector={`pipelines.kubeflow.org/recurring-run-id=${name}`}
      actions={null}
      empty={next ? `None yet: the first starts at ${new Date(next).toLocaleString()}.` : 'None: it is disabled, and starts runs once enabled.'}
    />
  );
}

export const pages: PageDef[] = [{ plural: 'recurringruns', title: 'Recurring runs', section: 'Pipelines', order: 40, list: List, detail: Detail }];
