// Which Events a person asked to see: by type, reason and the object they are about. Pure, tested.
import type { KObject } from '../../api/types';

export interface EventObj extends KObject {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  involvedObject?: { apiVersion?: string; kind?: string; name?: string; namespace?: string; uid?: string };
  regarding?: { apiVersion?: string; kind?: string; name?: string; namespace?: string };
  source?: { component?: string };
  reportingComponent?: string;
  lastTimestamp?: string;
  eventTime?: string;
  firstTimestamp?: string;
}

export interface EventFilter {
  type?: string;
  reason?: string;
  /** `kind/name`, `name`, or a part of either; case-insensitive */
  object?: string;
}

export const eventTime = (e: EventObj): string => e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp ?? '';

/** the object an Event is about, from the core/v1 or events.k8s.io/v1 field */
export function eventSubject(e: EventObj): { apiVersion?: string; kind?: string; name?: string; namespace?: string } {
  return e.involvedObject ?? e.regarding ?? {};
}

export function subjectLabel(e: EventObj): string {
  const s = eventSubject(e);
  return `${(s.kind ?? '?').toLowerCase()}/${s.name ?? '?'}`;
}

export function filterEvents(events: EventObj[], f: EventFilter): EventObj[] {
  const needle = f.object?.trim().toLowerCase();
  return events
    .filter((e) => !f.type || e.type === f.type)
    .filter((e) => !f.reason || e.reason === f.reason)
    .filter((e) => {
      if (!needle) return true;
      const s = eventSubject(e);
      const full = `${s.kind ?? ''}/${s.name ?? ''}`.toLowerCase();
      return full.includes(needle) || subjectLabel(e).includes(needle);
    })
    .sort((a, b) => eventTime(b).localeCompare(eventTime(a)));
}

/** the reasons present, most frequent first, for the reason picker */
export function reasonsOf(events: EventObj[]): string[] {
  const n = new Map<string, number>();
  for (const e of events) if (e.reason) n.set(e.reason, (n.get(e.reason) ?? 0) + 1);
  return [...n].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([r]) => r);
}
