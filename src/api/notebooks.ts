// kubeflow.org Notebook (Kubeflow's notebook-controller): a Pod template that becomes a notebook
// server. The upstream CRD serves v1 (storage), v1beta1 and v1alpha1 with one schema; a Notebook of
// an older version is stored as v1, as the API server would convert it. The CRD declares no printer
// columns, so `kubectl get notebooks` shows NAME and AGE. The served schema is upstream's plus
// `spec.template.metadata` (labels and annotations copied onto the Pod; scripts/gen-openapi.mjs adds it).
import type { ContainerState, PodTemplateSpec } from './core-types.js';
import { validatePodSpec } from './core.js';
import type { FieldError } from './errors.js';
import type { KObject } from './meta.js';
import type { KindDef } from './registry.js';
import { Validator } from './validation.js';

export const NotebookGroup = 'kubeflow.org';

/** The names the notebook-controller and Kubeflow's web apps agree on. */
export const NotebookNames = {
  /** present (any value, upstream writes an RFC 3339 time) = stopped: the server's Pod is deleted */
  stopped: 'kubeflow-resource-stopped',
  /** the URI the proxy sends instead of the `/notebook/<ns>/<name>/` prefix (e.g. `/` for code-server) */
  rewriteUri: 'notebooks.kubeflow.org/http-rewrite-uri',
  /** a JSON object of request headers the proxy sets (e.g. RStudio's X-RStudio-Root-Path) */
  headersRequestSet: 'notebooks.kubeflow.org/http-headers-request-set',
  /** written by culling: the server's last activity, RFC 3339 */
  lastActivity: 'notebooks.kubeflow.org/last-activity',
  lastActivityCheck: 'notebooks.kubeflow.org/last_activity_check_timestamp',
  /** the Pod's labels the controller sets */
  nameLabel: 'notebook-name',
  statefulSetLabel: 'statefulset',
  /** the port a Jupyter image serves on, and the Service's */
  defaultPort: 8888,
  servicePort: 80,
} as const;

/** the path prefix of a notebook's server: its NB_PREFIX, and where the proxy serves it */
export function notebookPrefix(namespace: string, name: string): string {
  return `/notebook/${namespace}/${name}`;
}

export interface NotebookCondition {
  type: string;
  status: string;
  lastProbeTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface NotebookStatus {
  conditions?: NotebookCondition[];
  readyReplicas?: number;
  containerState?: ContainerState;
}

export interface Notebook extends KObject {
  spec: { template: PodTemplateSpec };
  status?: NotebookStatus;
}

function validateNotebook(obj: KObject): FieldError[] {
  const v = new Validator();
  v.dnsLabel('metadata.name', obj.metadata.name);
  if (!v.object('spec', obj.spec, true)) return v.errors;
  const tmpl = obj.spec.template as unknown;
  if (!v.object('spec.template', tmpl, true)) return v.errors;
  if (v.object('spec.template.metadata', tmpl.metadata)) {
    v.labels('spec.template.metadata.labels', tmpl.metadata.labels);
    v.stringMap('spec.template.metadata.annotations', tmpl.metadata.annotations);
  }
  validatePodSpec(v, tmpl.spec, 'spec.template.spec', { template: true });
  // the controller runs the first container as the server: it needs an image
  const first = (tmpl.spec as { containers?: unknown[] } | undefined)?.containers?.[0] as { image?: unknown } | undefined;
  if (first && typeof first === 'object' && (first.image === undefined || first.image === '')) {
    v.required('spec.template.spec.containers[0].image', 'Required value: image must be set');
  }
  const ann = obj.metadata.annotations?.[NotebookNames.headersRequestSet];
  if (ann !== undefined && !headersOf(ann)) {
    v.invalid(`metadata.annotations[${NotebookNames.headersRequestSet}]`, ann, 'must be a JSON object of header names to string values');
  }
  return v.errors;
}

/** the headers of `notebooks.kubeflow.org/http-headers-request-set`, or undefined when it is no JSON object of strings */
export function headersOf(annotation: string): Record<string, string> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(annotation);
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(parsed)) {
    if (typeof val !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k) || /[\r\n]/.test(val)) return undefined;
    out[k] = val;
  }
  return out;
}

function notebookKind(version: string): KindDef {
  return {
    group: NotebookGroup, version, kind: 'Notebook', plural: 'notebooks', singular: 'notebook',
    namespaced: true, hasStatus: true,
    default(obj) {
      obj.apiVersion = `${NotebookGroup}/v1`;
    },
    validate: validateNotebook,
  };
}

export const NotebookKind = notebookKind('v1');
export const notebookKinds: KindDef[] = [NotebookKind, notebookKind('v1beta1'), notebookKind('v1alpha1')];
