/** Injected wherever time matters, so tests can move it. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** ISO 8601 with microseconds and an explicit offset, as the API shows timestamps: 2026-11-22T11:00:00.123000+00:00 */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000+00:00');
}

export function isoOrNull(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : isoTime(Number(ms));
}
