// What a Notebook becomes, as Kubeflow's notebook-controller generates it: the Pod `<name>-0` its
// StatefulSet would run, and the Service `<name>` in front of it. There is no StatefulSet here: one
// replica, made and deleted by the controller, is all a notebook server ever has.
import type { Container, ContainerState, Pod, PodSpec, PodStatus } from '../../api/core-types.js';
import type { KObject, StoredObject } from '../../api/meta.js';
import { clone, ownerRefTo } from '../../api/meta.js';
import type { Notebook, NotebookCondition, NotebookStatus } from '../../api/notebooks.js';
import { NotebookNames, notebookPrefix } from '../../api/notebooks.js';
import { ownTokenEntry, tokenEnv, tokenEnvVar } from './token.js';
import { createHash } from 'node:crypto';

/** the StatefulSet label naming the template revision a Pod was made from */
export const revisionLabel = 'controller-revision-hash';

/** the revision of a Notebook's template, as a StatefulSet names it: `<name>-<hash>`. Only the
 *  user's template counts (not the Notebook's annotations, which culling rewrites every minute). */
export function templateRevision(nb: Notebook & StoredObject): string {
  const hash = createHash('sha256').update(JSON.stringify(nb.spec.template)).digest('hex').slice(0, 10);
  return `${nb.metadata.name}-${hash}`;
}

/** the Pod's name: the StatefulSet's only ordinal */
export function podNameOf(notebook: string): string {
  return `${notebook}-0`;
}

/** the stop annotation is honoured by its presence, whatever its value */
export function isStopped(nb: KObject): boolean {
  return nb.metadata.annotations?.[NotebookNames.stopped] !== undefined;
}

/** upstream copies the Notebook's annotations to the Pod, except its own and kubectl's */
function podAnnotations(nb: Notebook): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(nb.metadata.annotations ?? {})) {
    if (!k.includes('notebook') && !k.includes('kubectl')) out[k] = v;
  }
  return { ...out, ...(nb.spec.template.metadata?.annotations ?? {}) };
}

/** what rendering depends on besides the Notebook */
export interface RenderOptions {
  /** the server takes requests only with its token, from the Notebook's Secret (token.ts) */
  tenancy?: boolean;
}

function serverContainer(nb: Notebook, c: Container, opts: RenderOptions): Container {
  const out = clone(c);
  out.workingDir ??= '/home/jovyan';
  if (!out.ports?.length) out.ports = [{ name: 'notebook-port', containerPort: NotebookNames.defaultPort, protocol: 'TCP' }];
  // a prefix the user set wins, as upstream's controller leaves it
  if (!out.env?.some((e) => e.name === 'NB_PREFIX')) {
    out.env = [...(out.env ?? []), { name: 'NB_PREFIX', value: notebookPrefix(nb.metadata.namespace ?? 'default', nb.metadata.name ?? '') }];
  }
  // A JUPYTER_TOKEN the user set is kept, as their NB_PREFIX is: they set it for clients of their
  // own that reach the server with it, and it stays where they chose to keep it (a Secret of
  // theirs, or the spec in view of the namespace's viewers). The proxy and culling send whatever
  // the Pod got (serverToken), so either way the server answers them. An empty value is replaced:
  // it asks for a server without a token, which tenancy does not allow. A token from envFrom is
  // overridden too, since an env entry wins over envFrom, as in Kubernetes.
  if (opts.tenancy && !ownTokenEntry(out)) {
    out.env = [...(out.env ?? []).filter((e) => e.name !== tokenEnv), tokenEnvVar(nb.metadata.name ?? '')];
  }
  return out;
}

export function renderPod(nb: Notebook & StoredObject, opts: RenderOptions = {}): Pod {
  const name = nb.metadata.name;
  const spec: PodSpec = clone((nb as Notebook).spec.template.spec);
  spec.containers = spec.containers.map((c, i) => (i === 0 ? serverContainer(nb, c, opts) : c));
  spec.restartPolicy ??= 'Always';
  // a StatefulSet's Pod is known by its own name on the network
  spec.hostname ??= podNameOf(name);
  const withSecurity = spec as typeof spec & { securityContext?: Record<string, unknown> };
  // the Jupyter images' users group owns the home volume (upstream's ADD_FSGROUP default)
  withSecurity.securityContext ??= { fsGroup: 100 };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podNameOf(name),
      namespace: nb.metadata.namespace,
      labels: {
        ...(nb.metadata.labels ?? {}),
        ...(nb.spec.template.metadata?.labels ?? {}),
        [NotebookNames.statefulSetLabel]: name,
        [NotebookNames.nameLabel]: name,
        [revisionLabel]: templateRevision(nb),
      },
      annotations: podAnnotations(nb),
      ownerReferences: [ownerRefTo(nb)],
    },
    spec,
  };
}

/** the port the server listens on: the first container's first port, as upstream's Service targets it */
export function serverPort(nb: Notebook): number {
  return nb.spec.template.spec.containers[0]?.ports?.[0]?.containerPort ?? NotebookNames.defaultPort;
}

export function renderService(nb: Notebook & StoredObject): KObject {
  const name = nb.metadata.name;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: nb.metadata.namespace, ownerReferences: [ownerRefTo(nb)] },
    spec: {
      type: 'ClusterIP',
      selector: { [NotebookNames.statefulSetLabel]: name },
      ports: [{ name: `http-${name}`, port: NotebookNames.servicePort, targetPort: serverPort(nb), protocol: 'TCP' }],
    },
  };
}

function isReady(status: PodStatus | undefined): boolean {
  return status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/**
 * The Notebook's status from its Pod, as upstream reports it: readyReplicas (the StatefulSet's,
 * so 0 or 1), the server container's state, and the Pod's conditions mirrored. Upstream takes the
 * state of the container named as the Notebook; Kubeflow's own samples name it otherwise, so the
 * first container stands in when none has the Notebook's name.
 */
export function notebookStatus(nb: Notebook, pod: Pod | undefined): NotebookStatus {
  if (!pod?.status) return { conditions: [], readyReplicas: 0, containerState: {} };
  const statuses = pod.status.containerStatuses ?? [];
  const first = nb.spec.template.spec.containers[0]?.name;
  const server = statuses.find((s) => s.name === nb.metadata.name) ?? statuses.find((s) => s.name === first);
  const containerState: ContainerState = server ? clone(server.state) : {};
  const conditions: NotebookCondition[] = (pod.status.conditions ?? []).map((c) => ({
    type: c.type,
    status: c.status,
    ...(c.lastProbeTime ? { lastProbeTime: c.lastProbeTime } : {}),
    ...(c.lastTransitionTime ? { lastTransitionTime: c.lastTransitionTime } : {}),
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
  }));
  return { conditions, readyReplicas: pod.metadata.deletionTimestamp || !isReady(pod.status) ? 0 : 1, containerState };
}
