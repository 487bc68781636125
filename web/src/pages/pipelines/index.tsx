// Pipelines and their versions: upload a compiled pipeline, see its versions and inputs, start a run.
import { useMemo, useState } from 'react';
import { useList, useObject } from '../../api/context';
import type { KObject, PipelineSpec } from '../../api/types';
import { Link, useQueryParam } from '../../app/nav';
import { objectHref } from '../../app/router';
import { Age } from '../../components/Age';
import { DataTable } from '../../components/DataTable';
import { ObjectList } from '../../components/ObjectList';
import { ObjectPage } from '../../components/ObjectPage';
import type { DetailPageProps, ListPageProps, PageDef } from '../types';
import { RunForm } from './RunForm';
import { fieldsOf } from './runform';
import { taskLines } from './tasks';
import { Upload } from './Upload';
import './pipelines.css';

interface Pipeline extends KObject {
  spec: { name?: string; displayName?: string; description?: string };
}
interface Version extends KObject {
  spec: { pipelineName: string; pipelineSpec: PipelineSpec; displayName?: string; name?: string; description?: string };
}

const pipelineLabel = (p: Pipeline): string => p.spec.displayName ?? p.spec.name ?? p.metadata?.name ?? '';
const versionLabel = (v: Version): string => v.spec.displayName ?? v.spec.name ?? v.metadata?.name ?? '';

function PipelineList({ kind, namespace }: ListPageProps) {
  const [uploading, setUploading] = useState(false);
  const versions = useList<Version>('pipelineversions', namespace);
  const byPipeline = new Map<string, Version[]>();
  for (const v of versions.items) byPipeline.set(v.spec.pipelineName, [...(byPipeline.get(v.spec.pipelineName) ?? []), v]);
  return (
    <>
      <ObjectList<Pipeline>
        kind={kind}
        namespace={namespace}
        title="Pipelines"
        state={null}
        displayName={pipelineLabel}
        actions={
          <button type="button" className="primary" onClick={() => setUploading((v) => !v)} aria-expanded={uploading}>
            Upload pipeline
          </button>
        }
        empty="No pipelines yet: upload one compiled with the kfp SDK (kfp.compiler.Compiler().compile(...))."
        columns={[
          { id: 'versions', header: 'Versions', width: 90, align: 'right', value: (p) => byPipeline.get(p.metadata?.name ?? '')?.length ?? 0, cell: (p) => byPipeline.get(p.metadata?.name ?? '')?.length ?? 0 },
          { id: 'latest', header: 'Latest version', value: (p) => latest(byPipeline.get(p.metadata?.name ?? ''))?.metadata?.creationTimestamp, cell: (p) => { const v = latest(byPipeline.get(p.metadata?.name ?? '')); return v ? versionLabel(v) : '—'; } },
        ]}
      />
      {/* over the list's top right, under its button: below a long list it would be out of sight */}
      {uploading ? <Upload className="upload-pop" namespace={namespace ?? 'default'} onDone={() => setUploading(false)} onCancel={() => setUploading(false)} /> : null}
    </>
  );
}

function latest(vs: Version[] | undefined): Version | undefined {
  return [...(vs ?? [])].sort((a, b) => ((a.metadata?.creationTimestamp ?? '') < (b.metadata?.creationTimestamp ?? '') ? 1 : -1))[0];
}

function Versions({ pipeline }: { pipeline: Pipeline }) {
  const ns = pipeline.metadata?.namespace;
  const versions = useList<Version>('pipelineversions', ns);
  const mine = versions.items.filter((v) => v.spec.pipelineName === pipeline.metadata?.name);
  const [chosen, setChosen] = useQueryParam('version');
  const [uploading, setUploading] = useState(false);
  const current = mine.find((v) => v.metadata?.name === chosen) ?? latest(mine);
  return (
    <div className="stack">
      <div className="actions">
        <button type="button" onClick={() => setUploading((v) => !v)} aria-expanded={uploading}>
          Upload version
        </button>
      </div>
      {uploading ? <Upload pipelineId={pipeline.metadata?.name} onDone={() => setUploading(false)} /> : null}
      <DataTable<Version>
        label="versions"
        rows={mine}
        rowKey={(v) => v.metadata?.name ?? ''}
        loading={!versions.loaded}
        height={Math.min(260, 34 * Math.max(1, mine.length) + 4)}
        columns={[
          { id: 'name', header: 'Version', value: versionLabel, cell: (v) => <button type="button" className="linklike" onClick={() => setChosen(v.metadata?.name)}>{versionLabel(v)}{v === current ? ' (shown)' : ''}</button> },
          { id: 'tasks', header: 'Tasks', width: 80, align: 'right', value: (v) => Object.keys(v.spec.pipelineSpec?.root?.dag?.tasks ?? {}).length, cell: (v) => Object.keys(v.spec.pipelineSpec?.root?.dag?.tasks ?? {}).length },
          { id: 'age', header: 'Age', width: 90, value: (v) => v.metadata?.creationTimestamp, cell: (v) => <Age ts={v.metadata?.creationTimestamp} /> },
        ]}
      />
      {current ? <VersionInfo version={current} /> : null}
    </div>
  );
}

