// The ClusterRoles and ClusterRoleBindings every cluster starts with, written at start-up when absent
// as kube-apiserver's bootstrap-roles post-start hook writes them (plugin/pkg/auth/authorizer/rbac/
// bootstrappolicy): cluster-admin for system:masters, the user-facing admin / edit / view built by
// aggregation, discovery and self-review for every authenticated user, public info for everyone,
// health and /metrics for system:monitoring.
// Then Kubeflow's: kubeflow-admin ⊃ kubeflow-edit ⊃ kubeflow-view, aggregated from the roles each
// Kubeflow component installs (manifests' common/kubeflow-roles, KFP's multi-user view-edit roles,
// training-operator's, Katib's, the notebook controller's, KServe's), so a Profile's owner and
// contributors get the verbs upstream gives them on the kinds Skiff serves. Then Kueue's, as its chart
// installs them: kueue-batch-admin-role and kueue-batch-user-role aggregated from a role per kind,
// the viewers of LocalQueues and Workloads also in Kubernetes' view, edit and admin, so a namespace's
// users read its queues and workloads while cluster admins manage ClusterQueues, Cohorts and flavors.
import { isConflict } from '../../api/errors.js';
import type { KObject } from '../../api/meta.js';
import { modelRegistryGroup, modelRegistryKinds } from '../../api/model-registry.js';
import { ClusterRoleBindingKind, ClusterRoleKind } from '../../api/rbac.js';
import type { Client } from '../../store/client.js';
import type { PolicyRule } from './rbac.js';

const rbacGroup = 'rbac.authorization.k8s.io';
const k8sAggregate = (to: string): string => `${rbacGroup}/aggregate-to-${to}`;
const kfAggregate = (to: string): string => `rbac.authorization.kubeflow.org/aggregate-to-${to}`;

const read = ['get', 'list', 'watch'];
const write = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const readWrite = [...read, ...write];

const rule = (apiGroups: string[], resources: string[], verbs: string[]): PolicyRule => ({ apiGroups, resources, verbs });
const urls = (nonResourceURLs: string[], verbs: string[]): PolicyRule => ({ nonResourceURLs, verbs });

interface RoleSpec {
  name: string;
  /** more labels, with their values */
  labels?: Record<string, string>;
  /** aggregate-to labels: the roles this one's rules flow into */
  into?: string[];
  /** the label whose ClusterRoles this one aggregates */
  aggregates?: string;
  rules?: PolicyRule[];
}

function clusterRole(r: RoleSpec, kubernetes: boolean): KObject {
  const labels: Record<string, string> = kubernetes ? { 'kubernetes.io/bootstrapping': 'rbac-defaults' } : { ...r.labels };
  for (const to of r.into ?? []) labels[to] = 'true';
  return {
    apiVersion: `${rbacGroup}/v1`, kind: 'ClusterRole',
    metadata: { name: r.name, labels, ...(kubernetes ? { annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' } } : {}) },
    ...(r.aggregates ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [r.aggregates]: 'true' } }] } } : {}),
    rules: r.rules ?? [],
  };
}

function clusterRoleBinding(name: string, role: string, groups: string[]): KObject {
  return {
    apiVersion: `${rbacGroup}/v1`, kind: 'ClusterRoleBinding',
    metadata: { name, labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' }, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' } },
    roleRef: { apiGroup: rbacGroup, kind: 'ClusterRole', name: role },
    subjects: groups.map((g) => ({ apiGroup: rbacGroup, kind: 'Group', name: g })),
  };
}

