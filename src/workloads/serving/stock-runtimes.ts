// The ClusterServingRuntimes Skiff installs: KServe's stock set (the runtimes its default install
// applies, config/runtimes/kustomization.yaml), with upstream's names, supported model formats
// (versions, autoSelect, priorities) and protocol versions, so runtime selection picks what KServe
// would pick. Their containers are Skiff's own:
//
// - sklearn, xgboost, MLServer, TorchServe and the predictive server run `skiff-model-server`
//   (image `skiff/model-server`) with KServe's arguments, plus `--format=` where the runtime serves
//   one format (a multi-format runtime lets the server detect the format from the model file);
// - TF Serving runs the same server with `--format=tensorflow` from the image
//   `skiff/model-server-tensorflow`, which Skiff maps to TensorFlow's environment (.venv-tensorflow,
//   src/server/builtin-images.ts): SavedModels answer V1 as TF Serving answers it, and V2;
// - Triton's formats are served in process by onnxruntime-node (image `skiff/onnxruntime`, see
//   isInProcessRuntime);
// - the runtimes Skiff does not implement keep their formats and protocols but have the image
//   `skiff/unavailable` and an annotation saying why, which the controller reports as the model's
//   FailedToLoad message.
//
// kserve-openvino is not among them: upstream ships it only through Helm, not in the default install,
// and listing it would change what auto-selection picks (it serves onnx over protocol v1).
import type { Container } from '../../api/core-types.js';
import type { ClusterServingRuntime, ServingProtocol, ServingRuntimeSpec, SupportedModelFormat } from '../../api/serving.js';

export const ManagedByLabel = 'app.kubernetes.io/managed-by';
export const ManagedBySkiff = 'skiff';
export const ServerTypeAnnotation = 'serving.kserve.io/server-type';
/** set on runtimes Skiff cannot run; its value is the message the controller reports */
export const UnavailableAnnotation = 'serving.skiff.dev/unavailable';

export const ModelServerImage = 'skiff/model-server';
/** the model server in TensorFlow's environment; a `skiff/model-server` image too (render.ts) */
export const TensorFlowModelServerImage = 'skiff/model-server-tensorflow';
export const InProcessOnnxImage = 'skiff/onnxruntime';
export const UnavailableImage = 'skiff/unavailable';

const modelServerArgs = ['--model_name={{.Name}}', '--model_dir=/mnt/models', '--http_port=8080'];

function modelServer(format?: string, extra: string[] = [], image = ModelServerImage): Container {
  return {
    name: 'kserve-container',
    image,
    command: ['skiff-model-server'],
    args: [...modelServerArgs, ...(format ? [`--format=${format}`] : []), ...extra],
  };
}

function f(name: string, version: string | undefined, autoSelect: boolean | undefined, priority?: number): SupportedModelFormat {
  const out: SupportedModelFormat = { name };
  if (version !== undefined) out.version = version;
  if (autoSelect !== undefined) out.autoSelect = autoSelect;
  if (priority !== undefined) out.priority = priority;
  return out;
}

interface StockDef {
  name: string;
  serverType: string;
  formats: SupportedModelFormat[];
  protocols?: ServingProtocol[];
  containers: Container[];
  unavailable?: string;
  extra?: Partial<ServingRuntimeSpec>;
  prometheusPort?: string;
}

function unavailable(): Container[] {
  return [{ name: 'kserve-container', image: UnavailableImage, args: ['--model_name={{.Name}}', '--model_dir=/mnt/models'] }];
}

