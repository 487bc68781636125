// Upstream files as test inputs: every batch/v1 Job in ../shared/conformance is accepted or rejected
// as the Kubernetes API server would, and the runnable ones run unchanged.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { TestServer } from './harness.js';
import { conformanceDir } from '../src/conformance-path.js';

const corpus = conformanceDir();

/** files that are not whole objects or carry placeholders, with the field the rejection must name */
const rejected: Record<string, string> = {
  // a documentation fragment: `spec: ...`
  'kueue/docs-extracted/concepts_workload_priority_class-02.yaml': 'spec',
  'kueue/legacy-v1beta1/concepts_workload_priority_class-02.yaml': 'spec',
  // `_ID_` placeholders the docs replace with sed before applying
  'kueue/docs-extracted/tasks_manage_setup_wait_for_pods_ready-02.yaml': 'metadata.name',
};

function jobDocuments(): { file: string; obj: any }[] {
  const files = execFileSync('grep', ['-rlE', '^kind: Job$', corpus]).toString().trim().split('\n').filter(Boolean);
  const out: { file: string; obj: any }[] = [];
  for (const f of files.sort()) {
    for (const doc of YAML.parseAllDocuments(readFileSync(f, 'utf8'))) {
      const obj = doc.toJS();
      if (obj?.apiVersion === 'batch/v1' && obj?.kind === 'Job') out.push({ file: f.slice(corpus.length + 1), obj });
    }
  }
  return out;
}

const jobs = (ns: string): string => `/apis/batch/v1/namespaces/${ns}/jobs`;

describe('upstream batch/v1 Jobs', { skip: !existsSync(corpus) && 'no ../shared/conformance here' }, () => {
  let s: TestServer;
  before(async () => {
    s = await TestServer.start({ config: { node: { cpu: 4, memory: '16Gi' } } });
    // the examples name Kueue's LocalQueue `user-queue`: Kueue's own single-ClusterQueue setup provides it
    for (const obj of YAML.parseAllDocuments(readFileSync(join(corpus, 'kueue/examples/admin/single-clusterqueue-setup.yaml'), 'utf8')).map((d) => d.toJS()).filter(Boolean)) {
      const path = obj.kind === 'LocalQueue' ? '/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues' : `/apis/kueue.x-k8s.io/v1beta2/${obj.kind === 'ClusterQueue' ? 'clusterqueues' : 'resourceflavors'}`;
      await s.create(path, obj);
    }
  });
  after(async () => {
    await s.cleanup();
  });

  it('accepts every valid one and names the field of every invalid one', async () => {
    const docs = jobDocuments();
    assert.ok(docs.length >= 15, `only ${docs.length} Jobs found`);
    for (const { file, obj } of docs) {
      const r = await s.req('POST', `${jobs(obj.metadata?.namespace ?? 'default')}?dryRun=All`, obj);
      const field = rejected[file];
      if (field) {
        assert.equal(r.status, 422, `${file}: ${r.text}`);
        assert.ok(r.body.details.causes.some((c: any) => c.field === field), `${file}: ${r.text}`);
      } else {
        assert.equal(r.status, 201, `${file}: ${r.text}`);
      }
    }
  });

  it("runs Kueue's pods-ready example: 20 indexed HTTP servers on one port, found by hostname.subdomain", async () => {
    // the docs apply this file after `sed s/_ID_/.../`; Kueue then admits the Job and unsuspends it
    const text = readFileSync(join(corpus, 'kueue/docs-extracted/tasks_manage_setup_wait_for_pods_ready-02.yaml'), 'utf8').replace(/_ID_/g, '-1');
    for (const obj of YAML.parseAllDocuments(text).map((d) => d.toJS()).filter(Boolean)) {
      const path = obj.kind === 'Job' ? jobs('default') : `/api/v1/namespaces/default/${obj.kind === 'Service' ? 'services' : 'configmaps'}`;
      await s.create(path, obj);
    }
    const done = await s.until('job-1 complete', async () => {
      const j = await s.get(`${jobs('default')}/job-1`);
      if (j.status?.conditions?.some((c: any) => c.type === 'Failed' && c.status === 'True')) throw new Error(`job-1 failed: ${JSON.stringify(j.status)}`);
      return j.status?.conditions?.some((c: any) => c.type === 'Complete' && c.status === 'True') ? j : undefined;
    }, 120_000);
    assert.equal(done.status.succeeded, 20);
    const pods = await s.get('/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-completion-index%3D0,job-name%3Djob-1');
    const log = (await s.req('GET', `/api/v1/namespaces/default/pods/${pods.items[0].metadata.name}/log`)).text;
    assert.match(log, /All workers running/);
    assert.match(log, /All workers stopped/);
  });

  it("runs Kueue's sample-job unchanged", async () => {
    const obj = YAML.parse(readFileSync(join(corpus, 'kueue/examples/jobs/sample-job.yaml'), 'utf8'));
    const created = await s.create(jobs('default'), obj);
    const name = created.metadata.name;
    assert.match(name, /^sample-job-/);
    const done = await s.until('sample-job complete', async () => {
      const j = await s.get(`${jobs('default')}/${name}`);
      return j.status?.conditions?.some((c: any) => c.type === 'Complete' && c.status === 'True') ? j : undefined;
    }, 150_000);
    assert.equal(done.status.succeeded, 3);
  });
});
