// The InferenceService controller, written as a ladder: reconcile reads the InferenceService, its
// Revisions and the runtimes afresh, and the first rung with something to do makes its change and
// returns; the watch event that change causes brings the next rung.
//
// InferenceService → Revisions. Each component (predictor, transformer, explainer) becomes a
// Revision whenever its spec changes (everything but `canaryTrafficPercent`, as Knative makes a
// revision per template change); the predictor's runtime is chosen as KServe chooses it
// (runtimes.ts). Traffic follows KServe's canary rule (status.ts): with `canaryTrafficPercent: P`
// and a rolled-out revision, the latest ready revision gets P% and the last rolled-out one the rest;
// otherwise the latest ready revision gets everything. The resulting routes go to the data plane and
// the autoscaler on every pass. The Revisions' own controller is revision-controller.ts.
//
// A `model-registry://<model>@<alias>` storageUri is resolved here, when a revision is built: the
// version the alias names is pinned into the revision (render.ts pinRegistryVersion), so moving the
// alias (a ModelAlias changing, watched below) makes a new revision and the canary rule rolls it out.
import { isConflict, isNotFound } from '../../api/errors.js';
import { findCondition } from '../../api/conditions.js';
import type { Condition } from '../../api/conditions.js';
import { Kinds } from '../../api/index.js';
import type { ObjectKey, StoredObject } from '../../api/meta.js';
import { clone, deepEqual } from '../../api/meta.js';
import { ModelAliasKind, ModelArtifactKind, ModelVersionKind, RegisteredModelKind } from '../../api/model-registry.js';
import { RevisionKind, ServingLabels } from '../../api/serving-revision.js';
import type { Revision, RevisionSpec } from '../../api/serving-revision.js';
import type { ClusterServingRuntime, ComponentStatus, InferenceService, InferenceServiceStatus, ServingRuntime } from '../../api/serving.js';
import type { Manager, Result } from '../../control/controller.js';
import { Autoscaler } from './autoscaler.js';
import type { ComponentName, Route } from './data-plane.js';
import { isAliasUri, resolveAlias } from './model-registry.js';
import { buildRevision, pinRegistryVersion, renderRevision } from './render.js';
import { RevisionReconciler } from './revision-controller.js';
import { canaryTraffic, componentCondition, modelStatusOf, setServiceConditions } from './status.js';
import type { ServingControllerOptions } from './options.js';

type Isvc = InferenceService & StoredObject;
type Rev = Revision & StoredObject;

export type { ServingControllerOptions };

export const components: ComponentName[] = ['predictor', 'transformer', 'explainer'];

/** Adds the InferenceService and Revision controllers; `stop` ends the autoscaler's clock. */
export function addServingControllers(mgr: Manager, opts: ServingControllerOptions): { stop(): void } {
  let enqueueRevision: (revKey: string) => void = () => {};
  const scaler = new Autoscaler(opts.dataPlane, (revKey) => enqueueRevision(revKey));
  const isvc = new InferenceServiceReconciler(opts, scaler);
  mgr.add({
    name: 'inferenceservice-controller',
    for: Kinds.InferenceService,
    owns: [RevisionKind],
    watches: [
      // a runtime appearing or changing may change which one serves a predictor
      { kind: Kinds.ServingRuntime, map: (o) => isvc.keysIn(o.metadata.namespace) },
      { kind: Kinds.ClusterServingRuntime, map: () => isvc.keysIn(undefined) },
      // `storage:` specs read the namespace's storage-config Secret
      { kind: Kinds.Secret, predicate: (e) => e.object.metadata.name === 'storage-config', map: (o) => isvc.keysIn(o.metadata.namespace) },
      // an alias moved (or a model or version appearing: `@latest`, or an alias that named nothing
      // yet) may change the version a `model-registry://<model>@<alias>` predictor pins
      ...[ModelAliasKind, ModelVersionKind, RegisteredModelKind].map((kind) => ({ kind, map: (o: StoredObject) => isvc.aliasKeysIn(o.metadata.namespace) })),
    ],
    reconcile: (key) => isvc.reconcile(key),
  });
  const rev = new RevisionReconciler(opts, scaler);
  const revCtl = mgr.add({
    name: 'revision-controller',
    for: RevisionKind,
    owns: [Kinds.Pod],
    // a model registered, a version archived or an artifact's URI changed may change what a
    // `model-registry://` revision serves, or let one that named nothing load
    watches: [RegisteredModelKind, ModelVersionKind, ModelArtifactKind].map((kind) => ({ kind, map: (o: StoredObject) => rev.registryKeysIn(o.metadata.namespace) })),
    reconcile: (key) => rev.reconcile(key),
    workers: 2,
  });
  enqueueRevision = (revKey) => {
    const i = revKey.indexOf('/');
    revCtl.enqueue({ namespace: revKey.slice(0, i), name: revKey.slice(i + 1) });
  };
  opts.dataPlane.onChange((revKey, why) => {
    if (why === 'demand') scaler.demand(revKey);
    enqueueRevision(revKey);
  });
  // its clock asks for reconciles: it runs with the controllers
  mgr.addRunnable(scaler);
  return { stop: () => scaler.stop() };
}

