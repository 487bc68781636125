// Discovery and the OpenAPI documents from the real kind registry: the shapes kubectl reads.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { defaultRegistry } from '../../api/index.js';
import { sendError } from '../body.js';
import { KubeApi } from './api.js';
import { aggregatedVersion, compareVersions, Discovery } from './discovery.js';
import { OpenApi, toSwagger2 } from './openapi.js';

/** every `$ref` in a document names a schema the document holds */
function danglingRefs(doc: any, prefix: string, schemas: Record<string, unknown>): string[] {
  const out = new Set<string>();
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) n.forEach(walk);
    else if (n && typeof n === 'object') {
      for (const [k, v] of Object.entries(n)) {
        if (k === '$ref' && typeof v === 'string') {
          if (!v.startsWith(prefix) || !schemas[v.slice(prefix.length)]) out.add(v);
        } else walk(v);
      }
    }
  };
  walk(doc);
  return [...out];
}

describe('discovery', () => {
  const d = new Discovery(defaultRegistry());

  it('negotiates aggregated discovery as client-go asks for it, and falls back to the legacy documents', () => {
    const clientGo = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
    assert.equal(aggregatedVersion(clientGo), 'v2');
    assert.equal(aggregatedVersion('application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList'), 'v2beta1');
    assert.equal(aggregatedVersion('application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'), undefined);
    assert.equal(aggregatedVersion('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0,application/json'), undefined);
    assert.equal(aggregatedVersion(undefined), undefined);
  });

  it('orders versions as Kubernetes prefers them', () => {
    assert.deepEqual(['v1alpha1', 'v2beta1', 'v1', 'v1beta1', 'v2'].sort(compareVersions), ['v2', 'v1', 'v2beta1', 'v1beta1', 'v1alpha1']);
    const kserve = d.groups().find((g) => g.name === 'serving.kserve.io');
    assert.deepEqual(kserve?.versions.map((v) => v.version), ['v1beta1', 'v1alpha1']);
    assert.equal(d.groups()[0]?.name, '');
  });

  it('lists each resource with its verbs, scope, short names, categories and subresources', () => {
    const { body, etag } = d.aggregated(true, 'v2');
    const doc = JSON.parse(body);
    assert.equal(doc.apiVersion, 'apidiscovery.k8s.io/v2');
    assert.match(etag, /^[0-9A-F]{128}$/);
    const pods = doc.items[0].versions[0].resources.find((r: any) => r.resource === 'pods');
    assert.deepEqual(pods.responseKind, { group: '', version: 'v1', kind: 'Pod' });
    assert.equal(pods.scope, 'Namespaced');
    assert.equal(pods.singularResource, 'pod');
    assert.deepEqual(pods.shortNames, ['po']);
    assert.deepEqual(pods.categories, ['all']);
    assert.deepEqual(pods.subresources.map((s: any) => s.subresource), ['attach', 'eviction', 'exec', 'log', 'portforward', 'proxy', 'status']);
    const legacy: any = d.apiResourceList('', 'v1');
    assert.deepEqual(legacy.resources.filter((r: any) => r.name.startsWith('pods')).map((r: any) => `${r.name} ${r.kind} ${r.verbs.join(',')}`), [
      'pods Pod create,delete,deletecollection,get,list,patch,update,watch', 'pods/attach PodAttachOptions create,get',
      'pods/eviction Eviction create', 'pods/exec PodExecOptions create,get', 'pods/log Pod get',
      'pods/portforward PodPortForwardOptions create,get', 'pods/proxy PodProxyOptions create,delete,get,patch,update', 'pods/status Pod get,patch,update',
    ]);
    assert.equal(d.hasSubresource(defaultRegistry().forResource('', 'v1', 'namespaces')!, 'finalize'), true);
    assert.deepEqual(legacy.resources.find((r: any) => r.name === 'namespaces').verbs, ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
    assert.equal(d.hasSubresource(defaultRegistry().forResource('', 'v1', 'configmaps')!, 'status'), false);
  });

  it('takes a group of resources the store does not hold in one call, and finds its handler', () => {
    const m = new Discovery(defaultRegistry());
    let changed = 0;
    m.onChange(() => changed++);
    m.addGroup({ group: 'metrics.k8s.io', version: 'v1beta1', resources: [{ resource: 'pods', singular: '', kind: 'PodMetrics', namespaced: true, verbs: ['get', 'list'] }] });
    assert.equal(changed, 1);
    assert.ok(m.extra('metrics.k8s.io', 'v1beta1'));
    const groups: any = m.apiGroupList();
    assert.ok(groups.groups.some((g: any) => g.name === 'metrics.k8s.io' && g.preferredVersion.version === 'v1beta1'));
    assert.equal((m.apiResourceList('metrics.k8s.io', 'v1beta1') as any).resources[0].kind, 'PodMetrics');
  });
});

describe('a group of non-stored resources', () => {
  it('is served by its handler, listed by discovery, and found by kubectl-style clients after one call', async () => {
    // discovery and routing only: no request here reaches the object client or the pod sources
    const api = new KubeApi({ client: undefined as never, registry: defaultRegistry(), logs: undefined as never });
    api.discovery.addGroup({
      group: 'metrics.k8s.io', version: 'v1beta1',
      resources: [{ resource: 'pods', singular: '', kind: 'PodMetrics', namespaced: true, verbs: ['get', 'list'] }],
      async handle(_req, res, _url, rest) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ rest }));
      },
    });
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      api.handle(req, res, url, url.pathname).catch((e) => sendError(res, e));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      assert.deepEqual(await (await fetch(`${base}/apis/metrics.k8s.io/v1beta1/namespaces/default/pods`)).json(), { rest: ['namespaces', 'default', 'pods'] });
      const list = (await (await fetch(`${base}/apis/metrics.k8s.io/v1beta1`)).json()) as any;
      assert.deepEqual(list.resources.map((r: any) => `${r.name} ${r.kind} ${r.verbs}`), ['pods PodMetrics get,list']);
      const agg = (await (await fetch(`${base}/apis`, { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } })).json()) as any;
      assert.ok(agg.items.some((g: any) => g.metadata.name === 'metrics.k8s.io'));
      assert.equal((await fetch(`${base}/apis/nothing.example.com/v1`)).status, 404);
    } finally {
      server.close();
    }
  });
});

