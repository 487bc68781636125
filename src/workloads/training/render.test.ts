// The renderer beyond the upstream examples (those are in src/api/training.test.ts): every address
// a job's variables and hostfiles name resolves in the Pods' hosts files; the success rules; the
// PyTorch init container and the MPI agent script run under a real sh; PS mode, elastic options,
// TF_CONFIG variants, MPI launcher-as-worker.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { Pod } from '../../api/core-types.js';
import { defaultRegistry } from '../../api/index.js';
import type { KObject } from '../../api/meta.js';
import { clone } from '../../api/meta.js';
import { conformanceDir, corpusFiles } from '../../conformance-path.js';
import { hostsFile } from '../../substrate/local/network.js';
import type { ServiceView } from '../../substrate/local/network.js';
import { WORKER_IDLE_COMMAND, kubexecScript, launcherEnv } from './exec-agent.js';
import { pytorchInitContainer } from './pytorch.js';
import { renderTrainingJob, trainingKindFor } from './render.js';
import type { ReplicaView, TrainingJob } from './types.js';

const registry = defaultRegistry();

function admit(raw: KObject): TrainingJob {
  const job = clone(raw);
  job.metadata.namespace ??= 'default';
  job.metadata.uid ??= 'uid-1';
  const def = registry.forObject(job.apiVersion, job.kind);
  assert.ok(def);
  def.default?.(job);
  assert.deepEqual(def.validate?.(job) ?? [], []);
  return job as TrainingJob;
}

function corpusJobs(): TrainingJob[] {
  return corpusFiles(join(conformanceDir(), 'training'), /\.yaml$/).flatMap((f) => parseAllDocuments(readFileSync(f, 'utf8')).map((d) => d.toJS() as KObject))
    .filter((o) => o?.apiVersion?.startsWith('kubeflow.org/')).map(admit);
}

/** every host name a job's Pods are told to reach */
function addressesIn(pods: Pod[], objects: KObject[]): string[] {
  const hosts = new Set<string>();
  const hostOf = (hp: string): string => hp.replace(/:\d+$/, '');
  for (const p of pods) {
    for (const c of p.spec.containers) {
      for (const e of c.env ?? []) {
        const v = e.value ?? '';
        if (['MASTER_ADDR', 'PET_MASTER_ADDR', 'COORDINATOR_ADDRESS'].includes(e.name)) hosts.add(v);
        if (['PET_RDZV_ENDPOINT', 'PADDLE_MASTER'].includes(e.name) && !v.startsWith('$(')) hosts.add(hostOf(v));
        if (e.name === 'WORKER_ADDRS') v.split(',').forEach((h) => hosts.add(h));
        if (e.name === 'TF_CONFIG') for (const list of Object.values(JSON.parse(v).cluster as Record<string, string[]>)) list.forEach((h) => hosts.add(hostOf(h)));
      }
    }
  }
  for (const o of objects) {
    const hostfile = (o.data as Record<string, string> | undefined)?.hostfile;
    if (o.kind === 'ConfigMap' && hostfile) for (const line of hostfile.split('\n').filter(Boolean)) hosts.add(line.split(/[ :]/)[0]!);
  }
  return [...hosts];
}

describe('rendered addresses resolve on this machine', () => {
  for (const job of corpusJobs()) {
    it(`${job.kind} ${job.metadata.name}: every address is in each Pod's hosts file`, () => {
      const r = renderTrainingJob(job);
      const pods = r.replicas.map((x, i) => ({ ...x.pod, metadata: { ...x.pod.metadata, uid: `p${i}` }, status: { podIP: `127.1.0.${i + 1}` } }) as Pod);
      const services: ServiceView[] = r.objects.filter((o) => o.kind === 'Service').map((s) => {
        const sel = s.spec.selector as Record<string, string>;
        const ips = pods.filter((p) => Object.entries(sel).every(([k, v]) => p.metadata.labels?.[k] === v)).map((p) => p.status!.podIP!);
        assert.ok(ips.length > 0, `Service ${s.metadata.name} selects a Pod`);
        return { name: s.metadata.name!, namespace: s.metadata.namespace!, ips };
      });
      const wanted = addressesIn(pods, r.objects);
      assert.ok(wanted.length > 0 || pods.length === 1, 'a distributed job names its peers');
      for (const self of pods) {
        const names = new Set(hostsFile(self, pods, services).split('\n').flatMap((l) => l.split(/\s+/).slice(1)));
        for (const h of wanted) assert.ok(names.has(h), `${h} resolves in ${self.metadata.name}`);
      }
    });
  }
});

const view = (type: string, replicas: number, succeeded: number, pods: ReplicaView['pods'] = []): ReplicaView =>
  ({ type, replicas, restartPolicy: 'Never', active: 0, succeeded, failed: 0, pods });

