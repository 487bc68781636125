// The kfp-kubernetes settings of the Pod itself: its labels and annotations, its deadline, and
// its dynamic resource claims (kept, not allocated on this machine).
import { isDns1123Label, isQualifiedName } from '../../api/validation.js';
import type { Change, PlatformContext } from './platform-fields.js';
import { entry, fail, jsonFrom, labelFrom, list, optInt, optString, reqString, skipped, stringMap } from './platform-fields.js';

const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** podMetadata: labels and annotations added to the Pod; a key Skiff sets itself keeps Skiff's value, with a note. */
export function podMetadata(c: PlatformContext): Change | void {
  if (c.config['podMetadata'] === undefined || c.config['podMetadata'] === null) return;
  const md = entry(c.config['podMetadata'], 'podMetadata');
  const labels = stringMap(md['labels'], 'podMetadata.labels');
  const annotations = stringMap(md['annotations'], 'podMetadata.annotations');
  for (const [k, v] of Object.entries(labels)) {
    if (!isQualifiedName(k)) fail(`podMetadata.labels[${JSON.stringify(k)}]`, 'a label key must be a qualified name: [prefix/]name, the name at most 63 alphanumeric characters, "-", "_" or "."');
    if (v.length > 63 || !labelValue.test(v)) fail(`podMetadata.labels[${JSON.stringify(k)}]`, `${JSON.stringify(v)} is not a valid label value (at most 63 alphanumeric characters, "-", "_" or ".", starting and ending with an alphanumeric character)`);
  }
  for (const k of Object.keys(annotations)) if (!isQualifiedName(k)) fail(`podMetadata.annotations[${JSON.stringify(k)}]`, 'an annotation key must be a qualified name: [prefix/]name');
  return () => {
    const meta = c.pod.metadata;
    for (const [kind, want] of [['labels', labels], ['annotations', annotations]] as const) {
      const entries = Object.entries(want);
      if (entries.length === 0) continue;
      const have = (meta[kind] ??= {});
      for (const [k, v] of entries) {
        if (have[k] !== undefined && have[k] !== v) c.notes.add(`podMetadata.${kind}[${JSON.stringify(k)}] is not applied: Skiff sets that key itself (to ${JSON.stringify(have[k])})`);
        else have[k] = v;
      }
    }
  };
}

/** activeDeadlineSeconds: the task's timeout, as the Pod's deadline (0: none). */
export function activeDeadline(c: PlatformContext): Change | void {
  const deadline = optInt(c.config, 'activeDeadlineSeconds', 'activeDeadlineSeconds');
  if (deadline !== undefined && deadline < 0) fail('activeDeadlineSeconds', `must not be negative, got ${deadline}`);
  if (deadline === undefined || deadline === 0) return;
  return () => {
    c.spec.activeDeadlineSeconds = deadline;
  };
}

/** podResourceClaims: a template name, or a JSON parameter naming a template or a claim; kept on the Pod with a note. */
export function resourceClaims(c: PlatformContext): Change | void {
  const claims: { name: string; resourceClaimTemplateName?: string; resourceClaimName?: string }[] = [];
  list(c.config, 'podResourceClaims').forEach((x, i) => {
    const f = `podResourceClaims[${i}]`;
    const e = entry(x, f);
    if (e['resourceClaimJson'] !== undefined && e['resourceClaimJson'] !== null) {
      const v = jsonFrom(c.resolve, e['resourceClaimJson'], `${f}.resourceClaimJson`);
      if (v === undefined) return skipped(c, f, 'resourceClaimJson');
      const rc = entry(v, `${f}.resourceClaimJson`);
      const tmpl = optString(rc, 'resourceClaimTemplateName', `${f}.resourceClaimJson`);
      const claimName = optString(rc, 'resourceClaimName', `${f}.resourceClaimJson`);
      if ((tmpl === undefined) === (claimName === undefined)) fail(`${f}.resourceClaimJson`, 'exactly one of resourceClaimTemplateName and resourceClaimName is required');
      const name = optString(rc, 'name', `${f}.resourceClaimJson`) ?? labelFrom(tmpl ?? claimName ?? '');
      claims.push({ name, ...(tmpl ? { resourceClaimTemplateName: tmpl } : {}), ...(claimName ? { resourceClaimName: claimName } : {}) });
      return;
    }
    const tmpl = reqString(e, 'resourceClaimTemplateName', f);
    claims.push({ name: labelFrom(tmpl), resourceClaimTemplateName: tmpl });
  });
  const claimNames = new Set<string>();
  for (const [i, claim] of claims.entries()) {
    if (!isDns1123Label(claim.name)) fail(`podResourceClaims[${i}]`, `claim name ${JSON.stringify(claim.name)} must be a lowercase RFC 1123 label`);
    if (claimNames.has(claim.name)) fail(`podResourceClaims[${i}]`, `claim name ${JSON.stringify(claim.name)} is used twice`);
    claimNames.add(claim.name);
  }
  if (!claims.length) return;
  return () => {
    c.spec.resourceClaims = [...(c.spec.resourceClaims ?? []), ...claims];
    const res = (c.main.resources ??= {}) as Record<string, unknown>;
    res['claims'] = [...((res['claims'] as unknown[] | undefined) ?? []), ...claims.map((x) => ({ name: x.name }))];
    c.notes.add(`resource claims ${claims.map((x) => x.name).join(', ')} are kept on the Pod but not allocated: dynamic resource allocation is not available on this machine`);
  };
}
