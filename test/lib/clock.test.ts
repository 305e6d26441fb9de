import { describe, expect, it } from 'vitest';
import { isoOrNull, isoTime } from '../../src/lib/clock.js';

describe('isoTime', () => {
  it('shows milliseconds as microseconds with an explicit UTC offset, as the API does', () => {
    expect(isoTime(Date.UTC(2026, 10, 22, 11, 0, 0, 123))).toBe('2026-11-22T11:00:00.123000+00:00');
    expect(isoTime(0)).toBe('1970-01-01T00:00:00.000000+00:00');
    expect(isoTime(Date.UTC(2026, 0, 1, 0, 0, 0, 7))).toBe('2026-01-01T00:00:00.007000+00:00');
  });

  it('refuses a time that is not one, and passes null through isoOrNull', () => {
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(isoOrNull(null)).toBeNull();
    expect(isoOrNull(undefined)).toBeNull();
    expect(isoOrNull(1000)).toBe('1970-01-01T00:00:01.000000+00:00');
  });
});
