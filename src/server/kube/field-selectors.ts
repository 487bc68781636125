// The field selectors kube-apiserver accepts per kind (the field label conversions of k8s.io/kubernetes'
// pkg/apis/*/v1 and of apiextensions for custom resources). A selector on any other field is refused
// with the same 400 a cluster gives, so a query that works here works there.
import { ApiError, StatusReason } from '../../api/errors.js';
import type { KindDef } from '../../api/registry.js';
import { parseFieldSelector, parseLabelSelector } from '../../store/selectors.js';

/** built-in kinds with their own conversion: the fields beyond which they refuse, and how they word it */
const builtIn: Record<string, { fields: string[]; refuse?: (label: string) => string }> = {
  '/Pod': {
    fields: ['metadata.name', 'metadata.namespace', 'spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.podIPs', 'status.nominatedNodeName'],
  },
  '/Node': { fields: ['metadata.name', 'spec.unschedulable'] },
  '/Event': {
    fields: ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type', 'metadata.namespace', 'metadata.name'],
  },
  '/Namespace': { fields: ['status.phase', 'metadata.name'] },
  '/Secret': { fields: ['type', 'metadata.namespace', 'metadata.name'] },
  '/Service': { fields: ['metadata.namespace', 'metadata.name', 'spec.clusterIP', 'spec.type'] },
  'batch/Job': { fields: ['metadata.name', 'metadata.namespace', 'status.successful'], refuse: (l) => `field label "${l}" not supported for Job` },
};

function isBuiltInGroup(group: string): boolean {
  return group === '' || !group.includes('.') || group.endsWith('.k8s.io');
}

/** Throws kube-apiserver's 400 for the first field of the selector the kind does not select on. */
export function checkFieldSelector(def: KindDef, selector: string | undefined): void {
  if (!selector) return;
  const own = builtIn[`${def.group}/${def.kind}`];
  const builtin = isBuiltInGroup(def.group);
  for (const req of parseFieldSelector(selector)) {
    const label = req.key;
    if (own) {
      if (!own.fields.includes(label)) throw new ApiError(StatusReason.BadRequest, own.refuse?.(label) ?? `field label not supported: ${label}`);
    } else if (label !== 'metadata.name' && label !== 'metadata.namespace') {
      // the default conversion of built-in kinds, and the custom resources' one
      throw new ApiError(StatusReason.BadRequest, builtin ? `"${label}" is not a known field selector: only "metadata.name", "metadata.namespace"` : `field label not supported: ${label}`);
    }
  }
}

/**
 * The selectors of a list, watch or deletecollection, checked before anything starts, as
 * kube-apiserver decodes them with the other options: a bad one is a 400, never an event on a watch.
 */
export function checkSelectors(def: KindDef, opts: { labelSelector?: string; fieldSelector?: string }): void {
  parseLabelSelector(opts.labelSelector);
  checkFieldSelector(def, opts.fieldSelector);
}
