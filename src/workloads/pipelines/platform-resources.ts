// The IR container's `resources` (PipelineContainerSpec.ResourceSpec) as the main container's
// requests and limits: CPU, memory and accelerators, with pipeline-input placeholders resolved.
import { formatCpu } from '../../api/quantity.js';
import { isQualifiedName } from '../../api/validation.js';
import { isPlainObject } from '../../util/objects.js';
import { checkRequestsWithinLimits, fail, quantity, show } from './platform-fields.js';

/** Resolves `{{$.inputs.parameters[...]}}` placeholders in a resources string field. */
export type ResolveString = (value: string, field: string) => string;

function unplaceholder(v: unknown, field: string, resolveString: ResolveString | undefined): unknown {
  if (typeof v !== 'string' || !v.includes('{{$')) return v;
  if (!resolveString) fail(field, `${JSON.stringify(v)} is an unresolved placeholder; pass a resolver for it`);
  const out = resolveString(v, field);
  if (out.includes('{{$')) fail(field, `${JSON.stringify(v)} resolved to ${JSON.stringify(out)}, still a placeholder`);
  return out;
}

/** A string quantity from the IR; Kubernetes spells decimal kilo "k", the kfp SDK also accepts "K". */
function irQuantity(raw: unknown, field: string, resolveString: ResolveString | undefined): string | undefined {
  const v = unplaceholder(raw, field, resolveString);
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'number') return quantity(v, field);
  if (typeof v !== 'string') fail(field, `must be a quantity string, got ${show(v)}`);
  return quantity(v.trim().replace(/K$/, 'k'), field);
}

/** The deprecated numbers: CPU cores and memory in GB (10^9 bytes). */
function cpuNumber(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null || v === 0) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) fail(field, `must be a number of CPU cores, got ${show(v)}`);
  return formatCpu(v);
}

function memoryNumber(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null || v === 0) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) fail(field, `must be a number of gigabytes, got ${show(v)}`);
  const bytes = Math.round(v * 1e9);
  if (bytes % 1e9 === 0) return `${bytes / 1e9}G`;
  if (bytes % 1e6 === 0) return `${bytes / 1e6}M`;
  if (bytes % 2 ** 20 === 0) return `${bytes / 2 ** 20}Mi`;
  return String(bytes);
}

/** The Kubernetes resource an accelerator type names: `nvidia.com/gpu` as is, or a kfp/Vertex name such as NVIDIA_TESLA_T4. */
function acceleratorResource(type: string, field: string): string {
  if (type.includes('/')) {
    if (!isQualifiedName(type)) fail(field, `${JSON.stringify(type)} is not a valid resource name`);
    return type;
  }
  const t = type.toUpperCase();
  if (t === 'GPU' || t === 'NVIDIA' || t.startsWith('NVIDIA_')) return 'nvidia.com/gpu';
  if (t === 'AMD' || t.startsWith('AMD_')) return 'amd.com/gpu';
  const tpu = /^TPU_(V\d+[A-Z]*)/.exec(t);
  if (tpu) return `cloud-tpus.google.com/${(tpu[1] ?? '').toLowerCase()}`;
  return fail(field, `unknown accelerator type ${JSON.stringify(type)}: use a resource name such as nvidia.com/gpu`);
}

/**
 * IR container.resources (PipelineContainerSpec.ResourceSpec) → the main container's resources:
 * requests/limits of cpu, memory and the accelerator's resource (nvidia.com/gpu...). The string
 * fields (resourceCpuLimit...) win over the deprecated numbers (cpuLimit, memoryLimit in GB).
 * Placeholders (`{{$.inputs.parameters[...]}}`, set with task.set_cpu_limit(pipeline_input)) go
 * through `resolveString`; without one they are an error naming the field.
 */
export function containerResources(resources: unknown, resolveString?: ResolveString): { requests?: Record<string, string>; limits?: Record<string, string> } | undefined {
  if (resources === undefined || resources === null) return undefined;
  if (!isPlainObject(resources)) fail('resources', `expected a mapping, got ${show(resources)}`);
  const r = resources;
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  const set = (into: Record<string, string>, key: string, v: string | undefined): void => {
    if (v !== undefined) into[key] = v;
  };
  set(limits, 'cpu', irQuantity(r['resourceCpuLimit'], 'resources.resourceCpuLimit', resolveString) ?? cpuNumber(r['cpuLimit'], 'resources.cpuLimit'));
  set(requests, 'cpu', irQuantity(r['resourceCpuRequest'], 'resources.resourceCpuRequest', resolveString) ?? cpuNumber(r['cpuRequest'], 'resources.cpuRequest'));
  set(limits, 'memory', irQuantity(r['resourceMemoryLimit'], 'resources.resourceMemoryLimit', resolveString) ?? memoryNumber(r['memoryLimit'], 'resources.memoryLimit'));
  set(requests, 'memory', irQuantity(r['resourceMemoryRequest'], 'resources.resourceMemoryRequest', resolveString) ?? memoryNumber(r['memoryRequest'], 'resources.memoryRequest'));
  const acc = r['accelerator'];
  if (acc !== undefined && acc !== null) {
    if (!isPlainObject(acc)) fail('resources.accelerator', `expected a mapping, got ${show(acc)}`);
    const typeKey = acc['resourceType'] !== undefined && acc['resourceType'] !== '' ? 'resourceType' : 'type';
    const countKey = acc['resourceCount'] !== undefined && acc['resourceCount'] !== '' ? 'resourceCount' : 'count';
    const type = unplaceholder(acc[typeKey], `resources.accelerator.${typeKey}`, resolveString);
    const rawCount = unplaceholder(acc[countKey], `resources.accelerator.${countKey}`, resolveString);
    const count = rawCount === undefined || rawCount === null || rawCount === '' ? 1 : typeof rawCount === 'string' && /^\d+$/.test(rawCount.trim()) ? Number(rawCount) : rawCount;
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) fail(`resources.accelerator.${countKey}`, `must be a whole number of devices, got ${show(rawCount)}`);
    if (type === undefined || type === null || type === '') {
      if (count > 0 && rawCount !== undefined) fail('resources.accelerator', 'an accelerator count needs a type (resourceType), e.g. nvidia.com/gpu');
    } else {
      if (typeof type !== 'string') fail(`resources.accelerator.${typeKey}`, `must be a string, got ${show(type)}`);
      if (count > 0) limits[acceleratorResource(type, `resources.accelerator.${typeKey}`)] = String(count);
    }
  }
  const out: { requests?: Record<string, string>; limits?: Record<string, string> } = {};
  if (Object.keys(requests).length) out.requests = requests;
  if (Object.keys(limits).length) out.limits = limits;
  checkRequestsWithinLimits(out, 'resources');
  return out.requests || out.limits ? out : undefined;
}
