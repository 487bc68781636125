// Experiments: groups of runs, as kfp.Client makes them; archive and restore through the KFP API.
import { useApi } from '../../api/context';
import type { KObject } from '../../api/types';
import { ObjectList } from '../../components/ObjectList';
import { ObjectPage } from '../../components/ObjectPage';
import { RunList } from '../runs/RunList';
import type { DetailPageProps, ListPageProps, PageDef } from '../types';

interface Experiment extends KObject {
  spec: { displayName?: string; description?: string };
}

const STORAGE = 'pipelines.kubeflow.org/storage-state';
const label = (e: Experiment): string => e.spec.displayName ?? e.metadata?.name ?? '';

function ExperimentList({ kind, namespace }: ListPageProps) {
  return (
    <ObjectList<Experiment>
      kind={kind}
      namespace={namespace}
      title="Experiments"
      displayName={label}
      state={(e) => e.metadata?.labels?.[STORAGE] ?? 'AVAILABLE'}
      columns={[
        { id: 'desc', header: 'Description', value: (e) => e.spec.description, cell: (e) => e.spec.description ?? '' },
      ]}
    />
  );
}

function ExperimentDetail({ kind, namespace, name }: DetailPageProps) {
  const { api, kinds } = useApi();
  const runs = kinds.plural('runs');
  return (
    <ObjectPage<Experiment>
      kind={kind}
      namespace={namespace}
      name={name}
      title={label}
      state={(e) => e.metadata?.labels?.[STORAGE] ?? 'AVAILABLE'}
      summary={(e) => (e.spec.description ? <div className="muted">{e.spec.description}</div> : null)}
      actions={(e) => {
        const archived = e.metadata?.labels?.[STORAGE] === 'ARCHIVED';
        return (
          <button type="button" onClick={() => void api.json(`/apis/v2beta1/experiments/${encodeURIComponent(name)}:${archived ? 'unarchive' : 'archive'}`, { method: 'POST' }).catch((err: Error) => window.alert(err.message))}>
            {archived ? 'Restore' : 'Archive'}
          </button>
        );
      }}
      tabs={() => (runs ? [{ id: 'runs', label: 'Runs', render: () => <RunList kind={runs} namespace={namespace} experiment={name} title="Runs in this experiment" /> }] : [])}
    />
  );
}

export const pages: PageDef[] = [{ plural: 'experiments', title: 'Experiments', section: 'Pipelines', order: 30, list: ExperimentList, detail: ExperimentDetail }];
