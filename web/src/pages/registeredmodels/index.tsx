// The Model Registry in the dashboard: the namespace's registered models (its registry), a page per
// model with its metadata, versions, aliases and deployments, and a page per version with its model
// artifacts and their lineage back to the pipeline run that produced them. Lists and pages are live
// (watches on the registry's kinds); changes go through the registry's REST API as any client's do.
import { useState, type ReactNode } from 'react';
import { useList, useObject } from '../../api/context';
import type { Run, RunTask } from '../../api/types';
import { Link } from '../../app/nav';
import { href, objectHref } from '../../app/router';
import { RUN_LABEL, runArtifacts, taskRecordsByRun } from '../../artifacts/model';
import { DataTable } from '../../components/DataTable';
import type { DetailPageProps, ListPageProps, PageDef } from '../types';
import { AliasBadges, AliasesPanel } from './aliases';
import { useAliases, useCan } from './hooks';
import { aliasesByVersion, byParent, idOf, modelRows, parentOf, runSourceOf, stateOf, str, type ModelRow, type RegistryObject } from './model';
import { deployedAt, DeployForm, Deployments, IsvcLink, Properties, REGISTRY_GROUP, RegistryState, StateButton, useCanDeploy, useDeployments, useVersionArtifacts, When, type Deployment } from './parts';
import './registry.css';

function NeedNamespace() {
  return <p className="notice">Choose a namespace: each namespace has a registry of its own.</p>;
}

function ModelsList({ namespace }: ListPageProps) {
  const models = useList<RegistryObject>('registeredmodels', namespace);
  const versions = useList<RegistryObject>('modelversions', namespace);
  const [archived, setArchived] = useState(false);
  const rows = modelRows(models.items, versions.items, archived);
  const hidden = models.items.length - modelRows(models.items, versions.items, false).length;
  return (
    <section className="page">
      <header className="listhead">
        <h1>Models</h1>
      </header>
      {models.error ? <div className="notice bad">{models.error.message}</div> : null}
      <DataTable<ModelRow>
        label="registered models"
        rows={rows}
        rowKey={(r) => `${r.model.metadata.namespace}/${r.id}`}
        rowHref={(r) => objectHref('registeredmodels', r.model.metadata.namespace, r.id)}
        loading={!models.loaded}
        initialSort={[{ id: 'updated', desc: true }]}
        toolbar={
          <label className="mr-toggle">
            <input type="checkbox" checked={archived} onChange={(e) => setArchived(e.target.checked)} /> Show archived{hidden ? ` (${hidden})` : ''}
          </label>
        }
        empty={
          models.items.length && !archived ? (
            'Every model here is archived: tick “Show archived” to see them.'
          ) : (
            <>
              No registered models{namespace ? ` in ${namespace}` : ''}. Register one with the <code>model-registry</code> Python client or <code>POST /api/model_registry/v1alpha3/registered_models</code>.
            </>
          )
        }
        columns={[
          { id: 'name', header: 'Name', value: (r) => r.name, cell: (r) => <Link to={objectHref('registeredmodels', r.model.metadata.namespace, r.id)}>{r.name}</Link> },
          ...(namespace === undefined
            ? [{ id: 'namespace', header: 'Namespace', width: 140, value: (r: ModelRow) => r.model.metadata.namespace, cell: (r: ModelRow) => <Link to={href({ namespace: r.model.metadata.namespace, plural: 'registeredmodels' })}>{r.model.metadata.namespace}</Link> }]
            : []),
          { id: 'owner', header: 'Owner', width: 140, value: (r) => r.owner, cell: (r) => r.owner ?? <span className="muted">—</span> },
          { id: 'state', header: 'State', width: 110, value: (r) => r.state, cell: (r) => <RegistryState o={r.model} /> },
          { id: 'newest', header: 'Newest version', width: 170, value: (r) => str(r.newest, 'name'), cell: (r) => (r.newest ? str(r.newest, 'name') ?? idOf(r.newest) : <span className="muted">none</span>) },
          { id: 'versions', header: 'Versions', width: 90, align: 'right', value: (r) => r.versions, cell: (r) => r.versions },
          { id: 'updated', header: 'Updated', width: 110, value: (r) => r.updated, cell: (r) => <When ms={r.model.spec.lastUpdateTimeSinceEpoch} /> },
        ]}
      />
    </section>
  );
}