function simple(kind: string, field: string, specs: Record<string, { container: string; replicas?: number }>, extra: Record<string, unknown> = {}): TrainingJob {
  const s: Record<string, unknown> = {};
  for (const [t, x] of Object.entries(specs)) s[t] = { replicas: x.replicas ?? 1, template: { spec: { containers: [{ name: x.container, image: 'i', command: ['true'] }] } } };
  return admit({ apiVersion: 'kubeflow.org/v1', kind, metadata: { name: 'j' }, spec: { ...extra, [field]: s } });
}

describe('success rules', () => {
  const succeeded = (job: TrainingJob, views: ReplicaView[]): boolean => trainingKindFor(job.apiVersion, job.kind)!.succeeded(job, views);

  it('PyTorch: the Master when there is one; all workers, or any worker when elastic', () => {
    const mw = simple('PyTorchJob', 'pytorchReplicaSpecs', { Master: { container: 'pytorch' }, Worker: { container: 'pytorch', replicas: 2 } });
    assert.equal(succeeded(mw, [view('Master', 1, 1), view('Worker', 2, 0)]), true);
    assert.equal(succeeded(mw, [view('Master', 1, 0), view('Worker', 2, 2)]), false);
    const w = simple('PyTorchJob', 'pytorchReplicaSpecs', { Worker: { container: 'pytorch', replicas: 2 } });
    assert.equal(succeeded(w, [view('Worker', 2, 1)]), false);
    assert.equal(succeeded(w, [view('Worker', 2, 2)]), true);
    const el = simple('PyTorchJob', 'pytorchReplicaSpecs', { Worker: { container: 'pytorch', replicas: 2 } }, { elasticPolicy: {} });
    assert.equal(succeeded(el, [view('Worker', 2, 1)]), true);
  });

  it('TF: the chief; else worker-0 exiting 0, or every worker with AllWorkers', () => {
    const chief = simple('TFJob', 'tfReplicaSpecs', { Chief: { container: 'tensorflow' }, Worker: { container: 'tensorflow', replicas: 2 } });
    assert.equal(succeeded(chief, [view('Chief', 1, 1), view('Worker', 2, 0)]), true);
    assert.equal(succeeded(chief, [view('Chief', 1, 0), view('Worker', 2, 2)]), false);
    const w = simple('TFJob', 'tfReplicaSpecs', { Worker: { container: 'tensorflow', replicas: 2 } });
    assert.equal(succeeded(w, [view('Worker', 2, 1, [{ index: 0, phase: 'Succeeded', exitCode: 0 }, { index: 1, phase: 'Failed', exitCode: 1 }])]), true);
    assert.equal(succeeded(w, [view('Worker', 2, 1, [{ index: 0, phase: 'Running' }, { index: 1, phase: 'Succeeded', exitCode: 0 }])]), false);
    const all = simple('TFJob', 'tfReplicaSpecs', { Worker: { container: 'tensorflow', replicas: 2 } }, { successPolicy: 'AllWorkers' });
    assert.equal(succeeded(all, [view('Worker', 2, 1, [{ index: 0, phase: 'Succeeded', exitCode: 0 }])]), false);
    assert.equal(succeeded(all, [view('Worker', 2, 2)]), true);
  });

  it('XGBoost the Master; Paddle the Master or all workers; JAX all workers; MPI the launcher', () => {
    const x = simple('XGBoostJob', 'xgbReplicaSpecs', { Master: { container: 'xgboost' }, Worker: { container: 'xgboost', replicas: 2 } });
    assert.equal(succeeded(x, [view('Master', 1, 1), view('Worker', 2, 0)]), true);
    const p = simple('PaddleJob', 'paddleReplicaSpecs', { Worker: { container: 'paddle', replicas: 2 } });
    assert.equal(succeeded(p, [view('Worker', 2, 1)]), false);
    assert.equal(succeeded(p, [view('Worker', 2, 2)]), true);
    const j = simple('JAXJob', 'jaxReplicaSpecs', { Worker: { container: 'jax', replicas: 3 } });
    assert.equal(succeeded(j, [view('Worker', 3, 2)]), false);
    assert.equal(succeeded(j, [view('Worker', 3, 3)]), true);
    const m = simple('MPIJob', 'mpiReplicaSpecs', { Launcher: { container: 'mpi' }, Worker: { container: 'mpi', replicas: 2 } });
    assert.equal(succeeded(m, [view('Launcher', 1, 0), view('Worker', 2, 0)]), false);
    assert.equal(succeeded(m, [view('Launcher', 1, 1), view('Worker', 2, 0)]), true);
  });
});

