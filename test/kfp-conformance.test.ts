// Upstream KFP v2 pipelines as test inputs: every compiled pipeline and component in
// ../shared/conformance/kfp is submitted as a Run through the HTTP API and must reach the end it
// has on Kubeflow: SUCCEEDED, or FAILED for `valid/failing/` and the few others that fail by design.
// The `invalid/` uploads are refused at creation with a 4xx naming the problem. What needs a service
// that is not on this machine (Google Cloud, an object store or registry of a cluster, a GPU) is
// listed below with the reason and reported as skipped.
//
// One server runs the whole corpus, a few runs at a time; each file is its own test, so a wrong end
// is named with the run's message and failed task. SKIFF_KFP_CONFORMANCE_OUT=FILE writes every
// file's end as JSON lines.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { TestServer, repoRoot, sleep } from './harness.js';
import { conformanceDir } from '../src/conformance-path.js';

const corpus = join(conformanceDir(), 'kfp');
const venvPython = join(repoRoot, '.venv', 'bin', 'python');
const runsPath = '/apis/pipelines.kubeflow.org/v2beta1/namespaces/default/runs';
const outFile = process.env.SKIFF_KFP_CONFORMANCE_OUT;

/** how many runs are in flight at once */
const CONCURRENCY = 6;
/** from submission to an end, per run: the longest legitimate run here takes about 50 s */
const RUN_TIMEOUT_MS = 90_000;
/** runs that take long by design: started first, given longer */
const slow: Record<string, number> = {
  // prints in a loop for 60 s
  'pipelines/valid/log_streaming_compiled.yaml': 150_000,
  // their first task makes an environment with pandas, scikit-learn or nbclient from PyPI
  'pipelines/valid/essential/iris_pipeline_compiled.yaml': 240_000,
  'pipelines/valid/metrics_visualization_v2.yaml': 240_000,
  'pipelines/valid/critical/notebook_component_simple.yaml': 240_000,
  'pipelines/valid/notebook_component_mixed.yaml': 240_000,
};

/** the PVC that `pvc_name` parameters name; made before the runs start */
const PVC = 'kfp-conformance-pvc';

/**
 * Values for the root inputs that are required and have no default (and, for take_nap, a shorter
 * nap). Keyed by path under ../shared/conformance/kfp.
 */
const parameters: Record<string, Record<string, unknown>> = {
  'backend_test_resources/arguments-parameters.yaml': { param2: 'world' },
  // the component reads the variable it is given and fails when it is empty: one every container has
  'backend_test_resources/env-var.yaml': { env_var: 'PATH' },
  'backend_test_resources/hello-world-with-returning-component.yaml': { message: 'hello world' },
  'backend_test_resources/pvc-mount.yaml': { pvc_name: PVC },
  'backend_test_resources/sequential.yaml': { param1: 'hello', param2: 'world' },
  'components/add_numbers.yaml': { a: 1, b: 2 },
  'components/arguments_parameters.yaml': { param2: 'world' },
  'components/concat_message.yaml': { message1: 'hello ', message2: 'world' },
  'components/container_io.yaml': { text: 'hello' },
  'components/container_with_artifact_output.yaml': { num_epochs: 2 },
  'components/container_with_concat_placeholder.yaml': { text1: 'hello' },
  'components/containerized_python_component.yaml': { message1: 'hello ', message2: 'world' },
  'components/dict_input.yaml': { struct: { a: 1, b: 'two' } },
  'components/identity.yaml': { value: 'hello' },
  'components/preprocess.yaml': { message: 'hello', input_dict_parameter: { A: 1, B: 2 }, input_list_parameter: ['a', 'b', 'c'] },
  'pipelines/valid/env-var.yaml': { env_var: 'PATH' },
  'pipelines/valid/essential/lightweight_python_functions_pipeline.yaml': { message: 'hello' },
  'pipelines/valid/essential/lightweight_python_functions_with_outputs.yaml': { first_message: 'hello', first_number: 1, second_message: 'world', second_number: 2 },
  'pipelines/valid/pipeline_with_parallelfor_parallelism.yaml': { loop_parameter: ['a', 'b', 'c'] },
  'pipelines/valid/pipeline_with_parallelfor_pipeline_param.yaml': { loop_parameter: ['a', 'b', 'c'], prefix: 'item' },
  'pipelines/valid/pvc_mount.yaml': { pvc_name: PVC },
  'pipelines/valid/sequential_v1.yaml': { param1: 'hello', param2: 'world' },
  // naptime_secs defaults to 900
  'pipelines/valid/take_nap_compiled.yaml': { naptime_secs: 2 },
  'pipelines/valid/take_nap_pipeline_root_compiled.yaml': { naptime_secs: 2 },
};

