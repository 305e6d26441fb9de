import { parseJson } from '../db/database.js';
import { AppError } from '../errors.js';
import type { TaskSubmission } from '../tasks/task.types.js';
import type { ClaimedTask, ClaimHooks } from '../tasks/task-claim-hooks.js';
import { nextOccurrence, timingOfRow } from './schedule-timing.js';
import type { ScheduledInvocation } from './schedules.schemas.js';
import type { ScheduleRow, SchedulesRepository } from './schedules.repository.js';
import { checkDeveloperAccess, type ScheduleAgentPort } from './schedules.service.js';

/**
 * What came of one due occurrence. `lost`: another process (or a change to the schedule) claimed it first, and this
 * one wrote nothing. Every other outcome is recorded in `schedule_occurrences` and the schedule's `last_outcome`.
 */
export type FireOutcome = 'lost' | 'started' | 'skipped_daily_limit' | 'skipped_agent_inactive' | 'skipped_agent_missing' | 'skipped_refused';

/** The tasks domain's claimed submission (TaskSubmissions.enqueueClaimed). */
export interface ClaimedSubmitter {
  enqueueClaimed(s: TaskSubmission, hooks: ClaimHooks): Promise<ClaimedTask>;
}

/**
 * Turns a due occurrence into a task: the claim (next_run_at moves on only if it still is the due time) and the
 * task commit in one transaction, so any number of schedulers on one database make exactly one task of it.
 *
 * Catch-up: the next occurrence is the first one after *now*, not after the due time, so a schedule that missed
 * several occurrences while no scheduler ran fires once for all of them, then resumes its rhythm.
 */
export class ScheduleFiring {
  constructor(
    private readonly repo: SchedulesRepository,
    private readonly tasks: ClaimedSubmitter,
    private readonly agents: ScheduleAgentPort,
  ) {}

  async fire(row: ScheduleRow, now: number): Promise<FireOutcome> {
    const org = row.organization_id;
    const due = Number(row.next_run_at);
    const next = nextOccurrence(timingOfRow(row), now, due);
    const base = { dueAt: due, firedAt: now, next };
    try {
      if (row.created_by_type === 'api') await checkDeveloperAccess(this.agents, org, row.agent_id);
      const out = await this.tasks.enqueueClaimed(submissionOf(row), {
        claim: (trx) => this.repo.claim(trx, org, row.id, due, next, now),
        settle: (trx, o) =>
          this.repo.record(trx, org, row.id, {
            ...base,
            outcome: o.taskId ? 'started' : 'skipped_daily_limit',
            taskId: o.taskId ?? null,
            detail: o.limited ?? null,
            started: o.taskId !== undefined,
          }),
      });
      if (!out.claimed) return 'lost';
      return out.task ? 'started' : 'skipped_daily_limit';
    } catch (e) {
      // Anything else (the database) leaves the occurrence due: the next tick tries again.
      if (!(e instanceof AppError)) throw e;
      // The agent refused the run before anything was written (inactive, deleted, its version gone): the
      // occurrence is still claimed, so it is recorded as skipped rather than retried or lost.
      const outcome: FireOutcome = e.code === 'not_found' ? 'skipped_agent_missing' : e.code === 'conflict' ? 'skipped_agent_inactive' : 'skipped_refused';
      const claimed = await this.repo.transaction(async (trx) => {
        if (!(await this.repo.claim(trx, org, row.id, due, next, now))) return false;
        // A deleted agent's schedule can never run again: it is paused, kept for its history.
        await this.repo.record(trx, org, row.id, { ...base, outcome, taskId: null, detail: e.message, started: false, disable: outcome === 'skipped_agent_missing' });
        return true;
      });
      return claimed ? outcome : 'lost';
    }
  }
}

function submissionOf(row: ScheduleRow): TaskSubmission {
  const inv = parseJson<ScheduledInvocation>(row.invocation, { input: { text: '', files: [] } } as unknown as ScheduledInvocation);
  return {
    organizationId: row.organization_id,
    agentId: row.agent_id,
    source: 'schedule',
    scheduleId: row.id,
    text: inv.input.text,
    files: inv.input.files ?? [],
    user: inv.input.user ?? null,
    additionalContext: inv.additional_context,
    expectedOutput: inv.expected_output,
    instructionsOverride: inv.instructions_override,
    outputFormat: inv.output_format,
    outputSchema: inv.output_schema,
    disableAttachmentInjection: inv.disable_attachment_injection ?? false,
  };
}
