// The registry's record of what is deployed from it. An InferenceService whose predictor serves a
// `model-registry://` model (its ready revision says which version: `status.registryModel`, written
// by the serving workload) is recorded in its namespace's registry as upstream's entities record a
// deployment:
//
// - a ServingEnvironment named after the namespace (made when missing);
// - under it, an InferenceService record named after the InferenceService, with the registered
//   model, the version it serves now, its runtime and `desiredState: DEPLOYED` (UNDEPLOYED once the
//   InferenceService is gone or serves from elsewhere);
// - under that, one ServeModel per stretch of serving a version: RUNNING from when the version was
//   first served (its createTimeSinceEpoch), COMPLETE from when another version took over or the
//   service went (its lastUpdateTimeSinceEpoch).
//
// So `/inference_services?filterQuery=modelVersionId=...` answers "what serves version X", and a
// record's `/serves` "which version did it serve at time T".
import { findCondition } from '../../api/conditions.js';
import { Kinds } from '../../api/index.js';
import type { ObjectKey, StoredObject } from '../../api/meta.js';
import {
  modelRegistryApiVersion, RegistryInferenceServiceKind, RegistryLabels, ServeModelKind, ServingEnvironmentKind, type RegistryObject,
} from '../../api/model-registry.js';
import type { KindDef } from '../../api/registry.js';
import { RevisionKind, ServingLabels, type Revision, type RegistryModelRef } from '../../api/serving-revision.js';
import type { InferenceService } from '../../api/serving.js';
import type { Manager } from '../../control/controller.js';
import type { Client } from '../../store/client.js';
import { nextRegistryId } from './ids.js';

type Obj = RegistryObject & StoredObject;
type Isvc = InferenceService & StoredObject;

export function addDeploymentRecorder(mgr: Manager, client: Client): void {
  const r = new DeploymentRecorder(client);
  mgr.add({
    name: 'model-registry-deployments',
    for: Kinds.InferenceService,
    watches: [
      // the version a `model-registry://` revision resolves to may change without the service changing
      { kind: RevisionKind, map: (o) => { const name = o.metadata.labels?.[ServingLabels.inferenceService]; return name ? [{ namespace: o.metadata.namespace, name }] : []; } },
    ],
    reconcile: (key) => r.reconcile(key),
  });
}

class DeploymentRecorder {
  constructor(private readonly client: Client) {}

  async reconcile(key: ObjectKey): Promise<void> {
    const ns = key.namespace ?? 'default';
    const isvc = await this.client.find<Isvc>(Kinds.InferenceService, key);
    if (isvc && !isvc.metadata.deletionTimestamp) {
      const serving = await this.servedFromRegistry(isvc);
      // not ready: what was recorded stands until it is (a failed rollout leaves the old version serving)
      if (serving === 'not-ready') return;
      if (serving) return this.deployed(ns, isvc, serving);
    }
    // gone, or serving from elsewhere now: a record of it, if any, says it is no longer deployed
    const env = await this.environment(ns, false);
    const rec = env && (await this.record(ns, env, key.name));
    if (rec && rec.spec.desiredState !== 'UNDEPLOYED') {
      await this.endServes(ns, rec, undefined);
      await this.update(rec, { desiredState: 'UNDEPLOYED' }, { [RegistryLabels.state]: 'UNDEPLOYED' });
    }
  }

  /** the registry model a ready predictor serves; undefined when it serves no registry model; 'not-ready' while it is not ready */
  private async servedFromRegistry(isvc: Isvc): Promise<RegistryModelRef | 'not-ready' | undefined> {
    if (findCondition(isvc.status?.conditions, 'Ready')?.status !== 'True') return 'not-ready';
    const revName = isvc.status?.components?.predictor?.latestReadyRevision;
    if (!revName) return 'not-ready';
    const rev = await this.client.find<Revision & StoredObject>(RevisionKind, { namespace: isvc.metadata.namespace, name: revName });
    return rev?.status?.registryModel;
  }

