import assert from 'node:assert/strict';
import { it } from 'node:test';
import { capacityFrom } from '../substrate/local/capacity.js';
import { artifactsConfig, compileConfig, notebookSettings, parseDuration, queueSettings } from './config.js';
import { podsReadySettings } from '../workloads/queues/index.js';
import { podsReadyBackoffSeconds } from '../workloads/queues/integration.js';

it('config durations: Go durations or milliseconds, errors naming the option', () => {
  assert.equal(parseDuration('1h30m', 'eventTTL'), 5_400_000);
  assert.equal(parseDuration('250ms', 'jobPodBackoff'), 250);
  assert.equal(parseDuration(1500, 'jobPodBackoff'), 1500);
  assert.throws(() => parseDuration('10 s', 'crashLoopBackoff'), /^Error: crashLoopBackoff: "10 s" is not a duration \(use e\.g\. 10s, 5m, 1h\)$/);
  assert.throws(() => parseDuration('-5s', 'eventTTL'), /^Error: eventTTL: "-5s" is not a duration/);
});

it('notebook culling: off by default, Kubeflow\'s environment variables, Skiff\'s config over them', () => {
  assert.deepEqual(notebookSettings(undefined, {}), { enableCulling: false, cullIdleTimeMinutes: 1440, idlenessCheckPeriodMinutes: 1 });
  assert.deepEqual(notebookSettings(undefined, { ENABLE_CULLING: 'true', CULL_IDLE_TIME: '0.1', IDLENESS_CHECK_PERIOD: '0.05' }), { enableCulling: true, cullIdleTimeMinutes: 0.1, idlenessCheckPeriodMinutes: 0.05 });
  assert.equal(notebookSettings(undefined, { ENABLE_CULLING: 'false' }).enableCulling, false);
  assert.deepEqual(notebookSettings({ enableCulling: false, cullIdleTimeMinutes: 60 }, { ENABLE_CULLING: 'true', CULL_IDLE_TIME: '5' }), { enableCulling: false, cullIdleTimeMinutes: 60, idlenessCheckPeriodMinutes: 1 });
  assert.throws(() => notebookSettings(undefined, { CULL_IDLE_TIME: 'a day' }), /^Error: CULL_IDLE_TIME: "a day" is not a positive number of minutes$/);
  assert.throws(() => notebookSettings({ idlenessCheckPeriodMinutes: 0 }, {}), /notebooks\.idlenessCheckPeriodMinutes: "0"/);
});

it('GPUs declared for the node and the sharing options, checked', () => {
  const base = { dataDir: '/tmp/skiff-config-test' };
  const c = compileConfig({ ...base, node: { gpus: 2, gpuMemory: '40Gi', gpuType: 'NVIDIA A100' }, gpuSharing: { deviceSplitCount: 4, gpuSchedulerPolicy: 'binpack', libvgpu: '/opt/hami/libvgpu.so' } });
  assert.deepEqual(c.node, { gpus: 2, gpuMemoryMiB: 40960, gpuType: 'NVIDIA A100', cpu: undefined, memoryBytes: undefined, deviceSplitCount: 4 });
  assert.deepEqual(c.gpuSharing, { gpuSchedulerPolicy: 'binpack', libvgpu: '/opt/hami/libvgpu.so' });
  assert.deepEqual(compileConfig({ ...base, node: { gpuCards: [{ type: 'NVIDIA H100', memory: '80Gi', uuid: 'GPU-a' }, { memory: 24576 }] } }).node.gpuCards, [{ type: 'NVIDIA H100', memoryMiB: 81920, uuid: 'GPU-a' }, { memoryMiB: 24576 }]);
  assert.deepEqual(compileConfig(base).gpuSharing, { gpuSchedulerPolicy: 'spread' });
  assert.throws(() => compileConfig({ ...base, node: { gpuMemory: 'lots' } }), /^Error: node.gpuMemory: "lots" is not a quantity of memory/);
  assert.throws(() => compileConfig({ ...base, gpuSharing: { deviceSplitCount: 0 } }), /^Error: gpuSharing.deviceSplitCount: "0"/);
  assert.throws(() => compileConfig({ ...base, gpuSharing: { gpuSchedulerPolicy: 'pack' as 'spread' } }), /must be spread or binpack/);
  assert.throws(() => compileConfig({ ...base, node: { gpus: 3, gpuCards: [{}] } }), /node.gpus: 3 does not match the 1 cards/);
});

