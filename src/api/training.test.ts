// The training kinds: every upstream example is accepted after defaulting and renders, variable
// for variable, the environment the operators inject (the expectations below are written from the
// operators' documented behaviour, per kind, from the raw example, not from the renderer); invalid
// jobs are rejected naming the field; v1 and v2beta1 MPIJobs share one stored resource.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { conformanceDir, corpusFiles } from '../conformance-path.js';
import { Client } from '../store/client.js';
import { SqliteStore } from '../store/sqlite/store.js';
import type { EnvVar } from './core-types.js';
import { ApiError } from './errors.js';
import type { FieldError } from './errors.js';
import { Kinds, defaultRegistry } from './index.js';
import type { KObject } from './meta.js';
import { clone } from './meta.js';
import { retiredTrainingKind } from './training.js';
import { trainingKindFor } from '../workloads/training/render.js';
import type { Rendered } from '../workloads/training/types.js';

const registry = defaultRegistry();
const corpus = join(conformanceDir(), 'training');

const yamlFiles = (dir: string): string[] => corpusFiles(dir);

interface Example { file: string; raw: KObject }

function examples(): Example[] {
  const out: Example[] = [];
  for (const file of yamlFiles(corpus)) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const raw = doc.toJS() as KObject | null;
      if (raw && typeof raw.apiVersion === 'string' && raw.apiVersion.startsWith('kubeflow.org/')) out.push({ file: relative(corpus, file), raw });
    }
  }
  return out;
}

/** defaults and validates as the store client would (uid assigned, namespace settled) */
function admit(raw: KObject): { job: KObject; errors: FieldError[] } {
  const job = clone(raw);
  job.metadata.namespace ??= 'default';
  job.metadata.uid = 'uid-1';
  const def = registry.forObject(job.apiVersion, job.kind);
  assert.ok(def, `${job.apiVersion} ${job.kind} is served`);
  def.default?.(job);
  return { job, errors: def.validate?.(job) ?? [] };
}

function render(job: KObject): Rendered {
  const k = trainingKindFor(job.apiVersion, job.kind);
  assert.ok(k, `${job.apiVersion} ${job.kind} renders`);
  return k.render(job as never);
}

const e = (name: string, value: string | number): EnvVar => ({ name, value: String(value) });
const podIp: EnvVar = { name: 'POD_IP_DUMMY', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } };

// ---- expectations, per kind, from the raw example

function rawSpecs(raw: KObject, field: string): Record<string, any> {
  const out: Record<string, any> = {};
  for (const [k, v] of Object.entries(raw.spec[field] ?? {})) out[k[0]!.toUpperCase() + k.slice(1)] = v;
  return out;
}
const count = (rs: any, dflt = 1): number => (rs ? (rs.replicas ?? dflt) : 0);
function port(rs: any, container: string, name: string, dflt: number): number {
  const c = (rs?.template?.spec?.containers ?? []).find((x: any) => x.name === container);
  return c?.ports?.find((p: any) => p.name === name)?.containerPort ?? dflt;
}

/** pod name → the variables the operator appends (to which containers: see `where`) */
type Expect = { env: Map<string, EnvVar[]>; where: 'all' | 'tensorflow' | 'first' };

function pytorchExpect(raw: KObject): Expect {
  const name = raw.metadata.name!;
  const s = rawSpecs(raw, 'pytorchReplicaSpecs');
  const total = count(s.Master) + count(s.Worker);
  const ep = raw.spec.elasticPolicy;
  const nproc: string | undefined = raw.spec.nprocPerNode ?? (ep?.nProcPerNode !== undefined ? undefined : 'auto');
  const mult = nproc !== undefined && /^\d+$/.test(nproc) ? Number(nproc) : 1;
  const env = new Map<string, EnvVar[]>();
  for (const [type, n] of [['master', count(s.Master)], ['worker', count(s.Worker)]] as const) {
    for (let i = 0; i < n; i++) {
      const vars = [e('PYTHONUNBUFFERED', '1')];
      if (s.Master) {
        const p = port(s.Master, 'pytorch', 'pytorchjob-port', 23456);
        const rank = type === 'master' ? i : i + 1;
        vars.push(e('MASTER_PORT', p), e('PET_MASTER_PORT', p), e('MASTER_ADDR', `${name}-master-0`), e('PET_MASTER_ADDR', `${name}-master-0`),
          e('WORLD_SIZE', total * mult), e('RANK', rank), e('PET_NODE_RANK', rank));
      }
      if (nproc !== undefined) vars.push(e('PET_NPROC_PER_NODE', nproc));
      if (ep) {
        const min = ep.minReplicas ?? ep.maxReplicas ?? count(s.Worker);
        const max = ep.maxReplicas ?? ep.minReplicas ?? count(s.Worker);
        vars.push(e('PET_RDZV_ENDPOINT', `${ep.rdzvHost ?? `${name}-worker-0`}:${ep.rdzvPort ?? port(s.Worker, 'pytorch', 'pytorchjob-port', 23456)}`),
          e('PET_RDZV_BACKEND', ep.rdzvBackend ?? 'c10d'), e('PET_NNODES', `${min}:${max}`));
        if (ep.maxRestarts !== undefined) vars.push(e('PET_MAX_RESTARTS', ep.maxRestarts));
      } else {
        vars.push(e('PET_NNODES', total));
      }
      env.set(`${name}-${type}-${i}`, vars);
    }
  }
  return { env, where: 'all' };
}

