// Service-account tokens in projected volumes, kept fresh as the kubelet's token manager keeps them:
// each is asked of the cluster (TokenRequest, bound to the Pod) when the volume is set up, and asked
// again once 80 % of its lifetime has passed (or a day, whichever is first); the file is replaced by
// a rename in the volume's directory, so a container that reads it again sees the new token. A
// refresh that fails is tried again shortly; the old token stays until then.
import { renameSync, writeFileSync } from 'node:fs';
import { after, type Timer } from '../../util/timers.js';

/** what the cluster answered a TokenRequest with */
export interface IssuedToken {
  token: string;
  /** RFC 3339 */
  expirationTimestamp: string;
  /** the lifetime the token was issued for (spec.expirationSeconds of the answer) */
  expirationSeconds: number;
}

/** asks for a token for the Pod's service account, bound to the Pod */
export type TokenSource = (req: { audience?: string; expirationSeconds: number }) => Promise<IssuedToken>;

/** the kubelet refreshes a token older than this whatever its lifetime */
const maxAgeMs = 24 * 3600_000;
/** a refresh that failed is tried again after this long */
const retryMs = 10_000;

/**
 * When a token should be asked for again: once `fraction` of its lifetime has passed (the kubelet's
 * 80 %), and never later than a day after it was issued. The issue time is the expiry less the
 * lifetime, as the kubelet reckons it.
 */
export function refreshDue(t: Pick<IssuedToken, 'expirationTimestamp' | 'expirationSeconds'>, fraction = 0.8): number {
  const exp = Date.parse(t.expirationTimestamp);
  const ttl = t.expirationSeconds * 1000;
  const iat = exp - ttl;
  return Math.min(iat + ttl * fraction, iat + maxAgeMs);
}

/** writes a token file whole: a reader sees the old token or the new one, never a part */
export function writeTokenFile(file: string, token: string, mode: number): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, token, { mode });
  renameSync(tmp, file);
}

interface Tracked {
  timer?: Timer;
  request: TokenSource;
  ask: { audience?: string; expirationSeconds: number };
  mode: number;
}

export class ProjectedTokens {
  /** pod uid -> token file -> its refresh */
  private readonly byPod = new Map<string, Map<string, Tracked>>();
  private stopped = false;

  constructor(private readonly opts: { fraction?: number; log?: (m: string) => void } = {}) {}

  /** keeps the token file of a Pod fresh from now on (replacing any earlier refresh of that file) */
  track(podUid: string, file: string, issued: IssuedToken, request: TokenSource, ask: { audience?: string; expirationSeconds: number }, mode: number): void {
    if (this.stopped) return;
    let files = this.byPod.get(podUid);
    if (!files) this.byPod.set(podUid, (files = new Map()));
    files.get(file)?.timer?.clear();
    const t: Tracked = { request, ask, mode };
    files.set(file, t);
    this.schedule(podUid, file, t, refreshDue(issued, this.opts.fraction) - Date.now());
  }

  private schedule(podUid: string, file: string, t: Tracked, delayMs: number): void {
    t.timer = after(Math.max(0, delayMs), () => void this.refresh(podUid, file, t)).unref();
  }

  private async refresh(podUid: string, file: string, t: Tracked): Promise<void> {
    if (this.stopped || this.byPod.get(podUid)?.get(file) !== t) return;
    try {
      const issued = await t.request(t.ask);
      // the Pod may have gone while the cluster answered
      if (this.stopped || this.byPod.get(podUid)?.get(file) !== t) return;
      writeTokenFile(file, issued.token, t.mode);
      this.schedule(podUid, file, t, refreshDue(issued, this.opts.fraction) - Date.now());
    } catch (e) {
      this.opts.log?.(`kubelet: refreshing the service-account token ${file}: ${(e as Error).message}; trying again in ${retryMs / 1000}s`);
      if (!this.stopped && this.byPod.get(podUid)?.get(file) === t) this.schedule(podUid, file, t, retryMs);
    }
  }

  /** the Pod's tokens are no longer refreshed (it ended or is gone) */
  forget(podUid: string): void {
    for (const t of this.byPod.get(podUid)?.values() ?? []) t.timer?.clear();
    this.byPod.delete(podUid);
  }

  /** how many token files are kept fresh (all Pods) */
  get size(): number {
    let n = 0;
    for (const f of this.byPod.values()) n += f.size;
    return n;
  }

  stop(): void {
    this.stopped = true;
    for (const uid of [...this.byPod.keys()]) this.forget(uid);
  }
}
