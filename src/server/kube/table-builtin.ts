// The columns kube-apiserver prints for Kubernetes' own kinds (its internalversion printers), so
// `kubectl get pods` on Skiff shows READY, STATUS and RESTARTS computed as on a cluster. Every column
// is generated, the wide ones (priority 1) included: kubectl hides those unless `-o wide`.
import { humanDuration } from '../../util/duration.js';
import { fieldDocs } from './table-docs.js';

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface RowCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface PrintedRow {
  cells: unknown[];
  conditions?: RowCondition[];
}

export interface BuiltinPrinter {
  columns: ColumnDefinition[];
  row(obj: any, now: number): PrintedRow;
}

function col(name: string, description: string, extra: { type?: string; format?: string; priority?: number } = {}): ColumnDefinition {
  return { name, type: extra.type ?? 'string', format: extra.format ?? '', description, priority: extra.priority ?? 0 };
}

const nameCol = col('Name', fieldDocs['ObjectMeta.name'], { format: 'name' });
const ageCol = col('Age', fieldDocs['ObjectMeta.creationTimestamp']);

/** the age of a timestamp, `<unknown>` when there is none */
export function since(ts: unknown, now: number): string {
  const t = typeof ts === 'string' && ts ? Date.parse(ts) : NaN;
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

function time(ts: unknown): number | undefined {
  const t = typeof ts === 'string' && ts ? Date.parse(ts) : NaN;
  return Number.isNaN(t) ? undefined : t;
}

const arr = (v: unknown): any[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const int = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : 0);

// ---------------------------------------------------------------- Pod

const podSucceeded: RowCondition[] = [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }];
const podFailed: RowCondition[] = [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }];

function conditionIs(conds: unknown, type: string): boolean {
  return arr(conds).some((c) => c?.type === type && c?.status === 'True');
}

/** the first condition of the type decides, as the printer's isPodInitializedConditionTrue reads it */
function firstConditionTrue(conds: unknown, type: string): boolean {
  const c = arr(conds).find((x) => x?.type === type);
  return c?.status === 'True';
}

/** a terminated state's words: its reason, else `Signal:N`, else `ExitCode:N` */
function terminatedReason(t: any, prefix = ''): string {
  if (str(t.reason)) return prefix + t.reason;
  if (int(t.signal) !== 0) return `${prefix}Signal:${int(t.signal)}`;
  return `${prefix}ExitCode:${int(t.exitCode)}`;
}