function Crumbs({ namespace, model, version }: { namespace: string; model?: RegistryObject; version?: RegistryObject }) {
  return (
    <nav className="crumbs" aria-label="Breadcrumb">
      <Link to={href({ namespace, plural: 'registeredmodels' })}>Models</Link>
      {model ? (
        <>
          <span>/</span>
          {version ? <Link to={objectHref('registeredmodels', namespace, idOf(model))}>{str(model, 'name') ?? idOf(model)}</Link> : <span>{str(model, 'name') ?? idOf(model)}</span>}
        </>
      ) : null}
      {version ? (
        <>
          <span>/</span>
          <span>{str(version, 'name') ?? idOf(version)}</span>
        </>
      ) : null}
    </nav>
  );
}

/** a missing, loading or failed object, or undefined when there is one to show */
function notThere(state: { loaded: boolean; error?: { message: string }; object?: RegistryObject; deleted: boolean }, what: string, namespace: string): ReactNode {
  if (!state.loaded) return <p className="muted">Loading…</p>;
  if (state.error) return <div className="notice bad">{state.error.message}</div>;
  if (!state.object) return <div className="notice bad">{state.deleted ? `The ${what} was deleted.` : `There is no ${what} with this id in the registry of ${namespace}.`}</div>;
  return undefined;
}

function ModelPage({ namespace, name }: DetailPageProps) {
  if (!namespace) return <NeedNamespace />;
  return <ModelPageIn namespace={namespace} id={name} />;
}

