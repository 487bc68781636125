// The status the serving controllers write: an InferenceService's conditions (one per component,
// IngressReady, Ready) and model status as KServe reports them, and a revision's model state from
// its replicas.
import type { Pod } from '../../api/core-types.js';
import type { Condition } from '../../api/conditions.js';
import { findCondition, setCondition } from '../../api/conditions.js';
import type { StoredObject } from '../../api/meta.js';
import type { Revision, RevisionStatus } from '../../api/serving-revision.js';
import type { ComponentExtensionSpec, ComponentStatus, InferenceService, InferenceServiceStatus, ModelStatus } from '../../api/serving.js';
import type { ComponentName } from './data-plane.js';

type Rev = Revision & StoredObject;

const readyType: Record<ComponentName, string> = { predictor: 'PredictorReady', transformer: 'TransformerReady', explainer: 'ExplainerReady' };

/** `PredictorReady` (or the transformer's, the explainer's): whether the newest revision serves. */
export function componentCondition(comp: ComponentName, latest: Rev): Condition {
  const type = readyType[comp];
  if (latest.status?.ready && !latest.spec.failure) return { type, status: 'True' };
  const f = latest.spec.failure ?? (latest.status?.modelState === 'FailedToLoad' ? latest.status.lastFailureInfo : undefined);
  return { type, status: f ? 'False' : 'Unknown', reason: f ? f.reason : 'RevisionLoading', message: f ? f.message : `revision ${latest.metadata.name} is loading its model` };
}

/**
 * Sets the component conditions, IngressReady (every component has a ready revision taking
 * traffic) and Ready, and drops conditions no longer reported. A True condition carries no reason.
 */
export function setServiceConditions(status: InferenceServiceStatus, components: Condition[], routable: boolean): void {
  const conds = [...components];
  conds.push(routable ? { type: 'IngressReady', status: 'True' } : { type: 'IngressReady', status: 'False', reason: 'ComponentNotReady', message: 'a component has no ready revision yet' });
  const ready = routable && components.every((c) => c.status === 'True');
  const notReady = conds.find((c) => c.status !== 'True');
  conds.push(ready ? { type: 'Ready', status: 'True' } : { type: 'Ready', status: 'False', reason: notReady?.reason ?? 'NotReady', message: notReady?.message ?? '' });
  for (const c of conds) {
    setCondition(status, c);
    if (c.status === 'True') {
      const stored = findCondition(status.conditions, c.type);
      if (stored) {
        delete stored.reason;
        delete stored.message;
      }
    }
  }
  status.conditions = (status.conditions ?? []).filter((c) => conds.some((x) => x.type === c.type));
}

/** KServe's `status.modelStatus`, from the predictor's newest revision and the one serving now. */
export function modelStatusOf(latest: Rev, ready: Rev | undefined): ModelStatus {
  const target = latest.spec.failure ? 'FailedToLoad' : latest.status?.modelState ?? 'Pending';
  const active = ready?.status?.modelState ?? '';
  const ms: ModelStatus = {
    transitionStatus: latest.spec.failure
      ? ['NoSupportingRuntime', 'RuntimeNotRecognized', 'RuntimeDisabled', 'InvalidPredictorSpec'].includes(latest.spec.failure.reason) ? 'InvalidSpec' : 'BlockedByFailedLoad'
      : target === 'FailedToLoad' ? 'BlockedByFailedLoad' : latest.status?.ready ? 'UpToDate' : 'InProgress',
    states: { activeModelState: active, targetModelState: target },
    copies: { failedCopies: latest.status?.failedCopies ?? 0, totalCopies: latest.status?.replicas ?? 0 },
  };
  const f = latest.spec.failure ?? latest.status?.lastFailureInfo;
  if (f) ms.lastFailureInfo = { reason: f.reason as never, message: f.message, modelRevisionName: latest.metadata.name, ...('exitCode' in f && f.exitCode !== undefined ? { exitCode: f.exitCode } : {}), ...('time' in f && f.time ? { time: f.time } : {}) };
  return ms;
}

/** A container that ended with an error and is not serving: the model did not load. */
export function loadFailure(p: Pod): { exitCode: number; reason: string } | undefined {
  for (const cs of p.status?.containerStatuses ?? []) {
    const term = cs.state?.terminated ?? (cs.state?.waiting ? cs.lastState?.terminated : undefined);
    if (term && (term.exitCode ?? 0) !== 0) return { exitCode: term.exitCode ?? 1, reason: cs.state?.waiting?.reason ?? term.reason ?? 'Error' };
  }
  return undefined;
}

/** The last line of a model server's log that says what failed, without the log's timestamp prefix. */
export function failureLine(log: string): string | undefined {
  const line = log.split('\n').map((l) => l.trim()).filter(Boolean).reverse().find((l) => /fail|error|exception/i.test(l)) ?? log.trim().split('\n').pop();
  return line ? line.replace(/^\S+Z (stdout|stderr) [FP] /, '') : undefined;
}

/** The message a revision's load failure is reported with, to requests and in its status. */
export function revisionFailure(rev: Rev, status: RevisionStatus): string | undefined {
  return status.modelState === 'FailedToLoad' ? `model of revision ${rev.metadata.name} failed to load: ${status.lastFailureInfo?.message ?? 'unknown error'}` : undefined;
}

/** KServe's canary rule, with its rolled-out bookkeeping kept in the component status. */
export function canaryTraffic(isvc: InferenceService, comp: ComponentName, cs: ComponentStatus, ready: Rev | undefined, latestCreated: string): { revisionName: string; percent: number; tag?: string }[] {
  if (!ready) {
    // nothing ready yet: traffic stays on what was rolled out before, if anything
    return cs.latestRolledoutRevision ? [{ revisionName: cs.latestRolledoutRevision, percent: 100 }] : [];
  }
  const c = (isvc.spec as unknown as Record<string, ComponentExtensionSpec>)[comp];
  const p = comp === 'predictor' ? c?.canaryTrafficPercent : undefined;
  const latest = ready.metadata.name;
  let out: { revisionName: string; percent: number; tag?: string }[];
  if (p !== undefined && p < 100 && cs.latestRolledoutRevision && cs.latestRolledoutRevision !== latest) {
    out = [{ revisionName: latest, percent: p, tag: 'latest' }];
    if (100 - p > 0) out.push({ revisionName: cs.latestRolledoutRevision, percent: 100 - p, tag: 'prev' });
  } else if (p !== undefined && p < 100 && latest === latestCreated && cs.latestRolledoutRevision === latest && cs.previousRolledoutRevision) {
    // the rolled-out revision, with nothing newer, given less than 100% again (`canaryTrafficPercent:
    // 0` pins back): the rest goes back to the revision before it
    out = [{ revisionName: latest, percent: p, tag: 'latest' }];
    if (100 - p > 0) out.push({ revisionName: cs.previousRolledoutRevision, percent: 100 - p, tag: 'prev' });
    cs.latestRolledoutRevision = cs.previousRolledoutRevision;
    delete cs.previousRolledoutRevision;
  } else {
    out = [{ revisionName: latest, percent: 100 }];
  }
  const full = out.find((t) => t.revisionName === latest && t.percent === 100);
  if (full && cs.latestRolledoutRevision !== latest) {
    if (cs.latestRolledoutRevision) cs.previousRolledoutRevision = cs.latestRolledoutRevision;
    cs.latestRolledoutRevision = latest;
  }
  return out;
}