function printPod(pod: any, now: number): PrintedRow {
  const spec = pod.spec ?? {};
  const status = pod.status ?? {};
  const phase = str(status.phase);
  let reason = str(status.reason) || phase;
  for (const c of arr(status.conditions)) if (c?.type === 'PodScheduled' && c?.reason === 'SchedulingGated') reason = 'SchedulingGated';

  const inits = arr(spec.initContainers);
  const restartable = new Set(inits.filter((c) => c?.restartPolicy === 'Always').map((c) => c.name));
  const total = arr(spec.containers).length + restartable.size;
  let ready = 0;
  let restarts = 0;
  let sidecarRestarts = 0;
  let lastRestart: number | undefined;
  let lastSidecarRestart: number | undefined;
  const later = (a: number | undefined, b: number | undefined): number | undefined => (b !== undefined && (a === undefined || b > a) ? b : a);

  let initializing = false;
  const initStatuses = arr(status.initContainerStatuses);
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i] ?? {};
    restarts += int(c.restartCount);
    const finished = time(c.lastState?.terminated?.finishedAt);
    lastRestart = later(lastRestart, finished);
    const isSidecar = restartable.has(c.name);
    if (isSidecar) {
      sidecarRestarts += int(c.restartCount);
      lastSidecarRestart = later(lastSidecarRestart, finished);
    }
    const term = c.state?.terminated;
    const wait = c.state?.waiting;
    if (term && int(term.exitCode) === 0) continue;
    if (isSidecar && c.started === true) {
      if (c.ready) ready++;
      continue;
    }
    if (term) reason = terminatedReason(term, 'Init:');
    else if (wait && str(wait.reason) && wait.reason !== 'PodInitializing') reason = `Init:${wait.reason}`;
    else reason = `Init:${i}/${inits.length}`;
    initializing = true;
    break;
  }

  if (!initializing || firstConditionTrue(status.conditions, 'Initialized')) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    let errorReason = '';
    const statuses = arr(status.containerStatuses);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i] ?? {};
      restarts += int(c.restartCount);
      lastRestart = later(lastRestart, time(c.lastState?.terminated?.finishedAt));
      const wait = c.state?.waiting;
      const term = c.state?.terminated;
      if (wait && str(wait.reason)) {
        reason = wait.reason;
      } else if (term) {
        reason = terminatedReason(term);
        if (int(term.exitCode) !== 0) errorReason = reason;
      } else if (c.ready && c.state?.running) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed') {
      if (hasRunning && conditionIs(status.conditions, 'Ready')) reason = 'Running';
      else if (errorReason) reason = errorReason;
      else if (hasRunning) reason = 'NotReady';
    }
  }

  if (pod.metadata?.deletionTimestamp && status.reason === 'NodeLost') reason = 'Unknown';
  else if (pod.metadata?.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  let restartText = String(restarts);
  if (restarts !== 0 && lastRestart !== undefined) restartText = `${restarts} (${humanDuration(now - lastRestart)} ago)`;

  // a Pod written with podIP alone has podIPs = [podIP] once the API server converts it
  const ip = str(arr(status.podIPs)[0]?.ip) || str(status.podIP) || '<none>';
  const gates = arr(spec.readinessGates);
  let readinessGates = '<none>';
  if (gates.length) {
    let trueCount = 0;
    for (const g of gates) {
      const c = arr(status.conditions).find((x) => x?.type === g?.conditionType);
      if (c?.status === 'True') trueCount++;
    }
    readinessGates = `${trueCount}/${gates.length}`;
  }
  const row: PrintedRow = {
    cells: [str(pod.metadata?.name), `${ready}/${total}`, reason, restartText, since(pod.metadata?.creationTimestamp, now),
      ip, str(spec.nodeName) || '<none>', str(status.nominatedNodeName) || '<none>', readinessGates],
  };
  if (phase === 'Succeeded') row.conditions = podSucceeded;
  else if (phase === 'Failed') row.conditions = podFailed;
  return row;
}

// ---------------------------------------------------------------- Job

/** a label selector as kubectl writes one: requirements sorted by key, `in (a,b)`, `!key` */
export function formatLabelSelector(sel: any): string {
  if (sel === undefined || sel === null) return '<none>';
  const reqs: { key: string; text: string }[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) reqs.push({ key: k, text: `${k}=${String(v)}` });
  for (const e of arr(sel.matchExpressions)) {
    const key = str(e?.key);
    const values = [...arr(e?.values)].map(String).sort();
    const vals = values.length === 1 ? values[0] : values.join(',');
    switch (e?.operator) {
      case 'In': reqs.push({ key, text: `${key} in (${vals})` }); break;
      case 'NotIn': reqs.push({ key, text: `${key} notin (${vals})` }); break;
      case 'Exists': reqs.push({ key, text: key }); break;
      case 'DoesNotExist': reqs.push({ key, text: `!${key}` }); break;
      default: return '<error>';
    }
  }
  reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return reqs.map((r) => r.text).join(',') || '<none>';
}

function containerCells(podSpec: any): [string, string] {
  const cs = arr(podSpec?.containers);
  return [cs.map((c) => str(c?.name)).join(','), cs.map((c) => str(c?.image)).join(',')];
}

/** the first condition of the type decides, as the printer's hasJobCondition reads it */
function jobCondition(job: any, type: string): boolean {
  return firstConditionTrue(job.status?.conditions, type);
}

