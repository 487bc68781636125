// The "New notebook" form's data, as Kubeflow's Jupyter web app has it: the defaults of its
// spawner_ui_config.yaml (images per server type, CPU and memory with their limit factors, GPU vendors,
// the workspace volume, data volumes, configurations), and what the form makes from them: a Notebook
// (kubeflow.org/v1) and the PVCs of its new volumes, named and shaped as the web app names and shapes them.
import type { Notebook, Volume } from '../../api/workload-types';
import type { KObject } from '../../api/types';

export type ServerType = 'jupyter' | 'group-one' | 'group-two';

export interface GpuVendor {
  limitsKey: string;
  uiName: string;
}

export interface SpawnerConfig {
  /** the image choices of each server type (the web app's image, imageGroupOne, imageGroupTwo) */
  images: Record<ServerType, { value: string; options: string[] }>;
  allowCustomImage: boolean;
  cpu: { value: string; limitFactor: string };
  memory: { value: string; limitFactor: string };
  gpus: { vendors: GpuVendor[]; num: string; vendor: string };
  workspaceVolume: { mount: string; name: string; size: string; accessMode: string };
  /** PodDefaults' labels a user may pick (none shipped: a namespace's PodDefaults are its own) */
  configurations: string[];
  shm: boolean;
}

/** spawner_ui_config.yaml's spawnerFormDefaults, as Kubeflow ships them */
export const spawnerDefaults: SpawnerConfig = {
  images: {
    jupyter: {
      value: 'ghcr.io/kubeflow/kubeflow/notebook-servers/jupyter-scipy:latest',
      options: [
        'ghcr.io/kubeflow/kubeflow/notebook-servers/jupyter-scipy:latest',
        'ghcr.io/kubeflow/kubeflow/notebook-servers/jupyter-pytorch-full:latest',
        'ghcr.io/kubeflow/kubeflow/notebook-servers/jupyter-pytorch-cuda-full:latest',
        'ghcr.io/kubeflow/kubeflow/notebook-servers/jupyter-tensorflow-full:latest',
        'ghcr.io/kubeflow/kubeflow/notebook-servers/jupyter-tensorflow-cuda-full:latest',
      ],
    },
    'group-one': { value: 'ghcr.io/kubeflow/kubeflow/notebook-servers/codeserver-python:latest', options: ['ghcr.io/kubeflow/kubeflow/notebook-servers/codeserver-python:latest'] },
    'group-two': { value: 'ghcr.io/kubeflow/kubeflow/notebook-servers/rstudio-tidyverse:latest', options: ['ghcr.io/kubeflow/kubeflow/notebook-servers/rstudio-tidyverse:latest'] },
  },
  allowCustomImage: true,
  cpu: { value: '0.5', limitFactor: '1.2' },
  memory: { value: '1.0Gi', limitFactor: '1.2' },
  gpus: {
    vendors: [
      { limitsKey: 'nvidia.com/gpu', uiName: 'NVIDIA' },
      { limitsKey: 'amd.com/gpu', uiName: 'AMD' },
      { limitsKey: 'habana.ai/gaudi', uiName: 'Intel Gaudi' },
    ],
    num: 'none',
    vendor: '',
  },
  workspaceVolume: { mount: '/home/jovyan', name: '{notebook-name}-workspace', size: '5Gi', accessMode: 'ReadWriteOnce' },
  configurations: [],
  shm: true,
};

export const serverTypes: { type: ServerType; label: string }[] = [
  { type: 'jupyter', label: 'JupyterLab' },
  { type: 'group-one', label: 'VS Code (code-server)' },
  { type: 'group-two', label: 'RStudio' },
];

export interface DataVolume {
  /** a new PVC of this name and size, or an existing claim (size empty) */
  name: string;
  size: string;
  mount: string;
  existing: boolean;
}

export interface SpawnForm {
  name: string;
  serverType: ServerType;
  image: string;
  cpu: string;
  memory: string;
  /** 'none' or a count */
  gpus: string;
  gpuVendor: string;
  /** no workspace volume: the home is the container's own, gone with the Pod */
  workspace: boolean;
  workspaceName: string;
  workspaceSize: string;
  dataVolumes: DataVolume[];
  configurations: string[];
  shm: boolean;
}

export function defaultForm(config: SpawnerConfig = spawnerDefaults): SpawnForm {
  return {
    name: '',
    serverType: 'jupyter',
    image: config.images.jupyter.value,
    cpu: config.cpu.value,
    memory: config.memory.value,
    gpus: config.gpus.num,
    gpuVendor: config.gpus.vendor || (config.gpus.vendors[0]?.limitsKey ?? ''),
    workspace: true,
    workspaceName: config.workspaceVolume.name,
    workspaceSize: config.workspaceVolume.size,
    dataVolumes: [],
    configurations: [...config.configurations],
    shm: config.shm,
  };
}

/** `{notebook-name}` in a volume's name, as the web app fills it in */
export function volumeName(template: string, notebook: string): string {
  return template.replace(/\{notebook-name\}/g, notebook);
}

/** a limit from a request and a factor, as the web app computes it (3 decimals for CPU, Gi for memory); none: no limit */
export function limitOf(value: string, factor: string, unit: '' | 'Gi'): string | undefined {
  if (factor === 'none' || factor === '') return undefined;
  const n = Number.parseFloat(value);
  const f = Number.parseFloat(factor);
  if (!Number.isFinite(n) || !Number.isFinite(f)) return undefined;
  const v = Math.round(n * f * 1000) / 1000;
  return `${v}${unit}`;
}

/** memory as the web app sends it: a bare number is Gi */
function memoryOf(value: string): string {
  const v = value.trim();
  return /^\d+(\.\d+)?$/.test(v) ? `${v}Gi` : v;
}

