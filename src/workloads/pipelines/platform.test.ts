import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Container, Pod } from '../../api/core-types.js';
import { coreKinds } from '../../api/core.js';
import type { FieldError } from '../../api/errors.js';
import { clone } from '../../api/meta.js';
import { Validator } from '../../api/validation.js';
import { parsePipelineFile } from '../../api/kfp/ir.js';
import { applyKubernetesConfig, containerResources, executorConfig, NODE_SELECTOR_ANNOTATION, PlatformConfigError, type PlatformResult, type ResolveParam } from './platform.js';
import { conformanceDir, corpusFiles } from '../../conformance-path.js';

const corpus = join(conformanceDir(), 'kfp');
const haveCorpus = existsSync(corpus);

const walk = (dir: string): string[] => corpusFiles(dir);

/** The files the kfp-kubernetes mapping is checked against: every corpus file with a PlatformSpec document. */
const named = [
  ...walk(join(corpus, 'kubernetes')),
  ...['pipeline_with_secret_as_volume.yaml', 'pipeline_with_volume.yaml', 'pvc_mount.yaml', 'create_pod_metadata_complex.yaml'].map((f) => join(corpus, 'pipelines/valid', f)),
  ...walk(join(corpus, 'pipelines/valid/gpu-scheduling')),
];
const withPlatform = [...new Set([...named, ...walk(corpus).filter((f) => /^---\s*$/m.test(readFileSync(f, 'utf8')) && /^platforms:/m.test(readFileSync(f, 'utf8')))])].sort();

const podDef = coreKinds.find((d) => d.kind === 'Pod');

function minimalPod(): Pod {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name: 'run-1-comp-abcd1234', namespace: 'default',
      labels: { 'pipelines.kubeflow.org/run': 'run-1', 'pipelines.kubeflow.org/task': 'comp' },
      annotations: { 'pipelines.kubeflow.org/task-path': 'comp' },
    },
    spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python:3.11', command: ['python3', '-c', 'print(1)'], env: [{ name: 'KFP_POD_NAME', value: 'run-1-comp-abcd1234' }] }] },
  };
}

/** The errors the API server would answer a create of this Pod with (metadata + Pod validation). */
function apiErrors(pod: Pod): FieldError[] {
  const obj = clone(pod);
  podDef?.default?.(obj);
  const v = new Validator();
  v.labels('metadata.labels', obj.metadata.labels);
  v.stringMap('metadata.annotations', obj.metadata.annotations);
  return [...v.errors, ...(podDef?.validate?.(obj) ?? [])];
}

/** Fixed values: constants as given, pipeline inputs and task outputs as recognisable names; `optional_*` inputs were not given. */
const resolver: ResolveParam = (spec, field) => {
  const s = spec as { runtimeValue?: { constant?: unknown }; componentInputParameter?: string; taskOutputParameter?: { producerTask?: string; outputParameterKey?: string } };
  if (s?.runtimeValue) return s.runtimeValue.constant;
  if (typeof s?.componentInputParameter === 'string') return s.componentInputParameter.startsWith('optional_') ? undefined : 'input-value';
  if (s?.taskOutputParameter) return 'output-value';
  throw new Error(`${field}: no value`);
};

function main(pod: Pod): Container {
  const c = pod.spec.containers.find((x) => x.name === 'main');
  assert.ok(c);
  return c;
}

function apply(config: unknown, resolve: ResolveParam = resolver, pod = minimalPod()): { pod: Pod; result: PlatformResult } {
  const result = applyKubernetesConfig(pod, config, resolve);
  assert.deepEqual(apiErrors(pod), [], `the Pod must pass API validation: ${JSON.stringify(pod.spec)}`);
  return { pod, result };
}