/** paths inside the run's scratch directory, for parameters that name a file the tasks share */
const scratchParameters: Record<string, string> = {
  'pipelines/valid/local_execution/local_execution_pipeline_with_ignore_upstream_failure.yaml': 'marker_path',
  'pipelines/valid/local_execution/local_execution_pipeline_with_retry.yaml': 'counter_path',
};

const needsGoogleCloud = 'needs Google Cloud';
/** not run here, with the reason */
const excluded: Record<string, string> = {
  'pipelines/valid/pipeline_with_condition_dynamic_task_output_custom_training_job.yaml': `${needsGoogleCloud}: a Vertex AI custom training job (google_cloud_pipeline_components, project and location)`,
  'pipelines/valid/pipeline_with_dynamic_task_output_custom_training_job.yaml': `${needsGoogleCloud}: a Vertex AI custom training job (google_cloud_pipeline_components, project and location)`,
  'pipelines/valid/pipeline_with_importer.yaml': `${needsGoogleCloud}: train() reads the imported gs://ml-pipeline-playground/shakespeare1.txt`,
  'pipelines/valid/pipeline_with_importer.json': `${needsGoogleCloud}: train() reads the imported gs://ml-pipeline-playground/shakespeare1.txt`,
  'pipelines/valid/pythonic_artifact_with_single_return.yaml': `${needsGoogleCloud}: make_language_model() reads the imported gs://ml-pipeline-playground/shakespeare1.txt`,
  'pipelines/valid/pipeline_with_importer_and_gcpc_types.yaml': `${needsGoogleCloud}: a google.VertexDataset imported from gs:// for an image named "dummy"`,
  'pipelines/valid/pipeline_with_google_artifact_type.yaml': `${needsGoogleCloud}: Vertex artifact types from the aiplatform package, imported from gs://`,
  'pipelines/valid/pipeline_with_string_machine_fields_pipeline_input.yaml': 'requests an NVIDIA GPU (accelerator NVIDIA_TESLA_P4, a Vertex AI machine type); this machine has none',
  'pipelines/valid/pipeline_with_string_machine_fields_task_output.yaml': 'requests an NVIDIA GPU (accelerator NVIDIA_TESLA_P4, a Vertex AI machine type); this machine has none',
  'backend_test_resources/sequential-v2.yaml': `${needsGoogleCloud}: \`gsutil cp URL\` from the google/cloud-sdk image`,
  'pipelines/valid/sequential_v2.yaml': `${needsGoogleCloud}: \`gsutil cp URL\` from the google/cloud-sdk image`,
  'pipelines/valid/upload_download_compiled.yaml': 'needs the KFP deployment\'s MinIO object store: the last step connects to it to check the upload',
  'components/containerized_python_component.yaml': 'its code is baked into its image (a `kfp component build` image holds the module and kfp_config.ini); the local substrate runs commands, not images',
  'pipelines/valid/critical/modelcar.yaml': 'needs an OCI registry: pushes and pulls a modelcar at oci://registry.domain.local',
  'pipelines/valid/integration/ray_integration_compiled.yaml': 'needs a Ray cluster on Kubernetes (KubeRay, through codeflare-sdk)',
  // pipeline-level input artifacts: KFP's runtime config (and a Run) carries parameters only
  'components/input_artifact.yaml': 'its required input artifact `data` cannot be given to a run: a run takes parameters only',
  'components/component_with_metadata_fields.yaml': 'its required input artifacts `dataset_a`, `dataset_b` cannot be given to a run: a run takes parameters only',
  'pipelines/valid/pipeline_with_metadata_fields.yaml': 'its required input artifact `in_dataset` cannot be given to a run: a run takes parameters only',
  'pipelines/valid/pipeline_with_various_io_types.yaml': 'its required input artifact `input3` cannot be given to a run: a run takes parameters only',
  'pipelines/valid/two_step_pipeline.yaml': `${needsGoogleCloud}: \`gsutil cat\` and \`gsutil cp\` of gs:// artifacts from the google/cloud-sdk image`,
  'kubernetes/node_selector.yaml': `${needsGoogleCloud}: its node selector asks for a GKE node (cloud.google.com/gke-accelerator: nvidia-tesla-p4)`,
  'pipelines/valid/xgboost_sample_pipeline.yaml': 'needs data.cityofchicago.org (not reachable from here), and pins xgboost 1.1.1 / pandas 1.0.5 of its python:3.7 images',
  'pipelines/valid/critical/pipeline_with_artifact_upload_download.yaml': 'downloads the google/frames-benchmark dataset from the Hugging Face Hub (not reachable from here)',
  // SDK compile fixtures: their programs exist in no image
  'components/container_io.yaml': 'calls `my_program`, a placeholder the SDK\'s compile tests use; no image has it',
  'components/container_with_concat_placeholder.yaml': 'calls `my_program`, a placeholder the SDK\'s compile tests use; no image has it',
  'components/container_with_if_placeholder.yaml': 'calls `my_program`, a placeholder the SDK\'s compile tests use; no image has it',
  'components/container_with_placeholder_in_fstring.yaml': 'calls `my_program`, a placeholder the SDK\'s compile tests use; no image has it',
  'components/container_with_artifact_output.yaml': 'runs `sh run.sh` from gcr.io/my-image, a placeholder image of the SDK\'s compile tests',
  'pipelines/valid/long-running.yaml': 'runs for 10 minutes by design: two `sleep 300` steps, with no parameter to shorten them',
  'backend_test_resources/long-running.yaml': 'runs for 10 minutes by design: two `sleep 300` steps, with no parameter to shorten them',
};

