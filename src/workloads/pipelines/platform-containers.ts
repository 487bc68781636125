// The kfp-kubernetes settings of the task's containers: environment variables from Secrets,
// ConfigMaps and the downward API; init containers (which may mount the volumes the config
// defines); image pull policy and secrets; the security context. What the local substrate keeps
// but cannot honour (image pulling, user ids) is said in a note.
import type { Container, EnvVar } from '../../api/core-types.js';
import { envVarName, isDns1123Label, isQualifiedName } from '../../api/validation.js';
import type { Change, PlatformContext } from './platform-fields.js';
import {
  checkRequestsWithinLimits, entry, fail, list, mountPathOf, nameFrom, optBool, optInt, optString, quantity, reqString, show, skipped, stringList, stringMap,
} from './platform-fields.js';

/** Downward-API field paths an env var may name (what Kubernetes accepts, and src/substrate/local/env.ts serves). */
const ENV_FIELD_PATHS = ['metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName', 'spec.serviceAccountName', 'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs'];

function keyToEnv(list: unknown, field: string, keyField: 'secretKey' | 'configMapKey'): { key: string; env: string }[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) fail(`${field}.keyToEnv`, `expected a list, got ${show(list)}`);
  return list.map((x, i) => {
    const f = `${field}.keyToEnv[${i}]`;
    const e = entry(x, f);
    const env = reqString(e, 'envVar', f);
    if (!envVarName.test(env)) fail(f, `envVar ${JSON.stringify(env)} is not a valid environment variable name`);
    return { key: reqString(e, keyField, f), env };
  });
}

function addEnv(c: PlatformContext, env: EnvVar[]): Change | void {
  if (!env.length) return;
  return () => {
    c.main.env = [...(c.main.env ?? []), ...env];
  };
}

/** secretAsEnv: Secret keys as environment variables of the main container. */
export function secretEnv(c: PlatformContext): Change | void {
  const env: EnvVar[] = [];
  list(c.config, 'secretAsEnv').forEach((x, i) => {
    const f = `secretAsEnv[${i}]`;
    const e = entry(x, f);
    const pairs = keyToEnv(e['keyToEnv'], f, 'secretKey');
    const name = nameFrom(c.resolve, e, 'secretNameParameter', 'secretName', f);
    if (name === undefined) return skipped(c, f, 'secret name');
    const optional = optBool(e, 'optional', f);
    for (const p of pairs) env.push({ name: p.env, valueFrom: { secretKeyRef: { name, key: p.key, ...(optional !== undefined ? { optional } : {}) } } });
  });
  return addEnv(c, env);
}

/** configMapAsEnv: ConfigMap keys as environment variables of the main container. */
export function configMapEnv(c: PlatformContext): Change | void {
  const env: EnvVar[] = [];
  list(c.config, 'configMapAsEnv').forEach((x, i) => {
    const f = `configMapAsEnv[${i}]`;
    const e = entry(x, f);
    const pairs = keyToEnv(e['keyToEnv'], f, 'configMapKey');
    const name = nameFrom(c.resolve, e, 'configMapNameParameter', 'configMapName', f);
    if (name === undefined) return skipped(c, f, 'ConfigMap name');
    const optional = optBool(e, 'optional', f);
    for (const p of pairs) env.push({ name: p.env, valueFrom: { configMapKeyRef: { name, key: p.key, ...(optional !== undefined ? { optional } : {}) } } });
  });
  return addEnv(c, env);
}

/** fieldPathAsEnv: the Pod's own fields (the downward API) as environment variables. */
export function fieldPathEnv(c: PlatformContext): Change | void {
  const env: EnvVar[] = [];
  list(c.config, 'fieldPathAsEnv').forEach((x, i) => {
    const f = `fieldPathAsEnv[${i}]`;
    const e = entry(x, f);
    const name = reqString(e, 'name', f);
    if (!envVarName.test(name)) fail(f, `name ${JSON.stringify(name)} is not a valid environment variable name`);
    const fieldPath = reqString(e, 'fieldPath', f);
    const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
    if (m ? !isQualifiedName(m[2] ?? '') : !ENV_FIELD_PATHS.includes(fieldPath)) {
      fail(f, `fieldPath ${JSON.stringify(fieldPath)} is not supported: use metadata.labels['<key>'], metadata.annotations['<key>'] or one of ${ENV_FIELD_PATHS.join(', ')}`);
    }
    env.push({ name, valueFrom: { fieldRef: { fieldPath } } });
  });
  return addEnv(c, env);
}

