// Images Skiff knows without any config: Katib's example trial images, whose programs ship in the
// repository's images/ directory and run in the default Python environment, Kubeflow's Jupyter
// notebook images, which run JupyterLab from the notebooks' environment (.venv-notebooks),
// PaddlePaddle's images, which run in Paddle's environment (.venv-paddle), and TensorFlow's images and
// Kubeflow's TFJob example images, which run in TensorFlow's (.venv-tensorflow).
import { join } from 'node:path';
import type { Environment, EnvironmentRule } from '../substrate/local/environments.js';

/**
 * Katib's `pytorch-mnist` and `simple-pbt` images.
 *
 * pytorch-mnist (ghcr.io/kubeflow/katib/pytorch-mnist-cpu and -gpu; the older
 * docker.io/kubeflowkatib/pytorch-mnist): its program at /opt/pytorch-mnist, the /katib directory
 * its Dockerfile makes for metrics files, and its ENTRYPOINT. Its Dockerfile's WORKDIR
 * (/opt/pytorch-mnist) is left out: the program's files are read-only here, and `--save-model`
 * writes into the working directory.
 */
export function builtinEnvironments(repoRoot: string): EnvironmentRule[] {
  const mnist = {
    files: [{ path: '/opt/pytorch-mnist', source: join(repoRoot, 'images', 'katib-pytorch-mnist') }],
    dirs: ['/katib'],
    entrypoint: ['python3', '/opt/pytorch-mnist/mnist.py'],
  };
  // simple-pbt: its program at /opt/pbt, its WORKDIR and ENTRYPOINT. The directory its program
  // checkpoints into by default is the container's own, so a trial run without Katib's checkpoint
  // volume writes nothing on the host's /var/log; the PBT trial's volume mounted there wins.
  const pbt = {
    files: [{ path: '/opt/pbt', source: join(repoRoot, 'images', 'katib-simple-pbt') }],
    dirs: ['/var/log/katib/checkpoints'],
    workingDir: '/opt/pbt',
    entrypoint: ['python3', '/opt/pbt/pbt_test.py'],
  };
  return [
    ...jupyterImages.map((image) => ({ image, environment: jupyter(repoRoot) })),
    ...[
      'ghcr.io/kubeflow/katib/pytorch-mnist-cpu*',
      'ghcr.io/kubeflow/katib/pytorch-mnist-gpu*',
      'docker.io/kubeflowkatib/pytorch-mnist*',
      'kubeflowkatib/pytorch-mnist*',
    ].map((image) => ({ image, environment: mnist })),
    ...['ghcr.io/kubeflow/katib/simple-pbt*', 'docker.io/kubeflowkatib/simple-pbt*', 'kubeflowkatib/simple-pbt*'].map((image) => ({ image, environment: pbt })),
    ...paddleImages.map((image) => ({ image, environment: paddle(repoRoot) })),
    ...tensorflowImages.map((image) => ({ image, environment: tensorflow(repoRoot) })),
    { image: 'skiff/model-server-tensorflow*', environment: tensorflowModelServer(repoRoot) },
  ];
}

/**
 * PaddlePaddle's images (CPU and GPU tags alike), as the training operator's PaddleJob examples and
 * Paddle's own documentation name them: `python` and `python3` are Paddle's environment, with the
 * CPU build of `paddlepaddle` from PyPI (python/requirements-paddle.txt), so
 * `python -m paddle.distributed.launch ...` runs as in the image.
 */
const paddleImages = [
  'registry.baidubce.com/paddlepaddle/paddle*',
  'paddlepaddle/paddle*',
  'docker.io/paddlepaddle/paddle*',
];

function paddle(repoRoot: string): Environment {
  // Paddle warns on every import that ccache is missing (it only matters to its C++ extension
  // builder); its images ship none either, and the warning would open every replica's log
  return { path: [join(repoRoot, '.venv-paddle', 'bin')], env: { PYTHONWARNINGS: 'ignore:No ccache found' } };
}

