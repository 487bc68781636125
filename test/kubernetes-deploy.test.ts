// deploy/kubernetes: the manifests that install Skiff into a cluster. Without a cluster: the
// ClusterRole grants exactly what `skiff up`'s start-up check asks (plus the three grants it documents).
// Against a real control plane the harness starts on loopback: kustomize renders them, the API server
// accepts them (a server-side dry run, then for real), `skiff up --kubeconfig` as the skiff
// ServiceAccount passes its RBAC check, reconciles a PyTorchJob and a Profile (whose RoleBindings need
// the role's bind rule), and installs Profiles' and Notebooks' upstream schemas, which the cluster
// enforces for kubectl; with one rule removed Skiff refuses to start, naming what that rule granted;
// `skiff node` as the node-agent component's ServiceAccount runs a Job. The Deployment's Pods run in
// test/kubernetes-in-pod.test.ts, on a node agent (there is no container engine to build the image). Skipped, saying why, where
// scripts/kubernetes.sh has not built the control plane or kubectl is missing.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { defaultRegistry } from '../src/api/index.js';
import type { StoredObject } from '../src/api/meta.js';
import { conformanceDir } from '../src/conformance-path.js';
import { accessNeeds } from '../src/store/kube/setup.js';
import { KubeCluster, kubeClusterSkipReason, writeKubeconfigFile } from '../src/testing/kube-cluster.js';
import { kubectlBin, repoRoot } from './harness.js';
import { type Daemon, eventually, skiffDaemon } from './kube-daemons.js';

const deployDir = join(repoRoot, 'deploy', 'kubernetes');
const run = promisify(execFile);
const skip = kubeClusterSkipReason() ?? (existsSync(kubectlBin) ? undefined : `no kubectl at ${kubectlBin}`);

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}
interface ClusterRole {
  kind: string;
  metadata: { name: string };
  rules: PolicyRule[];
}

const yamlDocs = (text: string): StoredObject[] => parseAllDocuments(text).map((d) => d.toJS() as StoredObject).filter((o) => o);

function skiffClusterRole(): ClusterRole {
  const role = yamlDocs(readFileSync(join(deployDir, 'rbac.yaml'), 'utf8')).find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'skiff');
  assert.ok(role, 'rbac.yaml has the skiff ClusterRole');
  return role as unknown as ClusterRole;
}

/** every (group, resource, verb, resourceNames) a role grants, one string each */
function grants(rules: PolicyRule[]): Set<string> {
  const out = new Set<string>();
  for (const r of rules) {
    for (const g of r.apiGroups ?? []) for (const res of r.resources ?? []) for (const v of r.verbs) out.add(`${v} ${res}.${g}${r.resourceNames?.length ? ` [${r.resourceNames.join(',')}]` : ''}`);
  }
  return out;
}

const skiffUp = (args: string[]): Daemon => skiffDaemon(['up', ...args], /ready at (http:\/\/\S+)/);

