// `model-registry://` storage URIs: a model named by its place in the Model Registry of the
// InferenceService's namespace, resolved to the model artifact's own URI (s3://, file://, pvc://,
// http(s)://), which is then fetched as any other. The grammar is that of Kubeflow Model Registry's
// storage initializer for KServe:
//
//   model-registry://<model>                    the model's newest version
//   model-registry://<model>/<version>          that version (by name)
//   model-registry://<registry>/<model>/<version>
//
// The registry part names a registry server upstream; in Skiff every namespace has its own registry,
// so it is the InferenceService's namespace that decides, and that part is ignored. "Newest" is the
// newest LIVE version (upstream takes the newest whatever its state; an archived version is not one
// to deploy). The version's model artifact is its newest one.
import { ModelArtifactKind, ModelVersionKind, RegisteredModelKind, RegistryLabels, type RegistryObject } from '../../api/model-registry.js';
import type { RegistryModelRef } from '../../api/serving-revision.js';
import type { Client } from '../../store/client.js';

export const registryScheme = 'model-registry://';

export interface RegistryUri {
  model: string;
  /** absent: the newest LIVE version */
  version?: string;
}

/** the model and version a `model-registry://` URI names; a message saying what is wrong otherwise */
export function parseRegistryUri(uri: string): RegistryUri | string {
  const parts = uri.slice(registryScheme.length).split('/');
  if (parts.length > 3 || parts.some((p) => p === '')) return `expected ${registryScheme}<model>[/<version>] (or ${registryScheme}<registry>/<model>/<version>)`;
  const [model, version] = parts.length === 3 ? parts.slice(1) : parts;
  return { model: model as string, ...(version !== undefined ? { version } : {}) };
}

/** newest first: by creation time, then by id (ids are handed out in order) */
const newestFirst = (a: RegistryObject, b: RegistryObject): number =>
  Number(b.spec.createTimeSinceEpoch) - Number(a.spec.createTimeSinceEpoch) || Number(b.metadata.name) - Number(a.metadata.name);

/**
 * What a `model-registry://` URI names in the registry of `namespace`, read through the store; a
 * string saying which model, version or artifact is missing when it names nothing.
 */
export async function lookUpRegistryModel(client: Client, namespace: string, uri: string): Promise<RegistryModelRef | string> {
  const ref = parseRegistryUri(uri);
  if (typeof ref === 'string') return ref;
  const where = `in the model registry of namespace ${namespace}`;
  const model = (await client.listAll<RegistryObject>(RegisteredModelKind, { namespace })).find((m) => m.spec.name === ref.model);
  if (!model) return `registered model ${JSON.stringify(ref.model)} not found ${where}`;
  const versions = await client.listAll<RegistryObject>(ModelVersionKind, { namespace, labelSelector: `${RegistryLabels.parent}=${model.metadata.name}` });
  const version = ref.version !== undefined
    ? versions.find((v) => v.spec.name === ref.version)
    : versions.filter((v) => (v.spec.state ?? 'LIVE') === 'LIVE').sort(newestFirst)[0];
  if (!version) {
    return ref.version !== undefined
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
