import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../api/errors.js';
import type { StoredObject } from '../../api/meta.js';
import type { Run } from '../../api/pipelines.js';
import type { RecurringRunObj } from '../../api/kfp-objects.js';
import { kfpField, toKfpError } from './errors.js';
import { artifactId, epoch, recurringRunShape, runArtifacts, runShape } from './shapes.js';

const meta = (name: string): StoredObject['metadata'] => ({ name, namespace: 'default', uid: 'u', resourceVersion: '1', creationTimestamp: '2024-01-01T00:00:00Z' });
const art = (name: string, uri: string, schemaTitle = 'system.Dataset', metadata: Record<string, unknown> = {}) => ({ name, uri, type: { schemaTitle }, metadata });

function run(status?: Run['status'], extra: Partial<Run['spec']> = {}): Run & StoredObject {
  return {
    apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run',
    metadata: { ...meta('r1'), labels: { 'pipelines.kubeflow.org/experiment-id': 'e1' }, annotations: { 'pipelines.kubeflow.org/display-name': 'my run' } },
    spec: { pipelineSpec: { pipelineInfo: { name: 'pipe' }, root: { dag: { tasks: {} } } } as any, parameters: { n: 3 }, ...extra },
    ...(status ? { status } : {}),
  };
}

describe('KFP shapes', () => {
  it('shows an unfinished run with the epoch as its finish time and no error', () => {
    const s = runShape(run());
    assert.equal(s.state, 'PENDING');
    assert.equal(s.finished_at, epoch);
    assert.equal(s.display_name, 'my run');
    assert.equal(s.experiment_id, 'e1');
    assert.equal(s.storage_state, 'AVAILABLE');
    assert.equal(s.error, undefined);
    assert.deepEqual(s.runtime_config, { parameters: { n: 3 } });
    assert.deepEqual((s.pipeline_spec as any).pipelineInfo, { name: 'pipe' });
  });

  it('wraps the spec with its platform spec, and reports a failure as an error', () => {
    const s = runShape(run({ state: 'FAILED', message: 'exit 1', failedTask: 'train', finishedAt: '2024-01-01T00:01:00Z' }, { platformSpec: { platforms: { kubernetes: {} } } }));
    assert.deepEqual(Object.keys(s.pipeline_spec as object), ['pipeline_spec', 'platform_spec']);
    assert.deepEqual(s.error, { code: 2, message: 'task train: exit 1', details: [] });
    assert.equal(s.finished_at, '2024-01-01T00:01:00Z');
    assert.deepEqual((s.state_history as any[]).map((h) => h.state), ['PENDING', 'FAILED']);
  });

  it('builds task details with parents, children, pods and artifact ids', () => {
    const data = art('data', '/root/p/r/make/1/data');
    const s = runShape(run({
      state: 'SUCCEEDED',
      tasks: {
        make: { state: 'SUCCEEDED', podName: 'pod-make', startedAt: '2024-01-01T00:00:01Z', finishedAt: '2024-01-01T00:00:02Z', outputs: { parameters: {}, artifacts: { data: [data] } } },
        loop: { state: 'SUCCEEDED' },
        'loop.0': { state: 'SUCCEEDED' },
        'loop.0.use': { state: 'FAILED', podName: 'pod-use', message: 'boom', inputs: { parameters: {}, artifacts: { d: [data] } } },
      },
    }));
    const tasks = (s.run_details as any).task_details as any[];
    const by = new Map(tasks.map((t) => [t.task_id, t]));
    assert.equal(by.get('root').display_name, 'pipe');
    assert.deepEqual(by.get('root').child_tasks, [{ task_id: 'make', pod_name: 'pod-make' }, { task_id: 'loop' }]);
    assert.equal(by.get('loop.0').parent_task_id, 'loop');
    assert.equal(by.get('loop.0').display_name, 'loop-0');
    assert.equal(by.get('loop.0.use').parent_task_id, 'loop.0');
    assert.equal(by.get('loop.0.use').end_time, epoch);
    assert.deepEqual(by.get('loop.0.use').error, { code: 2, message: 'boom', details: [] });
    assert.deepEqual(by.get('make').outputs, { data: { artifact_ids: [artifactId(data.uri)] } });
    assert.deepEqual(by.get('loop.0.use').inputs, { d: { artifact_ids: [artifactId(data.uri)] } });
    assert.equal(by.get('make').executor_detail.main_job, 'pod-make');
  });

  it('shows a task still downloading its inputs from S3 as PENDING, one uploading its outputs as RUNNING', () => {
    const s = runShape(run({ state: 'RUNNING', tasks: { fetch: { state: 'RUNNING', transfer: 'inputs' }, train: { state: 'RUNNING', podName: 'pod-train', transfer: 'outputs' } } }));
    const by = new Map(((s.run_details as any).task_details as any[]).map((t) => [t.task_id, t]));
    assert.equal(by.get('fetch').state, 'PENDING');
    assert.equal(by.get('train').state, 'RUNNING');
  });

  it('lists a run\'s artifacts once each, with producer and consumers', () => {
    const m = art('metrics', '/root/p/r/eval/2/metrics', 'system.Metrics', { acc: 0.9 });
    const d = art('data', '/root/p/r/inner/make/1/data');
    const arts = runArtifacts(run({
      state: 'SUCCEEDED',
      tasks: {
        inner: { state: 'SUCCEEDED', outputs: { parameters: {}, artifacts: { out: [d] } } },
        'inner.make': { state: 'SUCCEEDED', podName: 'p1', outputs: { parameters: {}, artifacts: { data: [d] } } },
        eval: { state: 'SUCCEEDED', podName: 'p2', inputs: { parameters: {}, artifacts: { ds: [d] } }, outputs: { parameters: {}, artifacts: { metrics: [m] } } },
      },
      outputs: { parameters: {}, artifacts: { final: [m] } },
    }));
    assert.equal(arts.length, 2);
    const data = arts.find((a) => a.uri === d.uri);
    assert.equal(data?.producer_task, 'inner.make', 'the container task, not the sub-DAG that re-exposes it');
    assert.equal(data?.output_name, 'data');
    assert.deepEqual(data?.consumers, [{ task_id: 'eval', input_name: 'ds' }]);
    assert.deepEqual(arts.find((a) => a.uri === m.uri)?.metadata, { acc: 0.9 });
    assert.match(artifactId('x'), /^\d+$/);
    assert.equal(artifactId('x'), artifactId('x'));
    assert.notEqual(artifactId('x'), artifactId('y'));
  });

  it('shows a recurring run with int64 fields as strings and its mode as status', () => {
    const rr: RecurringRunObj & StoredObject = {
      apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'RecurringRun', metadata: meta('rr1'),
      spec: { displayName: 'nightly', pipelineSpec: { pipelineInfo: { name: 'p' } } as any, trigger: { periodicSchedule: { intervalSecond: 60 } }, maxConcurrency: 2, mode: 'DISABLE' },
    };
    const s = recurringRunShape(rr);
    assert.equal(s.max_concurrency, '2');
    assert.deepEqual(s.trigger, { periodic_schedule: { interval_second: '60' } });
    assert.equal(s.status, 'DISABLED');
    assert.equal(s.no_catchup, false);
  });
});