describe('kfp-kubernetes configs of the conformance corpus', { skip: !haveCorpus && 'corpus not present' }, () => {
  /** file (relative to the corpus) → executor label → the Pod after applying its config */
  const applied = new Map<string, Map<string, { pod: Pod; result: PlatformResult }>>();
  const get = (file: string, exec: string): { pod: Pod; result: PlatformResult } => {
    const r = applied.get(file)?.get(exec);
    assert.ok(r, `no applied config for ${file} ${exec}`);
    return r;
  };

  test('every second document applies to a minimal Pod and gives a valid Pod', () => {
    assert.ok(named.every((f) => existsSync(f)), 'the named corpus files exist');
    assert.ok(withPlatform.length >= 30, `expected the corpus's PlatformSpec files, found ${withPlatform.length}`);
    for (const file of withPlatform) {
      const rel = relative(corpus, file);
      const { spec, platform } = parsePipelineFile(readFileSync(file, 'utf8'), rel);
      assert.ok(platform, `${rel}: a PlatformSpec document`);
      const executors = platform.platforms.kubernetes?.deploymentSpec?.executors ?? {};
      const byExec = new Map<string, { pod: Pod; result: PlatformResult }>();
      for (const label of Object.keys(executors)) {
        assert.ok(spec.deploymentSpec?.executors?.[label], `${rel}: ${label} is an executor of the pipeline`);
        const config = executorConfig(platform, label);
        assert.ok(config, `${rel}: executorConfig(${label})`);
        try {
          byExec.set(label, apply(config));
        } catch (e) {
          assert.fail(`${rel} ${label}: ${(e as Error).message}`);
        }
      }
      applied.set(rel, byExec);
    }
  });

  test('configMapAsEnv / configMapAsVolume', () => {
    const env = get('kubernetes/config_map_as_env.yaml', 'exec-comp');
    assert.deepEqual(main(env.pod).env?.at(-1), { name: 'CONFIG_MAP_VAR', valueFrom: { configMapKeyRef: { name: 'my-cm', key: 'foo', optional: false } } });
    const vol = get('kubernetes/config_map_as_vol.yaml', 'exec-comp');
    assert.deepEqual(vol.pod.spec.volumes, [{ name: 'my-cm', configMap: { name: 'my-cm', optional: false } }]);
    assert.deepEqual(main(vol.pod).volumeMounts, [{ name: 'my-cm', mountPath: '/mnt/my_vol' }]);
    assert.deepEqual(vol.result, { notes: [], pvcNames: [] });
  });

  test('secretAsEnv / secretAsVolume', () => {
    const env = get('kubernetes/secret_as_env.yaml', 'exec-comp');
    assert.deepEqual(main(env.pod).env?.at(-1), { name: 'SECRET_VAR', valueFrom: { secretKeyRef: { name: 'my-secret', key: 'password', optional: false } } });
    const vol = get('kubernetes/secret_as_vol.yaml', 'exec-comp');
    assert.deepEqual(vol.pod.spec.volumes, [{ name: 'my-secret', secret: { secretName: 'my-secret', optional: false } }]);
    assert.deepEqual(main(vol.pod).volumeMounts, [{ name: 'my-secret', mountPath: '/mnt/my_vol' }]);
    const fromInput = get('pipelines/valid/pipeline_with_secret_as_volume.yaml', 'exec-comp');
    assert.deepEqual(fromInput.pod.spec.volumes, [{ name: 'input-value', secret: { secretName: 'input-value', optional: false } }]);
    const three = get('pipelines/valid/critical/pipeline_with_secret_as_env.yaml', 'exec-comp');
    assert.deepEqual(main(three.pod).env?.slice(1).map((e) => [e.name, e.valueFrom?.secretKeyRef?.name]), [['USER_NAME', 'input-value'], ['PASSWORD_VAR1', 'test-secret-2'], ['PASSWORD_VAR2', 'output-value']]);
  });

  test('pvcMount: the claim from pvcNameParameter (task output or pipeline input), pvcNames for the cache', () => {
    for (const file of ['kubernetes/create_mount_delete_dynamic_pvc.yaml', 'kubernetes/create_mount_delete_existing_pvc.yaml', 'kubernetes/create_mount_delete_existing_pvc_from_task_output.yaml', 'pipelines/valid/pipeline_with_volume.yaml']) {
      for (const [, r] of applied.get(file) ?? []) {
        assert.deepEqual(r.pod.spec.volumes, [{ name: 'output-value', persistentVolumeClaim: { claimName: 'output-value' } }], file);
        assert.deepEqual(main(r.pod).volumeMounts, [{ name: 'output-value', mountPath: '/data' }], file);
        assert.deepEqual(r.result.pvcNames, ['output-value'], file);
      }
    }
    const { pod, result } = get('pipelines/valid/pvc_mount.yaml', 'exec-consumer');
    assert.deepEqual(pod.spec.volumes, [{ name: 'input-value', persistentVolumeClaim: { claimName: 'input-value' } }]);
    assert.deepEqual(result.pvcNames, ['input-value']);
  });

  test('emptyDirMounts keep medium and sizeLimit, with notes', () => {
    const { pod, result } = get('kubernetes/empty_dir_mounts.yaml', 'exec-comp');
    assert.deepEqual(pod.spec.volumes, [{ name: 'emptydir-vol-1', emptyDir: { medium: 'Memory', sizeLimit: '1Gi' } }]);
    assert.deepEqual(main(pod).volumeMounts, [{ name: 'emptydir-vol-1', mountPath: '/mnt/my_vol_1' }]);
    assert.ok(result.notes.some((n) => /emptydir-vol-1.*Memory.*disk/.test(n)), result.notes.join('\n'));
    assert.ok(result.notes.some((n) => /sizeLimit 1Gi is not enforced/.test(n)), result.notes.join('\n'));
  });

  test('fieldPathAsEnv and podMetadata', () => {
    const one = get('kubernetes/field_path_as_env.yaml', 'exec-comp');
    assert.deepEqual(main(one.pod).env?.at(-1), { name: 'KFP_RUN_NAME', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['pipelines.kubeflow.org/run_name']" } } });
    const { pod } = get('pipelines/valid/create_pod_metadata_complex.yaml', 'exec-validate-pod-metadata');
    assert.equal(pod.metadata.labels?.['task-label-1'], 'label-1');
    assert.equal(pod.metadata.labels?.['task-label-2'], 'label-2');
    assert.equal(pod.metadata.labels?.['pipelines.kubeflow.org/run'], 'run-1');
    assert.equal(pod.metadata.annotations?.['task-annotation'], 'annotation');
    assert.deepEqual(main(pod).env?.slice(1).map((e) => [e.name, e.valueFrom?.fieldRef?.fieldPath]), [
      ['POD_TASK_ANNOTATION', "metadata.annotations['task-annotation']"],
      ['POD_TASK_LABEL_1', "metadata.labels['task-label-1']"],
      ['POD_TASK_LABEL_2', "metadata.labels['task-label-2']"],
    ]);
    const two = get('pipelines/valid/create_pod_metadata_complex.yaml', 'exec-validate-pod-metadata-2');
    assert.equal(two.pod.metadata.annotations?.['task-annotation-2'], 'annotation-2');
  });

  test('genericEphemeralVolume: an emptyDir at the mount path, with a note', () => {
    const { pod, result } = get('kubernetes/general_ephemeral_volume.yaml', 'exec-comp');
    assert.deepEqual(pod.spec.volumes, [{ name: 'pvc-name', emptyDir: {} }]);
    // the corpus's mountPath is "path": the sandbox takes a relative target from the root
    assert.deepEqual(main(pod).volumeMounts, [{ name: 'pvc-name', mountPath: '/path' }]);
    assert.ok(result.notes.some((n) => /generic ephemeral volume pvc-name \(5Gi, ReadWriteOnce, the default storage class\) is backed by an empty directory/.test(n)), result.notes.join('\n'));
    assert.ok(result.notes.some((n) => /mountPath "path" is not an absolute path; it is mounted at \/path/.test(n)), result.notes.join('\n'));
  });

  test('imagePullSecret, activeDeadlineSeconds, securityContext', () => {
    const ips = get('kubernetes/image_pull_secrets.yaml', 'exec-comp');
    assert.deepEqual((ips.pod.spec as any).imagePullSecrets, [{ name: 'my-secret' }]);
    assert.ok(ips.result.notes.some((n) => /my-secret.*not pulled/.test(n)));
    assert.equal(get('kubernetes/timeout.yaml', 'exec-comp').pod.spec.activeDeadlineSeconds, 20);
    const sc = get('kubernetes/security_context.yaml', 'exec-print-greeting');
    assert.deepEqual((main(sc.pod) as any).securityContext, { runAsUser: 65534, runAsGroup: 0, capabilities: { drop: ['ALL'] } });
    assert.ok(sc.result.notes.some((n) => /runAsUser=65534, runAsGroup=0 is kept on the container but not applied/.test(n)));
  });

  test('initContainers share the config\'s volumes', () => {
    const { pod } = get('kubernetes/init_container.yaml', 'exec-print-greeting');
    assert.deepEqual(pod.spec.volumes, [{ name: 'shared-data', emptyDir: {} }]);
    assert.deepEqual(main(pod).volumeMounts, [{ name: 'shared-data', mountPath: '/data' }]);
    assert.deepEqual(pod.spec.initContainers, [{
      name: 'prepare-data', image: 'busybox:1.36', command: ['sh', '-c'], args: ['echo ready > /data/marker'],
      env: [{ name: 'MARKER_TEXT', value: 'ready' }], volumeMounts: [{ name: 'shared-data', mountPath: '/data' }],
    }]);
  });

  test('nodeSelector goes to an annotation, not spec.nodeSelector', () => {
    const { pod, result } = get('kubernetes/node_selector.yaml', 'exec-comp');
    assert.equal(pod.spec.nodeSelector, undefined);
    assert.deepEqual(JSON.parse(pod.metadata.annotations?.[NODE_SELECTOR_ANNOTATION] ?? ''), { 'cloud.google.com/gke-accelerator': 'nvidia-tesla-p4' });
    assert.ok(result.notes.some((n) => /nodeSelector cloud.google.com\/gke-accelerator=nvidia-tesla-p4 is not applied/.test(n)));
  });

  test('tolerations', () => {
    const { pod, result } = get('kubernetes/toleration.yaml', 'exec-comp');
    assert.deepEqual(pod.spec.tolerations, [{ key: 'key1', operator: 'Equal', value: 'value1', effect: 'NoExecute', tolerationSeconds: 10 }]);
    assert.ok(result.notes.some((n) => /no taints/.test(n)));
    const gpu = get('pipelines/valid/gpu-scheduling/nvidia_gpu_scheduling_check.yaml', 'exec-verify-gpu-scheduled');
    assert.deepEqual(gpu.pod.spec.tolerations, [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
  });

  test('nodeAffinity: JSON and matchExpressions forms', () => {
    const file = 'kubernetes/nodeaffinity.yaml';
    assert.equal((get(file, 'exec-print-hello-with-empty-json').pod.spec as any).affinity, undefined);
    assert.deepEqual((get(file, 'exec-print-hello-with-json-affinity').pod.spec as any).affinity, {
      nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, preference: { matchExpressions: [{ key: 'disktype', operator: 'In', values: ['ssd'] }] } }] },
    });
    const two = (get(file, 'exec-print-hello-with-json-affinity-2').pod.spec as any).affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution;
    assert.deepEqual(two.map((p: any) => [p.weight, p.preference.matchExpressions[0].key]), [[100, 'zone'], [50, 'instance-type']]);
    const pref = get(file, 'exec-print-hello-with-preferred-affinity');
    assert.deepEqual((pref.pod.spec as any).affinity, {
      nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['us-west-1'] }] } }] },
    });
    assert.ok(pref.result.notes.some((n) => /node affinity is kept on the Pod but not enforced/.test(n)));
  });

  test('optional inputs that were not given skip their entries', () => {
    const { pod, result } = get('pipelines/valid/critical/missing_kubernetes_optional_inputs.yaml', 'exec-log-message');
    assert.deepEqual(pod, minimalPod());
    for (const f of ['configMapAsEnv[0]', 'configMapAsVolume[0]', 'imagePullSecret[0]', 'nodeAffinity[0]', 'nodeSelector', 'secretAsEnv[0]', 'secretAsVolume[0]', 'tolerations[0]']) {
      assert.ok(result.notes.some((n) => n.startsWith(`${f} is skipped`)), `${f}: ${result.notes.join('\n')}`);
    }
  });

  test('the IR resources of the GPU pipelines', () => {
    for (const [file, want] of [
      ['pipelines/valid/gpu-scheduling/nvidia_gpu_scheduling_check.yaml', { limits: { 'nvidia.com/gpu': '1' } }],
      ['pipelines/valid/local_execution/local_execution_pipeline_with_k8s_only_methods.yaml', { limits: { cpu: '1000m', memory: '256Mi', 'nvidia.com/gpu': '1' } }],
    ] as const) {
      const { spec } = parsePipelineFile(readFileSync(join(corpus, file), 'utf8'), file);
      const container = Object.values(spec.deploymentSpec?.executors ?? {}).find((e) => e.container?.resources)?.container;
      const res = containerResources(container?.resources);
      assert.deepEqual(res, want, file);
      const pod = minimalPod();
      main(pod).resources = res;
      assert.deepEqual(apiErrors(pod), []);
    }
  });
});