describe('kind details', () => {
  it('PyTorch: a missing master port is an error naming the field', () => {
    const job = simple('PyTorchJob', 'pytorchReplicaSpecs', { Master: { container: 'pytorch' }, Worker: { container: 'pytorch' } });
    (job.spec as any).pytorchReplicaSpecs.Master.template.spec.containers[0].ports = [];
    assert.throws(() => renderTrainingJob(job), /spec\.pytorchReplicaSpecs\.Master\.template\.spec\.containers: port "pytorchjob-port"/);
  });

  it('PyTorch elastic: host, port, id, conf, standalone, deprecated nProcPerNode', () => {
    const job = simple('PyTorchJob', 'pytorchReplicaSpecs', { Worker: { container: 'pytorch', replicas: 2 } }, {
      elasticPolicy: { rdzvHost: 'etcd-server', rdzvPort: 2379, rdzvBackend: 'etcd', rdzvId: 'r1', minReplicas: 1, maxReplicas: 3, nProcPerNode: 4, standalone: true, rdzvConf: [{ key: 'a', value: '1' }, { key: 'b', value: '2' }] },
    });
    assert.equal((job.spec as any).nprocPerNode, undefined, 'no "auto" default with the deprecated field');
    const env = renderTrainingJob(job).replicas[1]!.pod.spec.containers[0]!.env!.map((e) => `${e.name}=${e.value}`);
    assert.deepEqual(env, ['PYTHONUNBUFFERED=1', 'PET_RDZV_ENDPOINT=etcd-server:2379', 'PET_RDZV_BACKEND=etcd', 'PET_NNODES=1:3', 'PET_NPROC_PER_NODE=4', 'PET_RDZV_ID=r1', 'PET_RDZV_CONF=a=1,b=2', 'PET_STANDALONE=']);
  });

  it('Paddle PS mode: master-0 advertises its Pod IP, workers count trainers', () => {
    const job = simple('PaddleJob', 'paddleReplicaSpecs', { Master: { container: 'paddle' }, Worker: { container: 'paddle', replicas: 2 } });
    const r = renderTrainingJob(job);
    const env = (name: string): string[] => r.replicas.find((x) => x.pod.metadata.name === name)!.pod.spec.containers[0]!.env!.map((e) => `${e.name}=${e.value ?? e.valueFrom?.fieldRef?.fieldPath}`);
    assert.deepEqual(env('j-master-0'), ['PYTHONUNBUFFERED=1', 'PADDLE_JOB_ID=j', 'PADDLE_NNODES=3', 'POD_IP_DUMMY=status.podIP', 'PADDLE_MASTER=$(POD_IP_DUMMY):36543', 'PADDLE_SERVER_NUM=1']);
    assert.deepEqual(env('j-worker-1'), ['PYTHONUNBUFFERED=1', 'PADDLE_JOB_ID=j', 'PADDLE_NNODES=3', 'PADDLE_MASTER=j-master-0:36543', 'PADDLE_TRAINER_NUM=1']);
    assert.deepEqual(r.replicas[0]!.pod.spec.containers[0]!.ports, [{ name: 'master', containerPort: 36543 }]);
  });

  it('TF: the legacy Master key, the evaluator, a custom port; the sparse form with enableDynamicWorker', () => {
    const job = simple('TFJob', 'tfReplicaSpecs', { Master: { container: 'tensorflow' }, Worker: { container: 'tensorflow' }, Evaluator: { container: 'tensorflow' } });
    (job.spec as any).tfReplicaSpecs.Worker.template.spec.containers[0].ports = [{ name: 'tfjob-port', containerPort: 3333 }];
    const cfg = (j: TrainingJob, name: string): string => renderTrainingJob(j).replicas.find((x) => x.pod.metadata.name === name)!.pod.spec.containers[0]!.env![0]!.value!;
    assert.equal(cfg(job, 'j-evaluator-0'), '{"cluster":{"evaluator":["j-evaluator-0.default.svc:2222"],"master":["j-master-0.default.svc:2222"],"worker":["j-worker-0.default.svc:3333"]},"task":{"type":"evaluator","index":0},"environment":"cloud"}');
    const dyn = simple('TFJob', 'tfReplicaSpecs', { PS: { container: 'tensorflow' }, Worker: { container: 'tensorflow', replicas: 2 } }, { enableDynamicWorker: true });
    assert.equal(cfg(dyn, 'j-worker-1'), '{"cluster":{"worker":{"1":"j-worker-1.default.svc:2222"},"ps":["j-ps-0.default.svc:2222"]},"task":{"type":"worker","index":1}}');
    assert.equal(cfg(dyn, 'j-ps-0'), '{"cluster":{"worker":{},"ps":["j-ps-0.default.svc:2222"]},"task":{"type":"ps","index":0}}');
  });

  it('TF_CONFIG goes only into the first tensorflow container', () => {
    const job = simple('TFJob', 'tfReplicaSpecs', { Worker: { container: 'tensorflow', replicas: 2 } });
    (job.spec as any).tfReplicaSpecs.Worker.template.spec.containers.unshift({ name: 'sidecar', image: 'i' });
    const pod = renderTrainingJob(job).replicas[0]!.pod;
    assert.deepEqual(pod.spec.containers.map((c) => (c.env ?? []).map((e) => e.name)), [[], ['TF_CONFIG']]);
  });

  it('MPI v2beta1 runLauncherAsWorker: the launcher is host 0 and keeps its GPUs', () => {
    const job = admit({
      apiVersion: 'kubeflow.org/v2beta1', kind: 'MPIJob', metadata: { name: 'm' },
      spec: { runLauncherAsWorker: true, slotsPerWorker: 2, mpiImplementation: 'MPICH', mpiReplicaSpecs: {
        Launcher: { template: { spec: { containers: [{ name: 'l', image: 'i' }] } } },
        Worker: { replicas: 2, template: { spec: { containers: [{ name: 'w', image: 'i' }] } } },
      } },
    });
    const r = renderTrainingJob(job);
    assert.equal((r.objects.find((o) => o.kind === 'ConfigMap')!.data as any).hostfile, 'm-launcher.m.default.svc:2\nm-worker-0.m.default.svc:2\nm-worker-1.m.default.svc:2\n');
    assert.equal(r.objects.find((o) => o.kind === 'Service')!.spec.publishNotReadyAddresses, true);
    const launcher = r.replicas.find((x) => x.type === 'Launcher')!.pod;
    assert.equal(launcher.metadata.labels?.['training.kubeflow.org/replica-index'], '0');
    assert.ok(!(launcher.spec.containers[0]!.env ?? []).some((e) => e.name === 'NVIDIA_VISIBLE_DEVICES'));
    assert.deepEqual(r.replicas.filter((x) => x.type === 'Worker').map((x) => x.pod.metadata.labels?.['training.kubeflow.org/replica-index']), ['1', '2']);
  });
});