function tfExpect(raw: KObject): Expect {
  const name = raw.metadata.name!;
  const ns = raw.metadata.namespace ?? 'default';
  const s = rawSpecs(raw, 'tfReplicaSpecs');
  const types = Object.keys(s).map((t) => (t === 'Ps' ? 'PS' : t));
  const total = types.reduce((n, t) => n + count(s[t] ?? s[t[0] + t.slice(1).toLowerCase()]), 0);
  const env = new Map<string, EnvVar[]>();
  const cluster: Record<string, string[]> = {};
  for (const t of [...types].map((x) => x.toLowerCase()).sort()) {
    const rs = Object.entries(s).find(([k]) => k.toLowerCase() === t)?.[1];
    cluster[t] = Array.from({ length: count(rs) }, (_, i) => `${name}-${t}-${i}.${ns}.svc:${port(rs, 'tensorflow', 'tfjob-port', 2222)}`);
  }
  for (const [t, hosts] of Object.entries(cluster)) {
    hosts.forEach((_, i) => {
      const config = JSON.stringify({ cluster, task: { type: t, index: i }, environment: 'cloud' });
      env.set(`${name}-${t}-${i}`, total === 1 ? [] : [e('TF_CONFIG', config)]);
    });
  }
  return { env, where: 'tensorflow' };
}

function xgboostExpect(raw: KObject): Expect {
  const name = raw.metadata.name!;
  const s = rawSpecs(raw, 'xgbReplicaSpecs');
  const total = count(s.Master) + count(s.Worker);
  const env = new Map<string, EnvVar[]>();
  for (const [type, n] of [['master', count(s.Master)], ['worker', count(s.Worker)]] as const) {
    for (let i = 0; i < n; i++) {
      const vars = [e('MASTER_PORT', port(s.Master, 'xgboost', 'xgboostjob-port', 9999)), e('MASTER_ADDR', `${name}-master-0`), e('WORLD_SIZE', total),
        e('RANK', type === 'master' ? i : i + 1), e('PYTHONUNBUFFERED', '1')];
      if (total > 1) {
        vars.push(e('WORKER_PORT', port(s.Worker, 'xgboost', 'xgboostjob-port', 9999)),
          e('WORKER_ADDRS', Array.from({ length: total - 1 }, (_, w) => `${name}-worker-${w}`).join(',')));
      }
      env.set(`${name}-${type}-${i}`, vars);
    }
  }
  return { env, where: 'all' };
}

function paddleExpect(raw: KObject): Expect {
  const name = raw.metadata.name!;
  const s = rawSpecs(raw, 'paddleReplicaSpecs');
  const total = count(s.Master) + count(s.Worker);
  const env = new Map<string, EnvVar[]>();
  const rank0 = s.Master ? 'master' : 'worker';
  const p = port(s.Master ?? s.Worker, 'paddle', 'master', 36543);
  for (const [type, n] of [['master', count(s.Master)], ['worker', count(s.Worker)]] as const) {
    for (let i = 0; i < n; i++) {
      const vars: EnvVar[] = [e('PYTHONUNBUFFERED', '1'), e('PADDLE_JOB_ID', name), e('PADDLE_NNODES', total)];
      if (type === rank0 && i === 0) vars.push(podIp, e('PADDLE_MASTER', `$(POD_IP_DUMMY):${p}`));
      else vars.push(e('PADDLE_MASTER', `${name}-${rank0}-0:${p}`));
      if (s.Master) vars.push(type === 'master' ? e('PADDLE_SERVER_NUM', '1') : e('PADDLE_TRAINER_NUM', '1'));
      env.set(`${name}-${type}-${i}`, vars);
    }
  }
  return { env, where: 'all' };
}

function jaxExpect(raw: KObject): Expect {
  const name = raw.metadata.name!;
  const s = rawSpecs(raw, 'jaxReplicaSpecs');
  const n = count(s.Worker);
  const env = new Map<string, EnvVar[]>();
  for (let i = 0; i < n; i++) {
    env.set(`${name}-worker-${i}`, [e('PYTHONUNBUFFERED', '1'), e('COORDINATOR_PORT', port(s.Worker, 'jax', 'jaxjob-port', 6666)),
      e('COORDINATOR_ADDRESS', `${name}-worker-0`), e('NUM_PROCESSES', n), e('PROCESS_ID', i)]);
  }
  return { env, where: 'all' };
}