describe('applyKubernetesConfig', () => {
  test('no config changes nothing', () => {
    const pod = minimalPod();
    assert.deepEqual(applyKubernetesConfig(pod, undefined, resolver), { notes: [], pvcNames: [] });
    assert.deepEqual(applyKubernetesConfig(pod, {}, resolver), { notes: [], pvcNames: [] });
    assert.deepEqual(pod, minimalPod());
  });

  test('volume names are unique DNS labels', () => {
    const { pod } = apply({
      pvcMount: [
        { mountPath: '/data', constant: 'shared' },
        { mountPath: '/data2', pvcNameParameter: { runtimeValue: { constant: 'shared' } }, subPath: 'sub/dir' },
      ],
      secretAsVolume: [
        { mountPath: '/s1', secretName: 'My.Secret_v1' },
        { mountPath: '/s2', secretName: 'cache' },
        { mountPath: '/s3', secretName: 'x'.repeat(80) },
      ],
      configMapAsVolume: [{ mountPath: '/c1', configMapName: 'shared' }],
      emptyDirMounts: [{ mountPath: '/tmp/cache', volumeName: 'cache' }],
    });
    const vols = pod.spec.volumes ?? [];
    assert.deepEqual(vols.map((v) => v.name), ['shared', 'my-secret-v1', 'cache-2', 'x'.repeat(63), 'shared-2', 'cache']);
    assert.deepEqual(main(pod).volumeMounts, [
      { name: 'shared', mountPath: '/data' },
      { name: 'shared', mountPath: '/data2', subPath: 'sub/dir' },
      { name: 'my-secret-v1', mountPath: '/s1' },
      { name: 'cache-2', mountPath: '/s2' },
      { name: 'x'.repeat(63), mountPath: '/s3' },
      { name: 'shared-2', mountPath: '/c1' },
      { name: 'cache', mountPath: '/tmp/cache' },
    ]);
    assert.equal(vols.find((v) => v.name === 'my-secret-v1')?.secret?.secretName, 'My.Secret_v1');
  });

  test('names already on the Pod are kept', () => {
    const pod = minimalPod();
    pod.spec.volumes = [{ name: 'data', emptyDir: {} }];
    main(pod).volumeMounts = [{ name: 'data', mountPath: '/scratch' }];
    apply({ pvcMount: [{ mountPath: '/data', constant: 'data' }] }, resolver, pod);
    assert.deepEqual(pod.spec.volumes, [{ name: 'data', emptyDir: {} }, { name: 'data-2', persistentVolumeClaim: { claimName: 'data' } }]);
    assert.throws(() => applyKubernetesConfig(minimalPodWith('/scratch'), { pvcMount: [{ mountPath: '/scratch', constant: 'c' }] }, resolver), /^PlatformConfigError: pvcMount\[0\]: mountPath \/scratch is already used by the volume data$/);
  });

  test('enabledSharedMemory, podAffinity, podResourceClaims, JSON parameters', () => {
    const { pod, result } = apply({
      enabledSharedMemory: { size: '2Gi' },
      podAffinity: [
        { topologyKey: 'kubernetes.io/hostname', matchPodLabels: { app: 'db' } },
        { topologyKey: 'zone', matchPodExpressions: [{ key: 'tier', operator: 'In', values: ['web'] }], weight: 10, anti: true, namespaces: ['a'] },
      ],
      podResourceClaims: [{ resourceClaimTemplateName: 'gpu-claim' }],
      nodeSelector: { nodeSelectorJson: { runtimeValue: { constant: '{"disk": "ssd"}' } } },
      tolerations: [{ tolerationJson: { runtimeValue: { constant: [{ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'Equal', value: 'c', effect: 'NoSchedule' }] } } }],
      imagePullPolicy: 'IfNotPresent',
    });
    assert.deepEqual(pod.spec.volumes, [{ name: 'shm', emptyDir: { medium: 'Memory', sizeLimit: '2Gi' } }]);
    assert.deepEqual(main(pod).volumeMounts, [{ name: 'shm', mountPath: '/dev/shm' }]);
    const spec = pod.spec as any;
    assert.deepEqual(spec.affinity, {
      podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'db' } }, topologyKey: 'kubernetes.io/hostname' }] },
      podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, podAffinityTerm: { labelSelector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['web'] }] }, topologyKey: 'zone', namespaces: ['a'] } }] },
    });
    assert.deepEqual(spec.resourceClaims, [{ name: 'gpu-claim', resourceClaimTemplateName: 'gpu-claim' }]);
    assert.deepEqual((main(pod).resources as any).claims, [{ name: 'gpu-claim' }]);
    assert.equal(pod.metadata.annotations?.[NODE_SELECTOR_ANNOTATION], '{"disk":"ssd"}');
    assert.deepEqual(pod.spec.tolerations, [{ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'Equal', value: 'c', effect: 'NoSchedule' }]);
    assert.equal(main(pod).imagePullPolicy, 'IfNotPresent');
    for (const re of [/shared memory volume shm at \/dev\/shm/, /pod affinity is kept/, /pod anti-affinity is kept/, /resource claims gpu-claim/, /nodeSelector disk=ssd/, /imagePullPolicy IfNotPresent/]) {
      assert.ok(result.notes.some((n) => re.test(n)), `${re}: ${result.notes.join('\n')}`);
    }
  });

  test('init containers mount config volumes by their config names and existing ones by name', () => {
    const pod = minimalPod();
    pod.spec.volumes = [{ name: 'workspace', emptyDir: {} }];
    const { pod: out } = apply({
      pvcMount: [{ mountPath: '/data', constant: 'My.Claim' }],
      initContainers: [{
        name: 'fetch', image: 'alpine', command: ['sh', '-c', 'true'],
        volumeMounts: [{ volumeName: 'My.Claim', mountPath: '/in' }, { volumeName: 'workspace', mountPath: '/ws' }],
        resources: { requests: { cpu: '100m' }, limits: { cpu: '1', memory: '64Mi' } },
      }],
    }, resolver, pod);
    assert.deepEqual(out.spec.initContainers?.[0]?.volumeMounts, [{ name: 'my-claim', mountPath: '/in' }, { name: 'workspace', mountPath: '/ws' }]);
    assert.deepEqual(out.spec.initContainers?.[0]?.resources, { requests: { cpu: '100m' }, limits: { cpu: '1', memory: '64Mi' } });
  });

  test('podMetadata does not override what Skiff set', () => {
    const { pod, result } = apply({ podMetadata: { labels: { 'pipelines.kubeflow.org/run': 'other', team: 'a' } } });
    assert.equal(pod.metadata.labels?.['pipelines.kubeflow.org/run'], 'run-1');
    assert.equal(pod.metadata.labels?.['team'], 'a');
    assert.ok(result.notes.some((n) => /podMetadata.labels\["pipelines.kubeflow.org\/run"\] is not applied/.test(n)));
  });

  test('unknown fields are noted, pvcNames are sorted and unique', () => {
    const { result } = apply({
      futureField: { x: 1 },
      pvcMount: [{ mountPath: '/b', constant: 'b-claim' }, { mountPath: '/a', constant: 'a-claim' }, { mountPath: '/c', constant: 'b-claim' }],
    });
    assert.deepEqual(result.pvcNames, ['a-claim', 'b-claim']);
    assert.ok(result.notes.some((n) => /futureField is not known/.test(n)));
  });

  test('legacy pvcMount oneof: taskOutputParameter and componentInputParameter go through the resolver', () => {
    const seen: unknown[] = [];
    const r: ResolveParam = (spec, field) => {
      seen.push([spec, field]);
      return 'claim';
    };
    apply({ pvcMount: [{ mountPath: '/a', taskOutputParameter: { producerTask: 'p', outputParameterKey: 'name' } }, { mountPath: '/b', componentInputParameter: 'pvc' }] }, r);
    assert.deepEqual(seen, [
      [{ taskOutputParameter: { producerTask: 'p', outputParameterKey: 'name' } }, 'pvcMount[0].taskOutputParameter'],
      [{ componentInputParameter: 'pvc' }, 'pvcMount[1].componentInputParameter'],
    ]);
  });

  describe('malformed input names the field', () => {
    const cases: [string, unknown, RegExp][] = [
      ['not a mapping', ['x'], /^KubernetesExecutorConfig: expected a mapping/],
      ['a list field that is not a list', { pvcMount: { mountPath: '/x' } }, /^pvcMount: expected a list/],
      ['pvcMount without mountPath', { pvcMount: [{ constant: 'c' }] }, /^pvcMount\[0\]: mountPath is required$/],
      ['pvcMount without a claim', { pvcMount: [{ mountPath: '/x' }] }, /^pvcMount\[0\]: the claim name is required/],
      ['pvcMount subPath escaping', { pvcMount: [{ mountPath: '/x', constant: 'c', subPath: '../up' }] }, /^pvcMount\[0\]: subPath "..\/up"/],
      ['secretAsVolume without a name', { secretAsVolume: [{ mountPath: '/x' }] }, /^secretAsVolume\[0\]: secretNameParameter \(or secretName\) is required$/],
      ['configMapAsVolume optional not a bool', { configMapAsVolume: [{ mountPath: '/x', configMapName: 'c', optional: 'yes' }] }, /^configMapAsVolume\[0\]: optional must be true or false/],
      ['secretAsEnv with a bad env var', { secretAsEnv: [{ secretName: 's', keyToEnv: [{ secretKey: 'k', envVar: '1BAD' }] }] }, /^secretAsEnv\[0\]\.keyToEnv\[0\]: envVar "1BAD" is not a valid/],
      ['configMapAsEnv without a key', { configMapAsEnv: [{ configMapName: 'c', keyToEnv: [{ envVar: 'X' }] }] }, /^configMapAsEnv\[0\]\.keyToEnv\[0\]: configMapKey is required$/],
      ['a resolved name that is not a string', { secretAsVolume: [{ mountPath: '/x', secretNameParameter: { runtimeValue: { constant: { a: 1 } } } }] }, /^secretAsVolume\[0\]\.secretNameParameter: must resolve to a name/],
      ['emptyDirMounts volumeName', { emptyDirMounts: [{ mountPath: '/x', volumeName: 'Bad_Name' }] }, /^emptyDirMounts\[0\]: volumeName "Bad_Name" must be a lowercase RFC 1123 label/],
      ['emptyDirMounts sizeLimit', { emptyDirMounts: [{ mountPath: '/x', volumeName: 'v', sizeLimit: 'lots' }] }, /^emptyDirMounts\[0\]\.sizeLimit: "lots" is not a quantity/],
      ['emptyDirMounts same name, other source', { emptyDirMounts: [{ mountPath: '/x', volumeName: 'v' }, { mountPath: '/y', volumeName: 'v', medium: 'Memory' }] }, /^emptyDirMounts\[1\]: volumeName "v" is already used/],
      ['two mounts at one path', { pvcMount: [{ mountPath: '/x', constant: 'c' }], secretAsVolume: [{ mountPath: '/x', secretName: 's' }] }, /^secretAsVolume\[0\]: mountPath \/x is already used by pvcMount\[0\]$/],
      ['genericEphemeralVolume without volumeName', { genericEphemeralVolume: [{ mountPath: '/x', size: '1Gi' }] }, /^genericEphemeralVolume\[0\]: volumeName is required$/],
      ['fieldPathAsEnv path', { fieldPathAsEnv: [{ name: 'X', fieldPath: 'spec.containers' }] }, /^fieldPathAsEnv\[0\]: fieldPath "spec.containers" is not supported/],
      ['activeDeadlineSeconds', { activeDeadlineSeconds: 'soon' }, /^activeDeadlineSeconds: must be an integer, got "soon"$/],
      ['imagePullPolicy not a string', { imagePullPolicy: 3 }, /^imagePullPolicy: must be a string, got 3$/],
      ['imagePullPolicy', { imagePullPolicy: 'Sometimes' }, /^imagePullPolicy: must be Always, Never or IfNotPresent/],
      ['toleration operator', { tolerations: [{ key: 'k', operator: 'Maybe' }] }, /^tolerations\[0\]: operator must be Exists or Equal/],
      ['toleration seconds without NoExecute', { tolerations: [{ key: 'k', operator: 'Exists', tolerationSeconds: '5' }] }, /^tolerations\[0\]: tolerationSeconds needs effect NoExecute$/],
      ['tolerationJson not JSON', { tolerations: [{ tolerationJson: { runtimeValue: { constant: '{nope' } } }] }, /^tolerations\[0\]\.tolerationJson: is not valid JSON/],
      ['nodeAffinity weight', { nodeAffinity: [{ matchExpressions: [{ key: 'k', operator: 'In', values: ['v'] }], weight: 0 }] }, /^nodeAffinity\[0\]: weight must be an integer from 1 to 100/],
      ['nodeAffinity expression without operator', { nodeAffinity: [{ matchExpressions: [{ key: 'k' }] }] }, /^nodeAffinity\[0\]\.matchExpressions\[0\]: operator is required$/],
      ['nodeSelector value', { nodeSelector: { labels: { a: 1 } } }, /^nodeSelector\.labels\["a"\]: must be a string/],
      ['podAffinity topologyKey', { podAffinity: [{ matchPodLabels: { a: 'b' } }] }, /^podAffinity\[0\]: topologyKey is required$/],
      ['podMetadata label value', { podMetadata: { labels: { team: 'not ok!' } } }, /^podMetadata\.labels\["team"\]: "not ok!" is not a valid label value/],
      ['securityContext runAsUser', { securityContext: { runAsUser: 'root' } }, /^securityContext: runAsUser must be an integer/],
      ['init container without image', { initContainers: [{ name: 'init' }] }, /^initContainers\[0\]: image is required$/],
      ['init container named main', { initContainers: [{ name: 'main', image: 'x' }] }, /^initContainers\[0\]: name "main" is already used/],
      ['init container mounting an unknown volume', { initContainers: [{ name: 'i', image: 'x', volumeMounts: [{ volumeName: 'nope', mountPath: '/n' }] }] }, /^initContainers\[0\]\.volumeMounts\[0\]: volumeName "nope" is not a volume of this Pod/],
      ['sidecar init container', { initContainers: [{ name: 'i', image: 'x', restartPolicy: 'Always' }] }, /^initContainers\[0\]: restartPolicy Always \(a sidecar/],
      ['init container resources', { initContainers: [{ name: 'i', image: 'x', resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } }] }, /^initContainers\[0\]\.resources: the cpu request 2 is more than its limit 1$/],
      ['enabledSharedMemory size', { enabledSharedMemory: { size: 'big' } }, /^enabledSharedMemory\.size: "big" is not a quantity/],
      ['podResourceClaims', { podResourceClaims: [{}] }, /^podResourceClaims\[0\]: resourceClaimTemplateName is required$/],
    ];
    for (const [what, config, re] of cases) {
      test(what, () => {
        const pod = minimalPod();
        assert.throws(() => applyKubernetesConfig(pod, config, resolver), (e: unknown) => {
          assert.ok(e instanceof PlatformConfigError, String(e));
          assert.match(e.message, re);
          return true;
        });
        assert.deepEqual(pod, minimalPod(), 'a rejected config leaves the Pod as it was');
      });
    }

    test('a resolver error comes through', () => {
      const failing: ResolveParam = (_spec, field) => {
        throw new Error(`${field}: task createpvc produced no parameter name`);
      };
      assert.throws(() => applyKubernetesConfig(minimalPod(), { pvcMount: [{ mountPath: '/d', pvcNameParameter: { taskOutputParameter: { producerTask: 'createpvc', outputParameterKey: 'name' } } }] }, failing),
        /^Error: pvcMount\[0\]\.pvcNameParameter: task createpvc produced no parameter name$/);
    });
  });
});

