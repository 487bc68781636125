// Images Skiff knows without any config: Katib's example trial images, whose programs ship in the
// repository's images/ directory and run in the default Python environment.
import { join } from 'node:path';
import type { EnvironmentRule } from '../substrate/local/environments.js';

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
    ...[
      'ghcr.io/kubeflow/katib/pytorch-mnist-cpu*',
      'ghcr.io/kubeflow/katib/pytorch-mnist-gpu*',
      'docker.io/kubeflowkatib/pytorch-mnist*',
      'kubeflowkatib/pytorch-mnist*',
    ].map((image) => ({ image, environment: mnist })),
    ...['ghcr.io/kubeflow/katib/simple-pbt*', 'docker.io/kubeflowkatib/simple-pbt*', 'kubeflowkatib/simple-pbt*'].map((image) => ({ image, environment: pbt })),
  ];
}