function printJob(job: any, now: number): PrintedRow {
  const spec = job.spec ?? {};
  const st = job.status ?? {};
  let completions: string;
  if (typeof spec.completions === 'number') completions = `${int(st.succeeded)}/${spec.completions}`;
  else if (int(spec.parallelism) > 1) completions = `${int(st.succeeded)}/1 of ${int(spec.parallelism)}`;
  else completions = `${int(st.succeeded)}/1`;
  const start = time(st.startTime);
  const end = time(st.completionTime);
  const duration = start === undefined ? '' : humanDuration((end ?? now) - start);
  let status = 'Running';
  if (jobCondition(job, 'Complete')) status = 'Complete';
  else if (jobCondition(job, 'Failed')) status = 'Failed';
  else if (job.metadata?.deletionTimestamp) status = 'Terminating';
  else if (jobCondition(job, 'Suspended')) status = 'Suspended';
  else if (jobCondition(job, 'FailureTarget')) status = 'FailureTarget';
  else if (jobCondition(job, 'SuccessCriteriaMet')) status = 'SuccessCriteriaMet';
  const [names, images] = containerCells(spec.template?.spec);
  return { cells: [str(job.metadata?.name), status, completions, duration, since(job.metadata?.creationTimestamp, now), names, images, formatLabelSelector(spec.selector)] };
}

// ---------------------------------------------------------------- Service

function serviceExternalIP(svc: any): string {
  const spec = svc.spec ?? {};
  const external = arr(spec.externalIPs).map(String);
  switch (spec.type) {
    case 'ClusterIP':
    case 'NodePort':
      return external.length ? external.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = [...new Set(arr(svc.status?.loadBalancer?.ingress).map((i) => str(i?.ip) || str(i?.hostname)).filter(Boolean))].sort();
      if (external.length) return [...lb, ...external].join(',');
      return lb.length ? lb.join(',') : '<pending>';
    }
    case 'ExternalName':
      return str(spec.externalName);
  }
  return '<unknown>';
}

function printService(svc: any, now: number): PrintedRow {
  const spec = svc.spec ?? {};
  const clusterIP = str(arr(spec.clusterIPs)[0]) || str(spec.clusterIP) || '<none>';
  const ports = arr(spec.ports).map((p) => (int(p?.nodePort) > 0 ? `${int(p?.port)}:${int(p?.nodePort)}/${str(p?.protocol)}` : `${int(p?.port)}/${str(p?.protocol)}`)).join(',') || '<none>';
  const selector = Object.entries(spec.selector ?? {}).map(([k, v]) => `${k}=${String(v)}`).sort().join(',') || '<none>';
  return { cells: [str(svc.metadata?.name), str(spec.type), clusterIP, serviceExternalIP(svc), ports, since(svc.metadata?.creationTimestamp, now), selector] };
}

// ---------------------------------------------------------------- Node

function printNode(node: any, now: number): PrintedRow {
  const ready = arr(node.status?.conditions).filter((c) => c?.type === 'Ready').pop();
  const status: string[] = [];
  if (ready) status.push(ready.status === 'True' ? 'Ready' : 'NotReady');
  else status.push('Unknown');
  if (node.spec?.unschedulable) status.push('SchedulingDisabled');
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(node.metadata?.labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/') && k.length > 'node-role.kubernetes.io/'.length) roles.add(k.slice('node-role.kubernetes.io/'.length));
    else if (k === 'kubernetes.io/role' && v !== '') roles.add(String(v));
  }
  const info = node.status?.nodeInfo ?? {};
  const address = (type: string): string => str(arr(node.status?.addresses).find((a) => a?.type === type)?.address) || '<none>';
  return {
    cells: [str(node.metadata?.name), status.join(','), [...roles].sort().join(',') || '<none>', since(node.metadata?.creationTimestamp, now), str(info.kubeletVersion),
      address('InternalIP'), address('ExternalIP'), str(info.osImage) || '<unknown>', str(info.kernelVersion) || '<unknown>', str(info.containerRuntimeVersion) || '<unknown>',
      gpuShares(node.metadata?.annotations?.['skiff.dev/gpu-shares'])],
  };
}

