// Pieces the model and version pages share: custom properties, archive/restore, the deploy form and
// where a version is deployed (the registry's own records of InferenceServices and their serves).
import { useState } from 'react';
import { useApi, useList } from '../../api/context';
import { messageOf } from '../../api/errors';
import type { KObject } from '../../api/types';
import { Link, useNav } from '../../app/nav';
import { objectHref } from '../../app/router';
import { Age } from '../../components/Age';
import { useCan, useRegistryCall } from './hooks';
import { byParent, dnsName, idOf, inferenceServiceFor, isoOf, propertyRows, registryUri, str, uriProblem, type RegistryObject } from './model';

export const REGISTRY_GROUP = 'modelregistry.skiff.dev';

export function When({ ms }: { ms: unknown }) {
  const iso = isoOf(ms);
  return iso ? (
    <span className="mr-when">
      <Age ts={iso} /> ago
    </span>
  ) : (
    <span className="muted">—</span>
  );
}

/** LIVE or ARCHIVED as a badge: live is the good state, archived the retired one */
export function RegistryState({ o }: { o: RegistryObject | undefined }) {
  const archived = o?.spec.state === 'ARCHIVED';
  return <span className={`badge ${archived ? 'tone-off' : 'tone-ok'}`}>{archived ? 'Archived' : 'Live'}</span>;
}