function VersionInfo({ version }: { version: Version }) {
  const fields = fieldsOf(version.spec.pipelineSpec);
  const { lines, truncated } = useMemo(() => taskLines(version.spec.pipelineSpec), [version]);
  return (
    <div className="grid2">
      <div className="card">
        <h3>Inputs of {versionLabel(version)}</h3>
        {fields.length ? (
          <table className="plain">
            <thead>
              <tr>
                <th>Name</th>
                <th>Type</th>
                <th>Default</th>
              </tr>
            </thead>
            <tbody>
              {fields.map((f) => (
                <tr key={f.name}>
                  <td>{f.name}</td>
                  <td>{f.type}</td>
                  <td>
                    <code>{f.hasDefault ? f.initial : f.optional ? '(optional)' : '(required)'}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p className="muted">No inputs.</p>
        )}
      </div>
      <div className="card">
        <h3>Tasks</h3>
        <p className="muted small">A run of this version draws them as a live graph: open a run to see it.</p>
        <ul className="tasklist" aria-label="tasks">
          {lines.map((l) => (
            <li key={l.path} style={{ marginLeft: l.depth * 18 }}>
              {l.name}
              {l.loop ? <span className="tasktag">loop</span> : l.dag ? <span className="tasktag">sub-DAG</span> : null}
              {l.after.length ? <span className="muted small"> after {l.after.join(', ')}</span> : null}
            </li>
          ))}
        </ul>
        {truncated ? <p className="muted small">…and {truncated} more tasks, not listed here: a run's graph shows them all.</p> : null}
      </div>
    </div>
  );
}

function CreateRun({ pipeline }: { pipeline: Pipeline }) {
  const ns = pipeline.metadata?.namespace ?? 'default';
  const versions = useList<Version>('pipelineversions', ns);
  const mine = versions.items.filter((v) => v.spec.pipelineName === pipeline.metadata?.name);
  const [chosen, setChosen] = useQueryParam('version');
  const current = mine.find((v) => v.metadata?.name === chosen) ?? latest(mine);
  if (!versions.loaded) return <p className="muted">Loading…</p>;
  if (!current) return <p className="muted">This pipeline has no version yet: upload one.</p>;
  return (
    <div className="stack">
      <label className="inline">
        Version{' '}
        <select value={current.metadata?.name} onChange={(e) => setChosen(e.target.value)}>
          {mine.map((v) => (
            <option key={v.metadata?.name} value={v.metadata?.name}>
              {versionLabel(v)}
            </option>
          ))}
        </select>
      </label>
      <RunForm key={current.metadata?.name} version={current} namespace={ns} pipelineLabel={pipelineLabel(pipeline)} />
    </div>
  );
}

function PipelineRuns({ pipeline }: { pipeline: Pipeline }) {
  const runs = useList<KObject>('runs', pipeline.metadata?.namespace, { labelSelector: `pipelines.kubeflow.org/pipeline-id=${pipeline.metadata?.name}` });
  return (
    <DataTable
      label="runs of this pipeline"
      rows={runs.items}
      rowKey={(r) => r.metadata?.name ?? ''}
      rowHref={(r) => objectHref('runs', r.metadata?.namespace, r.metadata?.name ?? '')}
      loading={!runs.loaded}
      empty="No runs of this pipeline yet."
      columns={[
        { id: 'name', header: 'Run', value: (r) => r.metadata?.annotations?.['pipelines.kubeflow.org/display-name'] ?? r.metadata?.name, cell: (r) => <Link to={objectHref('runs', r.metadata?.namespace, r.metadata?.name ?? '')}>{r.metadata?.annotations?.['pipelines.kubeflow.org/display-name'] ?? r.metadata?.name}</Link> },
        { id: 'state', header: 'State', width: 120, value: (r) => (r.status as { state?: string } | undefined)?.state, cell: (r) => (r.status as { state?: string } | undefined)?.state ?? 'PENDING' },
        { id: 'age', header: 'Age', width: 90, value: (r) => r.metadata?.creationTimestamp, cell: (r) => <Age ts={r.metadata?.creationTimestamp} /> },
      ]}
    />
  );
}

function PipelineDetail({ kind, namespace, name }: DetailPageProps) {
  const p = useObject<Pipeline>('pipelines', namespace, name);
  const versions = useList<Version>('pipelineversions', namespace, { labelSelector: `pipelines.kubeflow.org/pipeline-id=${name}` });
  const nv = versions.items.length;
  return (
    <ObjectPage<Pipeline>
      kind={kind}
      namespace={namespace}
      name={name}
      title={pipelineLabel}
      state={() => (versions.loaded ? `${nv} version${nv === 1 ? '' : 's'}` : undefined)}
      summary={(o) => (o.spec.description ? <div className="muted">{o.spec.description}</div> : null)}
      tabs={() => [
        { id: 'versions', label: 'Versions', render: () => (p.object ? <Versions pipeline={p.object} /> : null) },
        { id: 'run', label: 'Create run', render: () => (p.object ? <CreateRun pipeline={p.object} /> : null) },
        { id: 'runs', label: 'Runs', render: () => (p.object ? <PipelineRuns pipeline={p.object} /> : null) },
      ]}
    />
  );
}

export const pages: PageDef[] = [{ plural: 'pipelines', title: 'Pipelines', section: 'Pipelines', order: 10, list: PipelineList, detail: PipelineDetail }];
