// core/v1 ServiceAccount: who a Pod acts as. Its tokens are issued by the server (src/server/kube/
// tokens.ts); `automountServiceAccountToken: false` keeps them out of its Pods unless a Pod asks.
import type { KindDef } from './registry.js';
import { Validator } from './validation.js';

export const serviceAccountKind: KindDef = {
  group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', singular: 'serviceaccount', shortNames: ['sa'],
  namespaced: true, hasStatus: false,
  validate(obj) {
    const v = new Validator();
    v.dnsSubdomain('metadata.name', obj.metadata.name);
    v.bool('automountServiceAccountToken', obj.automountServiceAccountToken);
    for (const field of ['secrets', 'imagePullSecrets'] as const) {
      const list = obj[field] as unknown;
      if (!v.array(field, list)) continue;
      list.forEach((ref: unknown, i: number) => {
        if (v.object(`${field}[${i}]`, ref, true)) v.string(`${field}[${i}].name`, ref.name);
      });
    }
    return v.errors;
  },
};