it('declared cards stand in for the machine\'s: a count keeps the real ones first', () => {
  const real = [{ index: 0, uuid: 'GPU-real', name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559 }];
  assert.deepEqual(capacityFrom(real, { gpus: 2 }).gpus, [real[0], { index: 1, uuid: 'GPU-fake-1', name: 'NVIDIA GPU', memoryMiB: 81920 }]);
  assert.deepEqual(capacityFrom(real, { gpuCards: [{ type: 'T4', memoryMiB: 15360 }] }).gpus, [{ index: 0, uuid: 'GPU-fake-0', name: 'T4', memoryMiB: 15360 }]);
  assert.deepEqual(capacityFrom(real).gpus, real);
});

it('queues.waitForPodsReady: presence turns it on with Kueue v1beta2\'s defaults, errors name the field', () => {
  assert.equal(queueSettings({}).waitForPodsReady, undefined);
  const q = queueSettings({ waitForPodsReady: {} });
  assert.deepEqual(q.waitForPodsReady, { timeout: '30m', requeuingStrategy: { timestamp: 'Eviction', backoffBaseSeconds: 60, backoffMaxSeconds: 3600 } });
  assert.deepEqual(podsReadySettings(queueSettings({ waitForPodsReady: { timeout: '5m', recoveryTimeout: '1m', requeuingStrategy: { backoffLimitCount: 3 } } })), {
    timeoutMs: 300_000, recoveryTimeoutMs: 60_000, backoffLimitCount: 3, backoffBaseSeconds: 60, backoffMaxSeconds: 3600,
  });
  assert.throws(() => queueSettings({ waitForPodsReady: { timeout: 'soon' } }), /^Error: queues\.waitForPodsReady\.timeout: "soon" is not a duration/);
  assert.throws(() => queueSettings({ waitForPodsReady: { requeuingStrategy: { backoffBaseSeconds: -1 } } }), /backoffBaseSeconds: must be a whole number/);
  // 60, 120, 240, ... capped by the maximum
  assert.deepEqual([1, 2, 3, 7].map((n) => podsReadyBackoffSeconds(n, { backoffBaseSeconds: 60, backoffMaxSeconds: 3600 })), [60, 120, 240, 3600]);
});

it('artifacts: a default root in a directory or in S3, an S3 server to hold it, errors naming the option', () => {
  assert.deepEqual(artifactsConfig(undefined), {});
  assert.deepEqual(artifactsConfig({ pipelineRoot: '/srv/artifacts' }), { pipelineRoot: '/srv/artifacts' });
  assert.deepEqual(artifactsConfig({ pipelineRoot: 'minio://mlpipeline/v2/artifacts', s3: { endpoint: 'http://minio.local:9000/', accessKey: 'k', secretKey: 's', forcePathStyle: true } }), {
    pipelineRoot: 'minio://mlpipeline/v2/artifacts',
    s3: { endpoint: 'http://minio.local:9000', credentials: { accessKeyId: 'k', secretAccessKey: 's' }, forcePathStyle: true },
  });
  assert.throws(() => artifactsConfig({ pipelineRoot: 's3://b/p' }), /^Error: artifacts\.pipelineRoot: s3:\/\/b\/p needs an S3 server: set artifacts\.s3/);
  assert.throws(() => artifactsConfig({ pipelineRoot: 'gs://b/p' }), /must be an absolute directory, file:\/\/\/path, minio:\/\/bucket\/path or s3:\/\/bucket\/path/);
  assert.throws(() => artifactsConfig({ s3: { endpoint: 'minio:9000' } }), /artifacts\.s3\.endpoint: "minio:9000" is not an http:\/\/ or https:\/\/ URL/);
  assert.throws(() => artifactsConfig({ s3: { accessKey: 'k' } }), /accessKey and secretKey go together/);
  // the launcher inside task Pods: an image, and the S3 server they reach
  assert.deepEqual(artifactsConfig({ s3: { endpoint: 'http://minio:9000' }, launcherImage: 'registry.example/skiff:1.2' }), { s3: { endpoint: 'http://minio:9000' }, launcherImage: 'registry.example/skiff:1.2' });
  assert.throws(() => artifactsConfig({ launcherImage: 'registry.example/skiff:1.2' }), /^Error: artifacts\.launcherImage: needs artifacts\.s3/);
  assert.throws(() => artifactsConfig({ s3: {}, launcherImage: 'two words' }), /artifacts\.launcherImage: "two words" is not an image name/);
});
