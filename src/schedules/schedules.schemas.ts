import { z } from 'zod';
import { PageQuery } from '../http/router.js';
import { InvokeBody } from '../tasks/tasks.schemas.js';
import { MAX_INTERVAL_SECONDS, MIN_INTERVAL_SECONDS } from './schedule-timing.js';

/** A scheduled prompt: bounded, since every occurrence copies it into a task. */
export const MAX_SCHEDULE_TEXT = 100_000;

/**
 * What each occurrence submits: the invoke body (docs/contract.md#invoke) without a task id, since every occurrence
 * makes a new task, and without `user_tokens` (short-lived end-user credentials a schedule would keep for ever; the
 * per-user store, PUT /v1/mcp_servers/{id}/user_tokens/{user_id}, serves scheduled runs of a user). Strict, unlike
 * the invoke body: a field a schedule would store and never use is refused.
 */
export const ScheduledInvocationBody = InvokeBody.omit({ id: true, user_tokens: true })
  .extend({
    input: InvokeBody.shape.input.extend({ text: z.string().min(1).max(MAX_SCHEDULE_TEXT) }).strict(),
  })
  .strict();
export type ScheduledInvocation = z.output<typeof ScheduledInvocationBody>;

/** An ISO 8601 date-time with an offset (a one-off's time); epoch ms after parsing. */
const instant = z.iso.datetime({ offset: true }).transform((v) => Date.parse(v));

const timingFields = {
  cron: z.string().trim().min(1).max(200),
  timezone: z.string().min(1).max(100),
  interval_seconds: z.number().int().min(MIN_INTERVAL_SECONDS).max(MAX_INTERVAL_SECONDS),
  run_at: instant,
};

/**
 * POST /v1/agents/{agent_id}/schedules. Exactly one of `cron` (with `timezone`, default UTC), `interval_seconds`
 * or `run_at`; the service checks that and the cron expression and zone, with the clock.
 */
export const ScheduleCreateBody = z.strictObject({
  name: z.string().trim().min(1).max(200).nullish(),
  cron: timingFields.cron.optional(),
  timezone: timingFields.timezone.optional(),
  interval_seconds: timingFields.interval_seconds.optional(),
  run_at: timingFields.run_at.optional(),
  invocation: ScheduledInvocationBody,
  enabled: z.boolean().default(true),
});
export type ScheduleCreateBody = z.output<typeof ScheduleCreateBody>;

/** PATCH: any field; a timing field given replaces the schedule's timing (and may change its kind). */
export const SchedulePatchBody = ScheduleCreateBody.extend({ invocation: ScheduledInvocationBody.optional(), enabled: z.boolean().optional() });
export type SchedulePatchBody = z.output<typeof SchedulePatchBody>;

export const AgentScheduleParams = z.object({ agent_id: z.string().min(1), schedule_id: z.string().min(1) });
export const ScheduleListQuery = PageQuery.extend({
  agent_id: z.string().min(1).optional(),
  created_by: z.enum(['api', 'agent']).optional(),
});
export const AgentScheduleListQuery = ScheduleListQuery.omit({ agent_id: true });