describe('scripts run under a real sh', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-training-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('MPI: the ConfigMap carries the exec agent of exec-agent.ts, the launcher its variables, sshd workers idle', () => {
    for (const apiVersion of ['kubeflow.org/v1', 'kubeflow.org/v2beta1']) {
      const job = admit({
        apiVersion, kind: 'MPIJob', metadata: { name: 'm', namespace: 'team' },
        spec: { mpiReplicaSpecs: {
          Launcher: { template: { spec: { containers: [{ name: 'l', image: 'i', command: ['mpirun'], env: [{ name: 'OMPI_ALLOW_RUN_AS_ROOT', value: '0' }] }] } } },
          Worker: { replicas: 1, template: { spec: { containers: [{ name: 'w', image: 'i', command: ['/usr/sbin/sshd'], args: ['-De'] }] } } },
        } },
      });
      const r = renderTrainingJob(job);
      const cm = r.objects.find((o) => o.kind === 'ConfigMap')!;
      assert.equal((cm.data as any)['kubexec.sh'], kubexecScript({ namespace: 'team' }), apiVersion);
      const launcher = r.replicas.find((x) => x.type === 'Launcher')!.pod.spec.containers[0]!;
      const names = (launcher.env ?? []).map((e) => e.name);
      for (const e of launcherEnv('OpenMPI')) assert.equal(names.filter((n) => n === e.name).length, 1, `${apiVersion} ${e.name} once`);
      assert.deepEqual(launcher.env![0], { name: 'OMPI_ALLOW_RUN_AS_ROOT', value: '0' }, 'the user\'s own entry wins');
      const worker = r.replicas.find((x) => x.type === 'Worker')!.pod.spec.containers[0]!;
      assert.deepEqual([worker.command, worker.args], [[...WORKER_IDLE_COMMAND], undefined], apiVersion);
      assert.deepEqual(worker.volumeMounts, [{ name: 'mpi-job-config', mountPath: '/etc/mpi' }]);
    }
  });

  it('the PyTorch init container waits for the master name and ends when it resolves', () => {
    const quick = (script: string): string => script.replace('$(seq 100)', '$(seq 2)').replace('sleep 2', 'sleep 0');
    const missing = pytorchInitContainer({ apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name: 'no-such-skiff-job' }, spec: {} }).command!;
    const r1 = spawnSync(missing[0]!, [missing[1]!, quick(missing[2]!)], { encoding: 'utf8' });
    assert.equal(r1.status, 1);
    assert.equal(r1.stdout, 'waiting for master\nwaiting for master\n');
    // a name this machine resolves stands in for the master
    const present = quick(missing[2]!).replaceAll('no-such-skiff-job-master-0', 'localhost');
    const r2 = spawnSync('sh', ['-c', present], { encoding: 'utf8' });
    assert.equal(r2.status, 0);
    assert.equal(r2.stdout, '');
  });
});