/** requests an NVIDIA GPU: runs only where the node has one */
const needsGpu = new Set([
  'pipelines/valid/gpu-scheduling/nvidia_gpu_scheduling_check.yaml',
  'pipelines/valid/local_execution/local_execution_pipeline_with_k8s_only_methods.yaml',
]);

/** outside valid/failing/, the pipelines whose design ends the run FAILED, and why */
const failsByDesign: Record<string, string> = {
  'pipelines/valid/pipeline_with_task_final_status.yaml': 'fail_op inside the exit handler exits 1; the exit task still runs',
  'pipelines/valid/pipeline_as_exit_task.yaml': 'fail_op inside the exit handler exits 1; the exit pipeline still runs',
  'pipelines/valid/pipeline_with_task_using_ignore_upstream_failure.yaml': 'fail_op exits 1; its ignore_upstream_failure() consumer still runs',
  'pipelines/valid/local_execution/local_execution_pipeline_with_ignore_upstream_failure.yaml': 'fail_always raises; its ignore_upstream_failure() consumer still writes the marker',
  // pipeline_with_pod_metadata.yaml gives this task its fieldPathAsEnv; this file gives it none
  'pipelines/valid/create_pod_metadata_complex.yaml': 'validate-no-pod-metadata wants POD_TASK_ANNOTATION set to "", but nothing sets it: os.getenv gives None',
};

/** the problem each invalid upload must be refused for */
const invalid: Record<string, RegExp> = {
  'pipelines/invalid/empty_file.yaml': /spec\.pipelineSpec/,
  'pipelines/invalid/invalid_yaml.yaml': /comp-echo|components/,
  'pipelines/invalid/no_name.yaml': /pipelineInfo\.name/,
};

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else if (/\.(ya?ml|json)$/.test(name)) out.push(p);
  }
  return out;
}

const runnable = ['pipelines/valid', 'pipelines/argo_compatibility', 'components', 'kubernetes', 'backend_test_resources']
  .flatMap((d) => filesUnder(join(corpus, d)))
  .map((f) => relative(corpus, f));

function expectedEnd(file: string): 'SUCCEEDED' | 'FAILED' {
  return file.startsWith('pipelines/valid/failing/') || failsByDesign[file] ? 'FAILED' : 'SUCCEEDED';
}

