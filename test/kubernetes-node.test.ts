// `skiff node` against a real control plane the harness starts on loopback: the agent registers a
// Node and keeps its Lease, the cluster's scheduler places a batch/v1 Job's Pod on it and the
// cluster's Job controller sees it complete, `kubectl logs` and `kubectl exec` reach the agent through
// the API server, a deleted Pod is stopped and removed, and a killed agent's Node goes NotReady by
// the controller-manager's node lifecycle while its Pods run on, to be adopted by the restarted
// agent. Pods get service-account credentials as a kubelet gives them (the admission plugin's
// projected volume, tokens from TokenRequest, refreshed), and claims of the StorageClass skiff-local
// get local volumes the agent provisions. Skipped, saying why, where scripts/kubernetes.sh has not built the control plane.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { StoredObject } from '../src/api/meta.js';
import { requestPodToken } from '../src/server/node-agent.js';
import { KubeHttp } from '../src/store/kube/http.js';
import { loadKubeconfig } from '../src/store/kube/kubeconfig.js';
import { ProjectedTokens } from '../src/substrate/local/projected-tokens.js';
import { KubeCluster, kubeClusterSkipReason } from '../src/testing/kube-cluster.js';
import { clientsPython, kubectlBin, repoRoot, runCli } from './harness.js';
import { eventually, removeDataDir, skiffDaemon, stopDaemon } from './kube-daemons.js';

const skip = kubeClusterSkipReason() ?? (existsSync(kubectlBin) ? undefined : `no kubectl at ${kubectlBin}`);
const run = promisify(execFile);

type Condition = { type: string; status: string; reason?: string };

