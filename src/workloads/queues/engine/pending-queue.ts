// A ClusterQueue's pending workloads, in Kueue's order: priority, then queue-order time, then (for
// workloads of the same second) the order they arrived in, then uid.
// They are kept in lanes, one per scheduling shape (priority and pod sets): a lane orders its
// members by time alone, and a heap of lanes orders the lanes by their heads, which gives the same
// order as one heap. The lanes are there because Kueue sets aside every workload equivalent to one
// that did not fit (BestEffortFIFO), and brings them all back when quota frees up: with lanes
// either move is one step for the whole shape instead of one per workload.
import { KeyedHeap } from './heap.js';

/** what the queue needs to know of a workload */
export interface Queued {
  key: string;
  uid: string;
  /** its scheduling shape: look-alikes share it */
  shape: string;
  priority: number;
  orderTs: number;
  /** when the engine first saw it: creation order among workloads of the same second */
  arrival: number;
}

/**
 * Kueue's queue order within one priority. Timestamps have whole seconds, so workloads created in
 * the same second tie; Kueue then compares uids, which are random: a workload could pass an older
 * one, even a StrictFIFO head that blocks. The order of arrival keeps them first come, first served.
 */
function byTime(a: Queued, b: Queued): boolean {
  if (a.orderTs !== b.orderTs) return a.orderTs < b.orderTs;
  if (a.arrival !== b.arrival) return a.arrival < b.arrival;
  if (a.uid !== b.uid) return a.uid < b.uid;
  return a.key < b.key;
}

/** Kueue's queue order: priority, then time */
export function queueBefore(a: Queued, b: Queued): boolean {
  if (a.priority !== b.priority) return a.priority > b.priority;
  return byTime(a, b);
}

class Lane<Wl extends Queued> {
  readonly members = new KeyedHeap<Wl>((w) => w.key, byTime);
  aside = false;
  constructor(readonly id: string) {}
}

export class PendingQueue<Wl extends Queued> {
  private readonly lanes = new Map<string, Lane<Wl>>();
  private readonly active = new KeyedHeap<Lane<Wl>>(
    (l) => l.id,
    (a, b) => queueBefore(a.members.peek() as Wl, b.members.peek() as Wl),
  );
  /** set aside one by one: each waits for its own reason to pass */
  readonly aside = new Map<string, Wl>();
  /** where each workload is: its lane, or the aside map */
  private readonly where = new Map<string, Lane<Wl> | 'aside' | 'front'>();
  /** the preemptor kept in front of everything (BestEffortFIFO) */
  private front: Wl | undefined;
  private asideInLanes = 0;

  get size(): number {
    return this.where.size;
  }

  /** workloads set aside, one by one or with their shape */
  get inadmissibleCount(): number {
    return this.aside.size + this.asideInLanes;
  }

  has(key: string): boolean {
    return this.where.has(key);
  }

  peek(): Wl | undefined {
    return this.front ?? this.active.peek()?.members.peek();
  }

  pop(): Wl | undefined {
    if (this.front) {
      const w = this.front;
      this.front = undefined;
      this.where.delete(w.key);
      return w;
    }
    const lane = this.active.peek();
    if (!lane) return undefined;
    const w = lane.members.pop() as Wl;
    this.where.delete(w.key);
    this.settle(lane);
    return w;
  }

  /** re-places a lane in the lane heap after its head changed, or drops it when empty */
  private settle(lane: Lane<Wl>): void {
    if (lane.members.size === 0) {
      this.active.remove(lane.id);
      this.lanes.delete(lane.id);
    } else if (!lane.aside) this.active.push(lane);
  }

  private laneFor(id: string): Lane<Wl> {
    let lane = this.lanes.get(id);
    if (!lane) this.lanes.set(id, (lane = new Lane<Wl>(id)));
    return lane;
  }

  /** Takes the workload out, wherever it is. */
  remove(key: string): Wl | undefined {
    const at = this.where.get(key);
    if (!at) return undefined;
    this.where.delete(key);
    if (at === 'front') {
      const w = this.front;
      this.front = undefined;
      return w;
    }
    if (at === 'aside') {
      const w = this.aside.get(key);
      this.aside.delete(key);
      return w;
    }
    const w = at.members.remove(key);
    if (at.aside) this.asideInLanes--;
    this.settle(at);
    return w;
  }

  /**
   * Queues the workload to be looked at. One whose shape is set aside joins it there (Kueue moves a
   * new look-alike of a workload that did not fit straight aside), unless `now` says it must be
   * looked at again anyway.
   */
  push(w: Wl, now = false): void {
    this.remove(w.key);
    let lane = this.laneFor(w.shape);
    if (lane.aside && now) lane = this.laneFor(`${w.shape}\u0000${w.key}`);
    lane.members.push(w);
    this.where.set(w.key, lane);
    if (lane.aside) this.asideInLanes++;
    else this.active.push(lane);
  }

  /** whether new workloads of this shape go straight aside */
  shapeAside(shape: string): boolean {
    return this.lanes.get(shape)?.aside ?? false;
  }

  /** Keeps the preemptor in front of everything until it is popped again. */
  pushFront(w: Wl): void {
    this.remove(w.key);
    if (this.front) this.push(this.front, true);
    this.front = w;
    this.where.set(w.key, 'front');
  }

  /** Sets one workload aside. */
  setAside(w: Wl): void {
    this.remove(w.key);
    this.aside.set(w.key, w);
    this.where.set(w.key, 'aside');
  }

  /** Sets the workload and every queued look-alike aside; returns the look-alikes. */
  setAsideShape(w: Wl): Wl[] {
    this.remove(w.key);
    const lane = this.laneFor(w.shape);
    if (!lane.aside) {
      this.active.remove(lane.id);
      lane.aside = true;
      this.asideInLanes += lane.members.size;
    }
    const others = lane.members.values();
    lane.members.push(w);
    this.where.set(w.key, lane);
    this.asideInLanes++;
    return others;
  }

  /**
   * Brings back what was set aside, except workloads `keep` holds back (their namespace no longer
   * matches, their backoff has not ended). Whole shapes come back in one step.
   */
  requeue(keep: (w: Wl) => boolean): void {
    for (const lane of this.lanes.values()) {
      if (!lane.aside) continue;
      lane.aside = false;
      this.asideInLanes -= lane.members.size;
      for (const w of lane.members.values()) {
        if (keep(w)) this.setAside(w);
      }
      if (lane.members.size > 0) this.active.push(lane);
      else this.lanes.delete(lane.id);
    }
    for (const w of [...this.aside.values()]) if (!keep(w)) this.push(w);
  }

  /** every pending workload, in no particular order */
  all(): Wl[] {
    const out: Wl[] = [...this.aside.values()];
    if (this.front) out.push(this.front);
    for (const lane of this.lanes.values()) out.push(...lane.members.values());
    return out;
  }

  /** the preemptor held in front, if any */
  pinned(): Wl | undefined {
    return this.front;
  }
}
