import { parseJson } from '../db/database.js';
import { isoOrNull, isoTime } from '../lib/clock.js';
import type { ScheduledInvocation } from './schedules.schemas.js';
import type { OccurrenceRow, ScheduleRow } from './schedules.repository.js';

/** `active` (will fire at next_run_at), `paused`, or `finished` (a one-off that has run). */
export type ScheduleStatus = 'active' | 'paused' | 'finished';

export interface Schedule {
  id: string;
  organization_id: string;
  agent_id: string;
  name: string | null;
  kind: string;
  cron: string | null;
  timezone: string | null;
  interval_seconds: number | null;
  run_at: string | null;
  invocation: ScheduledInvocation;
  enabled: boolean;
  status: ScheduleStatus;
  next_run_at: string | null;
  last_run_at: string | null;
  last_task_id: string | null;
  last_outcome: string | null;
  run_count: number;
  skipped_count: number;
  /** Who made it: a caller of the API, or the agent itself from one of its tasks (the self-scheduling tool). */
  created_by: { type: 'api' | 'agent'; task_id: string | null };
  created_at: string;
  updated_at: string;
}

export function scheduleStatus(r: Pick<ScheduleRow, 'enabled' | 'next_run_at'>): ScheduleStatus {
  if (Number(r.enabled) !== 1) return 'paused';
  return r.next_run_at === null ? 'finished' : 'active';
}

export function presentSchedule(r: ScheduleRow): Schedule {
  return {
    id: r.id,
    organization_id: r.organization_id,
    agent_id: r.agent_id,
    name: r.name,
    kind: r.kind,
    cron: r.cron,
    timezone: r.timezone,
    interval_seconds: r.interval_seconds === null ? null : Number(r.interval_seconds),
    run_at: isoOrNull(r.run_at),
    invocation: parseJson<ScheduledInvocation>(r.invocation, { input: { text: '', files: [] } } as unknown as ScheduledInvocation),
    enabled: Number(r.enabled) === 1,
    status: scheduleStatus(r),
    next_run_at: isoOrNull(r.next_run_at),
    last_run_at: isoOrNull(r.last_run_at),
    last_task_id: r.last_task_id,
    last_outcome: r.last_outcome,
    run_count: Number(r.run_count),
    skipped_count: Number(r.skipped_count),
    created_by: { type: r.created_by_type === 'agent' ? 'agent' : 'api', task_id: r.created_by_task_id },
    created_at: isoTime(Number(r.created_at)),
    updated_at: isoTime(Number(r.updated_at)),
  };
}

export interface Occurrence {
  schedule_id: string;
  due_at: string;
  fired_at: string;
  outcome: string;
  task_id: string | null;
  detail: string | null;
}

export function presentOccurrence(r: OccurrenceRow): Occurrence {
  return {
    schedule_id: r.schedule_id,
    due_at: isoTime(Number(r.due_at)),
    fired_at: isoTime(Number(r.fired_at)),
    outcome: r.outcome,
    task_id: r.task_id,
    detail: r.detail,
  };
}