/**
 * The documents of a file. A few upstream files indent the continuation lines of a quoted scalar
 * less than YAML 1.2 allows; PyYAML (the kfp SDK's parser) and the KFP backend read them, so they are
 * read with PyYAML when the strict parser refuses them.
 */
function documents(file: string): any[] {
  const path = join(corpus, file);
  const parsed = YAML.parseAllDocuments(readFileSync(path, 'utf8'));
  if (parsed.every((d) => d.errors.length === 0)) return parsed.map((d) => d.toJS() as any);
  const python = existsSync(venvPython) ? venvPython : 'python3';
  const json = execFileSync(python, ['-c', 'import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))', path]).toString();
  return JSON.parse(json) as any[];
}

/** the pipeline spec (first document with pipelineInfo or root) and the platform spec (`platforms:`) */
function load(file: string): { pipelineSpec: any; platformSpec?: any } {
  const objects = documents(file).filter((o) => o && typeof o === 'object');
  const pipelineSpec = objects.find((o) => o.pipelineInfo || o.root) ?? objects[0] ?? null;
  const platformSpec = objects.find((o) => o.platforms);
  return platformSpec ? { pipelineSpec, platformSpec } : { pipelineSpec };
}

/** as `skiff run` (and KFP) name a run: the pipeline's name and a random suffix */
function generateName(pipelineSpec: any): string {
  const base = String(pipelineSpec?.pipelineInfo?.name ?? 'run').toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return `${base || 'run'}-`;
}

interface End {
  state: string;
  message?: string;
  failedTask?: string;
  seconds: number;
  /** the failing task's own message, when it differs from the run's */
  taskMessage?: string;
}

