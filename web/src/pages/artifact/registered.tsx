// The model versions registered from a pipeline artifact: the registry's model artifacts (in the
// run's namespace, the registry of that namespace) whose URI is the artifact's or a file under it.
import { RegistryLabels, type RegistryObject } from '../../../../src/api/model-registry';
import { useList } from '../../api/context';
import { Link } from '../../app/nav';
import { objectHref } from '../../app/router';

/** `uri` is `artifact` or a file or folder inside it */
export function within(uri: string, artifact: string): boolean {
  return uri === artifact || uri.startsWith(artifact.replace(/\/+$/, '') + '/');
}

/** `model`: the artifact is a Model, whose page says so when no version points at it; another kind's
 *  page shows the section only when one does */
export function RegisteredVersions({ namespace, uri, model }: { namespace: string; uri: string; model: boolean }) {
  const artifacts = useList<RegistryObject>('modelartifacts', namespace);
  const versions = useList<RegistryObject>('modelversions', namespace);
  const models = useList<RegistryObject>('registeredmodels', namespace);
  // a registry without these kinds (or one the user may not read) shows nothing, not an error
  if (!artifacts.loaded || artifacts.error) return null;
  const from = artifacts.items.filter((a) => typeof a.spec.uri === 'string' && within(a.spec.uri, uri) && a.metadata.labels?.[RegistryLabels.parent]);
  const versionById = new Map(versions.items.map((v) => [v.metadata.name, v]));
  const modelById = new Map(models.items.map((m) => [m.metadata.name, m]));
  if (from.length === 0 && !model) return null;
  return (
    <section className="psec">
      <h3>Registered model versions</h3>
      {from.length === 0 ? (
        <p className="muted">No model version in the registry of {namespace} points at this artifact.</p>
      ) : (
        <table className="plain">
          <thead>
            <tr>
              <th>Model</th>
              <th>Version</th>
              <th>State</th>
              <th>Model artifact</th>
            </tr>
          </thead>
          <tbody>
            {from.map((a) => {
              const versionId = a.metadata.labels?.[RegistryLabels.parent] as string;
              const v = versionById.get(versionId);
              const modelId = v?.metadata.labels?.[RegistryLabels.parent];
              const m = modelId ? modelById.get(modelId) : undefined;
              return (
                <tr key={a.metadata.name}>
                  <td>{m && modelId ? <Link to={objectHref('registeredmodels', namespace, modelId)}>{m.spec.name ?? modelId}</Link> : (modelId ?? '—')}</td>
                  <td>
                    <Link to={objectHref('modelversions', namespace, versionId)}>{v?.spec.name ?? versionId}</Link>
                  </td>
                  <td>{v?.spec.state ?? ''}</td>
                  <td>
                    <Link to={objectHref('modelartifacts', namespace, a.metadata.name as string)}>{a.spec.name ?? a.metadata.name}</Link>
                    {a.spec.uri !== uri ? <span className="muted"> ({(a.spec.uri as string).slice(uri.replace(/\/+$/, '').length + 1)})</span> : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
