// For tests: a tiny node agent and a harness that runs the real Job controller on an in-memory
// store. The agent binds pods, runs them (Pending → Running), and ends them as a script says; a
// deleted pod is "killed" (Failed, exit 143) and disappears once its finalizers are gone.
import type { Job } from '../api/batch.js';
import type { Condition } from '../api/conditions.js';
import type { Pod } from '../api/core-types.js';
import { isConflict, isNotFound } from '../api/errors.js';
import { Kinds, defaultRegistry } from '../api/index.js';
import type { ObjectKey, StoredObject } from '../api/meta.js';
import { keyString, parseKeyString } from '../api/meta.js';
import type { KindRegistry } from '../api/registry.js';
import type { Controller } from '../control/controller.js';
import { Manager } from '../control/controller.js';
import type { EventType, Recorder } from '../control/events.js';
import { Client } from '../store/client.js';
import { SqliteStore } from '../store/sqlite/store.js';
import type { JobControllerOptions } from '../workloads/jobs/controller.js';
import { addJobController } from '../workloads/jobs/controller.js';
import type { JobObject, PodObject } from '../workloads/jobs/pods.js';
import { sleep } from '../util/timers.js';

/** How a running pod ends: an exit code (0 = Succeeded), optionally of one container, with conditions. */
export interface Outcome {
  exitCode?: number;
  container?: string;
  conditions?: Condition[];
  /** keep running, with this restartCount on every container (restartPolicy OnFailure) */
  restarts?: number;
  /** the failed container's termination message (its log's tail, under FallbackToLogsOnError) */
  message?: string;
}

/** Decides a running pod's fate; undefined keeps it running. */
export type Script = (pod: PodObject) => Outcome | undefined;

export class FakeNodeAgent {
  private readonly pending = new Set<string>();
  private running?: Promise<void>;
  private stopped = false;
  private watch?: { stop(): void };
  private readonly decided = new Map<string, Outcome>();
  /** names of every pod ever seen created, in order, and when (ms) */
  readonly created: string[] = [];
  readonly createdAt: number[] = [];

  constructor(private readonly client: Client, public script: Script = () => ({ exitCode: 0 })) {}

  start(): void {
    this.watch = this.client.watch(Kinds.Pod, {}, (e) => {
      if (e.type === 'ADDED' && !this.created.includes(e.object.metadata.name)) {
        this.created.push(e.object.metadata.name);
        this.createdAt.push(Date.now());
      }
      if (e.type !== 'DELETED') this.kick(keyString({ namespace: e.object.metadata.namespace, name: e.object.metadata.name }));
    });
  }

  /** stops watching and waits out the step in progress: nothing it does reaches a closed store */
  async stop(): Promise<void> {
    this.watch?.stop();
    this.stopped = true;
    await this.running?.catch(() => undefined);
  }

  /** ends a pod the script kept running */
  finish(name: string, outcome: Outcome, namespace = 'default'): void {
    this.decided.set(name, outcome);
    this.kick(keyString({ namespace, name }));
  }

  idle(): boolean {
    return this.pending.size === 0 && !this.running;
  }

  private kick(key: string): void {
    if (this.stopped) return;
    this.pending.add(key);
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
      if (this.pending.size) this.kick([...this.pending][0] as string);
    });
  }

  private async drain(): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const key = [...this.pending][0];
      if (key === undefined) return;
      this.pending.delete(key);
      try {
        await this.step(parseKeyString(key));
      } catch (e) {
        if (!isConflict(e) && !isNotFound(e)) throw e;
        this.pending.add(key);
      }
    }
  }

  private async step(key: ObjectKey): Promise<void> {
    const pod: PodObject | undefined = await this.client.find<Pod>(Kinds.Pod, key);
    if (!pod) return;
    const phase = pod.status?.phase;
    const terminal = phase === 'Succeeded' || phase === 'Failed';
    if (pod.metadata.deletionTimestamp) {
      if (!terminal) await this.end(pod, { exitCode: 143 });
      return;
    }
    if (terminal) return;
    if (!pod.spec.nodeName) {
      await this.client.update({ ...pod, spec: { ...pod.spec, nodeName: 'node-1' } });
      return;
    }
    const at = new Date().toISOString();
    if (phase !== 'Running') {
      await this.client.updateStatus({
        ...pod,
        status: {
          phase: 'Running', startTime: at, hostIP: '127.0.0.1', podIP: '127.0.0.1',
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: at }],
          containerStatuses: pod.spec.containers.map((c) => ({ name: c.name, ready: true, started: true, restartCount: 0, state: { running: { startedAt: at } }, lastState: {} })),
        },
      });
      return;
    }
    const outcome = this.decided.get(pod.metadata.name) ?? this.script(pod);
    if (!outcome) return;
    if (outcome.exitCode === undefined) {
      if (outcome.restarts !== undefined && pod.status?.containerStatuses?.some((s) => s.restartCount !== outcome.restarts)) {
        const containerStatuses = (pod.status?.containerStatuses ?? []).map((s) => ({ ...s, restartCount: outcome.restarts ?? 0 }));
        await this.client.updateStatus({ ...pod, status: { ...pod.status, containerStatuses } });
      }
      return;
    }
    await this.end(pod, outcome);
  }

  private async end(pod: PodObject, outcome: Outcome): Promise<void> {
    const at = new Date().toISOString();
    const code = outcome.exitCode ?? 0;
    const conditions: Condition[] = [{ type: 'Ready', status: 'False', lastTransitionTime: at }, ...(outcome.conditions ?? [])];
    await this.client.updateStatus({
      ...pod,
      status: {
        ...pod.status,
        phase: code === 0 ? 'Succeeded' : 'Failed',
        conditions,
        containerStatuses: pod.spec.containers.map((c) => {
          const exitCode = outcome.container === undefined || outcome.container === c.name ? code : 0;
          const restartCount = pod.status?.containerStatuses?.find((s) => s.name === c.name)?.restartCount ?? 0;
          const message = exitCode && outcome.message ? { message: outcome.message } : {};
          return { name: c.name, ready: false, restartCount, state: { terminated: { exitCode, reason: exitCode ? 'Error' : 'Completed', ...message, finishedAt: at } }, lastState: {} };
        }),
      },
    });
  }
}

