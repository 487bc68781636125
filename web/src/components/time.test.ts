import { describe, expect, it } from 'vitest';
import { age, between, shortDuration } from './time';

describe('shortDuration', () => {
  it('prints as kubectl does', () => {
    expect(shortDuration(42_000)).toBe('42s');
    expect(shortDuration(1_500)).toBe('1.5s');
    expect(shortDuration(192_000)).toBe('3m12s');
    expect(shortDuration(3 * 3600_000 + 5 * 60_000)).toBe('3h5m');
    expect(shortDuration(4 * 86400_000)).toBe('4d');
    expect(shortDuration(-1)).toBe('—');
  });
  it('measures ages and spans', () => {
    const now = Date.parse('2026-01-01T00:01:00Z');
    expect(age('2026-01-01T00:00:00Z', now)).toBe('1m');
    expect(age(undefined, now)).toBe('—');
    expect(between('2026-01-01T00:00:00Z', '2026-01-01T00:00:30Z')).toBe('30s');
  });
});
