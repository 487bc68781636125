// kill -9 at any instant: the controller's process dies after its k-th write (for every k a clean
// run makes), a new controller starts on the same store, and the Job still ends with each pod
// counted exactly once and no pod created twice.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KObject, ObjectKey, StoredObject } from '../../api/meta.js';
import type { KindDef, KindRegistry } from '../../api/registry.js';
import { Client } from '../../store/client.js';
import type { DeleteOptions, Store } from '../../store/store.js';
import { TestEnv } from '../../testing/fake-agent.js';
import { makeJob } from './testing.js';
import type { JobBuilder } from './testing.js';

/** A client whose process "dies" after `limit` writes: every later write throws, none lands. */
class DyingClient extends Client {
  writes = 0;
  dead = false;

  constructor(store: Store, registry: KindRegistry, private readonly limit: number) {
    super(store, registry);
  }

  private write(): void {
    if (this.dead || this.writes >= this.limit) {
      this.dead = true;
      throw new Error('the process was killed');
    }
    this.writes++;
  }

  override async create<T extends KObject = StoredObject>(input: KObject, opts: { dryRun?: boolean } = {}): Promise<T & StoredObject> {
    this.write();
    return super.create<T>(input, opts);
  }

  override async update<T extends KObject = StoredObject>(input: KObject, opts: { dryRun?: boolean } = {}): Promise<T & StoredObject> {
    this.write();
    return super.update<T>(input, opts);
  }

  override async updateStatus<T extends KObject = StoredObject>(input: KObject): Promise<T & StoredObject> {
    this.write();
    return super.updateStatus<T>(input);
  }

  override async delete(def: KindDef, key: ObjectKey, opts: DeleteOptions = {}): Promise<StoredObject> {
    this.write();
    return super.delete(def, key, opts);
  }
}

interface Scenario {
  name: string;
  job: () => JobBuilder;
  /** which pods fail (by the order they start running), and the condition the Job ends with */
  fails?: (n: number) => boolean;
  ends?: 'Complete' | 'Failed';
  pods?: number;
  check: (status: Record<string, unknown>) => void;
}

const scenarios: Scenario[] = [
  {
    name: 'NonIndexed, completions 4, parallelism 2, one failure',
    job: () => makeJob('crash').completions(4).parallelism(2),
    check: (s) => {
      assert.equal(s.succeeded, 4);
      assert.equal(s.failed, 1);
    },
  },
  {
    name: 'Indexed, completions 4, parallelism 2, one failure',
    job: () => makeJob('crash').indexed(4, 2),
    check: (s) => {
      assert.equal(s.completedIndexes, '0-3');
      assert.equal(s.succeeded, 4);
      assert.equal(s.failed, 1);
    },
  },
  {
    name: 'NonIndexed, every pod fails, backoffLimit 2',
    job: () => makeJob('crash').backoffLimit(2),
    fails: () => true,
    ends: 'Failed',
    pods: 3,
    check: (s) => {
      assert.equal(s.succeeded, undefined);
      assert.equal(s.failed, 3);
    },
  },
];

/** Runs the scenario with a controller that dies after `limit` writes; returns how many it made. */
async function run(sc: Scenario, limit: number): Promise<number> {
  let started = 0;
  const fails = sc.fails ?? ((n: number) => n === 0);
  const ends = sc.ends ?? 'Complete';
  const env = await TestEnv.start(() => ({ exitCode: fails(started++) ? 1 : 0 }));
  try {
    const dying = new DyingClient(env.store, env.registry, limit);
    env.runController({ client: dying });
    await env.createJob(sc.job().obj());
    await env.waitFor('the first controller to die or finish', async () => dying.dead || (await env.job('crash'))?.status?.conditions?.some((c: { type: string }) => c.type === ends));
    await env.stopControllers();
    // the pods run on while no controller is up
    await new Promise((r) => setTimeout(r, 5));
    env.runController();
    const job = await env.waitForCondition('crash', ends);
    const status = job.status as Record<string, unknown>;
    sc.check(status);
    assert.deepEqual(status.uncountedTerminatedPods, {}, 'nothing left uncounted');
    assert.equal(env.agent.created.length, sc.pods ?? 5, `pods created: ${env.agent.created.join(', ')}`);
    return dying.writes;
  } catch (e) {
    (e as Error).message = `killed after write ${limit}: ${(e as Error).message}`;
    throw e;
  } finally {
    await env.close();
  }
}

void describe('a controller killed at any write', () => {
  for (const sc of scenarios) {
    void it(`converges and counts each pod once: ${sc.name}`, async () => {
      const writes = await run(sc, Infinity);
      assert.ok(writes > 10, `a clean run makes ${writes} writes`);
      for (let k = 0; k <= writes; k++) await run(sc, k);
    });
  }
});
