// Test builders for Jobs and their Pods. Defaults are the smallest valid objects; setters are named
// after the upstream fields; state shortcuts after what happened. Only tests import this file.
import type { Job, PodFailurePolicyRule } from '../../api/batch.js';
import { JobLabels } from '../../api/batch.js';
import type { ContainerStatus, Pod } from '../../api/core-types.js';
import type { Condition } from '../../api/conditions.js';
import type { StoredObject } from '../../api/meta.js';
import { clone, ownerRefTo } from '../../api/meta.js';
import { JobAnnotations } from './pods.js';

export class JobBuilder {
  constructor(private job: Job) {}

  private set(f: (j: Job) => void): this {
    f(this.job);
    return this;
  }

  parallelism(n: number): this { return this.set((j) => { j.spec.parallelism = n; }); }
  completions(n: number | undefined): this { return this.set((j) => { j.spec.completions = n; }); }
  completionMode(m: 'NonIndexed' | 'Indexed'): this { return this.set((j) => { j.spec.completionMode = m; }); }
  indexed(completions: number, parallelism = completions): this { return this.completionMode('Indexed').completions(completions).parallelism(parallelism); }
  backoffLimit(n: number): this { return this.set((j) => { j.spec.backoffLimit = n; }); }
  backoffLimitPerIndex(n: number): this { return this.set((j) => { j.spec.backoffLimitPerIndex = n; }); }
  maxFailedIndexes(n: number): this { return this.set((j) => { j.spec.maxFailedIndexes = n; }); }
  activeDeadlineSeconds(n: number): this { return this.set((j) => { j.spec.activeDeadlineSeconds = n; }); }
  ttlSecondsAfterFinished(n: number): this { return this.set((j) => { j.spec.ttlSecondsAfterFinished = n; }); }
  suspend(b = true): this { return this.set((j) => { j.spec.suspend = b; }); }
  podReplacementPolicy(p: 'TerminatingOrFailed' | 'Failed'): this { return this.set((j) => { j.spec.podReplacementPolicy = p; }); }
  podFailurePolicy(...rules: PodFailurePolicyRule[]): this { return this.set((j) => { j.spec.podFailurePolicy = { rules }; }); }
  restartPolicy(p: 'OnFailure' | 'Never'): this { return this.set((j) => { j.spec.template.spec.restartPolicy = p; }); }
  image(image: string): this { return this.set((j) => { for (const c of j.spec.template.spec.containers) c.image = image; }); }
  command(...command: string[]): this { return this.set((j) => { (j.spec.template.spec.containers[0] as { command?: string[] }).command = command; }); }
  container(name: string, image = 'python'): this { return this.set((j) => { j.spec.template.spec.containers.push({ name, image }); }); }
  initContainer(name: string, image = 'python'): this { return this.set((j) => { (j.spec.template.spec.initContainers ??= []).push({ name, image }); }); }
  label(k: string, v: string): this { return this.set((j) => { ((j.spec.template.metadata ??= {}).labels ??= {})[k] = v; }); }
  annotation(k: string, v: string): this { return this.set((j) => { ((j.spec.template.metadata ??= {}).annotations ??= {})[k] = v; }); }

  /** a fresh deep copy */
  obj(): Job {
    return clone(this.job);
  }

  clone(): JobBuilder {
    return new JobBuilder(clone(this.job));
  }
}

/** A valid Job: one container `main` running `python -c pass`, restartPolicy Never. */
export function makeJob(name: string, namespace = 'default'): JobBuilder {
  return new JobBuilder({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace },
    spec: {
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python', command: ['python', '-c', 'pass'] }] } },
    },
  });
}

export class PodBuilder {
  constructor(private pod: Pod) {}

  private set(f: (p: Pod) => void): this {
    f(this.pod);
    return this;
  }

  /** owned by this Job, with its labels and tracking finalizer, as the controller creates pods */
  ownedBy(job: StoredObject): this {
    return this.set((p) => {
      p.metadata.ownerReferences = [ownerRefTo(job)];
      p.metadata.labels = { ...p.metadata.labels, [JobLabels.jobName]: job.metadata.name, [JobLabels.controllerUid]: job.metadata.uid };
      p.metadata.finalizers = [JobLabels.trackingFinalizer];
    });
  }
  uid(uid: string): this { return this.set((p) => { p.metadata.uid = uid; }); }
  index(ix: number): this {
    return this.set((p) => {
      (p.metadata.annotations ??= {})[JobAnnotations.completionIndex] = String(ix);
      (p.metadata.labels ??= {})[JobLabels.completionIndex] = String(ix);
    });
  }
  annotation(k: string, v: string): this { return this.set((p) => { (p.metadata.annotations ??= {})[k] = v; }); }
  finalizers(...f: string[]): this { return this.set((p) => { p.metadata.finalizers = f; }); }
  nodeName(n: string): this { return this.set((p) => { p.spec.nodeName = n; }); }
  deletionTimestamp(t: string): this { return this.set((p) => { p.metadata.deletionTimestamp = t; }); }
  condition(c: Condition): this { return this.set((p) => { ((p.status ??= {}).conditions ??= []).push(c); }); }

  running(ready = true): this {
    return this.set((p) => {
      p.status = { ...p.status, phase: 'Running', containerStatuses: p.spec.containers.map((c) => containerStatus(c.name, { running: { startedAt: '2024-01-01T00:00:00Z' } })) };
      this.condition({ type: 'Ready', status: ready ? 'True' : 'False' });
    });
  }
  succeeded(at = '2024-01-01T00:00:10Z'): this { return this.exited(0, at); }
  failedWith(exitCode: number, container?: string, at = '2024-01-01T00:00:10Z'): this { return this.exited(exitCode, at, container); }
  restarts(n: number): this { return this.set((p) => { for (const s of p.status?.containerStatuses ?? []) s.restartCount = n; }); }

  private exited(exitCode: number, at: string, container?: string): this {
    return this.set((p) => {
      p.status = {
        ...p.status,
        phase: exitCode === 0 ? 'Succeeded' : 'Failed',
        containerStatuses: p.spec.containers.map((c) => {
          const code = container === undefined || container === c.name ? exitCode : 0;
          return containerStatus(c.name, { terminated: { exitCode: code, reason: code === 0 ? 'Completed' : 'Error', finishedAt: at } });
        }),
      };
    });
  }

  obj(): Pod {
    return clone(this.pod);
  }
}

function containerStatus(name: string, state: ContainerStatus['state']): ContainerStatus {
  return { name, ready: Boolean(state.running), restartCount: 0, state, lastState: {} };
}

export function makePod(name: string, namespace = 'default'): PodBuilder {
  return new PodBuilder({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, uid: `uid-${name}`, creationTimestamp: '2024-01-01T00:00:00Z' },
    spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'python' }] },
    status: { phase: 'Pending' },
  });
}