describe('KFP errors', () => {
  it('names fields as the request did', () => {
    assert.equal(kfpField('spec.parameters.myParam', 'Run'), 'runtime_config.parameters.myParam');
    assert.equal(kfpField('spec.pipelineSpec.root.dag.tasks.a.componentRef', 'Run'), 'pipeline_spec.root.dag.tasks.a.componentRef');
    assert.equal(kfpField('spec.trigger.cronSchedule.cron', 'RecurringRun'), 'trigger.cron_schedule.cron');
    assert.equal(kfpField('spec.runtimeConfig.parameters.aB', 'RecurringRun'), 'runtime_config.parameters.aB');
  });

  it('turns validation errors into 400s with gRPC code 3', () => {
    const e = toKfpError(ApiError.invalid('Run', 'pipelines.kubeflow.org', 'r', [{ field: 'spec.parameters.n', type: 'FieldValueInvalid', message: 'Invalid value: "x": expected an integer' }]));
    assert.equal(e.http, 400);
    assert.equal(e.grpc, 3);
    assert.equal(e.message, 'Invalid input error: runtime_config.parameters.n: Invalid value: "x": expected an integer');
    const nf = toKfpError(ApiError.notFound('Run', 'pipelines.kubeflow.org', 'r'));
    assert.equal(nf.http, 404);
    assert.equal(nf.grpc, 5);
  });
});
