// The kfp-kubernetes platform config of a container task (a KubernetesExecutorConfig from the
// PlatformSpec document of a compiled pipeline) applied to the task's Pod, and the IR container's
// `resources` turned into the main container's requests and limits (platform-resources.ts).
//
// Everything here is pure: the caller resolves parameters (ResolveParam) and records the notes as
// Events. What the local substrate keeps on the Pod but cannot honour (node selection, tolerations,
// image pulling, user ids, memory-backed volumes...) is said in a note instead of being dropped.
//
// Each setting family is one function (platform-volumes.ts, platform-containers.ts,
// platform-scheduling.ts, platform-pod.ts) that reads and checks its fields and returns its change;
// the table below runs them all, then makes the changes, so a malformed entry leaves the Pod as it was.
import type { Pod } from '../../api/core-types.js';
import { isPlainObject } from '../../util/objects.js';
import { configMapEnv, fieldPathEnv, imagePullPolicy, imagePullSecrets, initContainers, secretEnv, securityContext } from './platform-containers.js';
import type { Change, PlatformContext, ResolveParam, Setting } from './platform-fields.js';
import { fail, mainContainer, Notes, show } from './platform-fields.js';
import { activeDeadline, podMetadata, resourceClaims } from './platform-pod.js';
import { nodeAffinity, nodeSelector, podAffinity, tolerations } from './platform-scheduling.js';
import { configMapVolumes, emptyDirs, genericEphemeralVolumes, placeVolumes, pvcMounts, secretVolumes, sharedMemory } from './platform-volumes.js';

export { PlatformConfigError, type ResolveParam } from './platform-fields.js';
export { containerResources, type ResolveString } from './platform-resources.js';
export { NODE_SELECTOR_ANNOTATION } from './platform-scheduling.js';

export interface PlatformResult {
  notes: string[];
  pvcNames: string[];
}

/**
 * Every setting, by the KubernetesExecutorConfig fields it reads (kfp-kubernetes, protojson names),
 * in the order they run. The volume settings come first; placeVolumes then names and mounts their
 * volumes, before initContainers, which mount them by name.
 */
const SETTINGS: { fields: readonly string[]; read: Setting }[] = [
  { fields: ['pvcMount'], read: pvcMounts },
  { fields: ['secretAsVolume'], read: secretVolumes },
  { fields: ['configMapAsVolume'], read: configMapVolumes },
  { fields: ['emptyDirMounts'], read: emptyDirs },
  { fields: ['genericEphemeralVolume'], read: genericEphemeralVolumes },
  { fields: ['enabledSharedMemory'], read: sharedMemory },
  { fields: ['secretAsEnv'], read: secretEnv },
  { fields: ['configMapAsEnv'], read: configMapEnv },
  { fields: ['fieldPathAsEnv'], read: fieldPathEnv },
  { fields: [], read: placeVolumes },
  { fields: ['initContainers'], read: initContainers },
  { fields: ['activeDeadlineSeconds'], read: activeDeadline },
  { fields: ['imagePullPolicy'], read: imagePullPolicy },
  { fields: ['imagePullSecret'], read: imagePullSecrets },
  { fields: ['podMetadata'], read: podMetadata },
  { fields: ['nodeSelector'], read: nodeSelector },
  { fields: ['tolerations'], read: tolerations },
  { fields: ['nodeAffinity'], read: nodeAffinity },
  { fields: ['podAffinity'], read: podAffinity },
  { fields: ['securityContext'], read: securityContext },
  { fields: ['podResourceClaims'], read: resourceClaims },
];

/** The fields of a KubernetesExecutorConfig Skiff knows; any other is ignored with a note. */
export const KUBERNETES_CONFIG_FIELDS: readonly string[] = SETTINGS.flatMap((s) => s.fields);

/**
 * Mutates `pod` (spec.volumes, the main container's volumeMounts/env/imagePullPolicy/securityContext,
 * spec.initContainers, spec.activeDeadlineSeconds, spec.imagePullSecrets, metadata.labels/annotations,
 * spec.tolerations, spec.affinity, spec.resourceClaims) per one KubernetesExecutorConfig. `notes` are
 * human sentences for Events about what the local substrate keeps but cannot honour; pvcNames are the
 * resolved claim names (sorted) for the cache fingerprint. Throws a PlatformConfigError whose message
 * names the config field for malformed input (e.g. `pvcMount[0]: mountPath is required`).
 */
export function applyKubernetesConfig(pod: Pod, config: unknown, resolve: ResolveParam): PlatformResult {
  if (config === undefined || config === null) return { notes: [], pvcNames: [] };
  if (!isPlainObject(config)) fail('KubernetesExecutorConfig', `expected a mapping, got ${show(config)}`);
  const c: PlatformContext = {
    pod, spec: pod.spec as PlatformContext['spec'], main: mainContainer(pod), config, resolve,
    notes: new Notes(), volumes: [], pvcNames: new Set(), aliases: new Map(),
  };
  for (const k of Object.keys(config)) {
    if (!KUBERNETES_CONFIG_FIELDS.includes(k)) c.notes.add(`the Kubernetes executor config field ${k} is not known to Skiff and is ignored`);
  }
  const changes: Change[] = [];
  for (const s of SETTINGS) {
    const change = s.read(c);
    if (change) changes.push(change);
  }
  for (const change of changes) change();
  return { notes: c.notes.list, pvcNames: [...c.pvcNames].sort() };
}

/** The executor's config in a PlatformSpec doc ({platforms:{kubernetes:{deploymentSpec:{executors:{...}}}}}), or undefined. */
export function executorConfig(platformSpec: unknown, executorLabel: string): unknown {
  if (!isPlainObject(platformSpec)) return undefined;
  const executors = platformSpec.platforms?.kubernetes?.deploymentSpec?.executors;
  if (!isPlainObject(executors) || !Object.prototype.hasOwnProperty.call(executors, executorLabel)) return undefined;
  const cfg: unknown = executors[executorLabel];
  return isPlainObject(cfg) ? cfg : undefined;
}
