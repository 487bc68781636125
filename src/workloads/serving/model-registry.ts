// `model-registry://` storage URIs: a model named by its place in the Model Registry of the
// InferenceService's namespace, resolved to the model artifact's own URI (s3://, file://, pvc://,
// http(s)://), which is then fetched as any other. The grammar is that of Kubeflow Model Registry's
// storage initializer for KServe:
//
//   model-registry://<model>                    the model's newest version
//   model-registry://<model>/<version>          that version (by name)
//   model-registry://<registry>/<model>/<version>
//   model-registry://<model>@<alias>            the version the alias names (Skiff's: upstream has no aliases)
//   model-registry://<registry>/<model>@<alias>
//   model-registry://<model>@latest             the newest LIVE version, as an alias
//
// An alias is resolved when the InferenceService's revision is made, and the revision keeps the
// version it resolved to (`registryVersionId`): moving the alias makes a new revision, which the
// canary rule then rolls out, instead of changing under a revision that serves traffic.
//
// The registry part names a registry server upstream; in Skiff every namespace has its own registry,
// so it is the InferenceService's namespace that decides, and that part is ignored. "Newest" is the
// newest LIVE version (upstream takes the newest whatever its state; an archived version is not one
// to deploy). The version's model artifact is its newest one.
import {
  aliasNameProblem, ModelAliasKind, ModelArtifactKind, ModelVersionKind, RegisteredModelKind, RegistryLabels, reservedAlias, type RegistryObject,
} from '../../api/model-registry.js';
import type { RegistryModelRef } from '../../api/serving-revision.js';
import type { Client } from '../../store/client.js';

export const registryScheme = 'model-registry://';

export interface RegistryUri {
  model: string;
  /** absent (and no alias): the newest LIVE version */
  version?: string;
  /** the alias naming the version; `latest` names the newest LIVE one */
  alias?: string;
}

/** the model and version a `model-registry://` URI names; a message saying what is wrong otherwise */
export function parseRegistryUri(uri: string): RegistryUri | string {
  const parts = uri.slice(registryScheme.length).split('/');
  const expected = `expected ${registryScheme}<model>[/<version>] or ${registryScheme}<model>@<alias> (with <registry>/ before <model> for either)`;
  if (parts.length > 3 || parts.some((p) => p === '')) return expected;
  const last = parts[parts.length - 1] as string;
  const at = last.indexOf('@');
  // an alias ends the URI: <model>@<alias> or <registry>/<model>@<alias>; a registry part may hold a port, never an @
  if (at >= 0) {
    if (parts.length > 2 || parts.slice(0, -1).some((p) => p.includes('@'))) return expected;
    const model = last.slice(0, at);
    const alias = last.slice(at + 1);
    if (model === '' || alias === '') return expected;
    const problem = alias === reservedAlias ? undefined : aliasNameProblem(alias);
    if (problem) return `alias ${problem}`;
    return { model, alias };
  }
  if (parts.some((p) => p.includes('@'))) return expected;
  const [model, version] = parts.length === 3 ? parts.slice(1) : parts;
  return { model: model as string, ...(version !== undefined ? { version } : {}) };
}

/** whether a storageUri names a version through an alias (resolved once per revision) */
export function isAliasUri(uri: string | undefined): boolean {
  if (!uri?.startsWith(registryScheme)) return false;
  const ref = parseRegistryUri(uri);
  return typeof ref !== 'string' && ref.alias !== undefined;
}

/** newest first: by creation time, then by id (ids are handed out in order) */
const newestFirst = (a: RegistryObject, b: RegistryObject): number =>
  Number(b.spec.createTimeSinceEpoch) - Number(a.spec.createTimeSinceEpoch) || Number(b.metadata.name) - Number(a.metadata.name);

/**
 * The version id an alias URI names now (`latest`: the newest LIVE version), or a string saying which
 * model or alias is missing. Used when a revision is made; the revision then keeps that id.
 */