const kubernetesRoles: RoleSpec[] = [
  { name: 'cluster-admin', rules: [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])] },
  { name: 'system:discovery', rules: [urls(['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'], ['get'])] },
  { name: 'system:basic-user', rules: [rule(['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], ['create']), rule(['authentication.k8s.io'], ['selfsubjectreviews'], ['create'])] },
  { name: 'system:public-info-viewer', rules: [urls(['/healthz', '/livez', '/readyz', '/version', '/version/'], ['get'])] },
  // who may scrape /metrics besides cluster-admin: the group a Prometheus' credentials carry
  { name: 'system:monitoring', rules: [urls(['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*'], ['get'])] },
  { name: 'admin', aggregates: k8sAggregate('admin') },
  { name: 'edit', into: [k8sAggregate('admin')], aggregates: k8sAggregate('edit') },
  { name: 'view', into: [k8sAggregate('edit')], aggregates: k8sAggregate('view') },
  {
    name: 'system:aggregate-to-admin', into: [k8sAggregate('admin')],
    rules: [rule(['authorization.k8s.io'], ['localsubjectaccessreviews'], ['create']), rule([rbacGroup], ['rolebindings', 'roles'], readWrite)],
  },
  {
    name: 'system:aggregate-to-edit', into: [k8sAggregate('edit')],
    rules: [
      rule([''], ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy'], read),
      rule([''], ['serviceaccounts'], ['impersonate']),
      rule([''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy'], write),
      rule([''], ['pods/eviction'], ['create']),
      rule([''], ['configmaps', 'events', 'persistentvolumeclaims', 'replicationcontrollers', 'replicationcontrollers/scale', 'secrets', 'serviceaccounts', 'services', 'services/proxy'], write),
      rule([''], ['serviceaccounts/token'], ['create']),
      rule(['apps'], ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale'], write),
      rule(['autoscaling'], ['horizontalpodautoscalers'], write),
      rule(['batch'], ['cronjobs', 'jobs'], write),
      rule(['policy'], ['poddisruptionbudgets'], write),
      rule(['networking.k8s.io'], ['ingresses', 'networkpolicies'], write),
      rule(['coordination.k8s.io'], ['leases'], readWrite),
    ],
  },
  {
    name: 'system:aggregate-to-view', into: [k8sAggregate('view')],
    rules: [
      rule([''], ['configmaps', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status'], read),
      rule([''], ['bindings', 'events', 'limitranges', 'namespaces/status', 'pods/log', 'pods/status', 'replicationcontrollers/status', 'resourcequotas', 'resourcequotas/status'], read),
      rule([''], ['namespaces'], read),
      rule(['discovery.k8s.io'], ['endpointslices'], read),
      rule(['apps'], ['controllerrevisions', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'statefulsets', 'statefulsets/scale', 'statefulsets/status'], read),
      rule(['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'], read),
      rule(['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status'], read),
      rule(['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status'], read),
      rule(['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies'], read),
    ],
  },
];

// every training job kind Skiff serves: upstream's roles name paddlejobs since training-operator 1.7,
// and a contributor refused a JAXJob that Skiff runs would have no way to use it
const trainingJobs = ['mpijobs', 'tfjobs', 'pytorchjobs', 'mxjobs', 'xgboostjobs', 'paddlejobs', 'jaxjobs'];
const katibKinds = ['experiments', 'trials', 'suggestions'];
const kserveKinds = ['inferencegraphs', 'inferenceservices', 'servingruntimes', 'trainedmodels'];
const pipelines = 'pipelines.kubeflow.org';
const registryKinds = modelRegistryKinds.map((d) => d.plural);
/** the verbs of the HTTP methods an inference request may use (GET, HEAD, POST, PUT, PATCH, DELETE) */
const inferenceCalls = ['get', 'create', 'update', 'patch', 'delete'];

const kubeflowRoles: RoleSpec[] = [
  // common/kubeflow-roles: the three a Profile binds, and the Kubernetes kinds each includes
  { name: 'kubeflow-admin', aggregates: kfAggregate('kubeflow-admin') },
  { name: 'kubeflow-edit', into: [kfAggregate('kubeflow-admin')], aggregates: kfAggregate('kubeflow-edit') },
  { name: 'kubeflow-view', into: [kfAggregate('kubeflow-edit')], aggregates: kfAggregate('kubeflow-view') },
  {
    name: 'kubeflow-kubernetes-admin', into: [kfAggregate('kubeflow-admin')],
    rules: [rule(['authorization.k8s.io'], ['localsubjectaccessreviews'], ['create']), rule([rbacGroup], ['rolebindings', 'roles'], readWrite)],
  },
  {
    name: 'kubeflow-kubernetes-edit', into: [kfAggregate('kubeflow-edit')],
    rules: [
      rule([''], ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy'], read),
      rule([''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy'], write),
      rule([''], ['configmaps', 'endpoints', 'persistentvolumeclaims', 'replicationcontrollers', 'replicationcontrollers/scale', 'secrets', 'serviceaccounts', 'services', 'services/proxy'], write),
      rule(['apps'], ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale'], write),
      rule(['autoscaling'], ['horizontalpodautoscalers'], write),
      rule(['batch'], ['cronjobs', 'jobs'], write),
      rule(['policy'], ['poddisruptionbudgets'], write),
      rule(['networking.k8s.io'], ['ingresses', 'networkpolicies'], write),
    ],
  },
  {
    name: 'kubeflow-kubernetes-view', into: [kfAggregate('kubeflow-view')],
    rules: [
      rule([''], ['configmaps', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status'], read),
      rule([''], ['bindings', 'events', 'limitranges', 'namespaces/status', 'pods/log', 'pods/status', 'replicationcontrollers/status', 'resourcequotas', 'resourcequotas/status'], read),
      rule([''], ['namespaces'], read),
      rule(['apps'], ['controllerrevisions', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'statefulsets', 'statefulsets/scale', 'statefulsets/status'], read),
      rule(['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'], read),
      rule(['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status'], read),
      rule(['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status'], read),
      rule(['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies'], read),
    ],
  },
  // KFP multi-user: the API server asks SubjectAccessReviews in pipelines.kubeflow.org with these verbs
  { name: 'kubeflow-pipelines-edit', into: [kfAggregate('kubeflow-edit')], aggregates: kfAggregate('kubeflow-pipelines-edit') },
  { name: 'kubeflow-pipelines-view', into: [kfAggregate('kubeflow-pipelines-edit'), kfAggregate('kubeflow-view')], aggregates: kfAggregate('kubeflow-pipelines-view') },
  {
    name: 'aggregate-to-kubeflow-pipelines-edit', into: [kfAggregate('kubeflow-pipelines-edit')],
    rules: [
      rule([pipelines], ['pipelines', 'pipelineversions'], ['create', 'delete', 'update']),
      rule([pipelines], ['experiments'], ['archive', 'create', 'delete', 'unarchive']),
      rule([pipelines], ['runs'], ['archive', 'create', 'delete', 'retry', 'terminate', 'unarchive', 'reportMetrics', 'readArtifact']),
      rule([pipelines], ['jobs'], ['create', 'delete', 'disable', 'enable']),
      rule(['kubeflow.org'], ['scheduledworkflows'], ['*']),
      rule(['argoproj.io'], ['cronworkflows', 'workflows', 'workfloweventbindings', 'workflowtemplates'], ['*']),
    ],
  },
  {
    name: 'aggregate-to-kubeflow-pipelines-view', into: [kfAggregate('kubeflow-pipelines-view')],
    rules: [
      rule([pipelines], ['pipelines', 'pipelineversions', 'experiments', 'jobs'], ['get', 'list']),
      rule([pipelines], ['runs'], ['get', 'list', 'readArtifact']),
      rule(['kubeflow.org'], ['viewers'], ['create', 'get', 'delete']),
      rule([pipelines], ['visualizations'], ['create']),
    ],
  },
  // Skiff serves KFP's objects as resources too (`skiff run --watch`, `kubectl get runs -w`, the
  // dashboard's live pages): the REST verbs on them, beside KFP's own verbs above
  {
    name: 'skiff-pipelines-edit', into: [kfAggregate('kubeflow-pipelines-edit')],
    rules: [
      rule([pipelines], ['runs', 'recurringruns', 'pipelines', 'pipelineversions', 'experiments'], ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']),
      rule([pipelines], ['runtasks', 'taskcaches', 'runs/status', 'recurringruns/status'], ['get', 'list', 'watch']),
    ],
  },
  {
    name: 'skiff-pipelines-view', into: [kfAggregate('kubeflow-pipelines-view')],
    rules: [rule([pipelines], ['runs', 'recurringruns', 'pipelines', 'pipelineversions', 'experiments', 'runtasks', 'taskcaches', 'runs/status', 'recurringruns/status'], ['get', 'list', 'watch'])],
  },
  // training-operator's kubeflow overlay
  { name: 'kubeflow-training-admin', into: [kfAggregate('kubeflow-admin')], aggregates: kfAggregate('kubeflow-training-admin') },
  {
    name: 'kubeflow-training-edit', into: [kfAggregate('kubeflow-edit'), kfAggregate('kubeflow-training-admin')],
    rules: [rule(['kubeflow.org'], trainingJobs, ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']), rule(['kubeflow.org'], trainingJobs.map((j) => `${j}/status`), ['get'])],
  },
  {
    name: 'kubeflow-training-view', into: [kfAggregate('kubeflow-view')],
    rules: [rule(['kubeflow.org'], trainingJobs, read), rule(['kubeflow.org'], trainingJobs.map((j) => `${j}/status`), ['get'])],
  },
  // Katib
  { name: 'kubeflow-katib-admin', into: [kfAggregate('kubeflow-admin')], aggregates: kfAggregate('kubeflow-katib-admin') },
  {
    name: 'kubeflow-katib-edit', into: [kfAggregate('kubeflow-edit'), kfAggregate('kubeflow-katib-admin')],
    rules: [rule(['kubeflow.org'], katibKinds, readWrite), rule([''], ['pods'], ['list']), rule([''], ['pods/log'], ['get'])],
  },
  { name: 'kubeflow-katib-view', into: [kfAggregate('kubeflow-view')], rules: [rule(['kubeflow.org'], katibKinds, read)] },
  // the notebook controller
  { name: 'kubeflow-notebooks-admin', into: [kfAggregate('kubeflow-admin')], aggregates: kfAggregate('kubeflow-notebooks-admin') },
  {
    name: 'kubeflow-notebooks-edit', into: [kfAggregate('kubeflow-edit'), kfAggregate('kubeflow-notebooks-admin')],
    // notebooks/proxy: the notebook's server, reached through Skiff's proxy; it runs code, so only editors
    rules: [rule(['kubeflow.org'], ['notebooks', 'notebooks/status', 'notebooks/proxy'], readWrite)],
  },
  { name: 'kubeflow-notebooks-view', into: [kfAggregate('kubeflow-view')], rules: [rule(['kubeflow.org'], ['notebooks', 'notebooks/status'], read)] },
  // the Model Registry (src/server/model-registry/): its API authorizes the REST verbs on these kinds
  // in the registry's namespace; editors register, update and archive (it deletes nothing), viewers read
  { name: 'kubeflow-model-registry-edit', into: [kfAggregate('kubeflow-edit')], rules: [rule([modelRegistryGroup], registryKinds, readWrite)] },
  { name: 'kubeflow-model-registry-view', into: [kfAggregate('kubeflow-view')], rules: [rule([modelRegistryGroup], registryKinds, read)] },
  // KServe
  { name: 'kubeflow-kserve-admin', into: [kfAggregate('kubeflow-admin')], aggregates: kfAggregate('kubeflow-kserve-admin') },
  {
    name: 'kubeflow-kserve-edit', into: [kfAggregate('kubeflow-edit'), kfAggregate('kubeflow-kserve-admin')],
    rules: [rule(['serving.kserve.io'], kserveKinds, readWrite), rule(['serving.kserve.io'], ['inferenceservices/proxy'], inferenceCalls)],
  },
  // calling a model through Skiff's gateway is `inferenceservices/proxy` (as `services/proxy` in
  // kube): in Kubeflow every contributor of the namespace reaches its models through Istio, viewers too
  { name: 'kubeflow-kserve-view', into: [kfAggregate('kubeflow-view')], rules: [rule(['serving.kserve.io'], kserveKinds, read), rule(['serving.kserve.io'], ['inferenceservices/proxy'], inferenceCalls)] },
];

// Kueue's config/components/rbac, named with the chart's `kueue-` prefix
const kueue = 'kueue.x-k8s.io';
const batchAdmin = 'rbac.kueue.x-k8s.io/batch-admin';
const batchUser = 'rbac.kueue.x-k8s.io/batch-user';
const edits = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
/** into Kubernetes' user-facing roles: every one of them, or admin alone */
const allUserRoles = [k8sAggregate('view'), k8sAggregate('admin'), k8sAggregate('edit')];

/** the chart labels everything it installs */
const kueueChart = { 'app.kubernetes.io/name': 'kueue' };

function kueueRole(role: string, into: string[], rules: PolicyRule[]): RoleSpec {
  return { name: `kueue-${role}-role`, labels: { ...kueueChart, 'rbac.kueue.x-k8s.io/role': role }, into, rules };
}

/** a kind's editor and viewer; `status`: the kind has a status whose reading goes with it */
function kueueKindRoles(name: string, apiGroup: string, resource: string, status: boolean, editorInto: string[], viewerInto: string[]): RoleSpec[] {
  const statusRule = status ? [rule([apiGroup], [`${resource}/status`], ['get'])] : [];
  return [
    kueueRole(`${name}-editor`, editorInto, [rule([apiGroup], [resource], edits), ...statusRule]),
    kueueRole(`${name}-viewer`, viewerInto, [rule([apiGroup], [resource], read), ...statusRule]),
  ];
}

const kueueRoles: RoleSpec[] = [
  { name: 'kueue-batch-admin-role', labels: kueueChart, aggregates: batchAdmin },
  { name: 'kueue-batch-user-role', labels: kueueChart, aggregates: batchUser },
  // the queues and the flavors: cluster admins'; a namespace's admin reads them
  ...kueueKindRoles('clusterqueue', kueue, 'clusterqueues', true, [batchAdmin], [batchAdmin, k8sAggregate('admin')]),
  ...kueueKindRoles('cohort', kueue, 'cohorts', false, [batchAdmin], [batchAdmin, k8sAggregate('admin')]),
  ...kueueKindRoles('resourceflavor', kueue, 'resourceflavors', false, [batchAdmin], [batchAdmin, k8sAggregate('admin')]),
  // a namespace's LocalQueues and Workloads: its users read them
  ...kueueKindRoles('localqueue', kueue, 'localqueues', true, [batchAdmin], [batchAdmin, batchUser, ...allUserRoles]),
  ...kueueKindRoles('workload', kueue, 'workloads', true, [batchAdmin], [batchAdmin, batchUser, ...allUserRoles]),
  kueueRole('pending-workloads-cq-viewer', [batchAdmin, ...allUserRoles], [rule([`visibility.${kueue}`], ['clusterqueues/pendingworkloads'], read)]),
  kueueRole('pending-workloads-lq-viewer', [batchAdmin, batchUser, ...allUserRoles], [rule([`visibility.${kueue}`], ['localqueues/pendingworkloads'], read)]),
  // the integrations Skiff runs: batch users submit them
  ...kueueKindRoles('job', 'batch', 'jobs', true, [batchAdmin, batchUser], [batchAdmin, batchUser, ...allUserRoles]),
  ...['mpijob', 'pytorchjob', 'tfjob', 'xgboostjob', 'paddlejob', 'jaxjob'].flatMap((k) => kueueKindRoles(k, 'kubeflow.org', `${k}s`, true, [batchAdmin, batchUser], [batchAdmin, batchUser, ...allUserRoles])),
  // Skiff's: a Profile binds kubeflow-edit and -view, not Kubernetes' roles, so its contributors read
  // their namespace's queues and workloads through this one
  {
    name: 'skiff-kueue-view', into: [kfAggregate('kubeflow-view')],
    rules: [rule([kueue], ['localqueues', 'workloads'], read), rule([kueue], ['localqueues/status', 'workloads/status'], ['get']), rule([`visibility.${kueue}`], ['localqueues/pendingworkloads'], read)],
  },
];

/** every bootstrap object, roles before the bindings that name them */
export function bootstrapPolicy(): KObject[] {
  return [
    ...kubernetesRoles.map((r) => clusterRole(r, true)),
    ...kubeflowRoles.map((r) => clusterRole(r, false)),
    ...kueueRoles.map((r) => clusterRole(r, false)),
    clusterRoleBinding('cluster-admin', 'cluster-admin', ['system:masters']),
    clusterRoleBinding('system:discovery', 'system:discovery', ['system:authenticated']),
    clusterRoleBinding('system:basic-user', 'system:basic-user', ['system:authenticated']),
    clusterRoleBinding('system:public-info-viewer', 'system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
    clusterRoleBinding('system:monitoring', 'system:monitoring', ['system:monitoring']),
  ];
}

/**
 * Writes what is missing and leaves what exists as it is, so a changed or deleted-and-recreated role
 * keeps its owner's edits (kube-apiserver also adds missing rules to roles marked autoupdate; Skiff
 * only fills gaps). Returns how many objects it made.
 */
const autoupdate = 'rbac.authorization.kubernetes.io/autoupdate';

/**
 * What a bootstrap object already stored lacks, as kube-apiserver reconciles its bootstrap roles at
 * start-up: missing labels, rules (for roles whose rules are not aggregated), aggregation selectors and
 * binding subjects are added, nothing is taken away. undefined when nothing is missing.
 */
export function reconcileBootstrap(existing: KObject, desired: KObject): KObject | undefined {
  const key = (x: unknown): string => JSON.stringify(x);
  let changed = false;
  const out = structuredClone(existing) as KObject & Record<string, any>;
  const want = desired as KObject & Record<string, any>;
  const labels = { ...(out.metadata.labels ?? {}) };
  for (const [k, v] of Object.entries(desired.metadata.labels ?? {})) {
    if (labels[k] !== v) {
      labels[k] = v;
      changed = true;
    }
  }
  out.metadata = { ...out.metadata, labels };
  const union = (field: string): void => {
    const have: unknown[] = Array.isArray(out[field]) ? out[field] : [];
    const missing = ((want[field] ?? []) as unknown[]).filter((x) => !have.some((h) => key(h) === key(x)));
    if (missing.length) {
      out[field] = [...have, ...missing];
      changed = true;
    }
  };
  if (desired.kind === 'ClusterRole') {
    if (want.aggregationRule) {
      const have: unknown[] = out.aggregationRule?.clusterRoleSelectors ?? [];
      const missing = (want.aggregationRule.clusterRoleSelectors as unknown[]).filter((x) => !have.some((h) => key(h) === key(x)));
      if (missing.length || !out.aggregationRule) {
        out.aggregationRule = { clusterRoleSelectors: [...have, ...missing] };
        changed = true;
      }
    } else union('rules');
  } else union('subjects');
  return changed ? out : undefined;
}

/**
 * Writes the bootstrap policy: what is absent is made, and what Skiff made before is brought up to
 * date (a newer Skiff's roles reach an older data directory), unless its
 * `rbac.authorization.kubernetes.io/autoupdate` annotation is "false", as kube-apiserver leaves such
 * roles alone. Returns how many objects were made or updated.
 */
export async function ensureBootstrapPolicy(client: Client): Promise<number> {
  let made = 0;
  for (const obj of bootstrapPolicy()) {
    const kind = obj.kind === 'ClusterRole' ? ClusterRoleKind : ClusterRoleBindingKind;
    const existing = await client.find(kind, { name: obj.metadata.name ?? '' });
    try {
      if (existing) {
        if (existing.metadata.annotations?.[autoupdate] === 'false') continue;
        const updated = reconcileBootstrap(existing, obj);
        if (!updated) continue;
        await client.update(updated);
      } else {
        await client.create(obj);
      }
      made++;
    } catch (e) {
      if (!isConflict(e)) throw e;
    }
  }
  return made;
}
