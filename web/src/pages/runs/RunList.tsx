// The runs of a namespace, live: pick a few to compare; filter by experiment.
import { useEffect, useState } from 'react';
import type { ReactNode } from 'react';
import { useApi, useList } from '../../api/context';
import type { KObject, Run } from '../../api/types';
import { Link, useNav, useQueryParam } from '../../app/nav';
import { href, objectHref } from '../../app/router';
import { ObjectList } from '../../components/ObjectList';
import { between } from '../../components/time';
import type { ListPageProps } from '../types';

const DISPLAY = 'pipelines.kubeflow.org/display-name';
const EXPERIMENT = 'pipelines.kubeflow.org/experiment-id';
const PIPELINE = 'pipelines.kubeflow.org/pipeline-id';
const VERSION = 'pipelines.kubeflow.org/pipeline-version-id';

export function runLabel(r: Run): string {
  return r.metadata?.annotations?.[DISPLAY] ?? r.metadata?.name ?? '';
}

type Named = KObject & { spec?: { displayName?: string; name?: string } };

/**
 * id → display name of the pipelines or versions the runs point at: listed once (not watched: a
 * browser holds six connections to the server and every watch keeps one), and again only when a
 * run names an id not seen yet.
 */
function useNames(plural: string, namespace: string | undefined, ids: string[]): Map<string, string> {
  const { api, kinds } = useApi();
  const [names, setNames] = useState<Map<string, string>>(() => new Map());
  const missing = ids.filter((id) => !names.has(id)).sort().join(',');
  useEffect(() => {
    const kind = kinds.plural(plural);
    if (!missing || !kind) return;
    let stop = false;
    api.list<Named>(kind, namespace).then(
      (l) => {
        if (stop) return;
        const m = new Map(l.items.map((o) => [o.metadata?.name ?? '', o.spec?.displayName ?? o.spec?.name ?? o.metadata?.name ?? '']));
        // ids that are gone stay unnamed, and are not asked for again
        for (const id of missing.split(',')) if (!m.has(id)) m.set(id, '');
        setNames(m);
      },
      () => undefined,
    );
    return () => {
      stop = true;
    };
  }, [api, kinds, plural, namespace, missing]);
  return names;
}

export function RunList({ kind, namespace, experiment: fixedExperiment, title, selector, empty, actions }: ListPageProps & { experiment?: string; title?: string; selector?: string; empty?: string; actions?: ReactNode }) {
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [expParam, setExp] = useQueryParam('experiment');
  const experiment = fixedExperiment ?? expParam;
  const experiments = useList<KObject & { spec?: { displayName?: string } }>('experiments', namespace);
  const expName = new Map(experiments.items.map((e) => [e.metadata?.name ?? '', e.spec?.displayName ?? e.metadata?.name ?? '']));
  const { navigate } = useNav();
  // a run names its stored pipeline and version by id (labels); show their names, as KFP's list does.
  // The runs are the ObjectList's own watch (same selector: shared, no second stream).
  const list = useList<Run>(kind.plural, namespace, { labelSelector: selector ?? (experiment ? `${EXPERIMENT}=${experiment}` : undefined) });
  const ids = (label: string): string[] => [...new Set(list.items.map((r) => r.metadata?.labels?.[label]).filter((x): x is string => !!x))];
  const pName = useNames('pipelines', namespace, ids(PIPELINE));
  const vName = useNames('pipelineversions', namespace, ids(VERSION));
  const pipelineOf = (r: Run): string => {
    const pid = r.metadata?.labels?.[PIPELINE];
    const vid = r.metadata?.labels?.[VERSION];
    const p = pid ? pName.get(pid) || String(r.spec.pipelineSpec?.pipelineInfo?.name ?? pid) : String(r.spec.pipelineSpec?.pipelineInfo?.name ?? '');
    const v = vid ? vName.get(vid) : undefined;
    return v && v !== p ? `${p} (${v})` : p;
  };
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
      actions={actions === undefined ? <Link to={href({ namespace, plural: 'pipelines' })}>Start a run from a pipeline</Link> : actions}
      empty={empty ?? "No runs yet. Start one from a pipeline, with kfp.Client, or with `skiff run pipeline.yaml`."}
      columns={[
        {
          id: 'pipeline',
          header: 'Pipeline (version)',
          value: (r) => pipelineOf(r),
          cell: (r) => {
            const pid = r.metadata?.labels?.[PIPELINE];
            return pid ? (
              <Link to={objectHref('pipelines', r.metadata?.namespace, pid) + (r.metadata?.labels?.[VERSION] ? `?version=${r.metadata.labels[VERSION]}` : '')}>{pipelineOf(r)}</Link>
            ) : (
              <span title="sent with the run, not from a stored pipeline">{pipelineOf(r)}</span>
            );
          },
        },
        // an experiment's page says which experiment its runs are in
        ...(fixedExperiment
          ? []
          : [
            {
              id: 'experiment',
              header: 'Experiment',
              width: 160,
              value: (r: Run) => expName.get(r.metadata?.labels?.[EXPERIMENT] ?? '') ?? '',
              cell: (r: Run) => {
                const id = r.metadata?.labels?.[EXPERIMENT];
                return id ? <Link to={objectHref('experiments', r.metadata?.namespace, id)}>{expName.get(id) ?? id.slice(0, 8)}</Link> : '—';
              },
            },
          ]),
        { id: 'duration', header: 'Duration', width: 90, value: (r) => (r.status?.startedAt ? Date.parse(r.status.finishedAt ?? new Date().toISOString()) - Date.parse(r.status.startedAt) : undefined), cell: (r) => between(r.status?.startedAt, r.status?.finishedAt) },
      ]}
    />
  );
}