/**
 * TensorFlow's own images (every tag: `-gpu` ones too, whose programs then run on the CPU) and the
 * images of the Training Operator's TFJob examples. Those examples' programs (mnist_with_summaries.py,
 * the dist-mnist and multi-worker-strategy programs, which download MNIST) are not shipped: a job
 * naming them gets TensorFlow, and its container ends with Python's "can't open file".
 */
const tensorflowImages = [
  ...['tensorflow/tensorflow', 'docker.io/tensorflow/tensorflow'].flatMap((i) => [i, `${i}:*`, `${i}@*`]),
  ...['tf-mnist-with-summaries', 'tf-dist-mnist-test', 'tf-multi-worker-strategy', 'tf-sample']
    .flatMap((i) => [`kubeflow/${i}*`, `docker.io/kubeflow/${i}*`, `gcr.io/kubeflow-ci/${i}*`, `gcr.io/kubeflow-examples/${i}*`]),
];

/** TensorFlow (tensorflow-cpu) and scikit-learn, in an environment of their own: python/requirements-tensorflow.txt */
function tensorflow(repoRoot: string): Environment {
  const venv = join(repoRoot, '.venv-tensorflow');
  return { path: [join(venv, 'bin')], env: { VIRTUAL_ENV: venv } };
}

/**
 * The TF Serving runtime's image: Skiff's model server (python/skiff-model-server, found on PATH
 * after the environment's own bin/, so it runs in TensorFlow's python3) with TensorFlow to load
 * SavedModels.
 */
function tensorflowModelServer(repoRoot: string): Environment {
  const env = tensorflow(repoRoot);
  return { ...env, path: [...(env.path ?? []), join(repoRoot, 'python')] };
}

/** Kubeflow's Jupyter images (jupyter, jupyter-scipy, jupyter-pytorch(-cuda)(-full), jupyter-tensorflow…) */
const jupyterImages = [
  'ghcr.io/kubeflow/kubeflow/notebook-servers/jupyter*',
  'ghcr.io/kubeflow/notebooks/notebook-servers/jupyter*',
  'kubeflownotebookswg/jupyter*',
  'docker.io/kubeflownotebookswg/jupyter*',
  'public.ecr.aws/j1r0q0g6/notebooks/notebook-servers/jupyter*',
];

/** where the Jupyter images keep the user's files; a Notebook's home volume is mounted here */
export const jovyanHome = '/home/jovyan';

/**
 * The Jupyter images' contract: user jovyan with HOME at /home/jovyan, and the server started as
 * their s6 service starts it, under NB_PREFIX so the proxy needs no rewrite. HOME (and with it
 * ~/.local, the user site-packages `pip install --user` writes) is the home volume when the
 * Notebook mounts one there, so installed packages outlive the Pod; without a volume the home is
 * the container's own directory, gone with the Pod, as an image's filesystem is.
 *
 * The token is JUPYTER_TOKEN's, empty (no token, as Kubeflow's images run behind Istio) without it.
 * It has to be passed: a token given on the command line, even an empty one, wins over the
 * variable Jupyter Server would otherwise read. With tenancy on, the Notebook controller sets it.
 */
function jupyter(repoRoot: string): Environment {
  const venv = join(repoRoot, '.venv-notebooks');
  return {
    path: [`${jovyanHome}/.local/bin`, join(venv, 'bin')],
    env: { HOME: jovyanHome, NB_USER: 'jovyan', NB_UID: '1000', NB_PREFIX: '/', SHELL: '/bin/bash', PYTHONUSERBASE: `${jovyanHome}/.local`, JUPYTER_ALLOW_INSECURE_WRITES: 'true' },
    dirs: [jovyanHome],
    workingDir: jovyanHome,
    entrypoint: ['/bin/sh', '-c', [
      'exec jupyter lab --notebook-dir=/home/jovyan --ip=0.0.0.0 --no-browser --allow-root --port=8888',
      '--ServerApp.token="${JUPYTER_TOKEN:-}"', "--ServerApp.password='' --ServerApp.allow_origin='*'",
      '--ServerApp.base_url="${NB_PREFIX}" --ServerApp.authenticate_prometheus=False',
    ].join(' ')],
  };
}