/** What one pass knows: read once at its start. */
interface Pass {
  isvc: Isvc;
  ns: string;
  runtimes: { namespaced: ServingRuntime[]; cluster: ClusterServingRuntime[] };
  storageConfig: Record<string, string> | undefined;
  /** the components the spec has, each with its owned revisions, oldest first */
  revisions: Map<ComponentName, Rev[]>;
  /** every revision labelled with the service's name, owned or not */
  all: Rev[];
}

/** a rung returns a result when it made its change (the pass ends there), undefined to pass on */
type Rung = (p: Pass) => Promise<Result | undefined>;

class InferenceServiceReconciler {
  private readonly known = new Set<string>();
  /** the services whose predictor names a registry alias: a change in their namespace's registry may move it */
  private readonly fromAlias = new Set<string>();

  constructor(private readonly opts: ServingControllerOptions, private readonly scaler: Autoscaler) {}

  keysIn(ns: string | undefined): ObjectKey[] {
    return [...this.known].map((k) => {
      const i = k.indexOf('/');
      return { namespace: k.slice(0, i), name: k.slice(i + 1) };
    }).filter((k) => ns === undefined || k.namespace === ns);
  }

  aliasKeysIn(ns: string | undefined): ObjectKey[] {
    return this.keysIn(ns).filter((k) => this.fromAlias.has(`${k.namespace}/${k.name}`));
  }

  async reconcile(key: ObjectKey): Promise<Result> {
    const { client } = this.opts;
    const k = `${key.namespace}/${key.name}`;
    const isvc = await client.find<Isvc>(Kinds.InferenceService, key);
    if (!isvc || isvc.metadata.deletionTimestamp) {
      this.known.delete(k);
      this.fromAlias.delete(k);
      this.opts.dataPlane.removeRoute(key.namespace ?? 'default', key.name);
      this.scaler.removeRoute(key.namespace ?? 'default', key.name);
      return {};
    }
    this.known.add(k);
    const ns = isvc.metadata.namespace ?? 'default';
    const all = await client.listAll<Rev>(RevisionKind, { namespace: ns, labelSelector: `${ServingLabels.inferenceService}=${isvc.metadata.name}` });
    const revisions = new Map<ComponentName, Rev[]>();
    for (const comp of components) {
      if (!(isvc.spec as unknown as Record<string, unknown>)[comp]) continue;
      revisions.set(comp, all.filter((r) => r.spec.component === comp && ownedBy(r, isvc)).sort((a, b) => a.spec.number - b.spec.number));
    }
    const pass: Pass = {
      isvc, ns, all, revisions,
      runtimes: {
        namespaced: await client.listAll<ServingRuntime & StoredObject>(Kinds.ServingRuntime, { namespace: ns }),
        cluster: await client.listAll<ClusterServingRuntime & StoredObject>(Kinds.ClusterServingRuntime),
      },
      storageConfig: (await client.find<StoredObject>(Kinds.Secret, { namespace: ns, name: 'storage-config' }))?.data as Record<string, string> | undefined,
    };
    const rungs: Rung[] = [
      (p) => this.createRevisions(p),
      (p) => this.route(p),
      (p) => this.pruneRevisions(p),
    ];
    for (const rung of rungs) {
      const r = await rung(pass);
      if (r) return r;
    }
    return {};
  }

  /** 1. a component whose spec changed gets its next revision */
  private async createRevisions(p: Pass): Promise<Result | undefined> {
    let created = false;
    let aliased = false;
    for (const [comp, mine] of p.revisions) {
      let built = buildRevision(p.isvc, comp, p.runtimes, this.opts.podGateway(), p.storageConfig);
      if (!built.failure && isAliasUri(built.storageUri)) {
        aliased = true;
        built = pinRegistryVersion(built, await resolveAlias(this.opts.client, p.ns, built.storageUri as string));
      }
      const latest = mine[mine.length - 1];
      if (latest && latest.spec.specHash === built.specHash) continue;
      const spec = { ...built, number: (latest?.spec.number ?? 0) + 1 } as RevisionSpec;
      const obj = renderRevision(p.isvc, spec);
      try {
        await this.opts.client.create<Rev>(obj);
        this.opts.recorder.event(p.isvc, 'Normal', 'RevisionCreated', `${spec.component} revision ${obj.metadata.name} created${spec.failure ? ` (cannot run: ${spec.failure.message})` : ''}`);
        created = true;
      } catch (e) {
        if (!isConflict(e)) throw e;
        // already there (a revision left by an InferenceService of the same name): it stands as the newest
        mine.push(await this.opts.client.get<Rev>(RevisionKind, { namespace: p.ns, name: obj.metadata.name as string }));
      }
    }
    const k = `${p.ns}/${p.isvc.metadata.name}`;
    if (aliased) this.fromAlias.add(k);
    else this.fromAlias.delete(k);
    // the new Revisions' events bring the next pass
    return created ? {} : undefined;
  }