function initEnv(envList: unknown, f: string): EnvVar[] {
  if (!Array.isArray(envList)) fail(`${f}.env`, `expected a list, got ${show(envList)}`);
  return envList.map((y, j) => {
    const ef = `${f}.env[${j}]`;
    const ee = entry(y, ef);
    const n = reqString(ee, 'name', ef);
    if (!envVarName.test(n)) fail(ef, `name ${JSON.stringify(n)} is not a valid environment variable name`);
    const v = ee['value'];
    if (v !== undefined && v !== null && typeof v !== 'string') fail(ef, `value must be a string, got ${show(v)}`);
    return { name: n, value: v ?? '' };
  });
}

/** an init container's mounts: volumes of this Pod, by the name the config gave them */
function initMounts(c: PlatformContext, vm: unknown, f: string): { name: string; mountPath: string }[] {
  if (!Array.isArray(vm)) fail(`${f}.volumeMounts`, `expected a list, got ${show(vm)}`);
  const seen = new Set<string>();
  return vm.map((y, j) => {
    const mf = `${f}.volumeMounts[${j}]`;
    const me = entry(y, mf);
    const volumeName = reqString(me, 'volumeName', mf);
    const target = c.aliases.get(volumeName);
    if (target === undefined) fail(mf, `volumeName ${JSON.stringify(volumeName)} is not a volume of this Pod (define it with emptyDirMounts, pvcMount, genericEphemeralVolume...)`);
    const mountPath = mountPathOf(me, mf, c.notes);
    if (seen.has(mountPath)) fail(mf, `mountPath ${mountPath} is mounted twice`);
    seen.add(mountPath);
    return { name: target, mountPath };
  });
}

function initResources(raw: unknown, f: string): { requests?: Record<string, string>; limits?: Record<string, string> } {
  const rf = `${f}.resources`;
  const re = entry(raw, rf);
  const res: { requests?: Record<string, string>; limits?: Record<string, string> } = {};
  for (const kind of ['requests', 'limits'] as const) {
    const m = stringMap(re[kind], `${rf}.${kind}`);
    if (Object.keys(m).length === 0) continue;
    for (const [k, q] of Object.entries(m)) quantity(q, `${rf}.${kind}[${JSON.stringify(k)}]`);
    res[kind] = m;
  }
  checkRequestsWithinLimits(res, rf);
  return res;
}

/** initContainers: run to completion, one at a time, before the main container (after placeVolumes: they mount its volumes). */
export function initContainers(c: PlatformContext): Change | void {
  const names = new Set([...c.pod.spec.containers, ...(c.spec.initContainers ?? [])].map((x) => x.name));
  const inits: Container[] = list(c.config, 'initContainers').map((x, i) => {
    const f = `initContainers[${i}]`;
    const e = entry(x, f);
    const name = reqString(e, 'name', f);
    if (!isDns1123Label(name)) fail(f, `name ${JSON.stringify(name)} must be a lowercase RFC 1123 label`);
    if (names.has(name)) fail(f, `name ${JSON.stringify(name)} is already used by another container of this Pod`);
    names.add(name);
    const init: Container = { name, image: reqString(e, 'image', f) };
    const command = stringList(e, 'command', f);
    const args = stringList(e, 'args', f);
    if (command) init.command = command;
    if (args) init.args = args;
    if (e['env'] !== undefined && e['env'] !== null) init.env = initEnv(e['env'], f);
    if (e['volumeMounts'] !== undefined && e['volumeMounts'] !== null) init.volumeMounts = initMounts(c, e['volumeMounts'], f);
    const restartPolicy = optString(e, 'restartPolicy', f);
    if (restartPolicy !== undefined) {
      if (restartPolicy !== 'Always') fail(f, `restartPolicy must be Always (a sidecar) or unset, got ${JSON.stringify(restartPolicy)}`);
      fail(f, 'restartPolicy Always (a sidecar that runs beside the main container) is not supported by the local substrate: it runs init containers one at a time, each to completion, so the task would never start');
    }
    if (e['resources'] !== undefined && e['resources'] !== null) {
      const res = initResources(e['resources'], f);
      if (res.requests || res.limits) init.resources = res;
    }
    return init;
  });
  if (!inits.length) return;
  return () => {
    c.spec.initContainers = [...(c.spec.initContainers ?? []), ...inits];
  };
}

