// kubeflow.org Profile (Kubeflow's profile-controller): a cluster-scoped object naming a namespace,
// its owner, plugins and an optional ResourceQuota spec. The upstream CRD serves v1 (storage) and
// v1beta1 with the same schema; a v1beta1 Profile is stored as v1, as the API server would convert
// it. The CRD declares no printer columns, so `kubectl get profiles` shows NAME and AGE.
import type { FieldError } from './errors.js';
import type { KObject } from './meta.js';
import type { KindDef } from './registry.js';
import { ResourceQuotaKind } from './resourcequota.js';
import { Validator } from './validation.js';

export const ProfileGroup = 'kubeflow.org';

export interface ProfileSubject {
  kind: string;
  name: string;
  apiGroup?: string;
  namespace?: string;
}

export interface ProfileCondition {
  type?: string;
  status?: string;
  message?: string;
}

export interface ProfileObject extends KObject {
  spec?: {
    owner?: ProfileSubject;
    plugins?: { kind?: string; spec?: unknown }[];
    resourceQuotaSpec?: { hard?: Record<string, string | number>; scopes?: string[] };
  };
  status?: { conditions?: ProfileCondition[] };
}

function validateProfile(obj: KObject): FieldError[] {
  const v = new Validator();
  v.dnsLabel('metadata.name', obj.metadata.name);
  if (obj.spec === undefined || !v.object('spec', obj.spec)) return v.errors;
  const owner = obj.spec.owner as unknown;
  if (owner !== undefined && v.object('spec.owner', owner)) {
    v.string('spec.owner.kind', owner.kind, true);
    v.string('spec.owner.name', owner.name, true);
    v.string('spec.owner.apiGroup', owner.apiGroup);
    v.string('spec.owner.namespace', owner.namespace);
  }
  const plugins = obj.spec.plugins as unknown;
  if (plugins !== undefined && v.array('spec.plugins', plugins)) {
    plugins.forEach((p: unknown, i: number) => {
      if (!v.object(`spec.plugins[${i}]`, p, true)) return;
      v.string(`spec.plugins[${i}].kind`, p.kind);
      v.string(`spec.plugins[${i}].apiVersion`, p.apiVersion);
    });
  }
  const rq = obj.spec.resourceQuotaSpec as unknown;
  if (rq !== undefined && v.object('spec.resourceQuotaSpec', rq)) {
    // the same checks as the ResourceQuota it becomes, named by the Profile's path
    const errs = ResourceQuotaKind.validate?.({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'kf-resource-quota' }, spec: rq }) ?? [];
    for (const e of errs) v.add(e.field.replace(/^spec\./, 'spec.resourceQuotaSpec.'), e.type, e.message);
  }
  return v.errors;
}

function profileKind(version: string): KindDef {
  return {
    group: ProfileGroup, version, kind: 'Profile', plural: 'profiles', singular: 'profile',
    namespaced: false, hasStatus: true,
    default(obj) {
      obj.apiVersion = `${ProfileGroup}/v1`;
    },
    validate: validateProfile,
  };
}

export const ProfileKind = profileKind('v1');
export const ProfileV1beta1Kind = profileKind('v1beta1');
export const profileKinds: KindDef[] = [ProfileKind, ProfileV1beta1Kind];