const stock: StockDef[] = [
  {
    name: 'kserve-tensorflow-serving',
    serverType: 'tensorflow-serving',
    formats: [f('tensorflow', '1', true, 2), f('tensorflow', '2', true, 2)],
    protocols: ['v1', 'grpc-v1'],
    containers: [modelServer('tensorflow', [], TensorFlowModelServerImage)],
  },
  {
    name: 'kserve-sklearnserver',
    serverType: 'sklearnserver',
    formats: [f('sklearn', '1', true, 1)],
    protocols: ['v1', 'v2'],
    containers: [modelServer('sklearn')],
  },
  {
    name: 'kserve-predictiveserver',
    serverType: 'predictiveserver',
    formats: [f('sklearn', '1', false, 3), f('xgboost', '2', false, 3), f('lightgbm', '4', false, 3)],
    protocols: ['v1', 'v2'],
    containers: [modelServer()],
    extra: { multiModel: false },
  },
  {
    name: 'kserve-mlserver',
    serverType: 'mlserver',
    formats: [
      f('sklearn', '0', true, 2), f('sklearn', '1', true, 2),
      f('xgboost', '1', true, 2), f('xgboost', '2', true, 2),
      f('lightgbm', '3', true, 2), f('lightgbm', '4', true, 2),
      f('mlflow', '1', true, 1), f('mlflow', '2', true, 1),
    ],
    protocols: ['v2'],
    // MLServer names its output tensor `predict`
    containers: [modelServer(undefined, ['--output_name=predict'])],
  },
  {
    name: 'kserve-xgbserver',
    serverType: 'xgbserver',
    formats: [f('xgboost', '2', true, 1)],
    protocols: ['v1', 'v2'],
    containers: [modelServer('xgboost')],
  },
  {
    name: 'kserve-tritonserver',
    serverType: 'tritonserver',
    formats: [f('tensorrt', '8', true, 1), f('tensorflow', '1', true, 1), f('tensorflow', '2', true, 1), f('onnx', '1', true, 1), f('pytorch', '1', undefined), f('triton', '2', true, 1)],
    protocols: ['v2', 'grpc-v2'],
    containers: [{ name: 'kserve-container', image: InProcessOnnxImage, args: ['--model_name={{.Name}}', '--model_dir=/mnt/models'] }],
    prometheusPort: '8002',
  },
  {
    name: 'kserve-pmmlserver',
    serverType: 'pmmlserver',
    formats: [f('pmml', '3', true, 1), f('pmml', '4', true, 1)],
    protocols: ['v1', 'v2'],
    containers: unavailable(),
    unavailable: 'the PMML server needs a Java PMML evaluator, which Skiff does not ship',
  },
  {
    name: 'kserve-paddleserver',
    serverType: 'paddleserver',
    formats: [f('paddle', '2', true, 1)],
    protocols: ['v1', 'v2'],
    containers: unavailable(),
    unavailable: 'the Paddle server needs PaddlePaddle, which Skiff does not ship',
  },
  {
    name: 'kserve-lgbserver',
    serverType: 'lgbserver',
    formats: [f('lightgbm', '4', true, 1)],
    protocols: ['v1', 'v2'],
    containers: unavailable(),
    unavailable: 'the LightGBM server needs LightGBM, which Skiff does not ship',
  },
  {
    name: 'kserve-torchserve',
    serverType: 'torchserve',
    formats: [f('pytorch', '1', true, 2)],
    protocols: ['v1', 'v2', 'grpc-v2'],
    containers: [modelServer('pytorch')],
    prometheusPort: '8082',
  },
  {
    name: 'kserve-huggingfaceserver',
    serverType: 'huggingfaceserver',
    formats: [f('huggingface', '1', true, 1)],
    protocols: ['v2', 'v1'],
    containers: unavailable(),
    unavailable: 'the Hugging Face server (transformers, vLLM) is not shipped with Skiff',
  },
  {
    name: 'kserve-huggingfaceserver-multinode',
    serverType: 'huggingfaceserver',
    formats: [f('huggingface', '1', true, 2)],
    protocols: ['v2', 'v1'],
    containers: unavailable(),
    unavailable: 'multi-node serving (Ray across several nodes) does not exist on one machine',
    extra: { workerSpec: { pipelineParallelSize: 1, tensorParallelSize: 1, containers: [{ name: 'worker-container', image: UnavailableImage }] } },
  },
  {
    name: 'kserve-autogluonserver',
    serverType: 'autogluonserver',
    formats: [f('autogluon', '1', true, 1)],
    protocols: ['v1', 'v2'],
    containers: unavailable(),
    unavailable: 'the AutoGluon server needs AutoGluon, which Skiff does not ship',
  },
  {
    name: 'kserve-vllmserver',
    serverType: 'vllmserver',
    formats: [f('vLLM', '1', true, 1)],
    containers: unavailable(),
    unavailable: 'the vLLM server is not shipped with Skiff',
  },
];

/** The names of the stock runtimes, in upstream's install order. */
export const stockRuntimeNames: readonly string[] = stock.map((s) => s.name);

/** Fresh copies of the stock ClusterServingRuntimes (callers may change them). */
export function stockClusterServingRuntimes(): ClusterServingRuntime[] {
  return stock.map((s) => {
    const annotations: Record<string, string> = { [ServerTypeAnnotation]: s.serverType };
    if (s.unavailable) annotations[UnavailableAnnotation] = `${s.name} is not available on Skiff: ${s.unavailable}`;
    const spec: ServingRuntimeSpec = {
      annotations: { 'prometheus.kserve.io/port': s.prometheusPort ?? '8080', 'prometheus.kserve.io/path': '/metrics' },
      supportedModelFormats: s.formats.map((x) => ({ ...x })),
      ...(s.protocols ? { protocolVersions: [...s.protocols] } : {}),
      containers: s.containers.map((c) => structuredClone(c)),
      ...structuredClone(s.extra ?? {}),
    };
    return {
      apiVersion: 'serving.kserve.io/v1alpha1',
      kind: 'ClusterServingRuntime',
      metadata: { name: s.name, labels: { [ManagedByLabel]: ManagedBySkiff }, annotations },
      spec,
    };
  });
}

/** A runtime whose model is served inside the Skiff process by onnxruntime-node, not by a Pod. */
export function isInProcessRuntime(spec: ServingRuntimeSpec): boolean {
  return spec.containers?.[0]?.image === InProcessOnnxImage;
}

/** The reason a runtime cannot run on Skiff, or undefined when it can. */
export function runtimeUnavailableReason(runtime: { metadata: { annotations?: Record<string, string> }; spec: ServingRuntimeSpec }): string | undefined {
  const note = runtime.metadata.annotations?.[UnavailableAnnotation];
  if (note) return note;
  return runtime.spec.containers?.[0]?.image === UnavailableImage ? 'this runtime is not available on Skiff' : undefined;
}
