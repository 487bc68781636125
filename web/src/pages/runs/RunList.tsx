// The runs of a namespace, live: pick a few to compare; filter by experiment.
import { useState } from 'react';
import { useList } from '../../api/context';
import type { KObject, Run } from '../../api/types';
import { Link, useNav, useQueryParam } from '../../app/nav';
import { href, objectHref } from '../../app/router';
import { ObjectList } from '../../components/ObjectList';
import { between } from '../../components/time';
import type { ListPageProps } from '../types';

const DISPLAY = 'pipelines.kubeflow.org/display-name';
const EXPERIMENT = 'pipelines.kubeflow.org/experiment-id';

export function runLabel(r: Run): string {
  return r.metadata?.annotations?.[DISPLAY] ?? r.metadata?.name ?? '';
}

export function RunList({ kind, namespace, experiment: fixedExperiment, title, selector }: ListPageProps & { experiment?: string; title?: string; selector?: string }) {
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [expParam, setExp] = useQueryParam('experiment');
  const experiment = fixedExperiment ?? expParam;
  const experiments = useList<KObject & { spec?: { displayName?: string } }>('experiments', namespace);
  const expName = new Map(experiments.items.map((e) => [e.metadata?.name ?? '', e.spec?.displayName ?? e.metadata?.name ?? '']));
  const { navigate } = useNav();
  const names = [...selected].map((k) => k.split('/')[1] ?? '');
  const compareNs = [...selected][0]?.split('/')[0] || namespace;
  return (
    <ObjectList<Run>
      kind={kind}
      namespace={namespace}
      title={title ?? 'Runs'}
      labelSelector={selector ?? (experiment ? `${EXPERIMENT}=${experiment}` : undefined)}
      state={(r) => r.status?.state ?? 'PENDING'}
      displayName={runLabel}
      selected={selected}
      onSelect={(key, on) => {
        const next = new Set(selected);
        if (on) next.add(key);
        else next.delete(key);
        setSelected(next);
      }}
      toolbar={
        <>
          {fixedExperiment || selector ? null : (
            <select aria-label="Experiment" value={experiment ?? ''} onChange={(e) => setExp(e.target.value || undefined)}>
              <option value="">All experiments</option>
              {experiments.items.map((e) => (
                <option key={e.metadata?.name} value={e.metadata?.name}>
                  {e.spec?.displayName ?? e.metadata?.name}
                </option>
              ))}
            </select>
          )}
          <button type="button" disabled={selected.size < 1} onClick={() => navigate(href({ namespace: compareNs, plural: 'compare', query: { runs: names.join(',') } }))}>
            Compare{selected.size ? ` (${selected.size})` : ''}
          </button>
        </>
      }
      actions={<Link to={href({ namespace, plural: 'pipelines' })}>Start a run from a pipeline</Link>}
      empty="No runs yet. Start one from a pipeline, with kfp.Client, or with `skiff run pipeline.yaml`."
      columns={[
        { id: 'pipeline', header: 'Pipeline', value: (r) => String(r.spec.pipelineSpec?.pipelineInfo?.name ?? ''), cell: (r) => String(r.spec.pipelineSpec?.pipelineInfo?.name ?? '') },
        {
          id: 'experiment',
          header: 'Experiment',
          width: 160,
          value: (r) => expName.get(r.metadata?.labels?.[EXPERIMENT] ?? '') ?? '',
          cell: (r) => {
            const id = r.metadata?.labels?.[EXPERIMENT];
            return id ? <Link to={objectHref('experiments', r.metadata?.namespace, id)}>{expName.get(id) ?? id.slice(0, 8)}</Link> : '—';
          },
        },
        { id: 'duration', header: 'Duration', width: 90, value: (r) => (r.status?.startedAt ? Date.parse(r.status.finishedAt ?? new Date().toISOString()) - Date.parse(r.status.startedAt) : undefined), cell: (r) => between(r.status?.startedAt, r.status?.finishedAt) },
      ]}
    />
  );
}