export interface RecordedEvent {
  object: string;
  type: EventType;
  reason: string;
  message: string;
}

export class RecordingRecorder implements Recorder {
  readonly events: RecordedEvent[] = [];
  event(obj: StoredObject, type: EventType, reason: string, message: string): void {
    this.events.push({ object: `${obj.kind}/${obj.metadata.name}`, type, reason, message });
  }
  reasons(): string[] {
    return this.events.map((e) => e.reason);
  }
}

/** A store, a client, the fake agent, and a way to run Job controllers on them. */
export class TestEnv {
  readonly registry: KindRegistry = defaultRegistry();
  readonly store = new SqliteStore({ file: ':memory:' });
  readonly client = new Client(this.store, this.registry);
  readonly recorder = new RecordingRecorder();
  readonly agent = new FakeNodeAgent(this.client);
  private readonly managers: Manager[] = [];

  static async start(script?: Script): Promise<TestEnv> {
    const env = new TestEnv();
    if (script) env.agent.script = script;
    await env.client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    env.agent.start();
    return env;
  }

  /** starts a manager with the Job controller; `client` lets a test put a failing client in front */
  runController(opts: Partial<JobControllerOptions> = {}): { mgr: Manager; ctrl: Controller } {
    const client = opts.client ?? this.client;
    const mgr = new Manager(client);
    const ctrl = addJobController(mgr, { podBackoffBaseMs: 5, podBackoffMaxMs: 50, recorder: this.recorder, ...opts, client });
    mgr.start();
    this.managers.push(mgr);
    return { mgr, ctrl };
  }

  async createJob(job: Job): Promise<JobObject> {
    return this.client.create<Job>(job);
  }

  async job(name: string, namespace = 'default'): Promise<JobObject | undefined> {
    return this.client.find<Job>(Kinds.Job, { namespace, name });
  }

  async pods(namespace = 'default'): Promise<PodObject[]> {
    return this.client.listAll<Pod>(Kinds.Pod, { namespace });
  }

  async setSuspend(name: string, suspend: boolean, namespace = 'default'): Promise<void> {
    await this.client.patch(Kinds.Job, { namespace, name }, { spec: { suspend } }, 'merge');
  }

  /**
   * Polls until `check` returns a value that is not undefined/false. The store shows a write to
   * readers as soon as it is applied and answers its writer once the write's batch commits, a turn
   * of the event loop later: what the writer does next (an event, say) is waited for too.
   */
  async waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 5000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await check();
      if (v !== undefined && v !== false) {
        for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
        return v;
      }
      if (Date.now() > deadline) {
        const jobs = await this.client.listAll(Kinds.Job);
        throw new Error(`timed out waiting for ${what}; jobs: ${JSON.stringify(jobs.map((j) => ({ name: j.metadata.name, status: j.status })))}`);
      }
      await sleep(5);
    }
  }

  /** waits for a Job condition of this type with status True; returns the Job */
  async waitForCondition(name: string, type: string, timeoutMs = 5000): Promise<JobObject> {
    return this.waitFor(`${name} ${type}`, async () => {
      const j = await this.job(name);
      return j?.status?.conditions?.some((c: Condition) => c.type === type && c.status === 'True') ? j : undefined;
    }, timeoutMs);
  }

  async stopControllers(): Promise<void> {
    await Promise.all(this.managers.splice(0).map((m) => m.stop()));
  }

  async close(): Promise<void> {
    await this.stopControllers();
    await this.agent.stop();
    await this.store.close();
  }
}