/**
 * Skiff's own launcher variables after the operator's (no ssh between Pods here: mpirun reaches the
 * workers through /etc/mpi/kubexec.sh); those the operator already set are not repeated.
 */
function localAgent(impl: string): EnvVar[] {
  if (impl === 'Intel') return [e('I_MPI_HYDRA_BOOTSTRAP', 'rsh'), e('I_MPI_HYDRA_BOOTSTRAP_EXEC', '/etc/mpi/kubexec.sh')];
  if (impl === 'MPICH') return [e('HYDRA_LAUNCHER', 'rsh'), e('HYDRA_LAUNCHER_EXEC', '/etc/mpi/kubexec.sh')];
  return [e('OMPI_MCA_plm_rsh_agent', '/etc/mpi/kubexec.sh'), e('OMPI_MCA_btl_tcp_if_include', 'eth0'), e('OMPI_MCA_oob_tcp_if_include', 'eth0'),
    e('OMPI_ALLOW_RUN_AS_ROOT', '1'), e('OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1')].filter((x) => impl !== 'v1' || x.name !== 'OMPI_MCA_plm_rsh_agent');
}

function mpiV1Expect(raw: KObject): Expect {
  const name = raw.metadata.name!;
  const s = rawSpecs(raw, 'mpiReplicaSpecs');
  const env = new Map<string, EnvVar[]>();
  env.set(`${name}-launcher`, [e('OMPI_MCA_plm_rsh_agent', '/etc/mpi/kubexec.sh'), e('OMPI_MCA_orte_default_hostfile', '/etc/mpi/hostfile'),
    e('NVIDIA_VISIBLE_DEVICES', ''), e('NVIDIA_DRIVER_CAPABILITIES', ''), e('I_MPI_HYDRA_BOOTSTRAP', 'rsh'), e('I_MPI_HYDRA_BOOTSTRAP_EXEC', '/etc/mpi/kubexec.sh'),
    ...localAgent('v1')]);
  for (let i = 0; i < count(s.Worker, 0); i++) env.set(`${name}-worker-${i}`, []);
  return { env, where: 'first' };
}

function mpiV2Expect(raw: KObject): Expect {
  const name = raw.metadata.name!;
  const s = rawSpecs(raw, 'mpiReplicaSpecs');
  const slots = raw.spec.slotsPerWorker ?? 1;
  const impl = raw.spec.mpiImplementation ?? 'OpenMPI';
  const env = new Map<string, EnvVar[]>();
  const launcher = [e('K_MPI_JOB_ROLE', 'launcher')];
  if (impl === 'OpenMPI') {
    launcher.push(e('OMPI_MCA_orte_keep_fqdn_hostnames', 'true'), e('OMPI_MCA_orte_default_hostfile', '/etc/mpi/hostfile'),
      e('OMPI_MCA_plm_rsh_args', '-o ConnectionAttempts=10'), e('OMPI_MCA_orte_set_default_slots', slots));
  } else if (impl === 'Intel') {
    launcher.push(e('I_MPI_HYDRA_HOST_FILE', '/etc/mpi/hostfile'), e('I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS', '-o ConnectionAttempts=10'), e('I_MPI_PERHOST', slots));
  } else {
    launcher.push(e('HYDRA_HOST_FILE', '/etc/mpi/hostfile'), e('HYDRA_LAUNCH_EXTRA_ARGS', '-o ConnectionAttempts=10'));
  }
  if (raw.spec.runLauncherAsWorker !== true) launcher.push(e('NVIDIA_VISIBLE_DEVICES', ''), e('NVIDIA_DRIVER_CAPABILITIES', ''));
  launcher.push(...localAgent(impl));
  env.set(`${name}-launcher`, launcher);
  for (let i = 0; i < count(s.Worker, 0); i++) env.set(`${name}-worker-${i}`, [e('K_MPI_JOB_ROLE', 'worker')]);
  return { env, where: 'first' };
}

function expectationFor(raw: KObject): Expect {
  switch (raw.kind) {
    case 'PyTorchJob': return pytorchExpect(raw);
    case 'TFJob': return tfExpect(raw);
    case 'XGBoostJob': return xgboostExpect(raw);
    case 'PaddleJob': return paddleExpect(raw);
    case 'JAXJob': return jaxExpect(raw);
    case 'MPIJob': return raw.apiVersion === 'kubeflow.org/v1' ? mpiV1Expect(raw) : mpiV2Expect(raw);
  }
  throw new Error(`no expectation for ${raw.kind}`);
}

/** the env a template container had before rendering */
function templateEnv(raw: KObject, type: string, containerName: string): EnvVar[] {
  const field = Object.keys(raw.spec).find((k) => k.endsWith('ReplicaSpecs'))!;
  const rs = Object.entries(raw.spec[field] as Record<string, any>).find(([k]) => k.toLowerCase() === type.toLowerCase())?.[1];
  return (rs?.template?.spec?.containers ?? []).find((x: any) => x.name === containerName)?.env ?? [];
}