function minimalPodWith(mountPath: string): Pod {
  const pod = minimalPod();
  pod.spec.volumes = [{ name: 'data', emptyDir: {} }];
  main(pod).volumeMounts = [{ name: 'data', mountPath }];
  return pod;
}

describe('containerResources', () => {
  test('nothing asked, nothing returned', () => {
    assert.equal(containerResources(undefined), undefined);
    assert.equal(containerResources({}), undefined);
    assert.equal(containerResources({ accelerator: { type: 'nvidia.com/gpu', count: '0' } }), undefined);
  });

  test('the string fields win over the deprecated numbers', () => {
    assert.deepEqual(containerResources({ cpuLimit: 1.0, memoryLimit: 0.268435456, resourceCpuLimit: '1000m', resourceMemoryLimit: '256Mi' }), { limits: { cpu: '1000m', memory: '256Mi' } });
    assert.deepEqual(containerResources({ cpuLimit: 0.5, memoryLimit: 0.268435456, cpuRequest: 0.25, memoryRequest: 0.1 }), { requests: { cpu: '250m', memory: '100M' }, limits: { cpu: '500m', memory: '256Mi' } });
    assert.deepEqual(containerResources({ memoryLimit: 4 }), { limits: { memory: '4G' } });
    assert.deepEqual(containerResources({ resourceCpuRequest: '500m', resourceMemoryRequest: '4K', resourceMemoryLimit: '1G' }), { requests: { cpu: '500m', memory: '4k' }, limits: { memory: '1G' } });
  });

  test('accelerators', () => {
    assert.deepEqual(containerResources({ accelerator: { type: 'nvidia.com/gpu', count: '1', resourceType: 'nvidia.com/gpu', resourceCount: '1' } }), { limits: { 'nvidia.com/gpu': '1' } });
    assert.deepEqual(containerResources({ accelerator: { type: 'NVIDIA_TESLA_T4', count: 2 } }), { limits: { 'nvidia.com/gpu': '2' } });
    assert.deepEqual(containerResources({ accelerator: { resourceType: 'amd.com/gpu' } }), { limits: { 'amd.com/gpu': '1' } });
    assert.deepEqual(containerResources({ accelerator: { type: 'TPU_V3', count: '8' } }), { limits: { 'cloud-tpus.google.com/v3': '8' } });
  });

  test('placeholders go through the string resolver', () => {
    const r = {
      resourceCpuLimit: "{{$.inputs.parameters['pipelinechannel--cpu_limit']}}",
      resourceMemoryLimit: "{{$.inputs.parameters['pipelinechannel--memory_limit']}}",
      accelerator: { resourceType: "{{$.inputs.parameters['pipelinechannel--accelerator_type']}}", resourceCount: "{{$.inputs.parameters['pipelinechannel--accelerator_limit']}}" },
    };
    assert.throws(() => containerResources(r), /^PlatformConfigError: resources\.resourceCpuLimit: .* is an unresolved placeholder/);
    const values: Record<string, string> = { cpu_limit: '2', memory_limit: '1Gi', accelerator_type: 'nvidia.com/gpu', accelerator_limit: '1' };
    const fields: string[] = [];
    const out = containerResources(r, (s, field) => {
      fields.push(field);
      return values[/--(\w+)'/.exec(s)?.[1] ?? ''] ?? s;
    });
    assert.deepEqual(out, { limits: { cpu: '2', memory: '1Gi', 'nvidia.com/gpu': '1' } });
    assert.deepEqual(fields, ['resources.resourceCpuLimit', 'resources.resourceMemoryLimit', 'resources.accelerator.resourceType', 'resources.accelerator.resourceCount']);
  });

  test('malformed resources name the field', () => {
    assert.throws(() => containerResources('2 cpus'), /^PlatformConfigError: resources: expected a mapping/);
    assert.throws(() => containerResources({ resourceCpuLimit: 'two' }), /^PlatformConfigError: resources\.resourceCpuLimit: "two" is not a quantity/);
    assert.throws(() => containerResources({ cpuLimit: 'two' }), /^PlatformConfigError: resources\.cpuLimit: must be a number/);
    assert.throws(() => containerResources({ resourceCpuRequest: '2', resourceCpuLimit: '1' }), /^PlatformConfigError: resources: the cpu request 2 is more than its limit 1$/);
    assert.throws(() => containerResources({ accelerator: { type: 'FPGA', count: '1' } }), /^PlatformConfigError: resources\.accelerator\.type: unknown accelerator type "FPGA"/);
    assert.throws(() => containerResources({ accelerator: { type: 'nvidia.com/gpu', count: '1.5' } }), /^PlatformConfigError: resources\.accelerator\.count: must be a whole number/);
    assert.throws(() => containerResources({ accelerator: { count: '2' } }), /^PlatformConfigError: resources\.accelerator: an accelerator count needs a type/);
  });
});

describe('executorConfig', () => {
  const platform = { platforms: { kubernetes: { deploymentSpec: { executors: { 'exec-a': { activeDeadlineSeconds: '5' }, 'exec-b': 'bad' } } } } };
  test('finds an executor config by label', () => {
    assert.deepEqual(executorConfig(platform, 'exec-a'), { activeDeadlineSeconds: '5' });
    assert.equal(executorConfig(platform, 'exec-b'), undefined);
    assert.equal(executorConfig(platform, 'exec-c'), undefined);
    assert.equal(executorConfig(platform, 'toString'), undefined);
    assert.equal(executorConfig(undefined, 'exec-a'), undefined);
    assert.equal(executorConfig({ platforms: {} }, 'exec-a'), undefined);
  });
});
