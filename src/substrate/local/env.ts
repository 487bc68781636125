// A container's environment as the kubelet builds it: env and envFrom from ConfigMaps and Secrets,
// downward-API field references, and $(VAR) expansion in values, command and args.
import type { Container, Pod } from '../../api/core-types.js';
import type { StoredObject } from '../../api/meta.js';
import { parseQuantity } from '../../api/quantity.js';

/** A reason a container cannot be configured; the Pod waits with CreateContainerConfigError. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export interface EnvSources {
  configMap(name: string): Promise<StoredObject | undefined>;
  secret(name: string): Promise<StoredObject | undefined>;
}

const validName = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** Kubernetes' $(VAR) expansion: `$$` escapes, unknown references stay as written. */
export function expand(input: string, vars: Record<string, string>): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i];
    if (ch === '$' && i + 1 < input.length) {
      const next = input[i + 1];
      if (next === '$') {
        out += '$';
        i++;
        continue;
      }
      if (next === '(') {
        const close = input.indexOf(')', i + 2);
        if (close > 0) {
          const name = input.slice(i + 2, close);
          if (Object.prototype.hasOwnProperty.call(vars, name)) {
            out += vars[name];
            i = close;
            continue;
          }
        }
      }
    }
    out += ch;
  }
  return out;
}

/** a downward API field of the Pod (env's fieldRef, a downwardAPI volume's item) */
export function fieldRef(pod: Pod, path: string): string {
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (m) return (m[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations)?.[m[2] ?? ''] ?? '';
  switch (path) {
    case 'metadata.name': return pod.metadata.name ?? '';
    case 'metadata.namespace': return pod.metadata.namespace ?? '';
    case 'metadata.uid': return pod.metadata.uid ?? '';
    case 'spec.nodeName': return pod.spec.nodeName ?? '';
    case 'spec.serviceAccountName': return pod.spec.serviceAccountName ?? 'default';
    case 'status.hostIP': return pod.status?.hostIP ?? '127.0.0.1';
    case 'status.hostIPs': return pod.status?.hostIP ?? '127.0.0.1';
    case 'status.podIP':
    case 'status.podIPs': return pod.status?.podIP ?? '';
  }
  throw new ConfigError(`unsupported fieldRef ${JSON.stringify(path)}`);
}

/** a container's resource limit or request, in units of the divisor (rounded up) */
export function resourceRef(pod: Pod, container: Container, ref: { resource: string; containerName?: string; divisor?: string }): string {
  const c = ref.containerName ? pod.spec.containers.find((x) => x.name === ref.containerName) ?? container : container;
  const [kind, res] = ref.resource.split('.') as ['limits' | 'requests', string];
  const raw = c.resources?.[kind]?.[res] ?? (kind === 'requests' ? c.resources?.limits?.[res] : undefined);
  const value = raw === undefined ? 0 : parseQuantity(raw) ?? 0;
  const divisor = parseQuantity(ref.divisor ?? '1') || 1;
  return String(Math.ceil(value / divisor));
}

function decode(secret: StoredObject, key: string): string | undefined {
  const v = (secret.data as Record<string, string> | undefined)?.[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
}

/** Builds the variables a container declares, in order (later ones may reference earlier ones). */
export async function containerEnv(pod: Pod, container: Container, src: EnvSources, base: Record<string, string>): Promise<Record<string, string>> {
  const ns = pod.metadata.namespace ?? 'default';
  const vars: Record<string, string> = { ...base };
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    if (from.configMapRef) {
      const cm = await src.configMap(from.configMapRef.name);
      if (!cm) {
        if (from.configMapRef.optional) continue;
        throw new ConfigError(`configmap "${from.configMapRef.name}" not found`);
      }
      for (const [k, v] of Object.entries((cm.data as Record<string, string>) ?? {})) if (validName.test(prefix + k)) vars[prefix + k] = v;
    }
    if (from.secretRef) {
      const s = await src.secret(from.secretRef.name);
      if (!s) {
        if (from.secretRef.optional) continue;
        throw new ConfigError(`secret "${from.secretRef.name}" not found`);
      }
      for (const k of Object.keys((s.data as Record<string, string>) ?? {})) if (validName.test(prefix + k)) vars[prefix + k] = decode(s, k) ?? '';
    }
  }
  for (const e of container.env ?? []) {
    const vf = e.valueFrom;
    if (!vf) {
      vars[e.name] = expand(e.value ?? '', vars);
    } else if (vf.fieldRef) {
      vars[e.name] = fieldRef(pod, vf.fieldRef.fieldPath);
    } else if (vf.resourceFieldRef) {
      vars[e.name] = resourceRef(pod, container, vf.resourceFieldRef);
    } else if (vf.configMapKeyRef) {
      const r = vf.configMapKeyRef;
      const cm = await src.configMap(r.name);
      const v = (cm?.data as Record<string, string> | undefined)?.[r.key];
      if (v === undefined) {
        if (r.optional) continue;
        throw new ConfigError(cm ? `couldn't find key ${r.key} in ConfigMap ${ns}/${r.name}` : `configmap "${r.name}" not found`);
      }
      vars[e.name] = v;
    } else if (vf.secretKeyRef) {
      const r = vf.secretKeyRef;
      const s = await src.secret(r.name);
      const v = s ? decode(s, r.key) : undefined;
      if (v === undefined) {
        if (r.optional) continue;
        throw new ConfigError(s ? `couldn't find key ${r.key} in Secret ${ns}/${r.name}` : `secret "${r.name}" not found`);
      }
      vars[e.name] = v;
    }
  }
  return vars;
}

/**
 * command + args with $(VAR) expanded; the environment's entrypoint stands in for a missing command.
 * As a container runtime does, an image without an entrypoint runs the args themselves (`kubectl run x
 * --image=python:3.11 -- python3 app.py` sets only args).
 */
export function containerArgv(container: Container, env: Record<string, string>, entrypoint?: string[]): string[] {
  const command = container.command ?? entrypoint;
  if ((!command || command.length === 0) && container.args?.length) return container.args.map((s) => expand(s, env));
  if (!command || command.length === 0) {
    throw new ConfigError(`container "${container.name}" has no command, and image "${container.image ?? ''}" names an environment without an entrypoint`);
  }
  return [...command, ...(container.args ?? [])].map((s) => expand(s, env));
}