  /** 2. traffic split, routes and status from the revisions' state; the status is written when it changed */
  private async route(p: Pass): Promise<Result | undefined> {
    const { isvc, ns } = p;
    const { dataPlane } = this.opts;
    const status: InferenceServiceStatus = clone(isvc.status ?? {});
    const route: Route = { namespace: ns, name: isvc.metadata.name, components: {}, latest: {} };
    const conds: Condition[] = [];
    status.components ??= {};
    for (const comp of components) {
      const mine = p.revisions.get(comp);
      const latest = mine?.[mine.length - 1];
      if (!mine || !latest) {
        delete status.components[comp];
        continue;
      }
      const cs: ComponentStatus = status.components[comp] ?? {};
      status.components[comp] = cs;
      cs.latestCreatedRevision = latest.metadata.name;
      const ready = [...mine].reverse().find((r) => r.status?.ready && !r.spec.failure);
      if (ready) cs.latestReadyRevision = ready.metadata.name;
      else delete cs.latestReadyRevision;
      const traffic = canaryTraffic(isvc, comp, cs, ready, latest.metadata.name);
      cs.traffic = traffic.map((t) => ({ ...t, ...(t.revisionName === cs.latestReadyRevision ? { latestRevision: true } : { latestRevision: false }) }));
      const host = `${isvc.metadata.name}-${comp}.${ns}`;
      cs.url = `http://${host}.${dataPlane.domain}`;
      cs.restUrl = `${this.opts.serverUrl()}/serving/${ns}/${isvc.metadata.name}-${comp}`;
      cs.address = { url: `http://${host}.svc.cluster.local` };
      route.components[comp] = traffic.filter((t) => (t.percent ?? 0) > 0).map((t) => ({ revision: `${ns}/${t.revisionName}`, percent: t.percent ?? 0 }));
      route.latest[comp] = `${ns}/${latest.metadata.name}`;
      conds.push(componentCondition(comp, latest));
      if (comp === 'predictor') {
        status.modelStatus = modelStatusOf(latest, ready);
        if (latest.spec.runtimeKind === 'ServingRuntime') {
          status.servingRuntimeName = latest.spec.runtime;
          delete status.clusterServingRuntimeName;
        } else if (latest.spec.runtime) {
          status.clusterServingRuntimeName = latest.spec.runtime;
          delete status.servingRuntimeName;
        }
        if (latest.spec.failure) route.failure = `${latest.spec.failure.reason}: ${latest.spec.failure.message}`;
      }
    }
    // the ingress is up once every component has a ready revision taking traffic
    const routable = [...p.revisions.keys()].every((c) => (route.components[c]?.length ?? 0) > 0);
    setServiceConditions(status, conds, routable);
    status.url = `http://${isvc.metadata.name}.${ns}.${dataPlane.domain}`;
    status.address = { url: `${this.opts.serverUrl()}/serving/${ns}/${isvc.metadata.name}` };
    status.deploymentMode = 'Serverless';
    status.observedGeneration = isvc.metadata.generation ?? 1;
    dataPlane.setRoute(route);
    this.scaler.setRoute(route);
    if (deepEqual(status, isvc.status ?? {})) return undefined;
    const was = findCondition(isvc.status?.conditions, 'Ready')?.status;
    try {
      await this.opts.client.updateStatus({ ...isvc, status });
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) return { requeueAfter: 10 };
      throw e;
    }
    const nowReady = findCondition(status.conditions, 'Ready')?.status;
    if (was !== nowReady && nowReady === 'True') this.opts.recorder.event(isvc, 'Normal', 'InferenceServiceReady', `InferenceService ${isvc.metadata.name} is ready`);
    return {};
  }

  /**
   * 3. revisions outside the traffic split and older than the rolled-out one are kept for rollback;
   * only the ten newest of each component stay
   */
  private async pruneRevisions(p: Pass): Promise<Result | undefined> {
    const cs = p.isvc.status?.components ?? {};
    let pruned = false;
    for (const comp of components) {
      const mine = p.all.filter((r) => r.spec.component === comp).sort((a, b) => b.spec.number - a.spec.number);
      const c = cs[comp];
      const keep = new Set([c?.latestRolledoutRevision, c?.previousRolledoutRevision, c?.latestReadyRevision, c?.latestCreatedRevision]);
      for (const r of mine.slice(10)) {
        if (keep.has(r.metadata.name)) continue;
        await this.opts.client.delete(RevisionKind, { namespace: p.ns, name: r.metadata.name }).catch(() => undefined);
        pruned = true;
      }
    }
    return pruned ? {} : undefined;
  }
}

function ownedBy(r: Rev, isvc: Isvc): boolean {
  return (r.metadata.ownerReferences ?? []).some((o) => o.uid === isvc.metadata.uid);
}