export function Properties({ o, label }: { o: RegistryObject | undefined; label: string }) {
  const rows = propertyRows(o);
  if (!rows.length) return <p className="muted small">No custom properties.</p>;
  return (
    <table className="plain mr-props" aria-label={label}>
      <thead>
        <tr>
          <th>Property</th>
          <th>Value</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key}>
            <th scope="row">{r.key}</th>
            <td>{r.value === '' ? <span className="muted">(empty)</span> : r.value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * ARCHIVED ⇄ LIVE through the REST API's PATCH (`/registered_models/{id}` or `/model_versions/{id}`);
 * archiving asks first. Hidden for a user who may not update the registry's objects.
 */
export function StateButton({ namespace, what, o, resource }: { namespace: string; what: 'model' | 'version'; o: RegistryObject; resource: 'registeredmodels' | 'modelversions' }) {
  const call = useRegistryCall(namespace);
  const can = useCan('update', REGISTRY_GROUP, resource, namespace);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  if (can !== true) return null;
  const archived = o.spec.state === 'ARCHIVED';
  const name = str(o, 'name') ?? idOf(o);
  const path = what === 'model' ? `/registered_models/${idOf(o)}` : `/model_versions/${idOf(o)}`;
  const go = async (): Promise<void> => {
    if (!archived && !window.confirm(what === 'model' ? `Archive model ${name}? It leaves the list of models (shown again with "Show archived"); nothing is deleted.` : `Archive version ${name}? model-registry:// URIs naming the model alone stop choosing it; nothing is deleted.`)) return;
    setBusy(true);
    setError(undefined);
    try {
      await call('PATCH', path, { state: archived ? 'LIVE' : 'ARCHIVED' });
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="mr-statebtn">
      <button type="button" className={archived ? '' : 'danger'} disabled={busy} onClick={() => void go()} aria-label={`${archived ? 'Restore' : 'Archive'} ${what} ${name}`}>
        {archived ? 'Restore' : 'Archive'}
      </button>
      {error ? (
        <span className="tone-bad-text small" role="alert">
          {error}
        </span>
      ) : null}
    </span>
  );
}

/** the newest model artifact of each version id */
export function useVersionArtifacts(namespace: string): Map<string, RegistryObject[]> {
  const artifacts = useList<RegistryObject>('modelartifacts', namespace);
  return byParent(artifacts.items);
}

/**
 * Deploy a LIVE version: an InferenceService in the namespace serving `model-registry://<model>/<version>`
 * in its model artifact's format. The name defaults to a DNS-safe form of the model's; the API's
 * refusal (a taken name, no format) is shown as it says it; on success the service's page opens.
 */
export function DeployForm({ namespace, model, version, artifact, onClose }: { namespace: string; model: string; version: string; artifact: RegistryObject | undefined; onClose: () => void }) {
  const { api, kinds } = useApi();
  const { navigate } = useNav();
  const kind = kinds.plural('inferenceservices');
  const taken = new Set(useList<KObject>('inferenceservices', namespace).items.map((o) => o.metadata?.name));
  // the model's name, or with the version when a service already has it (the version's own deploy)
  const [edited, setName] = useState<string>();
  const proposed = taken.has(dnsName(model)) ? dnsName(`${model}-${version}`) : dnsName(model);
  const name = edited ?? proposed;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const format = str(artifact, 'modelFormatName');
  // serving picks a runtime by format and does not take it from the registry: one must be named here
  const [givenFormat, setFormat] = useState('');
  const problem = uriProblem(model, version) ?? (artifact ? undefined : 'This version has no model artifact: there is nothing to serve. Register one first.');
  const create = async (): Promise<void> => {
    if (!kind) return setError('This server serves no InferenceServices.');
    setBusy(true);
    setError(undefined);
    try {
      await api.create(kind, namespace, inferenceServiceFor(name.trim(), model, version, artifact, format ? undefined : givenFormat.trim()));
      navigate(objectHref('inferenceservices', namespace, name.trim()));
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
    }
  };
  return (
    <form
      className="card mr-deploy"
      aria-label={`Deploy ${model} ${version}`}
      onSubmit={(e) => {
        e.preventDefault();
        void create();
      }}
    >
      <h3>
        Deploy {model} {version}
      </h3>
      <dl className="kv">
        <dt>
          <label htmlFor="mr-deploy-name">InferenceService</label>
        </dt>
        <dd>
          <input id="mr-deploy-name" value={name} onChange={(e) => setName(e.target.value)} required spellCheck={false} autoFocus />
          <span className="muted small mr-in">in {namespace}</span>
        </dd>
        <dt>Storage URI</dt>
        <dd>
          <code>{registryUri(model, version)}</code>
        </dd>
        <dt>{format ? 'Model format' : <label htmlFor="mr-deploy-format">Model format</label>}</dt>
        <dd>
          {format ? (
            `${format}${str(artifact, 'modelFormatVersion') ? ` ${str(artifact, 'modelFormatVersion')}` : ''}`
          ) : (
            <>
              <input id="mr-deploy-format" value={givenFormat} onChange={(e) => setFormat(e.target.value)} placeholder="sklearn" required spellCheck={false} />
              <span className="muted small mr-in">the model artifact names no format (modelFormatName): serving chooses its runtime by it</span>
            </>
          )}
        </dd>
      </dl>
      {problem ? <div className="notice bad">{problem}</div> : null}
      {error ? (
        <div className="notice bad" role="alert">
          {error}
        </div>
      ) : null}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy || !!problem || !name.trim() || (!format && !givenFormat.trim())}>
          {busy ? 'Deploying…' : 'Deploy'}
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** the Deploy button of a LIVE version, opening the form; hidden for a user who may not create InferenceServices */
export function useCanDeploy(namespace: string): boolean | undefined {
  return useCan('create', 'serving.kserve.io', 'inferenceservices', namespace);
}

export interface Deployment {
  record: RegistryObject;
  serves: RegistryObject[];
}

/** the registry's records of the model's deployments (upstream's InferenceService entities) with their serves */
export function useDeployments(namespace: string, modelId: string): Deployment[] {
  const records = useList<RegistryObject>('registryinferenceservices', namespace);
  const serves = useList<RegistryObject>('servemodels', namespace);
  const byRecord = byParent(serves.items);
  return records.items.filter((r) => r.spec.registeredModelId === modelId).map((record) => ({ record, serves: byRecord.get(idOf(record)) ?? [] }));
}

/** the deployments serving a version now, and those that served it before */
export function deployedAt(deployments: Deployment[], versionId: string): { now: Deployment[]; before: Deployment[] } {
  const now = deployments.filter((d) => d.record.spec.desiredState === 'DEPLOYED' && d.record.spec.modelVersionId === versionId);
  const before = deployments.filter((d) => !now.includes(d) && d.serves.some((s) => s.spec.modelVersionId === versionId));
  return { now, before };
}

export function IsvcLink({ namespace, name }: { namespace: string; name: string }) {
  return <Link to={objectHref('inferenceservices', namespace, name)}>{name}</Link>;
}

/** the table of a model's (or one version's) deployments and which version each served when */
export function Deployments({ namespace, deployments, versionName, only }: { namespace: string; deployments: Deployment[]; versionName: (id: string) => string; only?: string }) {
  const isvcs = useList<KObject>('inferenceservices', namespace);
  const live = new Set(isvcs.items.map((o) => o.metadata?.name));
  const shown = only ? deployments.filter((d) => d.record.spec.modelVersionId === only || d.serves.some((s) => s.spec.modelVersionId === only)) : deployments;
  if (!shown.length) return <p className="muted small">Not deployed: no InferenceService in {namespace} has served {only ? 'this version' : 'this model'} from the registry.</p>;
  return (
    <table className="plain" aria-label="Deployments">
      <thead>
        <tr>
          <th>InferenceService</th>
          <th>State</th>
          <th>Serving now</th>
          <th>History</th>
        </tr>
      </thead>
      <tbody>
        {shown.map(({ record, serves }) => {
          const name = str(record, 'name') ?? idOf(record);
          const deployed = record.spec.desiredState === 'DEPLOYED';
          return (
            <tr key={idOf(record)}>
              <td>{live.has(name) ? <IsvcLink namespace={namespace} name={name} /> : <span title="the InferenceService is gone">{name}</span>}</td>
              <td>
                <span className={`badge ${deployed ? 'tone-ok' : 'tone-off'}`}>{deployed ? 'Deployed' : 'Undeployed'}</span>
              </td>
              <td>{deployed && typeof record.spec.modelVersionId === 'string' ? versionName(record.spec.modelVersionId) : <span className="muted">—</span>}</td>
              <td className="small">
                {[...serves].reverse().map((s) => (
                  <div key={idOf(s)}>
                    {versionName(String(s.spec.modelVersionId ?? ''))} {s.spec.lastKnownState === 'RUNNING' ? 'since' : 'from'} <When ms={s.spec.createTimeSinceEpoch} />
                    {s.spec.lastKnownState === 'RUNNING' ? null : (
                      <>
                        {' '}
                        to <When ms={s.spec.lastUpdateTimeSinceEpoch} />
                      </>
                    )}
                  </div>
                ))}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
