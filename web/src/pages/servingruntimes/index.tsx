// ServingRuntimes and ClusterServingRuntimes: which model formats and protocols each serves, with
// which image, and whether auto-selection may pick it.
import type { ServingRuntime } from '../../api/types';
import { ObjectList } from '../../components/ObjectList';
import { MetadataCard, ObjectPage } from '../../components/ObjectPage';
import type { DetailPageProps, ListPageProps, PageDef } from '../types';
import { UNAVAILABLE, formatsText, stateOf } from './model';

function List({ kind, namespace }: ListPageProps) {
  return (
    <ObjectList<ServingRuntime>
      kind={kind}
      namespace={namespace}
      title={kind.kind === 'ClusterServingRuntime' ? 'ClusterServingRuntimes' : 'ServingRuntimes'}
      state={stateOf}
      columns={[
        { id: 'formats', header: 'Model formats', value: formatsText, cell: (o) => formatsText(o) || <span className="muted">—</span> },
        { id: 'protocols', header: 'Protocols', width: 140, value: (o) => (o.spec?.protocolVersions ?? ['v1']).join(', '), cell: (o) => (o.spec?.protocolVersions ?? ['v1']).join(', ') },
        { id: 'image', header: 'Image', width: 300, value: (o) => o.spec?.containers?.[0]?.image, cell: (o) => <code>{o.spec?.containers?.[0]?.image}</code> },
      ]}
    />
  );
}

function Runtime({ rt }: { rt: ServingRuntime }) {
  const c = rt.spec?.containers?.[0];
  return (
    <div className="stack">
      {rt.metadata?.annotations?.[UNAVAILABLE] ? <div className="notice">{rt.metadata.annotations[UNAVAILABLE]}</div> : null}
      <div className="card">
        <h3>Model formats</h3>
        <table className="plain">
          <thead>
            <tr>
              <th>Format</th>
              <th>Version</th>
              <th>Auto-select</th>
              <th>Priority</th>
            </tr>
          </thead>
          <tbody>
            {(rt.spec?.supportedModelFormats ?? []).map((f) => (
              <tr key={`${f.name}/${f.version ?? ''}`}>
                <td>{f.name}</td>
                <td>{f.version ?? ''}</td>
                <td>{f.autoSelect ? 'yes' : 'no'}</td>
                <td>{f.priority ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="card">
        <h3>Server container</h3>
        <dl className="kv">
          <dt>Protocols</dt>
          <dd>{(rt.spec?.protocolVersions ?? ['v1']).join(', ')}</dd>
          <dt>Image</dt>
          <dd>
            <code>{c?.image}</code>
          </dd>
          <dt>Arguments</dt>
          <dd>
            <code>{[...(c?.command ?? []), ...(c?.args ?? [])].join(' ') || '—'}</code>
          </dd>
          <dt>Multi-model</dt>
          <dd>{rt.spec?.multiModel ? 'yes' : 'no'}</dd>
          <dt>Disabled</dt>
          <dd>{rt.spec?.disabled ? 'yes' : 'no'}</dd>
        </dl>
      </div>
      <MetadataCard obj={rt} />
    </div>
  );
}

function Detail({ kind, namespace, name }: DetailPageProps) {
  return <ObjectPage<ServingRuntime> kind={kind} namespace={namespace} name={name} state={stateOf} tabs={(o) => [{ id: 'runtime', label: 'Runtime', render: () => <Runtime rt={o} /> }]} />;
}

export const pages: PageDef[] = [
  { plural: 'servingruntimes', title: 'Runtimes', section: 'Serving', order: 2, list: List, detail: Detail },
  { plural: 'clusterservingruntimes', title: 'Cluster runtimes', section: 'Serving', order: 3, list: List, detail: Detail, cluster: true },
];
