// MPIJob, both versions. kubeflow.org/v1 (Training Operator): a launcher Pod `<job>-launcher`,
// worker Pods, no Services, a ConfigMap with the hostfile (short names) and the remote-shell agent.
// kubeflow.org/v2beta1 (mpi-operator): one headless Service `<job>`, workers with hostname and
// subdomain so they resolve as `<pod>.<job>.<ns>.svc`, a hostfile of those names.
//
// On this machine there is no kubectl and no sshd between Pods: the launcher's MPI reaches the
// workers through the exec agent of exec-agent.ts (`/etc/mpi/kubexec.sh`, which runs a command in
// another Pod of the job). Both versions get that script and the hostfile in the ConfigMap
// `<job>-config`, mounted at /etc/mpi in the launcher and the workers; the launcher's container[0]
// gets the operator's variables and then the agent's (launcherEnv: entries already present win); a
// worker that would run an ssh daemon, or nothing, idles instead (workerCommand). So v2beta1 needs
// no SSH key Secret and none is rendered. Upstream's v1 `kubectl-delivery` init container and
// launcher ServiceAccount/Role/RoleBinding are not rendered either: they only deliver and
// authorise kubectl.
import type { Container, EnvVar, Pod, Volume } from '../../api/core-types.js';
import type { KObject } from '../../api/meta.js';
import { MPIJobV1Info, MPIJobV2Info, MPIv2Defaults } from '../../api/training.js';
import type { Rendered, ReplicaView, TrainingJob, TrainingKind } from './types.js';
import { TrainingLabels } from './types.js';
import { EXEC_AGENT_PATH, HOSTFILE_PATH, MPI_CONFIG_DIR, kubexecScript, launcherEnv, workerCommand } from './exec-agent.js';
import type { MpiImplementation } from './exec-agent.js';
import { env, jobName, jobNamespace, ownerRef, replicaCount, replicaLabels, replicaPod, replicaRestartPolicy, replicaSpec, viewOf } from './common.js';

export { MPI_CONFIG_DIR };
/** the remote-shell agent the launcher's MPI uses (OMPI_MCA_plm_rsh_agent, I_MPI_HYDRA_BOOTSTRAP_EXEC) */
export const MPI_AGENT_PATH = EXEC_AGENT_PATH;
export const MPI_HOSTFILE_PATH = HOSTFILE_PATH;
/** the volume that carries the ConfigMap `<job>-config` to /etc/mpi */
export const MPI_CONFIG_VOLUME = 'mpi-job-config';
export const MPI_V2_OPERATOR_NAME = 'mpi-operator';
/** upstream's commands for a worker without one (v1: wait to be exec'd into; v2beta1: sshd), before workerCommand */
export const MPI_V1_WORKER_DEFAULT_COMMAND = ['sleep', '365d'];
export const MPI_V2_WORKER_DEFAULT_COMMAND = ['/usr/sbin/sshd', '-De'];

function isGpuResource(key: string): boolean {
  return key.endsWith('.com/gpu') || key.includes('gpu');
}

function wantsGpu(c: Container | undefined): boolean {
  const r = c?.resources;
  return [...Object.keys(r?.limits ?? {}), ...Object.keys(r?.requests ?? {})].some(isGpuResource);
}

