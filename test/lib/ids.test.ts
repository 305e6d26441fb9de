import { describe, expect, it } from 'vitest';
import { newId, UUID_RE } from '../../src/lib/ids.js';

/** The Unix milliseconds of a UUIDv7 (its first 48 bits). */
const msOf = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('newId (UUIDv7)', () => {
  it('is a version 7, RFC 9562 variant UUID carrying the current time', () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    expect(id).toMatch(UUID_RE);
    expect(id[14]).toBe('7');
    expect('89ab').toContain(id[19]);
    expect(msOf(id)).toBeGreaterThanOrEqual(before);
    expect(msOf(id)).toBeLessThanOrEqual(after + 1);
  });

  it('is strictly increasing within the process, also within one millisecond, and never repeats', () => {
    // Far more ids than the random pool holds (512) and than one millisecond makes: refills and counter steps.
    const ids = Array.from({ length: 50_000 }, () => newId());
    for (let i = 1; i < ids.length; i++) if (!(ids[i - 1]! < ids[i]!)) throw new Error(`not increasing at ${i}: ${ids[i - 1]} then ${ids[i]}`);
    expect(new Set(ids).size).toBe(ids.length);
    // Many share a millisecond, so the counter, not the clock, orders them.
    expect(new Set(ids.map(msOf)).size).toBeLessThan(ids.length);
  });

  it('has random bits: ids of one millisecond differ beyond the counter', () => {
    const tails = new Set(Array.from({ length: 2000 }, () => newId().slice(-10)));
    expect(tails.size).toBeGreaterThan(1990);
  });
});
