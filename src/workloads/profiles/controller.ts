// The Profile controller, with Kubeflow profile-controller's semantics: the namespace named as the
// Profile (owner annotation, Kubeflow's labels, added and never overwritten), refusing a namespace
// someone else owns with a Failed condition, then the owner's and the service accounts' bindings
// and the quota. Each pass compares what exists with what the Profile asks for and writes only the
// difference. Deleting a Profile releases its finalizer; the garbage collector then deletes the
// namespace it controls, and the namespace controller empties it.
import { isAlreadyExists, isConflict } from '../../api/errors.js';
import { Kinds } from '../../api/index.js';
import type { KObject, ObjectKey, StoredObject } from '../../api/meta.js';
import { deepEqual } from '../../api/meta.js';
import type { ProfileCondition, ProfileObject } from '../../api/profiles.js';
import { ProfileKind } from '../../api/profiles.js';
import { RoleBindingKind } from '../../api/rbac.js';
import type { Controller, Manager, Result } from '../../control/controller.js';
import type { Recorder } from '../../control/events.js';
import type { Client } from '../../store/client.js';
import { ProfileNames, renderNamespace, renderNamespaced, renderQuota, withDefaultLabels } from './render.js';

type Profile = StoredObject & ProfileObject;

export function addProfileController(mgr: Manager, opts: { client: Client; recorder?: Recorder }): Controller {
  const r = new ProfileReconciler(opts.client, opts.recorder);
  return mgr.add({
    name: 'profile',
    for: ProfileKind,
    owns: [Kinds.Namespace, Kinds.ServiceAccount, RoleBindingKind, Kinds.ResourceQuota],
    reconcile: (key) => r.reconcile(key),
  });
}

export class ProfileReconciler {
  constructor(private readonly client: Client, private readonly recorder?: Recorder) {}

  async reconcile(key: ObjectKey): Promise<Result> {
    const profile = await this.client.find<Profile>(ProfileKind, { name: key.name });
    if (!profile) return {};
    try {
      return await this.sync(profile);
    } catch (e) {
      // someone wrote in between: read again
      if (isConflict(e)) return { requeueAfter: 100 };
      throw e;
    }
  }

  private async sync(profile: Profile): Promise<Result> {
    const finalizers = profile.metadata.finalizers ?? [];
    if (profile.metadata.deletionTimestamp) {
      // no plugins to revoke: the finalizer only orders the deletion as upstream does
      if (finalizers.includes(ProfileNames.finalizer)) {
        await this.client.update({ ...profile, metadata: { ...profile.metadata, finalizers: finalizers.filter((f) => f !== ProfileNames.finalizer) } });
      }
      return {};
    }
    if (!finalizers.includes(ProfileNames.finalizer)) {
      await this.client.update({ ...profile, metadata: { ...profile.metadata, finalizers: [...finalizers, ProfileNames.finalizer] } });
      return {};
    }
    const ownerName = profile.spec?.owner?.name ?? '';
    const ns = await this.client.find(Kinds.Namespace, { name: profile.metadata.name });
    if (!ns) {
      await this.client.create(renderNamespace(profile));
      this.recorder?.event(profile, 'Normal', 'NamespaceCreated', `Created namespace ${profile.metadata.name}`);
      return {};
    }
    if (ns.metadata.annotations?.owner !== ownerName) {
      await this.fail(profile, `namespace already exist, but not owned by profile creator ${ownerName}`);
      return {};
    }
    // a namespace still being emptied after an earlier Profile: wait for it to go
    if (ns.metadata.deletionTimestamp) return { requeueAfter: 1000 };
    const labels = withDefaultLabels(ns.metadata.labels);
    if (!deepEqual(labels, ns.metadata.labels ?? {})) await this.client.update({ ...ns, metadata: { ...ns.metadata, labels } });
    for (const want of renderNamespaced(profile)) await this.ensure(want);
    await this.syncQuota(profile);
    await this.clearFailure(profile);
    return {};
  }

  /** creates `want`, or brings the live object's spec-like fields and annotations to it */
  private async ensure(want: KObject): Promise<void> {
    const def = this.client.kindOf(want);
    const key = { namespace: want.metadata.namespace, name: want.metadata.name ?? '' };
    const live = await this.client.find(def, key);
    if (!live) {
      try {
        await this.client.create(want);
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
      return;
    }
    if (want.kind === 'RoleBinding') {
      // a binding's roleRef cannot change: replace the binding
      if (!deepEqual(live.roleRef, want.roleRef)) {
        await this.client.delete(def, key, { uid: live.metadata.uid });
        return;
      }
      const annotations = { ...(live.metadata.annotations ?? {}), ...(want.metadata.annotations ?? {}) };
      if (!deepEqual(live.subjects, want.subjects) || !deepEqual(annotations, live.metadata.annotations ?? {})) {
        await this.client.update({ ...live, subjects: want.subjects, metadata: { ...live.metadata, annotations } });
      }
    }
  }

  private async syncQuota(profile: Profile): Promise<void> {
    const want = renderQuota(profile);
    const key = { namespace: profile.metadata.name, name: ProfileNames.quota };
    const live = await this.client.find(Kinds.ResourceQuota, key);
    if (!want) {
      if (live) await this.client.delete(Kinds.ResourceQuota, key, { uid: live.metadata.uid });
      return;
    }
    if (!live) await this.client.create(want);
    else if (!deepEqual(live.spec, want.spec)) await this.client.update({ ...live, spec: want.spec });
  }

  /** upstream's appendErrorConditionAndReturn, without appending the same failure again on every pass */
  private async fail(profile: Profile, message: string): Promise<void> {
    const conditions: ProfileCondition[] = profile.status?.conditions ?? [];
    if (conditions.some((c: ProfileCondition) => c.type === 'Failed' && c.message === message)) return;
    const failed: ProfileCondition = { type: 'Failed', status: 'True', message };
    await this.client.updateStatus({ ...profile, status: { ...profile.status, conditions: [...conditions, failed] } });
    this.recorder?.event(profile, 'Warning', 'Failed', message);
  }

  /** once the Profile is whole again, an earlier failure no longer describes it */
  private async clearFailure(profile: Profile): Promise<void> {
    const conditions: ProfileCondition[] = profile.status?.conditions ?? [];
    if (!conditions.some((c: ProfileCondition) => c.type === 'Failed')) return;
    await this.client.updateStatus({ ...profile, status: { ...profile.status, conditions: conditions.filter((c: ProfileCondition) => c.type !== 'Failed') } });
  }
}