function configMap(job: TrainingJob, data: Record<string, string>): KObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${jobName(job)}-config`, namespace: jobNamespace(job), labels: { app: jobName(job) }, ownerReferences: [ownerRef(job)] },
    data,
  };
}

/**
 * The launcher's own identity, as mpi-operator makes it: a ServiceAccount `<job>-launcher`, a Role
 * allowing what `kubexec.sh` does (read Pods, exec into them) and its RoleBinding. With tenancy on,
 * `skiff exec` in the launcher authenticates with that account's token and is authorised by RBAC.
 */
function launcherIdentity(job: TrainingJob): KObject[] {
  const name = `${jobName(job)}-launcher`;
  const meta = { name, namespace: jobNamespace(job), labels: { app: jobName(job) }, ownerReferences: [ownerRef(job)] };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: meta,
      rules: [
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['pods/exec'], verbs: ['create'] },
      ],
    } as KObject,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: meta,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace: jobNamespace(job) }],
    } as KObject,
  ];
}

function configVolume(job: TrainingJob, items: { key: string; mode: number }[]): Volume {
  return { name: MPI_CONFIG_VOLUME, configMap: { name: `${jobName(job)}-config`, items: items.map((i) => ({ key: i.key, path: i.key, mode: i.mode })) } };
}

function mount(c: Container | undefined, name: string, mountPath: string): void {
  if (c) c.volumeMounts = [...(c.volumeMounts ?? []), { name, mountPath }];
}

function addVolume(pod: Pod, vol: Volume): void {
  pod.spec.volumes = [...(pod.spec.volumes ?? []), vol];
}

function hasEnv(c: Container | undefined, name: string): boolean {
  return (c?.env ?? []).some((e) => e.name === name);
}

/** the agent's launcher variables after the operator's: names the container already has are left alone */
function addAgentEnv(c: Container, impl: MpiImplementation): void {
  const have = new Set((c.env ?? []).map((e) => e.name));
  c.env = [...(c.env ?? []), ...launcherEnv(impl).filter((e) => !have.has(e.name))];
}

/** upstream's default command, then the local substitution of workerCommand (sshd or nothing → idle) */
function setWorkerCommand(c: Container, upstreamDefault: { command: string[]; args?: string[] }): void {
  if ((c.command ?? []).length === 0 && (c.args ?? []).length === 0) {
    c.command = [...upstreamDefault.command];
    if (upstreamDefault.args) c.args = [...upstreamDefault.args];
  }
  // `args: [/usr/sbin/sshd, ...]` without a command names the daemon too
  const sshdInArgs = (c.command ?? []).length === 0 && /(^|\/)sshd$/.test(c.args?.[0] ?? '');
  const next = sshdInArgs ? workerCommand(undefined, undefined) : workerCommand(c.command, c.args);
  if (next.command) c.command = next.command;
  else delete c.command;
  if (next.args) c.args = next.args;
  else delete c.args;
}

function slots(job: TrainingJob): number {
  const s = job.spec.slotsPerWorker;
  return typeof s === 'number' ? s : 1;
}

// ---- kubeflow.org/v1

/** v1 hostfile: `<job>-launcher slots=N` first when the launcher has a GPU, then each worker */
export function mpiV1Hostfile(job: TrainingJob): string {
  const name = jobName(job);
  const n = slots(job);
  const lines: string[] = [];
  if (wantsGpu(replicaSpec(job, MPIJobV1Info, 'Launcher')?.template?.spec?.containers?.[0])) lines.push(`${name}-launcher slots=${n}`);
  const workers = replicaCount(MPIJobV1Info, 'Worker', replicaSpec(job, MPIJobV1Info, 'Worker'));
  for (let i = 0; i < workers; i++) lines.push(`${name}-worker-${i} slots=${n}`);
  return lines.map((l) => `${l}\n`).join('');
}

/** v1 discover_hosts.sh (Horovod elastic): `echo <pod>:<slots>` for each Running worker */
export function mpiV1DiscoverHosts(job: TrainingJob, runningWorkers: string[]): string {
  return ['#!/bin/sh', ...[...runningWorkers].sort().map((p) => `echo ${p}:${slots(job)}`)].join('\n') + '\n';
}

const v1Items = [{ key: 'kubexec.sh', mode: 0o555 }, { key: 'hostfile', mode: 0o444 }, { key: 'discover_hosts.sh', mode: 0o555 }];

function renderV1(job: TrainingJob): Rendered {
  const info = MPIJobV1Info;
  const out: Rendered = { replicas: [], objects: [] };
  const name = jobName(job);
  const mainContainer = typeof job.spec.mainContainer === 'string' && job.spec.mainContainer ? job.spec.mainContainer : undefined;
  out.objects.push(configMap(job, {
    hostfile: mpiV1Hostfile(job),
    'kubexec.sh': kubexecScript({ namespace: jobNamespace(job), container: mainContainer }),
    'discover_hosts.sh': mpiV1DiscoverHosts(job, []),
  }));
  const launcher = replicaSpec(job, info, 'Launcher');
  if (launcher) {
    const rp = replicaRestartPolicy(info, 'Launcher', launcher);
    const labels = { ...replicaLabels(info, job, 'Launcher', 0), [TrainingLabels.jobRole]: 'master' };
    const pod = replicaPod(job, launcher, `${name}-launcher`, labels, rp);
    out.objects.push(...launcherIdentity(job));
    pod.spec.serviceAccountName ??= `${name}-launcher`;
    const c = pod.spec.containers[0];
    if (c) {
      const vars: EnvVar[] = [env('OMPI_MCA_plm_rsh_agent', MPI_AGENT_PATH), env('OMPI_MCA_orte_default_hostfile', MPI_HOSTFILE_PATH)];
      if (!pod.spec.containers.some(wantsGpu)) vars.push(env('NVIDIA_VISIBLE_DEVICES', ''), env('NVIDIA_DRIVER_CAPABILITIES', ''));
      if (!hasEnv(c, 'I_MPI_HYDRA_BOOTSTRAP')) vars.push(env('I_MPI_HYDRA_BOOTSTRAP', 'rsh'));
      if (!hasEnv(c, 'I_MPI_HYDRA_BOOTSTRAP_EXEC')) vars.push(env('I_MPI_HYDRA_BOOTSTRAP_EXEC', MPI_AGENT_PATH));
      c.env = [...(c.env ?? []), ...vars];
      addAgentEnv(c, 'OpenMPI');
      mount(c, MPI_CONFIG_VOLUME, MPI_CONFIG_DIR);
    }
    addVolume(pod, configVolume(job, v1Items));
    out.replicas.push({ type: 'Launcher', index: 0, pod, restartPolicy: rp });
  }
  const worker = replicaSpec(job, info, 'Worker');
  if (worker) {
    const rp = replicaRestartPolicy(info, 'Worker', worker);
    for (let i = 0; i < replicaCount(info, 'Worker', worker); i++) {
      const pod = replicaPod(job, worker, `${name}-worker-${i}`, replicaLabels(info, job, 'Worker', i), rp);
      const c = pod.spec.containers[0];
      // upstream: a worker without a command (whatever its args) sleeps until exec'd into
      if (c && (c.command ?? []).length === 0) {
        c.command = [MPI_V1_WORKER_DEFAULT_COMMAND[0]!];
        c.args = MPI_V1_WORKER_DEFAULT_COMMAND.slice(1);
      }
      if (c) setWorkerCommand(c, { command: MPI_V1_WORKER_DEFAULT_COMMAND });
      mount(c, MPI_CONFIG_VOLUME, MPI_CONFIG_DIR);
      addVolume(pod, configVolume(job, v1Items));
      out.replicas.push({ type: 'Worker', index: i, pod, restartPolicy: rp });
    }
  }
  return out;
}

// ---- kubeflow.org/v2beta1

function v2Spec(job: TrainingJob): { impl: string; slots: number; launcherAsWorker: boolean } {
  const s = job.spec as Record<string, any>;
  return {
    impl: typeof s.mpiImplementation === 'string' ? s.mpiImplementation : MPIv2Defaults.mpiImplementation,
    slots: slots(job),
    launcherAsWorker: s.runLauncherAsWorker === true,
  };
}

/** `<host>.<job>.<ns>.svc`: how a v2beta1 Pod is known through the job's Service */
export function mpiV2Fqdn(job: TrainingJob, host: string): string {
  return `${host}.${jobName(job)}.${jobNamespace(job)}.svc`;
}

function v2Hosts(job: TrainingJob): string[] {
  const name = jobName(job);
  const hosts: string[] = [];
  if (v2Spec(job).launcherAsWorker) hosts.push(mpiV2Fqdn(job, `${name}-launcher`));
  const workers = replicaCount(MPIJobV2Info, 'Worker', replicaSpec(job, MPIJobV2Info, 'Worker'));
  for (let i = 0; i < workers; i++) hosts.push(mpiV2Fqdn(job, `${name}-worker-${i}`));
  return hosts;
}

/** v2beta1 hostfile: OpenMPI `host slots=N`, Intel and MPICH `host:N`; the launcher first when it runs as a worker */
export function mpiV2Hostfile(job: TrainingJob): string {
  const { impl, slots: n } = v2Spec(job);
  return v2Hosts(job).map((h) => (impl === 'OpenMPI' ? `${h} slots=${n}\n` : `${h}:${n}\n`)).join('');
}

/** v2beta1 discover_hosts.sh: the launcher (when it runs as a worker), then each Running worker's FQDN, sorted */
export function mpiV2DiscoverHosts(job: TrainingJob, runningWorkers: string[]): string {
  const lines = ['#!/bin/sh'];
  if (v2Spec(job).launcherAsWorker) lines.push(`echo ${mpiV2Fqdn(job, `${jobName(job)}-launcher`)}`);
  for (const w of runningWorkers.map((p) => mpiV2Fqdn(job, p)).sort()) lines.push(`echo ${w}`);
  return lines.join('\n') + '\n';
}

/** the launcher's variables per MPI implementation, as the mpi-operator sets them */
export function mpiV2LauncherEnv(impl: string, slotsPerWorker: number): EnvVar[] {
  switch (impl) {
    case 'Intel':
      return [env('I_MPI_HYDRA_HOST_FILE', MPI_HOSTFILE_PATH), env('I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS', '-o ConnectionAttempts=10'), env('I_MPI_PERHOST', slotsPerWorker)];
    case 'MPICH':
      return [env('HYDRA_HOST_FILE', MPI_HOSTFILE_PATH), env('HYDRA_LAUNCH_EXTRA_ARGS', '-o ConnectionAttempts=10')];
    default:
      return [
        env('OMPI_MCA_orte_keep_fqdn_hostnames', 'true'),
        env('OMPI_MCA_orte_default_hostfile', MPI_HOSTFILE_PATH),
        env('OMPI_MCA_plm_rsh_args', '-o ConnectionAttempts=10'),
        env('OMPI_MCA_orte_set_default_slots', slotsPerWorker),
      ];
  }
}

function v2Labels(job: TrainingJob, role: 'launcher' | 'worker', index: number | undefined): Record<string, string> {
  const labels: Record<string, string> = {
    [TrainingLabels.operatorName]: MPI_V2_OPERATOR_NAME,
    [TrainingLabels.jobName]: jobName(job),
    [TrainingLabels.jobRole]: role,
  };
  if (index !== undefined) labels[TrainingLabels.replicaIndex] = String(index);
  return labels;
}

const v2Items = [{ key: 'hostfile', mode: 0o444 }, { key: 'discover_hosts.sh', mode: 0o555 }, { key: 'kubexec.sh', mode: 0o555 }];

function renderV2(job: TrainingJob): Rendered {
  const info = MPIJobV2Info;
  const out: Rendered = { replicas: [], objects: [] };
  const name = jobName(job);
  const ns = jobNamespace(job);
  const s = v2Spec(job);
  const serviceSpec: Record<string, unknown> = {
    clusterIP: 'None',
    selector: { [TrainingLabels.operatorName]: MPI_V2_OPERATOR_NAME, [TrainingLabels.jobName]: name },
  };
  if (s.launcherAsWorker) serviceSpec.publishNotReadyAddresses = true;
  out.objects.push({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns, labels: { app: name }, ownerReferences: [ownerRef(job)] },
    spec: serviceSpec,
  });
  out.objects.push(configMap(job, { hostfile: mpiV2Hostfile(job), 'discover_hosts.sh': mpiV2DiscoverHosts(job, []), 'kubexec.sh': kubexecScript({ namespace: ns }) }));

  const launcher = replicaSpec(job, info, 'Launcher');
  if (launcher) {
    const rp = replicaRestartPolicy(info, 'Launcher', launcher);
    const pod = replicaPod(job, launcher, `${name}-launcher`, v2Labels(job, 'launcher', s.launcherAsWorker ? 0 : undefined), rp);
    out.objects.push(...launcherIdentity(job));
    pod.spec.serviceAccountName ??= `${name}-launcher`;
    pod.spec.hostname = `${name}-launcher`;
    pod.spec.subdomain = name;
    const c = pod.spec.containers[0];
    if (c) {
      const vars = [env('K_MPI_JOB_ROLE', 'launcher'), ...mpiV2LauncherEnv(s.impl, s.slots)];
      if (!s.launcherAsWorker) vars.push(env('NVIDIA_VISIBLE_DEVICES', ''), env('NVIDIA_DRIVER_CAPABILITIES', ''));
      c.env = [...(c.env ?? []), ...vars];
      addAgentEnv(c, s.impl as MpiImplementation);
      mount(c, MPI_CONFIG_VOLUME, MPI_CONFIG_DIR);
    }
    addVolume(pod, configVolume(job, v2Items));
    out.replicas.push({ type: 'Launcher', index: 0, pod, restartPolicy: rp });
  }
  const worker = replicaSpec(job, info, 'Worker');
  if (worker) {
    const rp = replicaRestartPolicy(info, 'Worker', worker);
    for (let i = 0; i < replicaCount(info, 'Worker', worker); i++) {
      const podName = `${name}-worker-${i}`;
      const pod = replicaPod(job, worker, podName, v2Labels(job, 'worker', s.launcherAsWorker ? i + 1 : i), rp);
      pod.spec.hostname = podName;
      pod.spec.subdomain = name;
      (pod.spec as unknown as Record<string, unknown>).dnsConfig = { searches: [`${name}.${ns}.svc.cluster.local`] };
      const c = pod.spec.containers[0];
      if (c) {
        setWorkerCommand(c, { command: MPI_V2_WORKER_DEFAULT_COMMAND });
        c.env = [...(c.env ?? []), env('K_MPI_JOB_ROLE', 'worker')];
        mount(c, MPI_CONFIG_VOLUME, MPI_CONFIG_DIR);
      }
      addVolume(pod, configVolume(job, v2Items));
      out.replicas.push({ type: 'Worker', index: i, pod, restartPolicy: rp });
    }
  }
  return out;
}

/** the launcher's Pod Succeeded (v2beta1 upstream: its batch Job completed) */
function launcherSucceeded(_job: TrainingJob, views: ReplicaView[]): boolean {
  const l = viewOf(views, 'Launcher');
  return (l?.succeeded ?? 0) > 0 || (l?.pods ?? []).some((p) => p.phase === 'Succeeded');
}

export const mpiV1Kind: TrainingKind = {
  kind: MPIJobV1Info.kind,
  apiVersion: `${MPIJobV1Info.group}/${MPIJobV1Info.version}`,
  replicaSpecsField: MPIJobV1Info.replicaSpecsField,
  defaultContainer: MPIJobV1Info.defaultContainer ?? '',
  controllerName: MPIJobV1Info.controllerName,
  render: renderV1,
  succeeded: launcherSucceeded,
};

export const mpiV2Kind: TrainingKind = {
  kind: MPIJobV2Info.kind,
  apiVersion: `${MPIJobV2Info.group}/${MPIJobV2Info.version}`,
  replicaSpecsField: MPIJobV2Info.replicaSpecsField,
  defaultContainer: '',
  controllerName: MPI_V2_OPERATOR_NAME,
  render: renderV2,
  succeeded: launcherSucceeded,
};