describe('OpenAPI documents', () => {
  const api = new OpenApi(new Discovery(defaultRegistry()));
  const docs = api.documents();

  it('has one document per group-version, each self-contained', () => {
    assert.deepEqual([...docs.keys()].sort(), ['api/v1', 'apis/batch/v1', 'apis/kubeflow.org/v1', 'apis/kubeflow.org/v1alpha1', 'apis/kubeflow.org/v1beta1', 'apis/kubeflow.org/v2beta1', 'apis/kueue.x-k8s.io/v1beta1', 'apis/kueue.x-k8s.io/v1beta2', 'apis/modelregistry.skiff.dev/v1alpha1', 'apis/networking.k8s.io/v1', 'apis/pipelines.kubeflow.org/v2beta1', 'apis/rbac.authorization.k8s.io/v1', 'apis/serving.kserve.io/v1alpha1', 'apis/serving.kserve.io/v1beta1', 'apis/serving.skiff.dev/v1alpha1', 'apis/tuning.skiff.dev/v1']);
    for (const [key, b] of docs) {
      const schemas = (b.doc.components as any).schemas;
      assert.deepEqual(danglingRefs(b.doc, '#/components/schemas/', schemas), [], key);
    }
    const index = JSON.parse(api.indexDocument().body);
    assert.equal(index.paths['apis/batch/v1'].serverRelativeURL, `/openapi/v3/apis/batch/v1?hash=${docs.get('apis/batch/v1')?.etag}`);
  });

  it('writes built-in operations as kube-apiserver does: fieldValidation, strategic merge, the GVK', () => {
    const batch: any = docs.get('apis/batch/v1')?.doc;
    const patch = batch.paths['/apis/batch/v1/namespaces/{namespace}/jobs/{name}'].patch;
    assert.equal(patch.operationId, 'patchBatchV1NamespacedJob');
    assert.equal(patch['x-kubernetes-action'], 'patch');
    assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: 'batch', kind: 'Job', version: 'v1' });
    assert.ok(patch.parameters.some((p: any) => p.name === 'fieldValidation' && p.in === 'query' && /Strict/.test(p.description)));
    assert.ok(patch.requestBody.content['application/strategic-merge-patch+json']);
    assert.equal(batch.paths['/apis/batch/v1/jobs'].get.operationId, 'listBatchV1JobForAllNamespaces');
    assert.equal(batch.paths['/apis/batch/v1/namespaces/{namespace}/jobs/{name}/status'].get.operationId, 'readBatchV1NamespacedJobStatus');
    const core: any = docs.get('api/v1')?.doc;
    assert.equal(core.paths['/api/v1/namespaces/{namespace}/pods/{name}/exec'].post.operationId, 'connectCoreV1PostNamespacedPodExec');
    assert.equal(core.paths['/api/v1/namespaces/{namespace}/pods/{name}/log'].get.operationId, 'readCoreV1NamespacedPodLog');
    // the proxy subresources, with and without the path behind, every method their verbs name (as kube-apiserver's)
    assert.equal(core.paths['/api/v1/namespaces/{namespace}/services/{name}/proxy'].put.operationId, 'connectCoreV1PutNamespacedServiceProxy');
    assert.equal(core.paths['/api/v1/namespaces/{namespace}/services/{name}/proxy/{path}'].post.operationId, 'connectCoreV1PostNamespacedServiceProxyWithPath');
    assert.deepEqual(Object.keys(core.paths['/api/v1/namespaces/{namespace}/pods/{name}/proxy/{path}']).sort(), ['delete', 'get', 'parameters', 'patch', 'post', 'put']);
    assert.ok(core.components.schemas['io.k8s.api.core.v1.Pod']);
  });

  it('names CRD kinds as kube-apiserver does, with ObjectMeta, a List kind and merge patches only', () => {
    const kf: any = docs.get('apis/kubeflow.org/v1')?.doc;
    const pt = kf.components.schemas['org.kubeflow.v1.PyTorchJob'];
    assert.deepEqual(pt['x-kubernetes-group-version-kind'], [{ group: 'kubeflow.org', kind: 'PyTorchJob', version: 'v1' }]);
    assert.deepEqual(pt.properties.metadata.allOf, [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }]);
    assert.ok(pt.properties.spec.properties.pytorchReplicaSpecs);
    assert.equal(kf.components.schemas['org.kubeflow.v1.PyTorchJobList'].properties.items.items.$ref, '#/components/schemas/org.kubeflow.v1.PyTorchJob');
    const patch = kf.paths['/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs/{name}'].patch;
    assert.equal(patch.operationId, 'patchKubeflowOrgV1NamespacedPyTorchJob');
    assert.equal(patch.requestBody.content['application/strategic-merge-patch+json'], undefined);
    assert.ok(patch.requestBody.content['application/merge-patch+json']);
    const run: any = docs.get('apis/pipelines.kubeflow.org/v2beta1')?.doc.components;
    assert.equal(run.schemas['org.kubeflow.pipelines.v2beta1.Run']['x-kubernetes-preserve-unknown-fields'], true);
  });

  it('converts to Swagger 2.0 with every reference into definitions', () => {
    const v2: any = toSwagger2(api.unionDocument('test'), 'Kubernetes', 'v1.35.4');
    assert.equal(v2.swagger, '2.0');
    assert.deepEqual(danglingRefs(v2, '#/definitions/', v2.definitions), []);
    const create = v2.paths['/api/v1/namespaces/{namespace}/pods'].post;
    assert.equal(create.parameters[0].in, 'body');
    assert.ok(create.parameters.some((p: any) => p.name === 'fieldValidation' && p.type === 'string'));
  });
});