/** `2/20`: the GPU shares taken of all the node's cards, from the scheduler's summary annotation */
function gpuShares(summary: unknown): string {
  if (typeof summary !== 'string') return '<none>';
  let used = 0;
  let total = 0;
  for (const m of summary.matchAll(/(\d+)\/(\d+) shares/g)) {
    used += Number(m[1]);
    total += Number(m[2]);
  }
  return total ? `${used}/${total}` : '<none>';
}

// ---------------------------------------------------------------- Event

function printEvent(ev: any, now: number): PrintedRow {
  const first = ev.firstTimestamp ? since(ev.firstTimestamp, now) : since(ev.eventTime, now);
  let last = ev.lastTimestamp ? since(ev.lastTimestamp, now) : first;
  let count = int(ev.count);
  if (ev.series) {
    last = since(ev.series.lastObservedTime, now);
    count = int(ev.series.count);
  } else if (count === 0) {
    count = 1;
  }
  const io = ev.involvedObject ?? {};
  const target = str(io.name) ? `${str(io.kind).toLowerCase()}/${io.name}` : str(io.kind).toLowerCase();
  // core/v1 names the reporting controller `reportingComponent`
  const component = str(ev.source?.component) || str(ev.reportingComponent);
  const host = str(ev.source?.host) || str(ev.reportingInstance);
  const source = host ? `${component}, ${host}` : component;
  return { cells: [last, str(ev.type), str(ev.reason), target, str(io.fieldPath), source, str(ev.message).trim(), first, count, str(ev.metadata?.name)] };
}

// ---------------------------------------------------------------- storage and config

function accessModes(modes: unknown): string {
  const m = new Set(arr(modes));
  return [['ReadWriteOnce', 'RWO'], ['ReadOnlyMany', 'ROX'], ['ReadWriteMany', 'RWX'], ['ReadWriteOncePod', 'RWOP']].filter(([k]) => m.has(k)).map(([, v]) => v).join(',');
}

function printPVC(pvc: any, now: number): PrintedRow {
  const spec = pvc.spec ?? {};
  const phase = pvc.metadata?.deletionTimestamp ? 'Terminating' : str(pvc.status?.phase);
  let capacity = '';
  let modes = '';
  if (str(spec.volumeName)) {
    modes = accessModes(pvc.status?.accessModes);
    const storage = pvc.status?.capacity?.storage;
    capacity = storage === undefined || storage === null ? '0' : String(storage);
  }
  const annotated = pvc.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'];
  const storageClass = typeof annotated === 'string' ? annotated : str(spec.storageClassName);
  return {
    cells: [str(pvc.metadata?.name), phase, str(spec.volumeName), capacity, modes, storageClass, str(spec.volumeAttributesClassName) || '<unset>',
      since(pvc.metadata?.creationTimestamp, now), str(spec.volumeMode) || '<unset>'],
  };
}

// ---------------------------------------------------------------- RBAC