describe('deploy/kubernetes', () => {
  it('grants Skiff exactly what its start-up check asks, and beyond that only the grants it explains', () => {
    const granted = grants(skiffClusterRole().rules);
    const needed = new Set(accessNeeds(defaultRegistry().all()).map((n) => `${n.verb} ${n.resource}${n.subresource ? `/${n.subresource}` : ''}.${n.group}`));
    const missing = [...needed].filter((n) => !granted.has(n));
    assert.deepEqual(missing, [], 'every access the check asks for is granted');
    const extra = [...granted].filter((g) => !needed.has(g)).sort();
    // an MPIJob launcher's Role may exec into its workers; a Profile binds its users to Kubeflow's roles;
    // `skiff exec`, `skiff logs`, attach and port-forward go through the cluster (the start-up check does
    // not ask: Skiff runs without them)
    assert.deepEqual(extra, ['bind clusterroles.rbac.authorization.k8s.io [kubeflow-admin,kubeflow-edit,kubeflow-view]', 'create pods/attach.', 'create pods/exec.', 'create pods/portforward.', 'get pods/log.']);
  });

  describe('on a real cluster', { skip }, () => {
    let cluster: KubeCluster;
    let dir: string;
    const kubectl = async (...args: string[]): Promise<string> => (await run(kubectlBin, ['--kubeconfig', cluster.kubeconfig, ...args], { timeout: 90_000, maxBuffer: 64 * 1024 * 1024 })).stdout;

    before(async () => {
      cluster = await KubeCluster.start();
      dir = mkdtempSync(join(tmpdir(), 'skiff-deploy-'));
    }, { timeout: 180_000 });

    after(async () => {
      await cluster?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('renders with kustomize, with the image set in one place', async () => {
      const objs = yamlDocs(await kubectl('kustomize', deployDir));
      assert.deepEqual(objs.map((o) => `${o.kind}/${o.metadata.name}`).sort(), [
        'ClusterRole/skiff', 'ClusterRoleBinding/skiff', 'Deployment/skiff', 'Namespace/skiff-system', 'Role/skiff-leader-election',
        'RoleBinding/skiff-leader-election', 'Service/skiff', 'ServiceAccount/skiff',
      ]);
      for (const o of objs) if (!['Namespace', 'ClusterRole', 'ClusterRoleBinding'].includes(o.kind)) assert.equal(o.metadata.namespace, 'skiff-system', `${o.kind} ${o.metadata.name}`);
      const deployment = objs.find((o) => o.kind === 'Deployment') as StoredObject;
      const container = deployment.spec?.template?.spec?.containers?.[0];
      assert.equal(container?.image, 'skiff:0.1.0');
      assert.equal(deployment.spec?.replicas, 2);
      assert.deepEqual(container?.env?.find((e: { name: string }) => e.name === 'POD_NAMESPACE')?.valueFrom, { fieldRef: { fieldPath: 'metadata.namespace' } });
      // the address the leader publishes on the Lease, where a standby forwards inference requests
      assert.deepEqual(container?.env?.find((e: { name: string }) => e.name === 'POD_IP')?.valueFrom, { fieldRef: { fieldPath: 'status.podIP' } });
      const agent = yamlDocs(await kubectl('kustomize', join(deployDir, 'node-agent')));
      assert.ok(agent.some((o) => o.kind === 'Role' && o.metadata.namespace === 'kube-node-lease'));
    });

    it('is accepted by kube-apiserver: a server-side dry run, then for real', { timeout: 120_000 }, async () => {
      // a dry run creates no namespace, so what goes into it would be refused: the namespace first
      await kubectl('apply', '-f', join(deployDir, 'namespace.yaml'));
      const dry = await kubectl('apply', '-k', deployDir, '--dry-run=server');
      for (const what of ['serviceaccount/skiff', 'clusterrole.rbac.authorization.k8s.io/skiff', 'deployment.apps/skiff', 'service/skiff']) {
        assert.match(dry, new RegExp(`${what.replace(/[.]/g, '\\.')} created \\(server dry run\\)`));
      }
      assert.match(await kubectl('apply', '-k', join(deployDir, 'node-agent'), '--dry-run=server'), /clusterrole\.rbac\.authorization\.k8s\.io\/skiff-node created \(server dry run\)/);
      await kubectl('apply', '-k', deployDir);
      const deployment = JSON.parse(await kubectl('get', 'deployment', 'skiff', '-n', 'skiff-system', '-o', 'json')) as StoredObject;
      assert.equal(deployment.spec?.template?.spec?.serviceAccountName, 'skiff');
    });

    describe('skiff node as the skiff-node ServiceAccount (deploy/kubernetes/node-agent)', () => {
      const node = 'deploy-agent';
      let agent: Daemon | undefined;

      before(async () => {
        // the Deployment's image is not built here: its Pods would be placed on the agent and fail there
        await kubectl('scale', 'deployment', 'skiff', '-n', 'skiff-system', '--replicas=0');
        await kubectl('apply', '-k', join(deployDir, 'node-agent'));
        const token = (await kubectl('create', 'token', 'skiff-node', '-n', 'skiff-system')).trim();
        writeKubeconfigFile(join(dir, 'kubeconfig-node'), cluster.server, cluster.caFile, token);
        agent = skiffDaemon(['node', '--kubeconfig', join(dir, 'kubeconfig-node'), '--name', node, '--data-dir', join(dir, 'agent'), '--client-ca-file', cluster.caFile], new RegExp(`Node ${node} is ready`));
        await agent.ready;
      }, { timeout: 180_000 });

      after(async () => {
        if (agent && agent.proc.exitCode === null) {
          agent.proc.kill('SIGTERM');
          await agent.exited;
        }
        // nothing later is placed on a Node whose agent is gone
        if (cluster) await kubectl('delete', 'node', node, '--ignore-not-found');
      });

      it('registers its Node and Lease, and runs a Job to Complete, refused nothing', { timeout: 180_000 }, async () => {
        const n = JSON.parse(await kubectl('get', 'node', node, '-o', 'json')) as StoredObject;
        assert.ok((n.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True'));
        const lease = JSON.parse(await kubectl('get', 'lease', node, '-n', 'kube-node-lease', '-o', 'json')) as StoredObject;
        assert.equal(lease.spec?.holderIdentity, node);
        await kubectl('create', 'job', 'agent-job', '--image=python:3', '--', 'python3', '-c', 'print(6*7)');
        await eventually('the Job Complete', async () => {
          const j = JSON.parse(await kubectl('get', 'job', 'agent-job', '-o', 'json')) as StoredObject;
          return (j.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Complete' && c.status === 'True');
        }, 150_000);
        const pods = JSON.parse(await kubectl('get', 'pods', '-l', 'job-name=agent-job', '-o', 'json')) as { items: StoredObject[] };
        assert.equal(pods.items[0]?.spec?.nodeName, node);
        assert.equal(pods.items[0]?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 0);
        assert.equal((await kubectl('logs', 'job/agent-job')).trim(), '42');
        assert.doesNotMatch(agent?.output() ?? '', /forbidden/i);
      });
    });

    describe('skiff up as its ServiceAccount', () => {
      let up: Daemon | undefined;

      before(async () => {
        const token = (await kubectl('create', 'token', 'skiff', '-n', 'skiff-system')).trim();
        writeKubeconfigFile(join(dir, 'kubeconfig-skiff'), cluster.server, cluster.caFile, token);
        up = skiffUp(['--port', '0', '--data-dir', join(dir, 'data'), '--kubeconfig', join(dir, 'kubeconfig-skiff')]);
        await up.ready;
      }, { timeout: 180_000 });

      after(async () => {
        if (up && up.proc.exitCode === null) {
          up.proc.kill('SIGTERM');
          await up.exited;
        }
      });

      it('passes the start-up RBAC check, installs the CRDs and reconciles a PyTorchJob', { timeout: 180_000 }, async () => {
        await eventually('the banner', async () => /Objects are kept in the Kubernetes cluster at .*; CRDs installed or upgraded: \d+/.test(up?.output() ?? ''), 10_000);
        await kubectl('create', 'namespace', 'kubeflow');
        await kubectl('apply', '-f', join(conformanceDir(), 'training', 'pytorch', 'simple.yaml'));
        await eventually('the PyTorchJob\'s Created condition', async () => {
          const j = JSON.parse(await kubectl('get', 'pytorchjob', 'pytorch-simple', '-n', 'kubeflow', '-o', 'json')) as StoredObject;
          return (j.status?.conditions ?? []).some((c: { type: string }) => c.type === 'Created');
        }, 90_000);
        const pods = await eventually('its Pods, created by Skiff as the ServiceAccount', async () => {
          const list = JSON.parse(await kubectl('get', 'pods', '-n', 'kubeflow', '-l', 'training.kubeflow.org/job-name=pytorch-simple', '-o', 'json')) as { items: StoredObject[] };
          return list.items.length === 2 ? list.items : undefined;
        }, 60_000);
        for (const p of pods) assert.equal(p.metadata.ownerReferences?.[0]?.kind, 'PyTorchJob');
      });

      it('binds a Profile\'s owner to Kubeflow\'s admin role, which only its bind rule allows', { timeout: 120_000 }, async () => {
        await kubectl('apply', '--validate=strict', '-f', join(conformanceDir(), 'profiles', 'dashboard-repo', 'samples', '_v1_profile.yaml'));
        const binding = await eventually('the owner\'s RoleBinding', async () => JSON.parse(await kubectl('get', 'rolebinding', 'namespaceAdmin', '-n', 'test-user-profile', '-o', 'json')) as StoredObject & { roleRef: { name: string } }, 60_000);
        assert.equal(binding.roleRef.name, 'kubeflow-admin');
      });

      it('installs Profiles\' and Notebooks\' upstream schemas: kubectl --validate=strict refuses an unknown field', { timeout: 120_000 }, async () => {
        for (const [crd, field] of [['notebooks.kubeflow.org', 'template'], ['profiles.kubeflow.org', 'owner']] as const) {
          const live = JSON.parse(await kubectl('get', 'crd', crd, '-o', 'json')) as { spec: { versions: { name: string; schema: { openAPIV3Schema: { properties?: { spec?: { properties?: Record<string, unknown> } } } } }[] } };
          for (const v of live.spec.versions) assert.ok(v.schema.openAPIV3Schema.properties?.spec?.properties?.[field], `${crd} ${v.name} has spec.${field}`);
        }
        const notebook = readFileSync(join(conformanceDir(), 'notebooks', 'samples', '_v1_notebook.yaml'), 'utf8');
        const good = join(dir, 'notebook.yaml');
        writeFileSync(good, notebook);
        await kubectl('apply', '--validate=strict', '-n', 'kubeflow', '-f', good);
        const bad = join(dir, 'notebook-bad.yaml');
        writeFileSync(bad, notebook.replace('name: notebook-sample-v1\nspec:', 'name: notebook-bad\nspec:\n  replicas: 2'));
        assert.match(readFileSync(bad, 'utf8'), /replicas: 2/);
        await assert.rejects(kubectl('apply', '--validate=strict', '-n', 'kubeflow', '-f', bad), (e: unknown) => /unknown field "spec\.replicas"/.test((e as { stderr?: string }).stderr ?? ''));
        const badProfile = join(dir, 'profile-bad.yaml');
        writeFileSync(badProfile, 'apiVersion: kubeflow.org/v1\nkind: Profile\nmetadata: {name: bad-profile}\nspec: {owner: {kind: User, name: someone}, ownr: typo}\n');
        await assert.rejects(kubectl('apply', '--validate=strict', '-f', badProfile), (e: unknown) => /unknown field "spec\.ownr"/.test((e as { stderr?: string }).stderr ?? ''));
      });
    });

    it('refuses to start as a ServiceAccount missing one of the ClusterRole\'s rules, naming what the rule granted', { timeout: 180_000 }, async () => {
      const kubeconfig = join(dir, 'kubeconfig-skiff');
      // without the rule for Skiff's own Revisions
      const role = JSON.parse(await kubectl('get', 'clusterrole', 'skiff', '-o', 'json')) as ClusterRole & StoredObject;
      const trimmed = { apiVersion: role.apiVersion, kind: role.kind, metadata: { name: role.metadata.name, labels: role.metadata.labels }, rules: role.rules.filter((r) => !(r.apiGroups?.includes('serving.skiff.dev') && r.resources?.includes('revisions'))) };
      assert.equal(trimmed.rules.length, role.rules.length - 1);
      const file = join(dir, 'trimmed.json');
      writeFileSync(file, JSON.stringify(trimmed));
      await kubectl('replace', '-f', file);
      const as = ['--as', 'system:serviceaccount:skiff-system:skiff'];
      await eventually('RBAC to refuse it', async () => {
        try {
          await kubectl('auth', 'can-i', 'get', 'revisions.serving.skiff.dev', ...as);
          return false;
        } catch (e) {
          return /^no/m.test((e as { stdout?: string }).stdout ?? '');
        }
      });
      const refused = skiffUp(['--port', '0', '--data-dir', join(dir, 'data-refused'), '--kubeconfig', kubeconfig]);
      assert.notEqual(await refused.exited, 0);
      assert.match(refused.output(), /RBAC on https:\/\/127\.0\.0\.1:\d+ refuses what Skiff needs \(kubeconfig [^)]+ \(context test\)\): get revisions\.serving\.skiff\.dev, list revisions\.serving\.skiff\.dev, watch revisions\.serving\.skiff\.dev, create revisions\.serving\.skiff\.dev, update revisions\.serving\.skiff\.dev, delete revisions\.serving\.skiff\.dev; bind/);
      await kubectl('apply', '-k', deployDir);
    });
  });
});
