import { describe, expect, it } from 'vitest';
import type { EventObj } from './filter';
import { filterEvents, reasonsOf, subjectLabel } from './filter';

const ev = (name: string, type: string, reason: string, kind: string, obj: string, ts: string): EventObj => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: 'default' },
  type,
  reason,
  involvedObject: { apiVersion: 'v1', kind, name: obj, namespace: 'default' },
  lastTimestamp: ts,
});

const events = [
  ev('a', 'Normal', 'Scheduled', 'Pod', 'train-0', '2026-01-01T00:00:01Z'),
  ev('b', 'Warning', 'FailedScheduling', 'Pod', 'big', '2026-01-01T00:00:03Z'),
  ev('c', 'Normal', 'Started', 'Pod', 'train-0', '2026-01-01T00:00:02Z'),
  ev('d', 'Normal', 'SuccessfulCreate', 'Job', 'train', '2026-01-01T00:00:04Z'),
];

describe('filterEvents', () => {
  it('keeps all, newest first, with no filter', () => {
    expect(filterEvents(events, {}).map((e) => e.metadata?.name)).toEqual(['d', 'b', 'c', 'a']);
  });
  it('filters by type and by reason', () => {
    expect(filterEvents(events, { type: 'Warning' }).map((e) => e.metadata?.name)).toEqual(['b']);
    expect(filterEvents(events, { reason: 'Started' }).map((e) => e.metadata?.name)).toEqual(['c']);
    expect(filterEvents(events, { type: 'Warning', reason: 'Started' })).toEqual([]);
  });
  it('filters by the object, as kind/name or a part of the name', () => {
    expect(filterEvents(events, { object: 'pod/train-0' }).map((e) => e.metadata?.name)).toEqual(['c', 'a']);
    expect(filterEvents(events, { object: 'TRAIN' }).map((e) => e.metadata?.name)).toEqual(['d', 'c', 'a']);
    expect(filterEvents(events, { object: 'job/' }).map((e) => e.metadata?.name)).toEqual(['d']);
  });
  it('reads events.k8s.io/v1 `regarding` when involvedObject is absent', () => {
    const e: EventObj = { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'x' }, regarding: { kind: 'Node', name: 'local' } };
    expect(subjectLabel(e)).toBe('node/local');
    expect(filterEvents([e], { object: 'node/local' })).toHaveLength(1);
  });
});

describe('reasonsOf', () => {
  it('lists reasons, most frequent first', () => {
    expect(reasonsOf([...events, ev('e', 'Normal', 'Started', 'Pod', 'x', '')])).toEqual(['Started', 'FailedScheduling', 'Scheduled', 'SuccessfulCreate']);
  });
});