/** a timestamp as Go's time.RFC3339 in UTC: whole seconds, `Z` */
function rfc3339(ts: unknown): string {
  const t = time(ts);
  return t === undefined ? '' : new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** a binding's subjects by kind, as the printer's SubjectsStrings joins them (service accounts as namespace/name) */
function subjectsStrings(subjects: unknown): [string, string, string] {
  const users: string[] = [];
  const groups: string[] = [];
  const sas: string[] = [];
  for (const s of arr(subjects)) {
    if (s?.kind === 'User') users.push(str(s.name));
    else if (s?.kind === 'Group') groups.push(str(s.name));
    else if (s?.kind === 'ServiceAccount') sas.push(`${str(s.namespace)}/${str(s.name)}`);
  }
  return [users.join(', '), groups.join(', '), sas.join(', ')];
}

const roleColumns = [nameCol, col('Created At', fieldDocs['ObjectMeta.creationTimestamp'], { type: 'date' })];
const printRole = (r: any): PrintedRow => ({ cells: [str(r.metadata?.name), rfc3339(r.metadata?.creationTimestamp)] });
const roleRefDoc = 'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.';
const bindingColumns = (of: string): ColumnDefinition[] => [
  nameCol,
  col('Role', roleRefDoc),
  ageCol,
  col('Users', `Users in the ${of}`, { priority: 1 }),
  col('Groups', `Groups in the ${of}`, { priority: 1 }),
  col('ServiceAccounts', `ServiceAccounts in the ${of}`, { priority: 1 }),
];
function printBinding(b: any, now: number): PrintedRow {
  const ref = b.roleRef ?? {};
  return { cells: [str(b.metadata?.name), `${str(ref.kind)}/${str(ref.name)}`, since(b.metadata?.creationTimestamp, now), ...subjectsStrings(b.subjects)] };
}

const keys = (v: unknown): number => (v && typeof v === 'object' ? Object.keys(v).length : 0);

/** kube's printResourceQuota: `name: used/hard` for every limited name, limits.* in their own column */
function printResourceQuota(q: any, now: number): PrintedRow {
  const hard = (q.spec?.hard ?? {}) as Record<string, unknown>;
  const request: string[] = [];
  const limit: string[] = [];
  for (const name of Object.keys(hard).sort()) {
    const text = `${name}: ${str(q.status?.used?.[name]) || '0'}/${str(q.status?.hard?.[name]) || '0'}`;
    (name.split('.').length > 1 && name.startsWith('limits.') ? limit : request).push(text);
  }
  return { cells: [str(q.metadata?.name), since(q.metadata?.creationTimestamp, now), request.join(', '), limit.join(', ')] };
}

/** the description kube's printer gives POD-SELECTOR (extensions/v1beta1's NetworkPolicySpec.podSelector) */
const podSelectorDoc = 'Selects the pods to which this NetworkPolicy object applies. The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods.  In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.';

const printers: Record<string, BuiltinPrinter> = {
  '/ResourceQuota': {
    columns: [
      nameCol,
      ageCol,
      col('Request', 'Request represents a minimum amount of cpu/memory that a container may consume.'),
      col('Limit', 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.'),
    ],
    row: printResourceQuota,
  },
  '/Pod': {
    columns: [
      nameCol,
      col('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
      col('Status', 'The aggregate status of the containers in this pod.'),
      col('Restarts', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
      ageCol,
      col('IP', fieldDocs['PodStatus.podIP'], { priority: 1 }),
      col('Node', fieldDocs['PodSpec.nodeName'], { priority: 1 }),
      col('Nominated Node', fieldDocs['PodStatus.nominatedNodeName'], { priority: 1 }),
      col('Readiness Gates', fieldDocs['PodSpec.readinessGates'], { priority: 1 }),
    ],
    row: printPod,
  },
  'batch/Job': {
    columns: [
      nameCol,
      col('Status', 'Status of the job.'),
      col('Completions', fieldDocs['JobStatus.succeeded']),
      col('Duration', 'Time required to complete the job.'),
      ageCol,
      col('Containers', 'Names of each container in the template.', { priority: 1 }),
      col('Images', 'Images referenced by each container in the template.', { priority: 1 }),
      col('Selector', fieldDocs['JobSpec.selector'], { priority: 1 }),
    ],
    row: printJob,
  },
  '/Service': {
    columns: [
      nameCol,
      col('Type', fieldDocs['ServiceSpec.type']),
      col('Cluster-IP', fieldDocs['ServiceSpec.clusterIP']),
      col('External-IP', fieldDocs['ServiceSpec.externalIPs']),
      col('Port(s)', fieldDocs['ServiceSpec.ports']),
      ageCol,
      col('Selector', fieldDocs['ServiceSpec.selector'], { priority: 1 }),
    ],
    row: printService,
  },
  '/Node': {
    columns: [
      nameCol,
      col('Status', 'The status of the node'),
      col('Roles', 'The roles of the node'),
      ageCol,
      col('Version', fieldDocs['NodeSystemInfo.kubeletVersion']),
      col('Internal-IP', fieldDocs['NodeStatus.addresses'], { priority: 1 }),
      col('External-IP', fieldDocs['NodeStatus.addresses'], { priority: 1 }),
      col('OS-Image', fieldDocs['NodeSystemInfo.osImage'], { priority: 1 }),
      col('Kernel-Version', fieldDocs['NodeSystemInfo.kernelVersion'], { priority: 1 }),
      col('Container-Runtime', fieldDocs['NodeSystemInfo.containerRuntimeVersion'], { priority: 1 }),
      col('GPU-Shares', 'GPU shares taken of all the node\'s cards (HAMi: each card is split into deviceSplitCount shares)', { priority: 1 }),
    ],
    row: printNode,
  },
  '/Event': {
    columns: [
      col('Last Seen', fieldDocs['Event.lastTimestamp']),
      col('Type', fieldDocs['Event.type']),
      col('Reason', fieldDocs['Event.reason']),
      col('Object', fieldDocs['Event.involvedObject']),
      col('Subobject', fieldDocs['ObjectReference.fieldPath'], { priority: 1 }),
      col('Source', fieldDocs['Event.source'], { priority: 1 }),
      col('Message', fieldDocs['Event.message']),
      col('First Seen', fieldDocs['Event.firstTimestamp'], { priority: 1 }),
      col('Count', fieldDocs['Event.count'], { priority: 1 }),
      col('Name', fieldDocs['ObjectMeta.name'], { format: 'name', priority: 1 }),
    ],
    row: printEvent,
  },
  '/Namespace': {
    columns: [nameCol, col('Status', 'The status of the namespace'), ageCol],
    row: (ns, now) => ({ cells: [str(ns.metadata?.name), str(ns.status?.phase), since(ns.metadata?.creationTimestamp, now)] }),
  },
  '/Secret': {
    columns: [nameCol, col('Type', fieldDocs['Secret.type']), col('Data', fieldDocs['Secret.data']), ageCol],
    row: (s, now) => ({ cells: [str(s.metadata?.name), str(s.type), keys(s.data), since(s.metadata?.creationTimestamp, now)] }),
  },
  '/ConfigMap': {
    columns: [nameCol, col('Data', fieldDocs['ConfigMap.data']), ageCol],
    row: (cm, now) => ({ cells: [str(cm.metadata?.name), keys(cm.data) + keys(cm.binaryData), since(cm.metadata?.creationTimestamp, now)] }),
  },
  '/PersistentVolumeClaim': {
    columns: [
      nameCol,
      col('Status', fieldDocs['PersistentVolumeClaimStatus.phase']),
      col('Volume', fieldDocs['PersistentVolumeClaimSpec.volumeName']),
      col('Capacity', fieldDocs['PersistentVolumeClaimStatus.capacity']),
      col('Access Modes', fieldDocs['PersistentVolumeClaimStatus.accessModes']),
      col('StorageClass', 'StorageClass of the pvc'),
      col('VolumeAttributesClass', 'VolumeAttributesClass of the pvc'),
      ageCol,
      col('VolumeMode', fieldDocs['PersistentVolumeClaimSpec.volumeMode'], { priority: 1 }),
    ],
    row: printPVC,
  },
  'networking.k8s.io/NetworkPolicy': {
    columns: [nameCol, col('Pod-Selector', podSelectorDoc), ageCol],
    row: (np, now) => ({ cells: [str(np.metadata?.name), formatLabelSelector(np.spec?.podSelector ?? {}), since(np.metadata?.creationTimestamp, now)] }),
  },
  'rbac.authorization.k8s.io/Role': { columns: roleColumns, row: printRole },
  'rbac.authorization.k8s.io/ClusterRole': { columns: roleColumns, row: printRole },
  'rbac.authorization.k8s.io/RoleBinding': { columns: bindingColumns('roleBinding'), row: printBinding },
  'rbac.authorization.k8s.io/ClusterRoleBinding': { columns: bindingColumns('clusterRoleBinding'), row: printBinding },
};

/** kube-apiserver's printer for a Kubernetes kind, by API group and kind */
export function builtinPrinter(group: string, kind: string): BuiltinPrinter | undefined {
  return printers[`${group}/${kind}`];
}

/** the Name and Age columns every printer starts from */
export const commonColumns = { name: nameCol, age: ageCol };
