import { Cron } from 'croner';
import type { ScheduleRow } from './schedules.repository.js';

/**
 * When a schedule fires: pure functions over its timing, no clock of their own (the caller passes `now`).
 *
 * - `cron`: a five-field expression (minute precision; `@daily`-style nicknames too) read in an IANA time zone by
 *   croner, which handles daylight-saving changes: a time skipped by a spring-forward change runs at the first valid
 *   time after the gap; a time repeated by a fall-back change runs once.
 * - `interval`: every `interval_seconds`, counted from the previous due time (so a late firing does not drift).
 * - `once`: at `run_at`, then never again.
 */

export const SCHEDULE_KINDS = ['cron', 'interval', 'once'] as const;
export type ScheduleKind = (typeof SCHEDULE_KINDS)[number];

/** Below a minute a schedule is a busy loop on someone's LLM bill, and finer than cron's precision. */
export const MIN_INTERVAL_SECONDS = 60;
/** A year and a day: a longer period is a one-off in disguise. */
export const MAX_INTERVAL_SECONDS = 366 * 86_400;

export interface Timing {
  kind: ScheduleKind;
  cron?: string | null;
  timezone?: string | null;
  intervalSeconds?: number | null;
  runAt?: number | null;
}

/** True when Intl knows the IANA zone name (the same table croner reads it with). */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function cronOf(expr: string, timezone: string): Cron {
  return new Cron(expr, { timezone, paused: true, mode: '5-part' });
}

/** Why the expression cannot be used, phrased for the caller; undefined when it is fine. */
export function cronProblem(expr: string, timezone: string, now: number): string | undefined {
  let cron: Cron;
  try {
    cron = cronOf(expr, timezone);
  } catch (e) {
    const why = e instanceof Error ? e.message.replace(/^CronPattern:\s*/, '') : String(e);
    return `Invalid cron expression: ${why} (five fields: minute hour day-of-month month day-of-week)`;
  }
  if (!cron.nextRun(new Date(now))) return 'The cron expression never fires';
  return undefined;
}

/**
 * The first occurrence strictly after `after`; null when there is none (a one-off that has run).
 * `previousDue` anchors intervals: the next one is the first `previousDue + k * interval` after `after`, so the
 * occurrences missed while nothing ran collapse into that one (catch-up runs once, not a burst).
 */
export function nextOccurrence(t: Timing, after: number, previousDue?: number): number | null {
  switch (t.kind) {
    case 'cron': {
      const next = cronOf(t.cron!, t.timezone ?? 'UTC').nextRun(new Date(after));
      return next ? next.getTime() : null;
    }
    case 'interval': {
      const step = t.intervalSeconds! * 1000;
      if (previousDue === undefined) return after + step;
      return previousDue + (Math.floor((after - previousDue) / step) + 1) * step;
    }
    case 'once':
      return t.runAt !== null && t.runAt !== undefined && t.runAt > after ? t.runAt : null;
  }
}

/** A stored schedule's timing. */
export function timingOfRow(r: ScheduleRow): Timing {
  return {
    kind: r.kind as ScheduleKind,
    cron: r.cron,
    timezone: r.timezone,
    intervalSeconds: r.interval_seconds === null ? null : Number(r.interval_seconds),
    runAt: r.run_at === null ? null : Number(r.run_at),
  };
}