describe('training kinds: the upstream examples', () => {
  const all = examples();
  it('finds the corpus: every job kind is there', () => {
    const kinds = new Set(all.map((x) => `${x.raw.apiVersion} ${x.raw.kind}`));
    for (const k of ['PyTorchJob', 'TFJob', 'XGBoostJob', 'PaddleJob', 'JAXJob', 'MPIJob']) assert.ok(kinds.has(`kubeflow.org/v1 ${k}`), `${k} examples in ${corpus}`);
    assert.ok(kinds.has('kubeflow.org/v2beta1 MPIJob'));
    assert.ok(all.length >= 25, `${all.length} examples`);
  });

  for (const { file, raw } of all) {
    it(`${file}: accepted after defaulting, renders the injected environment`, () => {
      const { job, errors } = admit(raw);
      assert.deepEqual(errors, []);
      const rendered = render(job);
      const expect = expectationFor(raw);
      const names = rendered.replicas.map((r) => r.pod.metadata.name);
      assert.deepEqual([...names].sort(), [...expect.env.keys()].sort(), 'one Pod per replica, upstream names');
      for (const r of rendered.replicas) {
        const want = expect.env.get(r.pod.metadata.name!)!;
        const containers = r.pod.spec.containers;
        const targets = expect.where === 'all' ? containers
          : expect.where === 'first' ? containers.slice(0, 1)
            : containers.filter((c) => c.name === 'tensorflow').slice(0, 1);
        for (const c of containers) {
          const injected = (c.env ?? []).slice(templateEnv(raw, r.type, c.name).length);
          assert.deepEqual(injected, targets.includes(c) ? want : [], `${r.pod.metadata.name} container ${c.name}`);
        }
        // every rendered Pod is one the API accepts
        const pod = clone(r.pod);
        Kinds.Pod.default?.(pod);
        assert.deepEqual(Kinds.Pod.validate?.(pod), [], `${r.pod.metadata.name} is a valid Pod`);
        assert.deepEqual(r.pod.metadata.ownerReferences, [{ apiVersion: raw.apiVersion, kind: raw.kind, name: raw.metadata.name, uid: 'uid-1', controller: true, blockOwnerDeletion: true }]);
        assert.equal(r.pod.spec.restartPolicy, r.restartPolicy === 'ExitCode' ? 'Never' : r.restartPolicy);
      }
      for (const o of rendered.objects) {
        const def = registry.forObject(o.apiVersion, o.kind);
        assert.ok(def);
        const obj = clone(o);
        def.default?.(obj);
        assert.deepEqual(def.validate?.(obj) ?? [], [], `${o.kind} ${o.metadata.name} is valid`);
      }
      const services = rendered.objects.filter((o) => o.kind === 'Service').map((o) => o.metadata.name).sort();
      if (raw.kind !== 'MPIJob') assert.deepEqual(services, [...names].sort(), 'a headless Service per replica');
      else if (raw.apiVersion === 'kubeflow.org/v1') assert.deepEqual(services, []);
      else assert.deepEqual(services, [raw.metadata.name]);
    });
  }
});

