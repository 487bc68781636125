import { describe, expect, it } from 'vitest';
import type { Notebook } from '../../api/workload-types';
import { defaultForm, fieldOf, formProblems, limitOf, quotaField, spawnObjects, spawnerDefaults } from './spawner';
import { connectPath, lastActivity, notebookState, resourcesOf, shortImage, stopPatch } from './view';

describe('the spawner config → a Notebook and its PVCs', () => {
  it('makes the web app\'s Notebook from the defaults: jupyter-scipy, 0.5 CPU and 1Gi with the 1.2 limit factor, a workspace PVC at /home/jovyan', () => {
    const form = { ...defaultForm(), name: 'my-nb' };
    const { notebook, pvcs } = spawnObjects(form, 'team-a', spawnerDefaults, 'alice@example.com');
    expect([notebook.apiVersion, notebook.kind, notebook.metadata.name, notebook.metadata.namespace]).toEqual(['kubeflow.org/v1', 'Notebook', 'my-nb', 'team-a']);
    const c = notebook.spec.template.spec.containers[0]!;
    expect(c.name).toBe('my-nb');
    expect(c.image).toBe('ghcr.io/kubeflow/kubeflow/notebook-servers/jupyter-scipy:latest');
    expect(c.resources).toEqual({ requests: { cpu: '0.5', memory: '1.0Gi' }, limits: { cpu: '0.6', memory: '1.2Gi' } });
    expect(c.volumeMounts).toEqual([{ name: 'my-nb-workspace', mountPath: '/home/jovyan' }, { name: 'dshm', mountPath: '/dev/shm' }]);
    expect(notebook.spec.template.spec.volumes?.[0]).toEqual({ name: 'my-nb-workspace', persistentVolumeClaim: { claimName: 'my-nb-workspace' } });
    expect(notebook.metadata.annotations).toEqual({ 'notebooks.kubeflow.org/server-type': 'jupyter', 'notebooks.kubeflow.org/creator': 'alice@example.com' });
    expect(pvcs).toEqual([{ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'my-nb-workspace', namespace: 'team-a' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } } } }]);
  });

  it('puts GPUs in limits under the vendor\'s key, mounts data volumes, and rewrites for RStudio', () => {
    const form = { ...defaultForm(), name: 'rs', serverType: 'group-two' as const, image: spawnerDefaults.images['group-two'].value, gpus: '2', gpuVendor: 'nvidia.com/gpu', workspace: false, shm: false, dataVolumes: [{ name: 'datasets', size: '', mount: '/data', existing: true }, { name: '{notebook-name}-scratch', size: '1Gi', mount: '/scratch', existing: false }] };
    const { notebook, pvcs } = spawnObjects(form, 'team-a');
    const c = notebook.spec.template.spec.containers[0]!;
    expect(c.resources?.limits?.['nvidia.com/gpu']).toBe('2');
    expect(c.resources?.requests?.['nvidia.com/gpu']).toBeUndefined();
    expect(pvcs.map((p) => p.metadata?.name)).toEqual(['rs-scratch']);
    expect(c.volumeMounts).toEqual([{ name: 'datasets', mountPath: '/data' }, { name: 'rs-scratch', mountPath: '/scratch' }]);
    expect(notebook.metadata.annotations?.['notebooks.kubeflow.org/http-rewrite-uri']).toBe('/');
    expect(JSON.parse(notebook.metadata.annotations?.['notebooks.kubeflow.org/http-headers-request-set'] ?? '{}')).toEqual({ 'X-RStudio-Root-Path': '/notebook/team-a/rs/' });
  });

  it('computes limits as the web app does, and checks the form before the server does', () => {
    expect(limitOf('1', '1.2', '')).toBe('1.2');
    expect(limitOf('2.5', '1.2', 'Gi')).toBe('3Gi');
    expect(limitOf('1', 'none', '')).toBeUndefined();
    expect(formProblems(defaultForm()).name).toMatch(/name/);
    expect(formProblems({ ...defaultForm(), name: 'Bad_Name', cpu: 'lots' })).toMatchObject({ name: expect.stringMatching(/Lowercase/), cpu: expect.any(String) });
    expect(formProblems({ ...defaultForm(), name: 'ok' })).toEqual({});
  });

  it('maps the server\'s causes and quota refusals to the form\'s fields', () => {
    expect(fieldOf('metadata.name')).toBe('name');
    expect(fieldOf('spec.template.spec.containers[0].image')).toBe('image');
    expect(fieldOf('spec.template.spec.containers[0].resources.requests[cpu]')).toBe('cpu');
    expect(fieldOf('spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]', 'nvidia.com/gpu')).toBe('gpus');
    expect(fieldOf('spec.something')).toBe('form');
    expect(quotaField('pods "nb-0" is forbidden: exceeded quota: kf-resource-quota, requested: requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=0, limited: requests.nvidia.com/gpu=1')).toBe('gpus');
    expect(quotaField('exceeded quota: q, requested: cpu=8, used: cpu=0, limited: cpu=4')).toBe('cpu');
  });
});

const nb = (annotations: Record<string, string>, status: Notebook['status']): Notebook =>
  ({ apiVersion: 'kubeflow.org/v1', kind: 'Notebook', metadata: { name: 'nb', namespace: 'team-a', annotations }, spec: { template: { spec: { containers: [{ name: 'nb', image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0', resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { 'nvidia.com/gpu': '1' } } }] } } }, status }) as Notebook;

describe('a Notebook on the list', () => {
  it('is Running, Stopped, Stopping, Waiting or in Error as its status and the stop annotation say', () => {
    expect(notebookState(nb({}, { readyReplicas: 1, containerState: { running: { startedAt: 'x' } } })).state).toBe('Running');
    expect(notebookState(nb({ 'kubeflow-resource-stopped': '2024-01-01T00:00:00Z' }, { readyReplicas: 0 })).state).toBe('Stopped');
    expect(notebookState(nb({ 'kubeflow-resource-stopped': '2024-01-01T00:00:00Z' }, { readyReplicas: 1, containerState: { running: { startedAt: 'x' } } })).state).toBe('Stopping');
    expect(notebookState(nb({}, { readyReplicas: 0, containerState: { waiting: { reason: 'ContainerCreating' } } }))).toEqual({ state: 'Waiting', why: 'ContainerCreating' });
    expect(notebookState(nb({}, { containerState: { waiting: { reason: 'ImagePullBackOff', message: 'no environment for image x' } } }))).toEqual({ state: 'Error', why: 'ImagePullBackOff: no environment for image x' });
    expect(notebookState(nb({}, {})).state).toBe('Starting');
  });

  it('shows its image, resources, last activity, Connect link, and stops and starts by merge patch', () => {
    const n = nb({ 'notebooks.kubeflow.org/last-activity': '2024-05-01T10:00:00Z' }, {});
    expect(shortImage(n)).toBe('jupyter-scipy:v1.9.0');
    expect(resourcesOf(n)).toEqual({ cpu: '500m', memory: '1Gi', gpus: '1 nvidia.com/gpu' });
    expect(lastActivity(n)).toBe('2024-05-01T10:00:00Z');
    expect(connectPath(n)).toBe('/notebook/team-a/nb/lab');
    expect(stopPatch(true, new Date('2024-05-01T10:00:00.123Z'))).toEqual({ metadata: { annotations: { 'kubeflow-resource-stopped': '2024-05-01T10:00:00Z' } } });
    expect(stopPatch(false)).toEqual({ metadata: { annotations: { 'kubeflow-resource-stopped': null } } });
  });
});