function ModelPageIn({ namespace, id }: { namespace: string; id: string }) {
  const m = useObject<RegistryObject>('registeredmodels', namespace, id);
  const versions = useList<RegistryObject>('modelversions', namespace);
  const artifacts = useVersionArtifacts(namespace);
  const aliases = useAliases(namespace, id);
  const deployments = useDeployments(namespace, id);
  const canDeploy = useCanDeploy(namespace);
  const canEdit = useCan('update', REGISTRY_GROUP, 'registeredmodels', namespace);
  const [deploying, setDeploying] = useState<string>();
  const missing = notThere(m, 'registered model', namespace);
  const model = m.object;
  const mine = (byParent(versions.items).get(id) ?? []);
  const names = new Map(mine.map((v) => [idOf(v), str(v, 'name') ?? idOf(v)]));
  const versionName = (vid: string): string => names.get(vid) ?? `version ${vid}`;
  const onVersion = aliasesByVersion(aliases.aliases);
  const modelName = str(model, 'name') ?? id;
  return (
    <section className="page mr-page">
      <Crumbs namespace={namespace} model={model} />
      {missing ?? (
        <>
          <header className="objhead">
            <h1>
              {modelName} <RegistryState o={model} />
            </h1>
            <div className="actions">
              {canEdit === false ? <span className="muted small">View only: changing the registry of {namespace} needs the Edit role there.</span> : null}
              <StateButton namespace={namespace} what="model" o={model as RegistryObject} resource="registeredmodels" />
            </div>
          </header>
          <div className="grid2 mr-top">
            <div className="card">
              <h3>Model</h3>
              <dl className="kv">
                <dt>Description</dt>
                <dd>{str(model, 'description') ?? <span className="muted">none</span>}</dd>
                <dt>Owner</dt>
                <dd>{str(model, 'owner') ?? <span className="muted">—</span>}</dd>
                <dt>Id</dt>
                <dd>{id}</dd>
                <dt>Created</dt>
                <dd>
                  <When ms={model?.spec.createTimeSinceEpoch} />
                </dd>
                <dt>Updated</dt>
                <dd>
                  <When ms={model?.spec.lastUpdateTimeSinceEpoch} />
                </dd>
              </dl>
            </div>
            <div className="card">
              <h3>Custom properties</h3>
              <Properties o={model} label="Model properties" />
            </div>
          </div>
          <section className="psec">
            <h3>Versions</h3>
            {mine.length === 0 ? (
              <p className="muted">No versions yet.</p>
            ) : (
              <table className="plain mr-versions" aria-label="Versions">
                <thead>
                  <tr>
                    <th>Version</th>
                    <th>State</th>
                    <th>Author</th>
                    <th>Created</th>
                    <th>Model artifact</th>
                    <th>Format</th>
                    <th>Deployed</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {mine.map((v) => {
                    const vid = idOf(v);
                    const art = artifacts.get(vid)?.[0];
                    const live = stateOf(v) !== 'ARCHIVED';
                    const where = deployedAt(deployments, vid).now;
                    return (
                      <tr key={vid} className={live ? '' : 'mr-archived'}>
                        <td>
                          <Link to={objectHref('modelversions', namespace, vid)}>{str(v, 'name') ?? vid}</Link> <AliasBadges names={onVersion.get(vid)} />
                        </td>
                        <td>
                          <RegistryState o={v} />
                        </td>
                        <td>{str(v, 'author') ?? <span className="muted">—</span>}</td>
                        <td>
                          <When ms={v.spec.createTimeSinceEpoch} />
                        </td>
                        <td className="mr-uri">
                          {str(art, 'uri') ? <code>{str(art, 'uri')}</code> : <span className="muted">none</span>}
                          <SourceLine a={art} />
                        </td>
                        <td className="mr-nowrap">{str(art, 'modelFormatName') ? `${str(art, 'modelFormatName')}${str(art, 'modelFormatVersion') ? ` ${str(art, 'modelFormatVersion')}` : ''}` : <span className="muted">—</span>}</td>
                        <td>{where.length ? where.map((d, i) => <span key={idOf(d.record)}>{i ? ', ' : ''}<IsvcLink namespace={namespace} name={str(d.record, 'name') ?? ''} /></span>) : <span className="muted">—</span>}</td>
                        <td className="mr-rowactions">
                          {live && canDeploy === true ? (
                            <button type="button" onClick={() => setDeploying(vid)} aria-label={`Deploy ${str(v, 'name') ?? vid}`}>
                              Deploy
                            </button>
                          ) : null}
                          <StateButton namespace={namespace} what="version" o={v} resource="modelversions" />
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            )}
            {deploying && names.has(deploying) ? <DeployForm namespace={namespace} model={modelName} version={versionName(deploying)} artifact={artifacts.get(deploying)?.[0]} onClose={() => setDeploying(undefined)} /> : null}
          </section>
          <AliasesPanel namespace={namespace} modelId={id} versions={mine} state={aliases} versionName={versionName} />
          <section className="psec">
            <h3>Deployments</h3>
            <Deployments namespace={namespace} deployments={deployments} versionName={versionName} />
          </section>
        </>
      )}
    </section>
  );
}

function VersionPage({ namespace, name }: DetailPageProps) {
  if (!namespace) return <NeedNamespace />;
  return <VersionPageIn namespace={namespace} id={name} />;
}

function VersionPageIn({ namespace, id }: { namespace: string; id: string }) {
  const v = useObject<RegistryObject>('modelversions', namespace, id);
  const modelId = v.object ? parentOf(v.object) : undefined;
  const m = useObject<RegistryObject>('registeredmodels', namespace, modelId);
  const artifacts = useVersionArtifacts(namespace).get(id) ?? [];
  const aliases = useAliases(namespace, modelId);
  const deployments = useDeployments(namespace, modelId ?? '');
  const versions = useList<RegistryObject>('modelversions', namespace);
  const canDeploy = useCanDeploy(namespace);
  const [deploying, setDeploying] = useState(false);
  const missing = notThere(v, 'model version', namespace);
  const version = v.object;
  const names = new Map(versions.items.map((x) => [idOf(x), str(x, 'name') ?? idOf(x)]));
  const versionName = (vid: string): string => names.get(vid) ?? `version ${vid}`;
  const live = version ? stateOf(version) !== 'ARCHIVED' : false;
  const modelName = str(m.object, 'name') ?? modelId ?? '';
  const where = deployedAt(deployments, id);
  return (
    <section className="page mr-page">
      <Crumbs namespace={namespace} model={m.object} version={version} />
      {missing ?? (
        <>
          <header className="objhead">
            <h1>
              {str(version, 'name') ?? id} <RegistryState o={version} /> <AliasBadges names={aliasesByVersion(aliases.aliases).get(id)} />
            </h1>
            <div className="actions">
              {live && canDeploy === true && m.object ? (
                <button type="button" className="primary" onClick={() => setDeploying(true)} disabled={deploying}>
                  Deploy
                </button>
              ) : null}
              <StateButton namespace={namespace} what="version" o={version as RegistryObject} resource="modelversions" />
            </div>
          </header>
          {deploying && m.object ? <DeployForm namespace={namespace} model={modelName} version={str(version, 'name') ?? id} artifact={artifacts[0]} onClose={() => setDeploying(false)} /> : null}
          <div className="grid2 mr-top">
            <div className="card">
              <h3>Version</h3>
              <dl className="kv">
                <dt>Model</dt>
                <dd>{modelId ? <Link to={objectHref('registeredmodels', namespace, modelId)}>{modelName}</Link> : <span className="muted">—</span>}</dd>
                <dt>Description</dt>
                <dd>{str(version, 'description') ?? <span className="muted">none</span>}</dd>
                <dt>Author</dt>
                <dd>{str(version, 'author') ?? <span className="muted">—</span>}</dd>
                <dt>Id</dt>
                <dd>{id}</dd>
                <dt>Created</dt>
                <dd>
                  <When ms={version?.spec.createTimeSinceEpoch} />
                </dd>
                <dt>Updated</dt>
                <dd>
                  <When ms={version?.spec.lastUpdateTimeSinceEpoch} />
                </dd>
                <dt>Serving now</dt>
                <dd>{where.now.length ? where.now.map((d, i) => <span key={idOf(d.record)}>{i ? ', ' : ''}<IsvcLink namespace={namespace} name={str(d.record, 'name') ?? ''} /></span>) : <span className="muted">nowhere</span>}</dd>
              </dl>
            </div>
            <div className="card">
              <h3>Custom properties</h3>
              <Properties o={version} label="Version properties" />
            </div>
          </div>
          <section className="psec">
            <h3>Model artifacts</h3>
            {artifacts.length === 0 ? <p className="muted">No model artifact: nothing to serve yet.</p> : artifacts.map((a) => <ArtifactCard key={idOf(a)} namespace={namespace} a={a} />)}
          </section>
          <section className="psec">
            <h3>Deployments</h3>
            <Deployments namespace={namespace} deployments={deployments as Deployment[]} versionName={versionName} only={id} />
          </section>
        </>
      )}
    </section>
  );
}

function ArtifactCard({ namespace, a }: { namespace: string; a: RegistryObject }) {
  const fields: [string, string][] = (
    [
      ['URI', 'uri'],
      ['Format', 'modelFormatName'],
      ['Format version', 'modelFormatVersion'],
      ['Storage key', 'storageKey'],
      ['Storage path', 'storagePath'],
      ['Service account', 'serviceAccountName'],
      ['State', 'state'],
    ] as [string, string][]
  ).filter(([, f]) => str(a, f) !== undefined);
  return (
    <div className="card mr-artifact">
      <h4>
        {str(a, 'name') ?? idOf(a)} <span className="muted small">model artifact {idOf(a)}</span>
      </h4>
      <div className="grid2">
        <dl className="kv">
          {fields.map(([label, f]) => (
            <div key={f} className="mr-kvrow">
              <dt>{label}</dt>
              <dd>{f === 'uri' ? <code>{str(a, f)}</code> : str(a, f)}</dd>
            </div>
          ))}
          <dt>Lineage</dt>
          <dd>
            <Lineage namespace={namespace} a={a} />
          </dd>
        </dl>
        <Properties o={a} label="Artifact properties" />
      </div>
    </div>
  );
}

/**
 * Where the model artifact came from: a `kfp` model source names the run (Group its namespace, Id its
 * id, Name its display name), which links to the run's page and, when the run recorded an output at
 * the artifact's URI (or a folder holding it), to that artifact's page. Other sources are shown as given.
 */
function Lineage({ namespace, a }: { namespace: string; a: RegistryObject }) {
  const src = runSourceOf(a);
  const given = (['modelSourceKind', 'modelSourceClass', 'modelSourceGroup', 'modelSourceId', 'modelSourceName'] as const).filter((f) => str(a, f) !== undefined);
  if (!src) {
    if (!given.length) return <span className="muted">not recorded (not a pipeline artifact's URI)</span>;
    return <span className="small">{given.map((f) => `${f.slice('modelSource'.length).toLowerCase()} ${str(a, f)}`).join(' · ')}</span>;
  }
  return <RunLineage namespace={namespace} src={src} uri={str(a, 'uri')} skiff={a.metadata.labels?.['modelregistry.skiff.dev/model-source'] === 'pipeline'} />;
}

/** under a version's artifact URI on the model's page: the run it came from, when one is recorded */
function SourceLine({ a }: { a: RegistryObject | undefined }) {
  const src = runSourceOf(a);
  if (!src) return null;
  return (
    <div className="small muted">
      from run <Link to={objectHref('runs', src.namespace, src.run)}>{src.runName}</Link>
    </div>
  );
}

function RunLineage({ src, uri, skiff }: { namespace: string; src: NonNullable<ReturnType<typeof runSourceOf>>; uri?: string; skiff: boolean }) {
  const run = useObject<Run>('runs', src.namespace, src.run);
  const records = useList<RunTask>('runtasks', src.namespace, { labelSelector: `${RUN_LABEL}=${src.run}` });
  const refs = run.object ? runArtifacts(run.object, taskRecordsByRun(records.items)[src.run]) : [];
  const within = (u: string, art: string): boolean => u === art || u.startsWith(art.replace(/\/+$/, '') + '/');
  const ref = uri ? refs.find((r) => r.artifact.uri && within(uri, r.artifact.uri) && (!src.task || r.task === src.task)) : undefined;
  return (
    <span className="mr-lineage">
      pipeline run{' '}
      {run.object ? (
        <Link to={objectHref('runs', src.namespace, src.run)}>{src.runName}</Link>
      ) : (
        <span title={run.loaded ? 'the run is gone' : undefined}>
          {src.runName}
          {run.loaded ? <span className="muted"> (no longer there)</span> : null}
        </span>
      )}
      {src.namespace !== undefined ? <span className="muted"> in {src.namespace}</span> : null}
      {ref ? (
        <>
          {' · '}
          <Link to={href({ namespace: src.namespace, plural: 'artifact', query: { run: src.run, task: ref.task, output: ref.output, index: String(ref.index) } })}>
            artifact {ref.task}/{ref.output}
          </Link>
        </>
      ) : src.task ? (
        <span className="muted"> · task {src.task}</span>
      ) : null}
      <span className="muted small"> ({skiff ? 'from the URI, by Skiff' : 'as registered'})</span>
    </span>
  );
}

export const pages: PageDef[] = [
  { plural: 'registeredmodels', title: 'Models', section: 'Serving', order: 0, list: ModelsList, detail: ModelPage, navFor: ['modelversions'] },
  // a version's own page (the artifact page and the model page link here); no entry in the navigation
  { plural: 'modelversions', title: 'Model versions', detail: VersionPage },
];