describe('training kinds: literal renderings', () => {
  const load = (rel: string): KObject => {
    const ex = examples().find((x) => x.file === rel);
    assert.ok(ex, rel);
    return admit(ex.raw).job;
  };

  it('pytorch/simple.yaml: defaults, labels, master env and the worker init container', () => {
    const job = load('pytorch/simple.yaml');
    assert.equal(job.spec.runPolicy.cleanPodPolicy, 'None');
    assert.equal(job.spec.nprocPerNode, 'auto');
    assert.deepEqual(job.spec.pytorchReplicaSpecs.Master.template.spec.containers[0].ports, [{ name: 'pytorchjob-port', containerPort: 23456 }]);
    const r = render(job);
    const master = r.replicas.find((x) => x.type === 'Master')!.pod;
    assert.deepEqual(master.metadata.labels, {
      'training.kubeflow.org/operator-name': 'pytorchjob-controller',
      'training.kubeflow.org/job-name': 'pytorch-simple',
      'training.kubeflow.org/replica-type': 'master',
      'training.kubeflow.org/replica-index': '0',
      'training.kubeflow.org/job-role': 'master',
    });
    assert.deepEqual(master.spec.containers[0]!.env, [
      e('PYTHONUNBUFFERED', '1'), e('MASTER_PORT', '23456'), e('PET_MASTER_PORT', '23456'), e('MASTER_ADDR', 'pytorch-simple-master-0'),
      e('PET_MASTER_ADDR', 'pytorch-simple-master-0'), e('WORLD_SIZE', '2'), e('RANK', '0'), e('PET_NODE_RANK', '0'),
      e('PET_NPROC_PER_NODE', 'auto'), e('PET_NNODES', '2'),
    ]);
    assert.equal(master.spec.initContainers, undefined);
    const worker = r.replicas.find((x) => x.type === 'Worker')!.pod;
    assert.equal(worker.metadata.labels?.['training.kubeflow.org/job-role'], undefined);
    const init = worker.spec.initContainers?.[0];
    assert.equal(init?.name, 'init-pytorch');
    assert.equal(init?.image, 'alpine:3.10');
    assert.deepEqual(init?.resources, { limits: { cpu: '100m', memory: '20Mi' } });
    assert.match(init!.command![2]!, /seq 100.*getent hosts pytorch-simple-master-0.*sleep 2/);
    assert.equal(worker.spec.restartPolicy, 'OnFailure');
  });

  it('pytorch/cpu-demo: an integer nprocPerNode multiplies WORLD_SIZE', () => {
    const env = render(load('pytorch/cpu-demo/demo.yaml')).replicas[1]!.pod.spec.containers[0]!.env!;
    assert.deepEqual(env.find((x) => x.name === 'WORLD_SIZE'), e('WORLD_SIZE', '4'));
    assert.deepEqual(env.find((x) => x.name === 'PET_NPROC_PER_NODE'), e('PET_NPROC_PER_NODE', '2'));
  });

  it('pytorch/elastic/echo: worker-only, elastic variables, worker-0 holds the master role', () => {
    const job = load('pytorch/elastic/echo/echo.yaml');
    const r = render(job);
    const w0 = r.replicas[0]!.pod;
    assert.deepEqual(w0.spec.containers[0]!.env, [
      e('LOGLEVEL', 'DEBUG'), e('PYTHONUNBUFFERED', '1'), e('PET_NPROC_PER_NODE', 'auto'),
      e('PET_RDZV_ENDPOINT', 'elastic-example-echo-worker-0:23456'), e('PET_RDZV_BACKEND', 'c10d'), e('PET_NNODES', '1:2'), e('PET_MAX_RESTARTS', '100'),
    ]);
    assert.equal(w0.metadata.labels?.['training.kubeflow.org/job-role'], 'master');
    assert.equal(r.replicas[1]!.pod.metadata.labels?.['training.kubeflow.org/job-role'], undefined);
    assert.equal(w0.spec.initContainers, undefined);
    assert.equal(w0.spec.restartPolicy, 'OnFailure', 'PyTorch defaults to OnFailure');
  });

  it('tensorflow/dist-mnist: TF_CONFIG exactly, in the tensorflow container only', () => {
    const r = render(load('tensorflow/dist-mnist/tf_job_mnist.yaml'));
    const w1 = r.replicas.find((x) => x.pod.metadata.name === 'dist-mnist-for-e2e-test-worker-1')!.pod;
    assert.deepEqual(w1.spec.containers[0]!.env, [{
      name: 'TF_CONFIG',
      value: '{"cluster":{"chief":["dist-mnist-for-e2e-test-chief-0.default.svc:2222"],"ps":["dist-mnist-for-e2e-test-ps-0.default.svc:2222"],' +
        '"worker":["dist-mnist-for-e2e-test-worker-0.default.svc:2222","dist-mnist-for-e2e-test-worker-1.default.svc:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"}',
    }]);
    assert.equal(r.replicas.find((x) => x.type === 'Chief')!.pod.metadata.labels?.['training.kubeflow.org/job-role'], 'master');
  });

  it('tensorflow/mnist_with_summaries: a single replica gets no TF_CONFIG; successPolicy defaults to ""', () => {
    const job = load('tensorflow/mnist_with_summaries/tf_job_mnist.yaml');
    assert.equal(job.spec.successPolicy, '');
    assert.equal(render(job).replicas[0]!.pod.spec.containers[0]!.env, undefined);
  });

  it('xgboost: ExitCode runs as Never; the v1alpha1-style template keys are pruned', () => {
    const job = load('xgboost/smoke-dist/xgboostjob_v1alpha1_rabit_test.yaml');
    assert.deepEqual(Object.keys(job.spec.xgbReplicaSpecs.Master.template).sort(), ['spec']);
    const r = render(load('xgboost/xgboostjob.yaml'));
    const w = r.replicas.find((x) => x.type === 'Worker')!;
    assert.equal(w.restartPolicy, 'ExitCode');
    assert.equal(w.pod.spec.restartPolicy, 'Never');
    assert.deepEqual(w.pod.spec.containers[0]!.env!.find((x) => x.name === 'WORKER_ADDRS'), e('WORKER_ADDRS', 'xgboost-dist-iris-test-train-worker-0,xgboost-dist-iris-test-train-worker-1'));
    // the user's port keeps its number; no second default port is added
    assert.deepEqual(w.pod.spec.containers[0]!.ports, [{ containerPort: 9991, name: 'xgboostjob-port' }]);
  });

  it('mpi v1: launcher and workers, the ConfigMap with hostfile and agent, no Services', () => {
    const job = load('mpi/tensorflow-mnist.yaml');
    assert.equal(job.spec.mpiReplicaSpecs.Worker.replicas, 2);
    const r = render(job);
    const cm = r.objects.find((o) => o.kind === 'ConfigMap')!;
    assert.equal(cm.metadata.name, 'tensorflow-mnist-config');
    assert.equal((cm.data as any).hostfile, 'tensorflow-mnist-worker-0 slots=1\ntensorflow-mnist-worker-1 slots=1\n');
    assert.match((cm.data as any)['kubexec.sh'], /exec env -u LD_PRELOAD .* 'exec' -n 'default' .*"\$pod" -- \/bin\/sh -c "\$\*"/);
    const launcher = r.replicas.find((x) => x.type === 'Launcher')!.pod;
    assert.equal(launcher.metadata.name, 'tensorflow-mnist-launcher');
    assert.deepEqual(launcher.spec.containers[0]!.volumeMounts, [{ name: 'mpi-job-config', mountPath: '/etc/mpi' }]);
    const worker = r.replicas.find((x) => x.type === 'Worker')!.pod;
    assert.deepEqual([worker.spec.containers[0]!.command, worker.spec.containers[0]!.args], [['sleep'], ['365d']]);
  });

  it('mpi v2beta1: Service <job>, FQDN hostfile per implementation, hostname/subdomain, sshd replaced by an idle worker', () => {
    const pi = render(load('mpi-operator/v2beta1/pi/pi.yaml'));
    assert.equal((pi.objects.find((o) => o.kind === 'ConfigMap')!.data as any).hostfile, 'pi-worker-0.pi.default.svc slots=1\npi-worker-1.pi.default.svc slots=1\n');
    const intel = render(load('mpi-operator/v2beta1/pi/pi-intel.yaml'));
    assert.equal((intel.objects.find((o) => o.kind === 'ConfigMap')!.data as any).hostfile, 'pi-worker-0.pi.default.svc:1\npi-worker-1.pi.default.svc:1\n');
    const w = pi.replicas.find((x) => x.type === 'Worker')!.pod;
    assert.equal(w.spec.hostname, 'pi-worker-0');
    assert.equal(w.spec.subdomain, 'pi');
    const launcher = pi.replicas.find((x) => x.type === 'Launcher')!;
    assert.equal(launcher.pod.metadata.name, 'pi-launcher');
    assert.equal(launcher.restartPolicy, 'OnFailure');
    const svc = pi.objects.find((o) => o.kind === 'Service')!;
    assert.deepEqual(svc.spec, { clusterIP: 'None', selector: { 'training.kubeflow.org/operator-name': 'mpi-operator', 'training.kubeflow.org/job-name': 'pi' } });
    const bench = render(load('mpi-operator/v2beta1/tensorflow-benchmarks/tensorflow-benchmarks.yaml'));
    // upstream's default worker command is `/usr/sbin/sshd -De`; here there is no ssh, the worker idles
    assert.deepEqual(bench.replicas.find((x) => x.type === 'Worker')!.pod.spec.containers[0]!.command, ['sleep', '365d']);
    const intelWorker = intel.replicas.find((x) => x.type === 'Worker')!.pod.spec.containers[0]!;
    assert.deepEqual([intelWorker.command, intelWorker.args], [['sleep', '365d'], undefined], 'args: [/usr/sbin/sshd ...] is a daemon too');
    assert.equal(pi.objects.some((o) => o.kind === 'Secret'), false, 'no SSH keys without ssh');
  });
});

