// Images Skiff knows without any config: Katib's example trial images, whose programs ship in the
// repository's images/ directory and run in the default Python environment.
import { join } from 'node:path';
import type { EnvironmentRule } from '../substrate/local/environments.js';

/**
 * Katib's `pytorch-mnist` image (ghcr.io/kubeflow/katib/pytorch-mnist-cpu and -gpu; the older
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
  return [
    'ghcr.io/kubeflow/katib/pytorch-mnist-cpu*',
    'ghcr.io/kubeflow/katib/pytorch-mnist-gpu*',
    'docker.io/kubeflowkatib/pytorch-mnist*',
    'kubeflowkatib/pytorch-mnist*',
  ].map((image) => ({ image, environment: mnist }));
}