/** the Notebook the form describes, and the PVCs to create before it, in `namespace` */
export function spawnObjects(form: SpawnForm, namespace: string, config: SpawnerConfig = spawnerDefaults, creator?: string): { notebook: Notebook; pvcs: KObject[] } {
  const name = form.name.trim();
  const memory = memoryOf(form.memory);
  const requests: Record<string, string> = { cpu: form.cpu.trim(), memory };
  const limits: Record<string, string> = {};
  const cpuLimit = limitOf(form.cpu, config.cpu.limitFactor, '');
  if (cpuLimit) limits.cpu = cpuLimit;
  const memGi = /^\d+(\.\d+)?Gi$/.test(memory) ? memory.slice(0, -2) : undefined;
  const memLimit = memGi === undefined ? undefined : limitOf(memGi, config.memory.limitFactor, 'Gi');
  if (memLimit) limits.memory = memLimit;
  // GPUs are limits only, as the web app sets them: Kubernetes takes the request from the limit
  if (form.gpus !== 'none' && form.gpus !== '' && form.gpus !== '0' && form.gpuVendor) limits[form.gpuVendor] = form.gpus;

  const pvcs: KObject[] = [];
  const volumes: Volume[] = [];
  const mounts: { name: string; mountPath: string }[] = [];
  const claim = (claimName: string, size: string, mount: string, existing: boolean): void => {
    if (!existing) {
      pvcs.push({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: claimName, namespace },
        spec: { accessModes: [config.workspaceVolume.accessMode], resources: { requests: { storage: size } } },
      } as KObject);
    }
    volumes.push({ name: claimName, persistentVolumeClaim: { claimName } });
    mounts.push({ name: claimName, mountPath: mount });
  };
  if (form.workspace) claim(volumeName(form.workspaceName, name), form.workspaceSize, config.workspaceVolume.mount, false);
  for (const d of form.dataVolumes) claim(volumeName(d.name, name), d.size, d.mount, d.existing);
  if (form.shm) {
    // a bigger /dev/shm than a container's default, for PyTorch's data loaders (the web app's "shm")
    volumes.push({ name: 'dshm', emptyDir: { medium: 'Memory' } });
    mounts.push({ name: 'dshm', mountPath: '/dev/shm' });
  }

  const annotations: Record<string, string> = { 'notebooks.kubeflow.org/server-type': form.serverType };
  if (creator) annotations['notebooks.kubeflow.org/creator'] = creator;
  // code-server and RStudio serve at the root: the proxy rewrites the prefix away (RStudio is told it)
  if (form.serverType !== 'jupyter') annotations['notebooks.kubeflow.org/http-rewrite-uri'] = '/';
  if (form.serverType === 'group-two') annotations['notebooks.kubeflow.org/http-headers-request-set'] = JSON.stringify({ 'X-RStudio-Root-Path': `/notebook/${namespace}/${name}/` });
  const labels: Record<string, string> = { app: name };
  for (const c of form.configurations) labels[c] = 'true';

  const notebook = {
    apiVersion: 'kubeflow.org/v1',
    kind: 'Notebook',
    metadata: { name, namespace, labels, annotations },
    spec: {
      template: {
        spec: {
          serviceAccountName: 'default-editor',
          containers: [
            {
              name,
              image: form.image.trim(),
              imagePullPolicy: 'IfNotPresent',
              resources: { requests, ...(Object.keys(limits).length ? { limits } : {}) },
              volumeMounts: mounts,
            },
          ],
          volumes,
        },
      },
    },
  } satisfies Notebook;
  return { notebook, pvcs };
}

/** the form field a server's error cause is about (its `field`), for showing the message there */
export type FormField = 'name' | 'image' | 'cpu' | 'memory' | 'gpus' | 'workspace' | 'dataVolumes' | 'form';

export function fieldOf(cause: string | undefined, gpuKey?: string): FormField {
  const f = cause ?? '';
  if (f === 'metadata.name' || f.endsWith('containers[0].name')) return 'name';
  if (/containers\[0\]\.image/.test(f)) return 'image';
  if (gpuKey && f.includes(gpuKey)) return 'gpus';
  if (/resources\.(requests|limits)\[?\.?cpu|\bcpu\b/.test(f)) return 'cpu';
  if (/memory/.test(f)) return 'memory';
  if (/volumes|volumeMounts|spec\.resources\.requests\[?storage|storage/.test(f)) return 'workspace';
  return 'form';
}

/** which field a quota refusal is about: the resource it names first */
export function quotaField(message: string): FormField {
  const m = /requested: ([^=,]+)=/.exec(message);
  const r = m?.[1] ?? '';
  if (r.includes('gpu') || r.includes('gaudi')) return 'gpus';
  if (r.includes('cpu')) return 'cpu';
  if (r.includes('memory')) return 'memory';
  if (r.includes('storage') || r.includes('persistentvolumeclaims')) return 'workspace';
  return 'form';
}

/** what is wrong with the form before asking the server (the server's own checks follow) */
export function formProblems(form: SpawnForm): Partial<Record<FormField, string>> {
  const out: Partial<Record<FormField, string>> = {};
  const name = form.name.trim();
  if (!name) out.name = 'Give the notebook a name.';
  else if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 52) out.name = 'Lowercase letters, digits and “-”, starting and ending with a letter or digit, at most 52 characters.';
  if (!form.image.trim()) out.image = 'Pick an image.';
  if (!/^\d+(\.\d+)?m?$/.test(form.cpu.trim())) out.cpu = 'A number of CPUs, such as 0.5 or 500m.';
  if (!/^\d+(\.\d+)?([KMGTPE]i?)?$/.test(form.memory.trim())) out.memory = 'An amount such as 1.0Gi or 512Mi.';
  return out;
}