function job(kind: string, field: string, specs: Record<string, unknown>, extra: Record<string, unknown> = {}, name = 'j'): KObject {
  return { apiVersion: 'kubeflow.org/v1', kind, metadata: { name, namespace: 'default' }, spec: { ...extra, [field]: specs } };
}
const tmpl = (container: string, image = 'img') => ({ template: { spec: { containers: [{ name: container, ...(image ? { image } : {}), command: ['true'] }] } } });

function fields(obj: KObject): string[] {
  return admit(obj).errors.map((x) => x.field);
}

describe('training kinds: validation', () => {
  it('a missing named container is rejected at the containers field', () => {
    assert.deepEqual(fields(job('PyTorchJob', 'pytorchReplicaSpecs', { Master: tmpl('main'), Worker: tmpl('pytorch') })), ['spec.pytorchReplicaSpecs.Master.template.spec.containers']);
  });
  it('PyTorch Master replicas must be 1', () => {
    assert.deepEqual(fields(job('PyTorchJob', 'pytorchReplicaSpecs', { Master: { ...tmpl('pytorch'), replicas: 2 }, Worker: tmpl('pytorch') })), ['spec.pytorchReplicaSpecs.Master.replicas']);
  });
  it('TF: Chief and Master together are two masters', () => {
    const errs = admit(job('TFJob', 'tfReplicaSpecs', { Chief: tmpl('tensorflow'), Master: tmpl('tensorflow'), Worker: tmpl('tensorflow') })).errors;
    assert.deepEqual(errs.map((x) => x.field), ['spec.tfReplicaSpecs']);
    assert.match(errs[0]!.message, /more than 1 chief\/master/);
    assert.deepEqual(fields(job('TFJob', 'tfReplicaSpecs', { Chief: { ...tmpl('tensorflow'), replicas: 2 } })), ['spec.tfReplicaSpecs.Chief.replicas']);
  });
  it('an unknown replica type is not supported', () => {
    const errs = admit(job('PyTorchJob', 'pytorchReplicaSpecs', { Master: tmpl('pytorch'), Launcher: tmpl('pytorch') })).errors;
    assert.deepEqual(errs.map((x) => [x.field, x.type]), [['spec.pytorchReplicaSpecs', 'FieldValueNotSupported']]);
    assert.match(errs[0]!.message, /"Launcher"/);
  });
  it('replica keys are case-insensitive and stored canonically', () => {
    const { job: j, errors } = admit(job('TFJob', 'tfReplicaSpecs', { ps: tmpl('tensorflow'), worker: tmpl('tensorflow') }));
    assert.deepEqual(errors, []);
    assert.deepEqual(Object.keys(j.spec.tfReplicaSpecs), ['PS', 'Worker']);
  });
  it('negative replicas are rejected', () => {
    assert.deepEqual(fields(job('JAXJob', 'jaxReplicaSpecs', { Worker: { ...tmpl('jax'), replicas: -1 } })), ['spec.jaxReplicaSpecs.Worker.replicas']);
  });
  it('the job name must be a DNS-1035 label', () => {
    assert.deepEqual(fields(job('PaddleJob', 'paddleReplicaSpecs', { Worker: tmpl('paddle') }, {}, '1abc')), ['metadata.name']);
    assert.deepEqual(fields(job('PaddleJob', 'paddleReplicaSpecs', { Worker: tmpl('paddle') }, {}, 'a.b')), ['metadata.name']);
  });
  it('XGBoost needs a Master', () => {
    assert.deepEqual(fields(job('XGBoostJob', 'xgbReplicaSpecs', { Worker: tmpl('xgboost') })), ['spec.xgbReplicaSpecs.Master']);
  });
  it('every container needs an image', () => {
    assert.deepEqual(fields(job('JAXJob', 'jaxReplicaSpecs', { Worker: tmpl('jax', '') })), ['spec.jaxReplicaSpecs.Worker.template.spec.containers[0].image']);
  });
  it('elasticPolicy needs a Worker; nProcPerNode with nprocPerNode is forbidden', () => {
    assert.deepEqual(fields(job('PyTorchJob', 'pytorchReplicaSpecs', { Master: tmpl('pytorch') }, { elasticPolicy: { minReplicas: 1 } })), ['spec.pytorchReplicaSpecs.Worker']);
    assert.deepEqual(fields(job('PyTorchJob', 'pytorchReplicaSpecs', { Worker: tmpl('pytorch') }, { nprocPerNode: '2', elasticPolicy: { nProcPerNode: 2 } })), ['spec.elasticPolicy.nProcPerNode']);
  });
  it('managedBy takes the operator or MultiKueue', () => {
    assert.deepEqual(fields(job('PyTorchJob', 'pytorchReplicaSpecs', { Worker: tmpl('pytorch') }, { runPolicy: { managedBy: 'someone/else' } })), ['spec.runPolicy.managedBy']);
    assert.deepEqual(fields(job('PyTorchJob', 'pytorchReplicaSpecs', { Worker: tmpl('pytorch') }, { runPolicy: { managedBy: 'kueue.x-k8s.io/multikueue' } })), []);
  });
  it('defaults: PyTorch elastic min/max from each other, the port on container[0] without a named container', () => {
    const { job: j } = admit(job('PyTorchJob', 'pytorchReplicaSpecs', { Worker: { ...tmpl('pytorch'), replicas: 3 } }, { elasticPolicy: { maxReplicas: 4 } }));
    assert.deepEqual([j.spec.elasticPolicy.minReplicas, j.spec.elasticPolicy.maxReplicas], [4, 4]);
    const { job: k } = admit(job('PyTorchJob', 'pytorchReplicaSpecs', { Worker: { ...tmpl('pytorch'), replicas: 3 } }, { elasticPolicy: {} }));
    assert.deepEqual([k.spec.elasticPolicy.minReplicas, k.spec.elasticPolicy.maxReplicas], [3, 3]);
    const { job: m } = admit(job('TFJob', 'tfReplicaSpecs', { Worker: { template: { spec: { containers: [{ name: 'main', image: 'x' }] } } } }));
    assert.deepEqual(m.spec.tfReplicaSpecs.Worker.template.spec.containers[0].ports, [{ name: 'tfjob-port', containerPort: 2222 }]);
    assert.deepEqual([m.spec.tfReplicaSpecs.Worker.replicas, m.spec.tfReplicaSpecs.Worker.restartPolicy], [1, 'Never']);
  });
  it('MPI v2beta1 defaults and its Launcher rule', () => {
    const { job: j, errors } = admit({ ...job('MPIJob', 'mpiReplicaSpecs', { Launcher: tmpl('l'), Worker: tmpl('w') }), apiVersion: 'kubeflow.org/v2beta1' });
    assert.deepEqual(errors, []);
    assert.deepEqual([j.spec.slotsPerWorker, j.spec.runLauncherAsWorker, j.spec.launcherCreationPolicy, j.spec.mpiImplementation, j.spec.sshAuthMountPath],
      [1, false, 'AtStartup', 'OpenMPI', '/root/.ssh']);
    assert.deepEqual([j.spec.mpiReplicaSpecs.Launcher.restartPolicy, j.spec.mpiReplicaSpecs.Worker.restartPolicy, j.spec.mpiReplicaSpecs.Worker.replicas], ['OnFailure', 'Never', 0]);
    assert.deepEqual(fields({ ...job('MPIJob', 'mpiReplicaSpecs', { Worker: tmpl('w') }), apiVersion: 'kubeflow.org/v2beta1' }), ['spec.mpiReplicaSpecs.Launcher']);
  });
});