describe('upstream KFP pipelines run to their expected end', { skip: !existsSync(corpus) && 'no ../shared/conformance/kfp here', timeout: 30 * 60_000 }, () => {
  let s: TestServer;
  let hasGpu = false;
  const ends = new Map<string, Promise<End>>();

  async function runOne(file: string, i: number): Promise<End> {
    const { pipelineSpec, platformSpec } = load(file);
    const params: Record<string, unknown> = { ...(parameters[file] ?? {}) };
    const scratch = scratchParameters[file];
    if (scratch) {
      const dir = join(s.dataDir, `scratch-${i}`);
      mkdirSync(dir, { recursive: true });
      params[scratch] = join(dir, scratch);
    }
    const t0 = Date.now();
    const created = await s.create(runsPath, {
      apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run', metadata: { generateName: generateName(pipelineSpec) },
      spec: { pipelineSpec, ...(platformSpec ? { platformSpec } : {}), parameters: params },
    });
    const name = String(created.metadata.name);
    const timeout = slow[file] ?? RUN_TIMEOUT_MS;
    for (;;) {
      const run = await s.get(`${runsPath}/${name}`);
      const st = run.status ?? {};
      if (['SUCCEEDED', 'FAILED', 'CANCELED'].includes(st.state)) {
        const taskMessage = st.failedTask ? st.tasks?.[st.failedTask]?.message : undefined;
        return { state: st.state, message: st.message, failedTask: st.failedTask, seconds: (Date.now() - t0) / 1000, ...(taskMessage && taskMessage !== st.message ? { taskMessage } : {}) };
      }
      if (Date.now() - t0 > timeout) {
        // stop its Pods so a stuck run does not hold the machine
        await s.req('PATCH', `${runsPath}/${name}`, { spec: { terminate: true } }, { 'content-type': 'application/merge-patch+json' });
        const running = Object.entries(st.tasks ?? {}).filter(([, t]: [string, any]) => !['SUCCEEDED', 'SKIPPED', 'FAILED'].includes(t.state)).map(([k]) => k);
        return { state: `TIMEOUT (${st.state ?? 'no state'})`, message: `no end after ${timeout / 1000} s; unfinished tasks: ${running.join(', ') || 'none'}`, seconds: (Date.now() - t0) / 1000 };
      }
      await sleep(300);
    }
  }

  const skipReason = (file: string): string | undefined => excluded[file] ?? (needsGpu.has(file) && !hasGpu ? 'requests an NVIDIA GPU; this machine has none' : undefined);

  before(async () => {
    s = await TestServer.start({ config: { node: { cpu: 64, memory: '256Gi' }, verbose: false } });
    const node = (await s.get('/api/v1/nodes')).items?.[0];
    hasGpu = Number(node?.status?.capacity?.['nvidia.com/gpu'] ?? 0) > 0;
    const b64 = (v: string): string => Buffer.from(v).toString('base64');
    // what the upstream tests create in the cluster before they run these pipelines
    const secret = (name: string, data: Record<string, string>): unknown => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) });
    await s.create('/api/v1/namespaces/default/secrets', secret('test-secret-1', { username: 'user1', password: 'psw1' }));
    await s.create('/api/v1/namespaces/default/secrets', secret('test-secret-2', { username: 'user2', password: 'psw1' }));
    await s.create('/api/v1/namespaces/default/secrets', secret('test-secret-3', { username: 'user3', password: 'psw2' }));
    await s.create('/api/v1/namespaces/default/secrets', secret('my-secret', { username: 'user1', password: 'psw1' }));
    await s.create('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'my-cm' }, data: { foo: 'bar' } });
    await s.create('/api/v1/namespaces/default/persistentvolumeclaims', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: PVC }, spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: '1Gi' } } } });
    // a small pool: runs start in test order, CONCURRENCY at a time; each test awaits its own
    const queue = runnable.map((file, i) => ({ file, i })).filter(({ file }) => !skipReason(file))
      .sort((a, b) => Number(slow[b.file] !== undefined) - Number(slow[a.file] !== undefined));
    const slots: (() => void)[] = [];
    let inFlight = 0;
    const acquire = async (): Promise<void> => {
      if (inFlight < CONCURRENCY) { inFlight++; return; }
      await new Promise<void>((r) => slots.push(r));
    };
    const release = (): void => {
      const next = slots.shift();
      if (next) next();
      else inFlight--;
    };
    for (const { file, i } of queue) {
      const p = (async (): Promise<End> => {
        await acquire();
        try {
          return await runOne(file, i);
        } catch (e) {
          return { state: 'ERROR', message: (e as Error).message.split('\n')[0], seconds: 0 };
        } finally {
          release();
        }
      })();
      p.then((end) => {
        if (outFile) appendFileSync(outFile, `${JSON.stringify({ file, expected: expectedEnd(file), ...end })}\n`);
      }, () => undefined);
      ends.set(file, p);
    }
  });

  after(async () => {
    await Promise.allSettled(ends.values());
    await s?.cleanup();
  });

  for (const file of Object.keys(invalid)) {
    it(`refuses ${file} at creation`, async () => {
      const { pipelineSpec } = existsSync(join(corpus, file)) ? load(file) : { pipelineSpec: null };
      const r = await s.req('POST', runsPath, { apiVersion: 'pipelines.kubeflow.org/v2beta1', kind: 'Run', metadata: { generateName: 'invalid-' }, spec: { pipelineSpec } });
      if (outFile) appendFileSync(outFile, `${JSON.stringify({ file, expected: 'REJECTED', state: r.status >= 400 && r.status < 500 ? 'REJECTED' : `HTTP ${r.status}`, message: r.body?.message ?? r.text.slice(0, 300), seconds: 0 })}\n`);
      assert.ok(r.status >= 400 && r.status < 500, `${file}: expected a 4xx, got ${r.status}: ${r.text.slice(0, 500)}`);
      assert.match(r.text, invalid[file]!, `${file}: the refusal does not name the problem: ${r.text.slice(0, 500)}`);
    });
  }

  for (const file of runnable) {
    const expected = expectedEnd(file);
    it(`${file} ends ${expected}`, { timeout: 3 * (slow[file] ?? RUN_TIMEOUT_MS) }, async (t) => {
      const reason = skipReason(file);
      if (reason) {
        if (outFile) appendFileSync(outFile, `${JSON.stringify({ file, expected, state: 'EXCLUDED', message: reason, seconds: 0 })}\n`);
        t.skip(reason);
        return;
      }
      const end = await ends.get(file)!;
      const detail = [end.message && `message: ${end.message}`, end.failedTask && `failed task: ${end.failedTask}`, end.taskMessage && `task message: ${end.taskMessage}`].filter(Boolean).join('\n  ');
      assert.equal(end.state, expected, `${file} ended ${end.state} after ${end.seconds.toFixed(1)} s, expected ${expected}\n  ${detail}`);
    });
  }
});