describe('skiff node: a node agent in a Kubernetes cluster', { skip }, () => {
  let cluster: KubeCluster;
  let up: ReturnType<typeof skiffDaemon> | undefined;
  let agent: ReturnType<typeof skiffDaemon> | undefined;
  const dirs: string[] = [];
  const node = 'agent-1';
  const kubectl = async (...args: string[]): Promise<string> => (await run(kubectlBin, ['--kubeconfig', cluster.kubeconfig, ...args], { timeout: 60_000 })).stdout;
  const getJson = async <T = StoredObject>(...args: string[]): Promise<T> => JSON.parse(await kubectl('get', ...args, '-o', 'json')) as T;
  let agentArgs: string[] = [];
  const ready = (n: StoredObject): Condition | undefined => (n.status?.conditions as Condition[] | undefined)?.find((c) => c.type === 'Ready');

  before(async () => {
    // a short grace period: a node whose Lease stops is NotReady within the test's time
    cluster = await KubeCluster.start({ nodeMonitorGracePeriod: '12s' });
    const upDir = mkdtempSync(join(tmpdir(), 'skiff-kube-node-up-'));
    const agentDir = mkdtempSync(join(tmpdir(), 'skiff-kube-node-'));
    dirs.push(upDir, agentDir);
    up = skiffDaemon(['up', '--port', '0', '--data-dir', upDir, '--kubeconfig', cluster.kubeconfig], /ready at http/);
    agentArgs = ['node', '--kubeconfig', cluster.kubeconfig, '--name', node, '--data-dir', agentDir, '--client-ca-file', cluster.caFile];
    agent = skiffDaemon(agentArgs, new RegExp(`Node ${node} is ready`));
    await Promise.all([up.ready, agent.ready]);
  }, { timeout: 240_000 });

  after(async () => {
    await stopDaemon(agent);
    await stopDaemon(up);
    await cluster?.stop();
    for (const d of dirs) removeDataDir(d);
  });

  it('registers a Ready Node with its capacity, addresses and kubelet port, and renews its Lease', { timeout: 60_000 }, async () => {
    const n = await getJson('node', node);
    assert.equal(ready(n)?.status, 'True');
    assert.ok(Number(n.status?.capacity?.cpu) >= 1);
    assert.match(n.status?.allocatable?.memory ?? '', /^\d+(Ki|Mi|Gi)?$/);
    assert.equal(n.status?.capacity?.pods, '110');
    assert.deepEqual(n.status?.addresses?.[0], { type: 'InternalIP', address: '127.0.0.1' });
    assert.ok(n.status?.daemonEndpoints?.kubeletEndpoint?.Port > 0);
    assert.match(n.status?.nodeInfo?.kubeletVersion ?? '', /^skiff-/);
    const lease = await getJson('lease', node, '-n', 'kube-node-lease');
    assert.equal(lease.spec?.holderIdentity, node);
    assert.equal(lease.metadata.ownerReferences?.[0]?.uid, n.metadata.uid);
    // the kubelet's period: every 10 s
    await eventually('the Lease renewed', async () => (await getJson('lease', node, '-n', 'kube-node-lease')).spec?.renewTime !== lease.spec?.renewTime, 30_000);
  });

  it('runs a Job the cluster\'s scheduler places on it to Complete, and kubectl logs reaches it', { timeout: 180_000 }, async () => {
    await kubectl('create', 'job', 'pi', '--image=python:3', '--', 'python3', '-c', 'print(6*7)');
    const job = await eventually('the Job Complete', async () => {
      const j = await getJson('job', 'pi');
      const failed = (j.status?.conditions as Condition[] | undefined)?.find((c) => c.type === 'Failed' && c.status === 'True');
      if (failed) throw new Error(`the Job failed: ${JSON.stringify(j.status)}`);
      return (j.status?.conditions as Condition[] | undefined)?.some((c) => c.type === 'Complete' && c.status === 'True') ? j : undefined;
    }, 150_000);
    assert.equal(job.status?.succeeded, 1);
    const pods = await getJson<{ items: StoredObject[] }>('pods', '-l', 'job-name=pi');
    assert.equal(pods.items.length, 1);
    const pod = pods.items[0] as StoredObject;
    assert.equal(pod.spec?.nodeName, node);
    assert.equal(pod.status?.phase, 'Succeeded');
    assert.equal(pod.status?.hostIP, '127.0.0.1');
    assert.match(pod.status?.podIP ?? '', /^127\.\d+\.\d+\.\d+$/);
    assert.equal(pod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 0);
    assert.equal(pod.status?.containerStatuses?.[0]?.state?.terminated?.reason, 'Completed');
    assert.ok((pod.status?.conditions as Condition[]).some((c) => c.type === 'Ready'));
    assert.equal((await kubectl('logs', 'job/pi')).trim(), '42');
  });

  it('reports a failed container\'s exit code', { timeout: 120_000 }, async () => {
    await kubectl('run', 'fails', '--image=python:3', '--restart=Never', '--', 'python3', '-c', 'import sys; print("bye"); sys.exit(3)');
    const pod = await eventually('the Pod Failed', async () => {
      const p = await getJson('pod', 'fails');
      return p.status?.phase === 'Failed' ? p : undefined;
    }, 90_000);
    const term = pod.status?.containerStatuses?.[0]?.state?.terminated;
    assert.equal(term?.exitCode, 3);
    assert.equal(term?.reason, 'Error');
    assert.equal((await kubectl('logs', 'fails')).trim(), 'bye');
  });

  it('runs kubectl exec in a running container through the API server', { timeout: 120_000 }, async () => {
    await kubectl('run', 'sleeper', '--image=python:3', '--restart=Never', '--', 'python3', '-c', 'import time; print("up", flush=True); time.sleep(600)');
    await eventually('the Pod Running', async () => (await getJson('pod', 'sleeper')).status?.phase === 'Running', 90_000);
    assert.equal((await kubectl('exec', 'sleeper', '--', 'python3', '-c', 'print(6*7)')).trim(), '42');
    // the exit code comes back as kubectl's own
    await assert.rejects(kubectl('exec', 'sleeper', '--', 'sh', '-c', 'echo oops >&2; exit 5'), (e: { code?: number; stderr?: string }) => e.code === 5 && /oops/.test(e.stderr ?? ''));
    // standard input reaches the command
    const cat = spawn(kubectlBin, ['--kubeconfig', cluster.kubeconfig, 'exec', '-i', 'sleeper', '--', 'python3', '-c', 'import sys; print(sys.stdin.read().upper())'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    cat.stdout.on('data', (d: Buffer) => (out += d.toString()));
    cat.stdin.end('hello');
    assert.equal(await new Promise((r) => cat.once('exit', r)), 0);
    assert.equal(out.trim(), 'HELLO');
  });

  it('serves skiff logs and skiff exec through Skiff, from the cluster\'s API server', { timeout: 120_000 }, async () => {
    const server = /ready at (http:\/\/\S+)/.exec(up?.output() ?? '')?.[1];
    assert.ok(server, 'skiff up printed its address');
    const cli = (args: string[], input?: string): ReturnType<typeof runCli> => runCli(args, { SKIFF_SERVER: server }, input);
    const logs = await cli(['logs', 'sleeper']);
    assert.equal(logs.code, 0, logs.stderr);
    assert.equal(logs.stdout.trim(), 'up');
    const logsOfJob = await cli(['logs', 'job/pi']);
    assert.equal(logsOfJob.stdout.trim(), '42', logsOfJob.stderr);
    const exec = await cli(['exec', 'sleeper', '--', 'python3', '-c', 'print(6*7)']);
    assert.equal(exec.code, 0, exec.stderr);
    assert.equal(exec.stdout.trim(), '42');
    // the command's exit code and stderr come back as the CLI's
    const failing = await cli(['exec', 'sleeper', '--', 'sh', '-c', 'echo oops >&2; exit 5']);
    assert.equal(failing.code, 5);
    assert.match(failing.stderr, /oops/);
    // standard input reaches the command, and its end
    const upper = await cli(['exec', '-i', 'sleeper', '--', 'python3', '-c', 'import sys; print(sys.stdin.read().upper())'], 'hello');
    assert.equal(upper.code, 0, upper.stderr);
    assert.equal(upper.stdout.trim(), 'HELLO');
    // kubectl pointed at Skiff's API reaches the same Pod
    const viaSkiff = await run(kubectlBin, ['--server', server, 'exec', 'sleeper', '--', 'python3', '-c', 'print("via skiff")'], { timeout: 60_000 });
    assert.equal(viaSkiff.stdout.trim(), 'via skiff');
  });

  describe('service-account credentials, as a kubelet mounts them', () => {
    const saDir = '/var/run/secrets/kubernetes.io/serviceaccount';
    // what a Pod's program does with them: the Python client's in-cluster configuration, listing Pods
    const script = [
      'import base64, json, os, socket',
      'from kubernetes import client, config',
      'from kubernetes.client.rest import ApiException',
      'claims = lambda f: json.loads(base64.urlsafe_b64decode(open(f).read().split(".")[1] + "=="))',
      `d = "${saDir}"`,
      'print("HOST", os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT"), flush=True)',
      'print("TOKEN", os.path.exists(d + "/token"), flush=True)',
      'if os.path.exists(d + "/token"):',
      '    print("CLAIMS", json.dumps(claims(d + "/token")), flush=True)',
      '    print("NS", open(d + "/namespace").read(), flush=True)',
      '    print("CA", open(d + "/ca.crt").read().strip().splitlines()[1], flush=True)',
      '    print("RESOLVED", socket.gethostbyname("kubernetes.default.svc"), flush=True)',
      '    if os.path.exists("/var/run/secrets/vault/token"): print("VAULT", json.dumps(claims("/var/run/secrets/vault/token")), flush=True)',
      '    config.load_incluster_config()',
      '    try:',
      '        pods = client.CoreV1Api().list_namespaced_pod("default")',
      '        print("LISTED", " ".join(sorted(p.metadata.name for p in pods.items)), flush=True)',
      '    except ApiException as e:',
      '        print("REFUSED", e.status, flush=True)',
    ].join('\n');
    const pod = (name: string, sa: string, extra: Record<string, unknown> = {}, volumes: unknown[] = [], mounts: unknown[] = []): Record<string, unknown> => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
      spec: {
        serviceAccountName: sa, restartPolicy: 'Never', ...extra,
        containers: [{ name: 'main', image: 'python:3', command: [clientsPython, '-c', script], volumeMounts: mounts }],
        volumes,
      },
    });
    const lines = (log: string, key: string): string | undefined => log.split('\n').find((l) => l.startsWith(`${key} `))?.slice(key.length + 1);
    const finished = async (name: string): Promise<{ pod: StoredObject; log: string }> => {
      const p = await eventually(`pod ${name} finished`, async () => {
        const x = await getJson('pod', name);
        return ['Succeeded', 'Failed'].includes(x.status?.phase) ? x : undefined;
      }, 240_000);
      const log = await kubectl('logs', name);
      assert.equal(p.status?.phase, 'Succeeded', `${name}: ${log}\n${JSON.stringify(p.status)}`);
      return { pod: p, log };
    };

    before(async () => {
      const file = join(dirs[0] as string, 'rbac.json');
      writeFileSync(file, JSON.stringify({
        apiVersion: 'v1', kind: 'List', items: [
          { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'pod-reader', namespace: 'default' } },
          { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'no-rights', namespace: 'default' } },
          { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'pod-lister', namespace: 'default' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] },
          { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'pod-reader', namespace: 'default' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-lister' }, subjects: [{ kind: 'ServiceAccount', name: 'pod-reader', namespace: 'default' }] },
          pod('sa-allowed', 'pod-reader', {}, [{ name: 'vault', projected: { sources: [{ serviceAccountToken: { path: 'token', audience: 'vault', expirationSeconds: 600 } }] } }], [{ name: 'vault', mountPath: '/var/run/secrets/vault', readOnly: true }]),
          pod('sa-refused', 'no-rights'),
          pod('sa-none', 'pod-reader', { automountServiceAccountToken: false }),
        ],
      }));
      await kubectl('apply', '-f', file);
    }, { timeout: 120_000 });

    it('a Pod whose ServiceAccount may list Pods lists them with load_incluster_config(), with a token the cluster bound to it', { timeout: 300_000 }, async () => {
      const { pod: p, log } = await finished('sa-allowed');
      // the ServiceAccount admission plugin's volume, which the agent honoured
      const vol = (p.spec?.volumes as { name: string; projected?: { sources: { serviceAccountToken?: { expirationSeconds: number } }[] } }[]).find((v) => v.name.startsWith('kube-api-access-'));
      assert.equal(vol?.projected?.sources[0]?.serviceAccountToken?.expirationSeconds, 3607);
      const api = new URL(cluster.server);
      assert.equal(lines(log, 'HOST'), `${api.hostname} ${api.port}`);
      assert.equal(lines(log, 'TOKEN'), 'True');
      assert.equal(lines(log, 'NS'), 'default');
      // the cluster's CA (kube-root-ca.crt), not one of the agent's
      assert.equal(lines(log, 'CA'), readFileSync(cluster.caFile, 'utf8').trim().split('\n')[1]);
      assert.equal(lines(log, 'RESOLVED'), api.hostname);
      const claims = JSON.parse(lines(log, 'CLAIMS') ?? '{}') as { sub?: string; aud?: string[]; 'kubernetes.io'?: { namespace?: string; pod?: { name?: string; uid?: string }; node?: { name?: string }; serviceaccount?: { name?: string } } };
      assert.equal(claims.sub, 'system:serviceaccount:default:pod-reader');
      assert.deepEqual(claims.aud, ['https://kubernetes.default.svc.cluster.local']);
      assert.equal(claims['kubernetes.io']?.pod?.name, 'sa-allowed');
      assert.equal(claims['kubernetes.io']?.pod?.uid, p.metadata.uid);
      assert.equal(claims['kubernetes.io']?.serviceaccount?.name, 'pod-reader');
      assert.equal(claims['kubernetes.io']?.node?.name, node);
      // a projected token of the Pod's own asks for its audience and lifetime
      const vault = JSON.parse(lines(log, 'VAULT') ?? '{}') as { aud?: string[]; exp?: number; iat?: number; 'kubernetes.io'?: { pod?: { name?: string } } };
      assert.deepEqual(vault.aud, ['vault']);
      assert.equal((vault.exp ?? 0) - (vault.iat ?? 0), 600);
      assert.equal(vault['kubernetes.io']?.pod?.name, 'sa-allowed');
      assert.match(lines(log, 'LISTED') ?? '', /\bsa-allowed\b/);
    });

    it('a Pod whose ServiceAccount has no RoleBinding is refused (403)', { timeout: 300_000 }, async () => {
      const { log } = await finished('sa-refused');
      assert.equal(lines(log, 'TOKEN'), 'True');
      assert.equal(lines(log, 'REFUSED'), '403');
      assert.equal(lines(log, 'LISTED'), undefined);
    });

    it('automountServiceAccountToken: false gives no token', { timeout: 300_000 }, async () => {
      const { pod: p, log } = await finished('sa-none');
      assert.ok(!(p.spec?.volumes ?? []).some((v: { name: string }) => v.name.startsWith('kube-api-access-')));
      assert.equal(lines(log, 'TOKEN'), 'False');
      // the kubernetes Service's variables are every container's, as a kubelet sets them
      assert.equal(lines(log, 'HOST'), `${new URL(cluster.server).hostname} ${new URL(cluster.server).port}`);
    });

    it('a token is asked for again before it expires: a new one, bound to the Pod, replaces the file', { timeout: 120_000 }, async () => {
      const p = await getJson('pod', 'sa-allowed');
      const http = new KubeHttp(loadKubeconfig(cluster.kubeconfig));
      const tokens = new ProjectedTokens({ fraction: 0.002 });
      const dir = mkdtempSync(join(tmpdir(), 'skiff-kube-token-'));
      dirs.push(dir);
      try {
        const ask: { audience?: string; expirationSeconds: number } = { audience: 'vault', expirationSeconds: 600 };
        const request = (req: typeof ask): ReturnType<typeof requestPodToken> => requestPodToken(http, p as never, req);
        const first = await request(ask);
        const file = join(dir, 'token');
        writeFileSync(file, first.token);
        // 0.2 % of 600 s: the refresh is due after about 1.2 s
        tokens.track(p.metadata.uid, file, first, request, ask, 0o644);
        const next = await eventually('the token replaced', async () => {
          const t = readFileSync(file, 'utf8');
          return t !== first.token ? t : undefined;
        }, 60_000);
        const claims = JSON.parse(Buffer.from(next.split('.')[1] ?? '', 'base64url').toString()) as { aud?: string[]; 'kubernetes.io'?: { pod?: { uid?: string } } };
        assert.deepEqual(claims.aud, ['vault']);
        assert.equal(claims['kubernetes.io']?.pod?.uid, p.metadata.uid);
      } finally {
        tokens.stop();
        http.close();
      }
    });
  });

  describe('PersistentVolumeClaims: the agent provisions local volumes for claims placed on its node', () => {
    const podUsing = (name: string, code: string): Record<string, unknown> => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'main', image: 'python:3', command: ['python3', '-c', code], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'shared-data' } }],
      },
    });
    const applyJson = async (name: string, obj: unknown): Promise<void> => {
      const file = join(dirs[0] as string, `${name}.json`);
      writeFileSync(file, JSON.stringify(obj));
      await kubectl('apply', '-f', file);
    };
    const succeeded = async (name: string): Promise<StoredObject> => {
      const p = await eventually(`pod ${name} finished`, async () => {
        const x = await getJson('pod', name);
        return ['Succeeded', 'Failed'].includes(x.status?.phase) ? x : undefined;
      }, 150_000);
      assert.equal(p.status?.phase, 'Succeeded', `${name}: ${await kubectl('logs', name).catch(() => '')}\n${JSON.stringify(p.status)}`);
      return p;
    };

    it('two Pods in turn share a file through one claim, which outlives them; deleting the claim deletes its volume and directory', { timeout: 300_000 }, async () => {
      await kubectl('apply', '-f', join(repoRoot, 'deploy', 'kubernetes', 'node-agent', 'storageclass.yaml'));
      await applyJson('pvc', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'shared-data', namespace: 'default' }, spec: { storageClassName: 'skiff-local', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
      // WaitForFirstConsumer: nothing is provisioned before a Pod needs it
      await new Promise((r) => setTimeout(r, 2000));
      assert.equal((await getJson('pvc', 'shared-data')).status?.phase, 'Pending');
      await applyJson('writer', podUsing('pvc-writer', 'open("/data/hello.txt", "w").write("written by pvc-writer")'));
      const writer = await succeeded('pvc-writer');
      assert.equal(writer.spec?.nodeName, node);
      const pvc = await getJson('pvc', 'shared-data');
      assert.equal(pvc.status?.phase, 'Bound');
      assert.equal(pvc.metadata.annotations?.['volume.kubernetes.io/selected-node'], node);
      const pv = await getJson('pv', pvc.spec?.volumeName);
      assert.equal(pv.metadata.name, `pvc-${pvc.metadata.uid}`);
      assert.deepEqual(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.[0], { key: 'kubernetes.io/hostname', operator: 'In', values: [node] });
      assert.equal(pv.spec?.claimRef?.uid, pvc.metadata.uid);
      const dir = pv.spec?.local?.path as string;
      assert.ok(dir.startsWith(join(dirs[1] as string, 'volumes')), `under the agent's data dir: ${dir}`);
      assert.equal(readFileSync(join(dir, 'hello.txt'), 'utf8'), 'written by pvc-writer');
      // the data outlives the Pod that wrote it
      await kubectl('delete', 'pod', 'pvc-writer', '--timeout=60s');
      await applyJson('reader', podUsing('pvc-reader', 'print(open("/data/hello.txt").read())'));
      await succeeded('pvc-reader');
      assert.equal((await kubectl('logs', 'pvc-reader')).trim(), 'written by pvc-writer');
      await kubectl('delete', 'pod', 'pvc-reader', '--timeout=60s');
      // reclaimPolicy Delete: the released volume goes, and its directory with it
      await kubectl('delete', 'pvc', 'shared-data', '--timeout=60s');
      await eventually('the volume deleted', async () => {
        try {
          await kubectl('get', 'pv', pv.metadata.name);
          return false;
        } catch (e) {
          return /NotFound|not found/.test((e as { stderr?: string }).stderr ?? '');
        }
      }, 90_000);
      assert.equal(existsSync(dir), false);
    });
  });

  it('stops a deleted Pod and removes it', { timeout: 120_000 }, async () => {
    const t0 = Date.now();
    // kubectl waits until the Pod is gone: the agent stopped its process and deleted it
    await kubectl('delete', 'pod', 'sleeper', '--timeout=60s');
    assert.ok(Date.now() - t0 < 30_000, 'SIGTERM ends it well inside the grace period');
    await assert.rejects(kubectl('get', 'pod', 'sleeper'), /NotFound|not found/);
  });

  it('keeps its Pods running when killed: the Node goes NotReady, and the restarted agent adopts them', { timeout: 180_000 }, async () => {
    await kubectl('run', 'survivor', '--image=python:3', '--restart=Never', '--', 'python3', '-c', 'import time; time.sleep(25); print("done")');
    await eventually('the Pod Running', async () => (await getJson('pod', 'survivor')).status?.phase === 'Running', 90_000);
    agent?.proc.kill('SIGKILL');
    await agent?.exited;
    // the controller-manager's node lifecycle, from the Lease no longer renewed
    const cond = await eventually('the Node NotReady', async () => {
      const c = ready(await getJson('node', node));
      return c && c.status !== 'True' ? c : undefined;
    }, 75_000);
    assert.equal(cond.status, 'Unknown');
    assert.equal(cond.reason, 'NodeStatusUnknown');
    agent = skiffDaemon(agentArgs, new RegExp(`Node ${node} is ready`));
    await agent.ready;
    await eventually('the Node Ready again', async () => ready(await getJson('node', node))?.status === 'True', 30_000);
    // the container ran on while no agent watched it; the new one reads how it ended
    const pod = await eventually('the survivor Succeeded', async () => {
      const p = await getJson('pod', 'survivor');
      return p.status?.phase === 'Succeeded' ? p : undefined;
    }, 90_000);
    assert.equal(pod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 0);
    assert.equal(pod.status?.containerStatuses?.[0]?.restartCount ?? 0, 0, 'adopted, not run again');
    assert.equal((await kubectl('logs', 'survivor')).trim(), 'done');
  });
});