describe('training kinds: MPIJob v1 and v2beta1 share one stored resource', () => {
  async function setup(): Promise<Client> {
    const client = new Client(new SqliteStore({ file: ':memory:' }), defaultRegistry());
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    return client;
  }
  const v1 = (name: string): KObject => job('MPIJob', 'mpiReplicaSpecs', { Launcher: tmpl('mpi'), Worker: { ...tmpl('mpi'), replicas: 1 } }, {}, name);
  const v2 = (name: string): KObject => ({ ...v1(name), apiVersion: 'kubeflow.org/v2beta1' });

  it('both versions are served under one storage key, each object keeps its own version and defaults', async () => {
    assert.equal(Kinds.MPIJob.plural, Kinds.MPIJobV2.plural);
    const client = await setup();
    const a = await client.create(v1('a'));
    const b = await client.create(v2('b'));
    assert.equal(a.apiVersion, 'kubeflow.org/v1');
    assert.equal(b.apiVersion, 'kubeflow.org/v2beta1');
    assert.equal(a.spec.slotsPerWorker, undefined, 'v1 has no v2beta1 defaults');
    assert.equal(b.spec.slotsPerWorker, 1);
    assert.equal(a.spec.mpiReplicaSpecs.Launcher.restartPolicy, 'Never');
    assert.equal(b.spec.mpiReplicaSpecs.Launcher.restartPolicy, 'OnFailure');
    for (const def of [Kinds.MPIJob, Kinds.MPIJobV2]) {
      const items = (await client.list(def)).items;
      assert.deepEqual(items.map((o) => [o.metadata.name, o.apiVersion]), [['a', 'kubeflow.org/v1'], ['b', 'kubeflow.org/v2beta1']]);
    }
    assert.equal((await client.get(Kinds.MPIJob, { namespace: 'default', name: 'b' })).apiVersion, 'kubeflow.org/v2beta1');
    assert.equal(trainingKindFor(b.apiVersion, b.kind)!.render(b as never).objects.some((o) => o.kind === 'Service' && o.metadata.name === 'b'), true);
    assert.equal(trainingKindFor(a.apiVersion, a.kind)!.render(a as never).objects.some((o) => o.kind === 'Service'), false);
  });

  it('one name per namespace across versions, and an update may not switch the version', async () => {
    const client = await setup();
    await client.create(v2('pi'));
    await assert.rejects(client.create(v1('pi')), (err: unknown) => err instanceof ApiError && err.reason === 'AlreadyExists');
    const live = await client.get(Kinds.MPIJobV2, { namespace: 'default', name: 'pi' });
    await assert.rejects(client.update({ ...live, apiVersion: 'kubeflow.org/v1' }), (err: unknown) =>
      err instanceof ApiError && err.reason === 'Invalid' && (err.details.causes ?? []).some((c) => c.field === 'apiVersion'));
    const updated = await client.update({ ...live, metadata: { ...live.metadata, labels: { x: 'y' } } });
    assert.equal(updated.apiVersion, 'kubeflow.org/v2beta1');
  });
});

describe('retired training kinds', () => {
  it('MXJob (by kind or plural, in kubeflow.org only) is explained: removed in the operator v1.9', () => {
    assert.match(retiredTrainingKind('kubeflow.org', 'MXJob') ?? '', /removed from the Kubeflow Training Operator in v1\.9/);
    assert.equal(retiredTrainingKind('kubeflow.org', 'mxjobs'), retiredTrainingKind('kubeflow.org', 'MXJob'));
    assert.equal(retiredTrainingKind('example.com', 'MXJob'), undefined);
    assert.equal(retiredTrainingKind('kubeflow.org', 'PyTorchJob'), undefined);
    assert.equal(registry.forObject('kubeflow.org/v1', 'MXJob'), undefined);
  });
});