/** imagePullPolicy: kept on the main container, with a note (images are not pulled here). */
export function imagePullPolicy(c: PlatformContext): Change | void {
  const pullPolicy = optString(c.config, 'imagePullPolicy', 'imagePullPolicy');
  if (pullPolicy !== undefined && !['Always', 'Never', 'IfNotPresent'].includes(pullPolicy)) fail('imagePullPolicy', `must be Always, Never or IfNotPresent, got ${JSON.stringify(pullPolicy)}`);
  if (pullPolicy === undefined) return;
  return () => {
    c.main.imagePullPolicy = pullPolicy;
    c.notes.add(`imagePullPolicy ${pullPolicy} is kept on the container but has no effect: images are not pulled on this machine`);
  };
}

/** imagePullSecret: kept on the Pod (each once), with a note. */
export function imagePullSecrets(c: PlatformContext): Change | void {
  const pullSecrets: string[] = [];
  list(c.config, 'imagePullSecret').forEach((x, i) => {
    const f = `imagePullSecret[${i}]`;
    const name = nameFrom(c.resolve, entry(x, f), 'secretNameParameter', 'secretName', f);
    if (name === undefined) return skipped(c, f, 'secret name');
    pullSecrets.push(name);
  });
  if (!pullSecrets.length) return;
  return () => {
    const have: { name: string }[] = c.spec.imagePullSecrets ?? [];
    c.spec.imagePullSecrets = [...have, ...[...new Set(pullSecrets)].filter((n) => !have.some((h) => h.name === n)).map((name) => ({ name }))];
    c.notes.add(`image pull secrets ${[...new Set(pullSecrets)].join(', ')} are kept on the Pod but not used: images are not pulled on this machine`);
  };
}

/** securityContext: user and group ids, kept on the main container (as kfp sets them) with a note. */
export function securityContext(c: PlatformContext): Change | void {
  if (c.config['securityContext'] === undefined || c.config['securityContext'] === null) return;
  const f = 'securityContext';
  const e = entry(c.config[f], f);
  const sc: Record<string, unknown> = {};
  for (const k of ['runAsUser', 'runAsGroup'] as const) {
    const n = optInt(e, k, f);
    if (n === undefined) continue;
    if (n < 0 || n > 2147483647) fail(f, `${k} must be between 0 and 2147483647, got ${n}`);
    sc[k] = n;
  }
  const nonRoot = optBool(e, 'runAsNonRoot', f);
  if (nonRoot !== undefined) sc['runAsNonRoot'] = nonRoot;
  if (nonRoot && sc['runAsUser'] === 0) fail(f, 'runAsNonRoot is true but runAsUser is 0 (root)');
  if (!Object.keys(sc).length) return;
  return () => {
    // as kfp does: on the main container, with every capability dropped
    const m = c.main as Container & { securityContext?: Record<string, unknown> };
    m.securityContext = { ...(m.securityContext ?? {}), ...sc, capabilities: { drop: ['ALL'] } };
    const who = ['runAsUser', 'runAsGroup', 'runAsNonRoot'].filter((k) => sc[k] !== undefined).map((k) => `${k}=${String(sc[k])}`).join(', ');
    if (who) c.notes.add(`securityContext ${who} is kept on the container but not applied: containers run as the user that runs Skiff`);
  };
}
