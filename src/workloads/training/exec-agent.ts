// How `mpirun` in an MPIJob's launcher Pod starts its daemons (orted) in the worker Pods on the local
// substrate. Upstream, MPIJob v1 does it with `kubectl exec` through /etc/mpi/kubexec.sh, and
// v2beta1 with ssh into an sshd that the worker runs. Here both use the v1 way: kubexec.sh calls
// `skiff exec`, which asks the API server (SKIFF_SERVER, set in every container by the kubelet) to
// run the command inside the worker's container (its environment, and its mount, PID and hostname
// namespaces). So the worker needs no sshd and the launcher no keys.
//
// What the renderer of MPIJobs puts into the Pods it renders (both versions):
//  - a ConfigMap `<job>-config` with `kubexec.sh` = kubexecScript({ namespace }) (mode 0555) and
//    `hostfile` (one line per worker, `<host> slots=N` for Open MPI), mounted at MPI_CONFIG_DIR
//    (so /etc/mpi/kubexec.sh and /etc/mpi/hostfile) in the launcher and the workers;
//  - the launcher's container[0] gets launcherEnv(implementation) (its own entries win over these);
//  - a worker whose command is an ssh daemon (v2beta1's `/usr/sbin/sshd -De`), or that has no
//    command at all, runs WORKER_IDLE_COMMAND instead (see workerCommand()).
import { fileURLToPath } from 'node:url';

/** where the MPI config map is mounted in the launcher and the workers */
export const MPI_CONFIG_DIR = '/etc/mpi';
/** the rsh agent mpirun calls: `kubexec.sh HOST COMMAND...` */
export const EXEC_AGENT_PATH = `${MPI_CONFIG_DIR}/kubexec.sh`;
export const HOSTFILE_PATH = `${MPI_CONFIG_DIR}/hostfile`;

/** The skiff CLI of this installation (dist/src/workloads/training/exec-agent.js -> bin/skiff.js). */
export const SKIFF_CLI = fileURLToPath(new URL('../../../../bin/skiff.js', import.meta.url));

/** The command line the agent runs, before its flags and the pod: node, the CLI, `exec`. The node
 *  binary is the server's own (a container's PATH need not have one). */
export const EXEC_AGENT: readonly string[] = [process.execPath, SKIFF_CLI, 'exec'];

/** how long the agent waits for a worker's container to be running (the launcher may start first) */
export const EXEC_AGENT_WAIT = '2m';

function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The text of kubexec.sh: `kubexec.sh [ssh options] HOST COMMAND...` runs COMMAND (joined, through
 * /bin/sh -c, as rsh does) in the Pod HOST names: a hostfile name may be the Pod's FQDN
 * (`<pod>.<subdomain>.<ns>.svc...`), so everything after the first dot is dropped. ssh-style options
 * that mpirun adds (`OMPI_MCA_plm_rsh_args`, e.g. `-o ConnectionAttempts=10`) are skipped. The
 * container is the worker's default one unless given.
 */
export function kubexecScript(opts: { namespace: string; container?: string }): string {
  const cmd = [...EXEC_AGENT.map(shq), '-n', shq(opts.namespace)];
  if (opts.container) cmd.push('-c', shq(opts.container));
  cmd.push('--pod-running-timeout', EXEC_AGENT_WAIT);
  return [
    '#!/bin/sh',
    '# rsh agent for mpirun: runs a command in another Pod of the job, as `kubectl exec` would (skiff exec)',
    'while [ $# -gt 0 ]; do',
    '  case "$1" in',
    '    -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;',
    '    -*) shift ;;',
    '    *) break ;;',
    '  esac',
    'done',
    'pod=${1%%.*}',
    'shift',
    // the preload library would send the CLI's connection to a port the launcher declares to itself
    `exec env -u LD_PRELOAD ${cmd.join(' ')} "$pod" -- /bin/sh -c "$*"`,
    '',
  ].join('\n');
}

export type MpiImplementation = 'OpenMPI' | 'Intel' | 'MPICH';

/**
 * What the launcher needs on top of Kubeflow's own variables, as env entries for container[0].
 * Open MPI: the rsh agent and hostfile; Pods are processes of this machine whose interface is the
 * `eth0` the preload library shows them (their Pod IP, in 127.0.0.0/8, which Open MPI's TCP
 * transport excludes by default); mpirun refuses root without the two ALLOW variables, and Pods run
 * as the server's user. Intel MPI and MPICH (Hydra): the same agent as their bootstrap.
 */
export function launcherEnv(impl: MpiImplementation = 'OpenMPI'): { name: string; value: string }[] {
  if (impl === 'Intel') {
    return [
      { name: 'I_MPI_HYDRA_BOOTSTRAP', value: 'rsh' },
      { name: 'I_MPI_HYDRA_BOOTSTRAP_EXEC', value: EXEC_AGENT_PATH },
      { name: 'I_MPI_HYDRA_HOST_FILE', value: HOSTFILE_PATH },
    ];
  }
  if (impl === 'MPICH') {
    return [
      { name: 'HYDRA_LAUNCHER', value: 'rsh' },
      { name: 'HYDRA_LAUNCHER_EXEC', value: EXEC_AGENT_PATH },
      { name: 'HYDRA_HOST_FILE', value: HOSTFILE_PATH },
    ];
  }
  return OPENMPI_LAUNCHER_ENV.map((e) => ({ ...e }));
}

export const OPENMPI_LAUNCHER_ENV: readonly { name: string; value: string }[] = [
  { name: 'OMPI_MCA_plm_rsh_agent', value: EXEC_AGENT_PATH },
  { name: 'OMPI_MCA_orte_default_hostfile', value: HOSTFILE_PATH },
  { name: 'OMPI_MCA_btl_tcp_if_include', value: 'eth0' },
  { name: 'OMPI_MCA_oob_tcp_if_include', value: 'eth0' },
  { name: 'OMPI_ALLOW_RUN_AS_ROOT', value: '1' },
  { name: 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', value: '1' },
];

/** what a worker runs while the launcher's mpirun execs its daemons into it */
export const WORKER_IDLE_COMMAND: readonly string[] = ['sleep', '365d'];

/** The worker's command: its own, unless it has none or it is an ssh daemon (there is no ssh here). */
export function workerCommand(command: string[] | undefined, args: string[] | undefined): { command?: string[]; args?: string[] } {
  if (!command?.length && !args?.length) return { command: [...WORKER_IDLE_COMMAND] };
  if (/(^|\/)sshd$/.test(command?.[0] ?? '')) return { command: [...WORKER_IDLE_COMMAND] };
  return { ...(command ? { command } : {}), ...(args ? { args } : {}) };
}