export async function resolveAlias(client: Client, namespace: string, uri: string): Promise<{ modelVersionId: string } | string> {
  const ref = parseRegistryUri(uri);
  if (typeof ref === 'string') return ref;
  if (ref.alias === undefined) return `${uri} names no alias`;
  const where = `in the model registry of namespace ${namespace}`;
  const model = (await client.listAll<RegistryObject>(RegisteredModelKind, { namespace })).find((m) => m.spec.name === ref.model);
  if (!model) return `registered model ${JSON.stringify(ref.model)} not found ${where}`;
  if (ref.alias === reservedAlias) {
    const versions = await client.listAll<RegistryObject>(ModelVersionKind, { namespace, labelSelector: `${RegistryLabels.parent}=${model.metadata.name}` });
    const newest = versions.filter((v) => (v.spec.state ?? 'LIVE') === 'LIVE').sort(newestFirst)[0];
    return newest ? { modelVersionId: newest.metadata.name } : `registered model ${JSON.stringify(ref.model)} has no LIVE version ${where}`;
  }
  const alias = (await client.listAll<RegistryObject>(ModelAliasKind, { namespace, labelSelector: `${RegistryLabels.parent}=${model.metadata.name}` })).find((a) => a.spec.name === ref.alias);
  const id = alias?.spec.modelVersionId;
  if (typeof id !== 'string') return `registered model ${JSON.stringify(ref.model)} has no alias ${JSON.stringify(ref.alias)} ${where}`;
  return { modelVersionId: id };
}

/**
 * What a `model-registry://` URI names in the registry of `namespace`, read through the store; a
 * string saying which model, version or artifact is missing when it names nothing. An alias URI's
 * version is `pinnedVersionId`, the one its revision resolved the alias to (resolveAlias).
 */
export async function lookUpRegistryModel(client: Client, namespace: string, uri: string, pinnedVersionId?: string): Promise<RegistryModelRef | string> {
  const ref = parseRegistryUri(uri);
  if (typeof ref === 'string') return ref;
  const where = `in the model registry of namespace ${namespace}`;
  const model = (await client.listAll<RegistryObject>(RegisteredModelKind, { namespace })).find((m) => m.spec.name === ref.model);
  if (!model) return `registered model ${JSON.stringify(ref.model)} not found ${where}`;
  const versions = await client.listAll<RegistryObject>(ModelVersionKind, { namespace, labelSelector: `${RegistryLabels.parent}=${model.metadata.name}` });
  if (ref.alias !== undefined && pinnedVersionId === undefined) return `${uri}: the alias ${JSON.stringify(ref.alias)} was not resolved when the revision was made`;
  const version = ref.alias !== undefined ? versions.find((v) => v.metadata.name === pinnedVersionId)
    : ref.version !== undefined
      ? versions.find((v) => v.spec.name === ref.version)
      : versions.filter((v) => (v.spec.state ?? 'LIVE') === 'LIVE').sort(newestFirst)[0];
  if (!version) {
    return ref.alias !== undefined
      ? `registered model ${JSON.stringify(ref.model)} has no version with id ${pinnedVersionId as string} (alias ${JSON.stringify(ref.alias)} named it) ${where}`
      : ref.version !== undefined
        ? `registered model ${JSON.stringify(ref.model)} has no version ${JSON.stringify(ref.version)} ${where}`
        : `registered model ${JSON.stringify(ref.model)} has no LIVE version ${where}`;
  }
  const named = `version ${JSON.stringify(version.spec.name)} of registered model ${JSON.stringify(ref.model)}`;
  const artifact = (await client.listAll<RegistryObject>(ModelArtifactKind, { namespace, labelSelector: `${RegistryLabels.parent}=${version.metadata.name}` }))
    .filter((a) => a.spec.artifactType === undefined || a.spec.artifactType === 'model-artifact').sort(newestFirst)[0];
  if (!artifact) return `${named} has no model artifact`;
  const artifactUri = artifact.spec.uri;
  if (typeof artifactUri !== 'string' || artifactUri === '') return `the model artifact of ${named} (id ${artifact.metadata.name}) has no uri`;
  if (artifactUri.startsWith(registryScheme)) return `the model artifact of ${named} points at the registry again (${artifactUri})`;
  return { registeredModelId: model.metadata.name, modelVersionId: version.metadata.name, modelArtifactId: artifact.metadata.name, uri: artifactUri };
}