  private async deployed(ns: string, isvc: Isvc, ref: RegistryModelRef): Promise<void> {
    const env = await this.environment(ns, true) as Obj;
    const runtime = isvc.status?.servingRuntimeName ?? isvc.status?.clusterServingRuntimeName;
    const want = { registeredModelId: ref.registeredModelId, modelVersionId: ref.modelVersionId, desiredState: 'DEPLOYED', ...(runtime ? { runtime } : {}) };
    let rec = await this.record(ns, env, isvc.metadata.name);
    if (!rec) {
      rec = await this.create(RegistryInferenceServiceKind, ns, { name: isvc.metadata.name, servingEnvironmentId: env.metadata.name, ...want }, { [RegistryLabels.parent]: env.metadata.name, [RegistryLabels.state]: 'DEPLOYED' });
    } else if (Object.entries(want).some(([k, v]) => rec?.spec[k] !== v)) {
      rec = await this.update(rec, want, { [RegistryLabels.state]: 'DEPLOYED' });
    }
    await this.endServes(ns, rec, ref.modelVersionId);
    const serves = await this.serves(ns, rec);
    if (!serves.some((s) => s.spec.lastKnownState === 'RUNNING' && s.spec.modelVersionId === ref.modelVersionId)) {
      await this.create(ServeModelKind, ns, { modelVersionId: ref.modelVersionId, lastKnownState: 'RUNNING' }, { [RegistryLabels.parent]: rec.metadata.name });
    }
  }

  /** the serves still RUNNING, but of another version than `current` (all, when undefined), become COMPLETE */
  private async endServes(ns: string, rec: Obj, current: string | undefined): Promise<void> {
    for (const s of await this.serves(ns, rec)) {
      if (s.spec.lastKnownState === 'RUNNING' && s.spec.modelVersionId !== current) await this.update(s, { lastKnownState: 'COMPLETE' });
    }
  }

  private serves(ns: string, rec: Obj): Promise<Obj[]> {
    return this.client.listAll<Obj>(ServeModelKind, { namespace: ns, labelSelector: `${RegistryLabels.parent}=${rec.metadata.name}` });
  }

  /** the namespace's serving environment, named after it; made when `make` and missing */
  private async environment(ns: string, make: boolean): Promise<Obj | undefined> {
    const env = (await this.client.listAll<Obj>(ServingEnvironmentKind, { namespace: ns })).find((e) => e.spec.name === ns);
    if (env || !make) return env;
    return this.create(ServingEnvironmentKind, ns, { name: ns, description: `the InferenceServices of namespace ${ns}` }, {});
  }

  private async record(ns: string, env: Obj, name: string): Promise<Obj | undefined> {
    return (await this.client.listAll<Obj>(RegistryInferenceServiceKind, { namespace: ns, labelSelector: `${RegistryLabels.parent}=${env.metadata.name}` })).find((r) => r.spec.name === name);
  }

  private async create(kind: KindDef, ns: string, fields: Record<string, unknown>, labels: Record<string, string>): Promise<Obj> {
    const id = await nextRegistryId(this.client);
    const now = String(Date.now());
    return this.client.create<Obj>({
      apiVersion: modelRegistryApiVersion, kind: kind.kind, metadata: { name: id, namespace: ns, labels },
      spec: { ...fields, createTimeSinceEpoch: now, lastUpdateTimeSinceEpoch: now },
    });
  }

  /** as the REST API updates: fields merged in, the update time stamped and never going back */
  private update(o: Obj, fields: Record<string, unknown>, labels: Record<string, string> = {}): Promise<Obj> {
    const spec = { ...o.spec, ...fields, lastUpdateTimeSinceEpoch: String(Math.max(Date.now(), Number(o.spec.lastUpdateTimeSinceEpoch) + 1)) };
    return this.client.update<Obj>({ ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, ...labels } }, spec });
  }
}
