// core/v1 kinds: Namespace, Pod, ConfigMap, Secret, PersistentVolumeClaim, Service, Node, Event,
// ServiceAccount (serviceaccount.ts), ResourceQuota (resourcequota.ts).
import type { Pod } from './core-types.js';
import { ApiError, StatusReason } from './errors.js';
import type { FieldError } from './errors.js';
import type { KindDef } from './registry.js';
import type { KObject, StoredObject } from './meta.js';
import { deepEqual } from './meta.js';
import { HamiAnnotation } from './gpu-sharing.js';
import { parseQuantity } from './quantity.js';
import { Validator, envVarName } from './validation.js';
import { ResourceQuotaKind } from './resourcequota.js';
import { serviceAccountKind } from './serviceaccount.js';

const restartPolicies = ['Always', 'OnFailure', 'Never'] as const;

export interface PodSpecOptions {
  /** allowed restart policies (a Job's template allows only OnFailure and Never) */
  restartPolicies?: readonly string[];
  /** a template inside another kind: images may be left empty there */
  template?: boolean;
}

function validateContainer(v: Validator, c: unknown, path: string, volumeNames: Set<string>, opts: PodSpecOptions): string | undefined {
  if (!v.object(path, c, true)) return undefined;
  v.dnsLabel(`${path}.name`, c.name);
  if (!opts.template) v.string(`${path}.image`, c.image, true);
  else v.string(`${path}.image`, c.image);
  v.stringArray(`${path}.command`, c.command);
  v.stringArray(`${path}.args`, c.args);
  v.string(`${path}.workingDir`, c.workingDir);
  if (v.array(`${path}.env`, c.env)) {
    c.env.forEach((e: any, i: number) => {
      const p = `${path}.env[${i}]`;
      if (!v.object(p, e, true)) return;
      if (v.string(`${p}.name`, e.name, true) && !envVarName.test(e.name)) {
        v.invalid(`${p}.name`, e.name, "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit");
      }
      if (e.value !== undefined) v.string(`${p}.value`, e.value);
      if (e.valueFrom !== undefined && v.object(`${p}.valueFrom`, e.valueFrom)) {
        const sources = ['fieldRef', 'resourceFieldRef', 'secretKeyRef', 'configMapKeyRef'].filter((k) => e.valueFrom[k] !== undefined);
        if (sources.length !== 1) v.invalid(`${p}.valueFrom`, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`');
        if (e.value !== undefined && e.value !== '') v.invalid(`${p}.valueFrom`, '', 'may not be specified when `value` is not empty');
        const f = e.valueFrom.fieldRef;
        if (f !== undefined && v.object(`${p}.valueFrom.fieldRef`, f)) v.string(`${p}.valueFrom.fieldRef.fieldPath`, f.fieldPath, true);
        for (const ref of ['secretKeyRef', 'configMapKeyRef'] as const) {
          const r = e.valueFrom[ref];
          if (r !== undefined && v.object(`${p}.valueFrom.${ref}`, r)) {
            v.string(`${p}.valueFrom.${ref}.name`, r.name, true);
            v.string(`${p}.valueFrom.${ref}.key`, r.key, true);
          }
        }
      }
    });
  }
  if (v.array(`${path}.envFrom`, c.envFrom)) {
    c.envFrom.forEach((e: any, i: number) => {
      const p = `${path}.envFrom[${i}]`;
      if (!v.object(p, e, true)) return;
      if (e.prefix !== undefined && v.string(`${p}.prefix`, e.prefix) && e.prefix && !envVarName.test(e.prefix)) {
        v.invalid(`${p}.prefix`, e.prefix, "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit");
      }
      const n = (e.configMapRef ? 1 : 0) + (e.secretRef ? 1 : 0);
      if (n !== 1) v.invalid(p, '', 'must specify one of: `configMapRef` or `secretRef`');
      if (e.configMapRef) v.string(`${p}.configMapRef.name`, e.configMapRef.name, true);
      if (e.secretRef) v.string(`${p}.secretRef.name`, e.secretRef.name, true);
    });
  }
  if (v.object(`${path}.resources`, c.resources)) {
    for (const kind of ['requests', 'limits'] as const) {
      const m = c.resources[kind];
      if (v.object(`${path}.resources.${kind}`, m)) for (const [k, q] of Object.entries(m)) v.quantity(`${path}.resources.${kind}[${k}]`, q);
    }
    const req = c.resources.requests ?? {};
    const lim = c.resources.limits ?? {};
    for (const k of Object.keys(req)) {
      if (k in lim && typeof req[k] === typeof lim[k] && qty(req[k]) > qty(lim[k])) {
        v.invalid(`${path}.resources.requests[${k}]`, req[k], `must be less than or equal to ${k} limit of ${lim[k]}`);
      }
    }
  }
  if (v.array(`${path}.ports`, c.ports)) {
    c.ports.forEach((port: any, i: number) => {
      const p = `${path}.ports[${i}]`;
      if (!v.object(p, port, true)) return;
      if (v.int(`${p}.containerPort`, port.containerPort, 1, true) && port.containerPort > 65535) v.invalid(`${p}.containerPort`, port.containerPort, 'must be between 1 and 65535, inclusive');
      if (port.name !== undefined && v.string(`${p}.name`, port.name) && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(port.name)) v.invalid(`${p}.name`, port.name, 'must be an IANA_SVC_NAME');
      v.oneOf(`${p}.protocol`, port.protocol, ['TCP', 'UDP', 'SCTP']);
    });
  }
  if (v.array(`${path}.volumeMounts`, c.volumeMounts)) {
    const seen = new Set<string>();
    c.volumeMounts.forEach((m: any, i: number) => {
      const p = `${path}.volumeMounts[${i}]`;
      if (!v.object(p, m, true)) return;
      if (v.string(`${p}.name`, m.name, true) && !volumeNames.has(m.name)) v.add(`${p}.name`, 'FieldValueNotFound', `Not found: "${m.name}"`);
      if (v.string(`${p}.mountPath`, m.mountPath, true)) {
        if (!m.mountPath.startsWith('/')) v.invalid(`${p}.mountPath`, m.mountPath, 'must be an absolute path');
        if (seen.has(m.mountPath)) v.invalid(`${p}.mountPath`, m.mountPath, 'must be unique');
        seen.add(m.mountPath);
      }
      if (m.subPath !== undefined && v.string(`${p}.subPath`, m.subPath) && (m.subPath.startsWith('/') || m.subPath.split('/').includes('..'))) {
        v.invalid(`${p}.subPath`, m.subPath, "must be a relative path without '..'");
      }
      v.bool(`${p}.readOnly`, m.readOnly);
    });
  }
  return typeof c.name === 'string' ? c.name : undefined;
}

function qty(q: unknown): number {
  return parseQuantity(q) ?? NaN;
}

function validateVolumes(v: Validator, vols: unknown, path: string): Set<string> {
  const names = new Set<string>();
  if (!v.array(path, vols)) return names;
  vols.forEach((vol: any, i: number) => {
    const p = `${path}[${i}]`;
    if (!v.object(p, vol, true)) return;
    v.dnsLabel(`${p}.name`, vol.name);
    if (typeof vol.name === 'string') {
      if (names.has(vol.name)) v.add(`${p}.name`, 'FieldValueDuplicate', `Duplicate value: "${vol.name}"`);
      names.add(vol.name);
    }
    const sources = volumeTypes.filter((k) => vol[k] !== undefined && vol[k] !== null);
    const unsupported = Object.keys(vol).filter((k) => k !== 'name' && !sources.includes(k));
    if (unsupported.length > 0) v.notSupported(`${p}.${unsupported[0]}`, unsupported[0], volumeTypes);
    else if (sources.length === 0) v.required(p, 'must specify a volume type');
    else if (sources.length > 1) v.add(`${p}.${sources[1]}`, 'FieldValueForbidden', 'Forbidden: may not specify more than 1 volume type');
    if (vol.hostPath !== undefined && v.object(`${p}.hostPath`, vol.hostPath)) {
      if (v.string(`${p}.hostPath.path`, vol.hostPath.path, true) && !vol.hostPath.path.startsWith('/')) v.invalid(`${p}.hostPath.path`, vol.hostPath.path, 'must be an absolute path');
      v.oneOf(`${p}.hostPath.type`, vol.hostPath.type, ['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice']);
    }
    if (vol.persistentVolumeClaim !== undefined && v.object(`${p}.persistentVolumeClaim`, vol.persistentVolumeClaim)) v.string(`${p}.persistentVolumeClaim.claimName`, vol.persistentVolumeClaim.claimName, true);
    if (vol.configMap !== undefined && v.object(`${p}.configMap`, vol.configMap)) v.string(`${p}.configMap.name`, vol.configMap.name, true);
    if (vol.secret !== undefined && v.object(`${p}.secret`, vol.secret)) v.string(`${p}.secret.secretName`, vol.secret.secretName, true);
    for (const src of ['configMap', 'secret'] as const) keyItems(v, vol[src]?.items, `${p}.${src}.items`);
    if (vol.downwardAPI !== undefined && v.object(`${p}.downwardAPI`, vol.downwardAPI)) downwardItems(v, vol.downwardAPI.items, `${p}.downwardAPI.items`);
    if (vol.projected !== undefined && v.object(`${p}.projected`, vol.projected) && v.array(`${p}.projected.sources`, vol.projected.sources)) {
      vol.projected.sources.forEach((src: any, j: number) => {
        const sp = `${p}.projected.sources[${j}]`;
        if (!v.object(sp, src, true)) return;
        const kinds = projectionTypes.filter((k) => src[k] !== undefined && src[k] !== null);
        const other = Object.keys(src).find((k) => !kinds.includes(k));
        if (other) v.notSupported(`${sp}.${other}`, other, projectionTypes);
        else if (kinds.length !== 1) v.add(sp, 'FieldValueForbidden', 'Forbidden: may not specify more than 1 volume type per source');
        if (src.configMap !== undefined && v.object(`${sp}.configMap`, src.configMap)) {
          v.string(`${sp}.configMap.name`, src.configMap.name, true);
          keyItems(v, src.configMap.items, `${sp}.configMap.items`);
        }
        if (src.secret !== undefined && v.object(`${sp}.secret`, src.secret)) {
          v.string(`${sp}.secret.name`, src.secret.name, true);
          keyItems(v, src.secret.items, `${sp}.secret.items`);
        }
        if (src.downwardAPI !== undefined && v.object(`${sp}.downwardAPI`, src.downwardAPI)) downwardItems(v, src.downwardAPI.items, `${sp}.downwardAPI.items`);
        const t = src.serviceAccountToken;
        if (t !== undefined && v.object(`${sp}.serviceAccountToken`, t)) {
          relativePath(v, `${sp}.serviceAccountToken.path`, t.path);
          // kube-apiserver's bounds
          if (t.expirationSeconds !== undefined && (typeof t.expirationSeconds !== 'number' || t.expirationSeconds < 600)) v.invalid(`${sp}.serviceAccountToken.expirationSeconds`, t.expirationSeconds, 'may not specify a duration less than 10 minutes');
          else if (t.expirationSeconds > 2 ** 32) v.invalid(`${sp}.serviceAccountToken.expirationSeconds`, t.expirationSeconds, 'may not specify a duration larger than 2^32 seconds');
        }
      });
    }
  });
  return names;
}

const volumeTypes = ['emptyDir', 'hostPath', 'persistentVolumeClaim', 'configMap', 'secret', 'downwardAPI', 'projected'];
const projectionTypes = ['secret', 'configMap', 'downwardAPI', 'serviceAccountToken'];

function relativePath(v: Validator, path: string, value: unknown): void {
  if (v.string(path, value, true) && ((value as string).startsWith('/') || (value as string).split('/').includes('..'))) v.invalid(path, value, "must be a relative path without '..'");
}

function keyItems(v: Validator, items: unknown, path: string): void {
  if (!v.array(path, items)) return;
  items.forEach((it: any, j: number) => {
    const ip = `${path}[${j}]`;
    if (!v.object(ip, it, true)) return;
    v.string(`${ip}.key`, it.key, true);
    relativePath(v, `${ip}.path`, it.path);
  });
}

function downwardItems(v: Validator, items: unknown, path: string): void {
  if (!v.array(path, items)) return;
  items.forEach((it: any, j: number) => {
    const ip = `${path}[${j}]`;
    if (!v.object(ip, it, true)) return;
    relativePath(v, `${ip}.path`, it.path);
    const refs = ['fieldRef', 'resourceFieldRef'].filter((k) => it[k] !== undefined && it[k] !== null);
    if (refs.length !== 1) v.invalid(ip, refs.join(', '), 'must specify exactly one of fieldRef and resourceFieldRef');
    if (it.fieldRef !== undefined && v.object(`${ip}.fieldRef`, it.fieldRef)) v.string(`${ip}.fieldRef.fieldPath`, it.fieldRef.fieldPath, true);
    if (it.resourceFieldRef !== undefined && v.object(`${ip}.resourceFieldRef`, it.resourceFieldRef)) v.string(`${ip}.resourceFieldRef.resource`, it.resourceFieldRef.resource, true);
  });
}

/** Validates a PodSpec at `path`; used by Pod and by every kind that carries a pod template. */
export function validatePodSpec(v: Validator, spec: unknown, path: string, opts: PodSpecOptions = {}): void {
  if (!v.object(path, spec, true)) return;
  const volumeNames = validateVolumes(v, spec.volumes, `${path}.volumes`);
  const names = new Set<string>();
  const checkList = (list: unknown, field: string, required: boolean): void => {
    if (!v.array(`${path}.${field}`, list, required)) return;
    if (required && list.length === 0) v.required(`${path}.${field}`);
    list.forEach((c, i) => {
      const name = validateContainer(v, c, `${path}.${field}[${i}]`, volumeNames, opts);
      if (name !== undefined) {
        if (names.has(name)) v.add(`${path}.${field}[${i}].name`, 'FieldValueDuplicate', `Duplicate value: "${name}"`);
        names.add(name);
      }
    });
  };
  checkList(spec.initContainers, 'initContainers', false);
  checkList(spec.containers, 'containers', true);
  const allowed = opts.restartPolicies ?? restartPolicies;
  if (spec.restartPolicy !== undefined) v.oneOf(`${path}.restartPolicy`, spec.restartPolicy, allowed);
  else if (!allowed.includes('Always')) v.required(`${path}.restartPolicy`, `Required value: valid values: ${allowed.map((a) => `"${a}"`).join(', ')}`);
  v.int(`${path}.terminationGracePeriodSeconds`, spec.terminationGracePeriodSeconds, 0);
  if (spec.activeDeadlineSeconds !== undefined) v.int(`${path}.activeDeadlineSeconds`, spec.activeDeadlineSeconds, 1);
  v.string(`${path}.nodeName`, spec.nodeName);
  v.stringMap(`${path}.nodeSelector`, spec.nodeSelector);
  if (spec.hostname !== undefined) v.dnsLabel(`${path}.hostname`, spec.hostname);
  if (spec.subdomain !== undefined) v.dnsLabel(`${path}.subdomain`, spec.subdomain);
}

export function defaultPodSpec(spec: any): void {
  if (!spec || typeof spec !== 'object') return;
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.schedulerName ??= 'default-scheduler';
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    if (c && typeof c === 'object') {
      for (const p of c.ports ?? []) if (p && typeof p === 'object') p.protocol ??= 'TCP';
    }
  }
}

const namespace: KindDef = {
  group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', singular: 'namespace', shortNames: ['ns'],
  namespaced: false, hasStatus: true,
  default(obj) {
    // as kube-apiserver (1.21+): every namespace carries its name as a label, which NetworkPolicies'
    // namespaceSelectors use
    if (obj.metadata.name) obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name };
    obj.spec ??= {};
    obj.spec.finalizers ??= ['kubernetes'];
    obj.status ??= { phase: 'Active' };
  },
  validate(obj) {
    const v = new Validator();
    v.dnsLabel('metadata.name', obj.metadata.name);
    return v.errors;
  },
  // the namespace controller empties it first, then clears spec.finalizers
  deletionBlocked: (obj) => (obj.spec?.finalizers ?? []).length > 0,
};

/** what the scheduler writes when it binds a Pod to cards (HAMi's and Skiff's) */
export const assignmentAnnotations = [HamiAnnotation.allocated, HamiAnnotation.toAllocate, HamiAnnotation.node, HamiAnnotation.time, 'skiff.dev/gpus'] as const;

function podUpdateErrors(obj: KObject, old: StoredObject): FieldError[] {
  const v = new Validator();
  const strip = (spec: any): any => {
    const s = JSON.parse(JSON.stringify(spec ?? {}));
    for (const c of [...(s.containers ?? []), ...(s.initContainers ?? [])]) delete c.image;
    delete s.activeDeadlineSeconds;
    // a Pod stored before the empty securityContext was defaulted gets it on its next write
    if (s.securityContext && typeof s.securityContext === 'object' && Object.keys(s.securityContext).length === 0) delete s.securityContext;
    if (!(old.spec?.nodeName)) delete s.nodeName;
    delete s.tolerations;
    // a Pod held by scheduling gates: gates may be removed and node selectors added (Kubernetes 1.27+)
    if (gated) {
      delete s.schedulingGates;
      delete s.nodeSelector;
    }
    return s;
  };
  const gated = ((old.spec?.schedulingGates as unknown[] | undefined)?.length ?? 0) > 0;
  if (gated) {
    const oldGates = new Set(((old.spec?.schedulingGates ?? []) as { name: string }[]).map((g) => g.name));
    for (const g of (obj.spec?.schedulingGates ?? []) as { name: string }[]) {
      if (!oldGates.has(g.name)) v.add('spec.schedulingGates', 'FieldValueForbidden', 'Forbidden: only deletion is allowed, but found new scheduling gate \'' + g.name + '\'');
    }
    for (const [k, val] of Object.entries((old.spec?.nodeSelector ?? {}) as Record<string, string>)) {
      if (obj.spec?.nodeSelector?.[k] !== val) v.add('spec.nodeSelector', 'FieldValueForbidden', 'Forbidden: only additions to spec.nodeSelector are allowed (no mutations or deletions)');
    }
  }
  if (!deepEqual(strip(obj.spec), strip(old.spec))) {
    v.add('spec', 'FieldValueForbidden', 'Forbidden: pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds` or `spec.tolerations` (only additions to existing tolerations)');
  }
  // the GPUs a placed Pod was given are the scheduler's to say: changed later, they would reach
  // other Pods' cards or hide shares from quota
  if (old.spec?.nodeName) {
    for (const k of assignmentAnnotations) {
      if (obj.metadata.annotations?.[k] !== old.metadata.annotations?.[k]) v.add(`metadata.annotations[${k}]`, 'FieldValueForbidden', 'Forbidden: the GPU assignment of a scheduled Pod may not change');
    }
  }
  return v.errors;
}

const pod: KindDef = {
  group: '', version: 'v1', kind: 'Pod', plural: 'pods', singular: 'pod', shortNames: ['po'],
  namespaced: true, hasStatus: true,
  default(obj) {
    defaultPodSpec(obj.spec);
    // as kube-apiserver defaults it: clients read it without a nil check (kubectl debug does)
    if (obj.spec && typeof obj.spec === 'object') obj.spec.securityContext ??= {};
    obj.status ??= { phase: 'Pending' };
  },
  validate(obj, old) {
    const v = new Validator();
    v.dnsSubdomain('metadata.name', obj.metadata.name);
    validatePodSpec(v, obj.spec, 'spec');
    if (old && v.errors.length === 0) return podUpdateErrors(obj, old);
    return v.errors;
  },
  // a Pod placed on a node is deleted for good only after its node stopped its processes
  deletionBlocked: (obj, opts) =>
    opts.gracePeriodSeconds !== 0 && Boolean(obj.spec?.nodeName) && !['Succeeded', 'Failed'].includes(obj.status?.phase),
};

function validateData(v: Validator, obj: KObject, field: 'data' | 'stringData' | 'binaryData'): void {
  const data = obj[field];
  if (!v.stringMap(field, data)) return;
  for (const k of Object.keys(data)) {
    if (!/^[-._a-zA-Z0-9]+$/.test(k) || k.length > 253) v.invalid(`${field}[${k}]`, k, "a valid config key must consist of alphanumeric characters, '-', '_' or '.'");
  }
}

const configMap: KindDef = {
  group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', singular: 'configmap', shortNames: ['cm'],
  namespaced: true, hasStatus: false,
  validate(obj) {
    const v = new Validator();
    v.dnsSubdomain('metadata.name', obj.metadata.name);
    validateData(v, obj, 'data');
    validateData(v, obj, 'binaryData');
    return v.errors;
  },
};

const secret: KindDef = {
  group: '', version: 'v1', kind: 'Secret', plural: 'secrets', singular: 'secret',
  namespaced: true, hasStatus: false,
  default(obj) {
    obj.type ??= 'Opaque';
    // stringData is write-only: it is merged into data, base64-encoded, as the API server does
    const sd = obj.stringData as Record<string, unknown> | undefined;
    if (sd && typeof sd === 'object') {
      const data = (obj.data ??= {}) as Record<string, string>;
      for (const [k, val] of Object.entries(sd)) if (typeof val === 'string') data[k] = Buffer.from(val).toString('base64');
      delete obj.stringData;
    }
  },
  validate(obj) {
    const v = new Validator();
    v.dnsSubdomain('metadata.name', obj.metadata.name);
    validateData(v, obj, 'data');
    const data = obj.data as Record<string, unknown> | undefined;
    if (data && typeof data === 'object') {
      for (const [k, val] of Object.entries(data)) {
        // padded standard base64, as the API server's decoder reads it: a length that is not a
        // multiple of four is refused there too (`illegal base64 data at input byte N`)
        if (typeof val === 'string' && (!/^[A-Za-z0-9+/]*={0,2}$/.test(val) || val.length % 4 !== 0)) v.invalid(`data[${k}]`, '<secret contents redacted>', 'must be base64-encoded');
      }
    }
    return v.errors;
  },
};

const pvc: KindDef = {
  group: '', version: 'v1', kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims', singular: 'persistentvolumeclaim', shortNames: ['pvc'],
  namespaced: true, hasStatus: true,
  default(obj) {
    obj.spec ??= {};
    obj.spec.volumeMode ??= 'Filesystem';
    obj.status ??= { phase: 'Pending' };
  },
  validate(obj) {
    const v = new Validator();
    v.dnsSubdomain('metadata.name', obj.metadata.name);
    if (v.object('spec', obj.spec, true)) {
      if (v.stringArray('spec.accessModes', obj.spec.accessModes)) {
        obj.spec.accessModes.forEach((m: string, i: number) => v.oneOf(`spec.accessModes[${i}]`, m, ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod']));
      }
      if (v.object('spec.resources', obj.spec.resources) && v.object('spec.resources.requests', obj.spec.resources.requests)) {
        v.quantity('spec.resources.requests[storage]', obj.spec.resources.requests.storage);
      }
      // "" asks for no class; any other name must be one a StorageClass could have
      if (typeof obj.spec.storageClassName === 'string' && obj.spec.storageClassName !== '') v.dnsSubdomain('spec.storageClassName', obj.spec.storageClassName);
    }
    return v.errors;
  },
};

const service: KindDef = {
  group: '', version: 'v1', kind: 'Service', plural: 'services', singular: 'service', shortNames: ['svc'],
  namespaced: true, hasStatus: true,
  default(obj) {
    obj.spec ??= {};
    obj.spec.type ??= 'ClusterIP';
    for (const p of obj.spec.ports ?? []) if (p && typeof p === 'object') p.protocol ??= 'TCP';
  },
  validate(obj) {
    const v = new Validator();
    v.dnsLabel('metadata.name', obj.metadata.name);
    if (v.object('spec', obj.spec, true)) {
      v.stringMap('spec.selector', obj.spec.selector);
      if (v.array('spec.ports', obj.spec.ports)) {
        obj.spec.ports.forEach((p: any, i: number) => {
          if (!v.object(`spec.ports[${i}]`, p, true)) return;
          if (v.int(`spec.ports[${i}].port`, p.port, 1, true) && p.port > 65535) v.invalid(`spec.ports[${i}].port`, p.port, 'must be between 1 and 65535, inclusive');
        });
      }
    }
    return v.errors;
  },
};

const node: KindDef = {
  group: '', version: 'v1', kind: 'Node', plural: 'nodes', singular: 'node', shortNames: ['no'],
  namespaced: false, hasStatus: true,
  validate(obj) {
    const v = new Validator();
    v.dnsSubdomain('metadata.name', obj.metadata.name);
    return v.errors;
  },
};

const event: KindDef = {
  group: '', version: 'v1', kind: 'Event', plural: 'events', singular: 'event', shortNames: ['ev'],
  namespaced: true, hasStatus: false,
  validate(obj) {
    const v = new Validator();
    v.dnsSubdomain('metadata.name', obj.metadata.name);
    v.object('involvedObject', obj.involvedObject, true);
    v.string('reason', obj.reason);
    v.oneOf('type', obj.type, ['Normal', 'Warning']);
    return v.errors;
  },
};

export const coreKinds: KindDef[] = [namespace, pod, configMap, secret, pvc, service, node, event, serviceAccountKind, ResourceQuotaKind];

/**
 * The container whose log `pods/<name>/log?container=` reads: the one named, or the Pod's only
 * container; refused as kube-apiserver refuses it (BadRequest) when there is no such container or
 * when the Pod has several and none is named.
 */
export function podLogContainer(pod: Pod, container: string | undefined): string {
  const name = pod.metadata.name;
  if (!container) {
    if (pod.spec.containers.length === 1) return pod.spec.containers[0]?.name ?? '';
    const init = pod.spec.initContainers ?? [];
    throw new ApiError(StatusReason.BadRequest, `a container name must be specified for pod ${name}, choose one of: [${pod.spec.containers.map((c) => c.name).join(' ')}]${init.length ? ` or one of the init containers: [${init.map((c) => c.name).join(' ')}]` : ''}`);
  }
  if (![...(pod.spec.initContainers ?? []), ...pod.spec.containers].some((c) => c.name === container)) {
    throw new ApiError(StatusReason.BadRequest, `container ${container} is not valid for pod ${name}`);
  }
  return container;
}
