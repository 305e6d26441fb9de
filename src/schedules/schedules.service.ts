import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { hasNulText, nulTextError } from '../lib/nul-text.js';
import type { Task } from '../tasks/task.types.js';
import type { TaskFilter } from '../tasks/tasks.repository.js';
import { presentOccurrence, presentSchedule, type Occurrence, type Schedule } from './schedule.presenter.js';
import { cronProblem, isTimeZone, nextOccurrence, timingOfRow, type ScheduleKind, type Timing } from './schedule-timing.js';
import type { ScheduleCreateBody, ScheduledInvocation, SchedulePatchBody } from './schedules.schemas.js';
import type { ScheduleChanges, ScheduleFilter, ScheduleRow, SchedulesRepository } from './schedules.repository.js';
import type { OutputSchemaCheck } from '../lib/schema-checker.js';

/** Unfinished schedules (active or paused) one agent may have, API and self-made together: each is a stream of tasks. */
export const MAX_SCHEDULES_PER_AGENT = 100;

/** What the schedules domain needs from the agents and tasks domains (adapted in schedules.module.ts). */
export interface ScheduleAgentPort {
  exists(organizationId: string, agentId: string): Promise<boolean>;
  /** The published version's `developer_access`; undefined when the agent does not exist. */
  developerAccess(organizationId: string, agentId: string): Promise<boolean | undefined>;
}

/**
 * A schedule made through the API is a deferred API invocation: like one, it needs the agent's developer access
 * (spec 2.1), when made and when it fires. The agent's own schedules do not (its runs were allowed already).
 */
export async function checkDeveloperAccess(agents: ScheduleAgentPort, orgId: string, agentId: string): Promise<void> {
  if ((await agents.developerAccess(orgId, agentId)) === false) throw new AppError('forbidden', 'Developer access is disabled for this agent');
}
export interface ScheduleTasksPort {
  list(organizationId: string, filter: TaskFilter, page: number, perPage: number): Promise<{ items: Task[]; total: number }>;
}

/** Who asks for a schedule: a caller of the API, or the agent itself during one of its tasks. */
export type ScheduleAuthor = { type: 'api' } | { type: 'agent'; taskId: string; maxSelfSchedules: number };

/** Where a timing field sits in the caller's request, for 422 locations (the tool names its own arguments). */
type LocOf = (field: string) => (string | number)[];
const bodyLoc: LocOf = (f) => (f ? ['body', f] : ['body']);

/** Use cases of schedules: CRUD, pause and resume, their tasks and occurrences, and the agent's own schedules. */
export class SchedulesService {
  constructor(
    private readonly repo: SchedulesRepository,
    private readonly agents: ScheduleAgentPort,
    private readonly tasks: ScheduleTasksPort,
    private readonly clock: Clock,
    /** A schedule's invocation with an output_schema its runs could not enforce is refused now, not at every firing. */
    private readonly checkOutputSchema?: OutputSchemaCheck,
  ) {}

  async create(orgId: string, agentId: string, body: ScheduleCreateBody, author: ScheduleAuthor = { type: 'api' }, loc: LocOf = bodyLoc): Promise<Schedule> {
    await this.requireAgent(orgId, agentId);
    if (author.type === 'api') await checkDeveloperAccess(this.agents, orgId, agentId);
    const now = this.clock.now();
    const timing = this.timingOf(body, undefined, now, loc);
    checkInvocationText(body.invocation, loc);
    if (body.invocation.output_schema) await this.checkOutputSchema?.(orgId, body.invocation.output_schema, [...loc('invocation'), 'output_schema']);
    const enabled = body.enabled !== false;
    const row: ScheduleRow = {
      organization_id: orgId,
      id: newId(),
      agent_id: agentId,
      name: body.name ?? null,
      kind: timing.kind,
      cron: timing.cron ?? null,
      timezone: timing.timezone ?? null,
      interval_seconds: timing.intervalSeconds ?? null,
      run_at: timing.runAt ?? null,
      invocation: JSON.stringify(body.invocation),
      enabled: enabled ? 1 : 0,
      next_run_at: enabled ? nextOccurrence(timing, now) : null,
      last_run_at: null,
      last_task_id: null,
      last_outcome: null,
      run_count: 0,
      skipped_count: 0,
      created_by_type: author.type,
      created_by_task_id: author.type === 'agent' ? author.taskId : null,
      created_at: now,
      updated_at: now,
    };
    await this.repo.transaction(async (trx) => {
      // Counted where the insert commits, serialised per agent: parallel requests cannot pass a limit together.
      await this.repo.lockAgentSchedules(trx, orgId, agentId);
      if ((await this.repo.countForAgent(orgId, agentId, trx)) >= MAX_SCHEDULES_PER_AGENT) {
        throw new AppError('conflict', `The agent already has ${MAX_SCHEDULES_PER_AGENT} active or paused schedules, the most it may have`);
      }
      if (author.type === 'agent' && (await this.repo.countForAgent(orgId, agentId, trx, true)) >= author.maxSelfSchedules) {
        throw new AppError('conflict', `You already have ${author.maxSelfSchedules} active schedules you made (max_self_schedules); cancel one first`);
      }
      await this.repo.insert(row, trx);
    });
    return presentSchedule(row);
  }

  async get(orgId: string, agentId: string, id: string): Promise<Schedule> {
    return presentSchedule(await this.require(orgId, agentId, id));
  }

  async list(orgId: string, filter: ScheduleFilter, page: number, perPage: number): Promise<{ items: Schedule[]; total: number }> {
    const { rows, total } = await this.repo.list(orgId, filter, (page - 1) * perPage, perPage);
    return { items: rows.map(presentSchedule), total };
  }

  async listForAgent(orgId: string, agentId: string, filter: ScheduleFilter, page: number, perPage: number): Promise<{ items: Schedule[]; total: number }> {
    await this.requireAgent(orgId, agentId);
    return this.list(orgId, { ...filter, agentId }, page, perPage);
  }

  async update(orgId: string, agentId: string, id: string, patch: SchedulePatchBody, loc: LocOf = bodyLoc): Promise<Schedule> {
    const row = await this.require(orgId, agentId, id);
    const now = this.clock.now();
    const changes: ScheduleChanges = { updated_at: now };
    const timingGiven = patch.cron !== undefined || patch.interval_seconds !== undefined || patch.run_at !== undefined || patch.timezone !== undefined;
    const timing = timingGiven ? this.timingOf(patch, row, now, loc) : timingOfRow(row);
    if (timingGiven) Object.assign(changes, { kind: timing.kind, cron: timing.cron ?? null, timezone: timing.timezone ?? null, interval_seconds: timing.intervalSeconds ?? null, run_at: timing.runAt ?? null });
    if (patch.invocation !== undefined) {
      checkInvocationText(patch.invocation, loc);
      if (patch.invocation.output_schema) await this.checkOutputSchema?.(orgId, patch.invocation.output_schema, [...loc('invocation'), 'output_schema']);
      changes.invocation = JSON.stringify(patch.invocation);
    }
    if (patch.name !== undefined) changes.name = patch.name ?? null;
    const enabled = patch.enabled ?? Number(row.enabled) === 1;
    changes.enabled = enabled ? 1 : 0;
    // A new timing starts afresh from now; so does a resume (a paused period is not caught up).
    if (!enabled) changes.next_run_at = null;
    else if (timingGiven) changes.next_run_at = nextOccurrence(timing, now);
    else if (Number(row.enabled) !== 1) changes.next_run_at = this.resumedNext(row, timing, now);
    return presentSchedule(await this.write(orgId, id, changes));
  }

  pause(orgId: string, agentId: string, id: string): Promise<Schedule> {
    return this.update(orgId, agentId, id, { enabled: false });
  }

  resume(orgId: string, agentId: string, id: string): Promise<Schedule> {
    return this.update(orgId, agentId, id, { enabled: true });
  }

  async delete(orgId: string, agentId: string, id: string): Promise<void> {
    await this.require(orgId, agentId, id);
    if (!(await this.repo.delete(orgId, id))) throw AppError.notFound('Schedule');
  }

  /** The tasks the schedule's occurrences made, newest first. */
  async tasksOf(orgId: string, agentId: string, id: string, filter: TaskFilter, page: number, perPage: number): Promise<{ items: Task[]; total: number }> {
    await this.require(orgId, agentId, id);
    return this.tasks.list(orgId, { ...filter, agentId, scheduleId: id }, page, perPage);
  }

  /** Every occurrence that came due, newest first: its task, or why none was made. */
  async occurrences(orgId: string, agentId: string, id: string, page: number, perPage: number): Promise<{ items: Occurrence[]; total: number }> {
    await this.require(orgId, agentId, id);
    const [rows, total] = await Promise.all([this.repo.occurrences(orgId, id, (page - 1) * perPage, perPage), this.repo.countOccurrences(orgId, id)]);
    return { items: rows.map(presentOccurrence), total };
  }

  /** The agent's own (self-made) schedule: another's is answered as missing. */
  async cancelSelfMade(orgId: string, agentId: string, id: string): Promise<void> {
    const row = await this.repo.find(orgId, id);
    if (!row || row.agent_id !== agentId || row.created_by_type !== 'agent') throw AppError.notFound('Schedule');
    await this.repo.delete(orgId, id);
  }

  private async write(orgId: string, id: string, changes: ScheduleChanges): Promise<ScheduleRow> {
    const updated = await this.repo.update(orgId, id, changes);
    if (!updated) throw AppError.notFound('Schedule');
    return updated;
  }

  /** A one-off that never came due still runs (at once when its time passed while paused); one that did stays done. */
  private resumedNext(row: ScheduleRow, timing: Timing, now: number): number | null {
    if (timing.kind === 'once') return Number(row.run_count) + Number(row.skipped_count) === 0 ? timing.runAt! : null;
    return nextOccurrence(timing, now);
  }

  private async requireAgent(orgId: string, agentId: string): Promise<void> {
    if (!(await this.agents.exists(orgId, agentId))) throw AppError.notFound('Agent');
  }

  private async require(orgId: string, agentId: string, id: string): Promise<ScheduleRow> {
    const row = await this.repo.find(orgId, id);
    if (row && row.agent_id === agentId) return row;
    await this.requireAgent(orgId, agentId);
    throw AppError.notFound('Schedule');
  }

  /**
   * The timing a request asks for: exactly one of cron, interval_seconds or run_at (a patch may give none and keep
   * the schedule's, changing only its time zone), checked against the clock.
   */
  private timingOf(b: Pick<ScheduleCreateBody, 'cron' | 'timezone' | 'interval_seconds' | 'run_at'>, current: ScheduleRow | undefined, now: number, loc: LocOf): Timing {
    const given = (['cron', 'interval_seconds', 'run_at'] as const).filter((f) => b[f] !== undefined);
    if (given.length > 1 || (given.length === 0 && !current)) {
      throw AppError.invalid(loc(''), 'Give exactly one of cron, interval_seconds or run_at');
    }
    const kind: ScheduleKind = given.length ? ({ cron: 'cron', interval_seconds: 'interval', run_at: 'once' } as const)[given[0]!] : (current!.kind as ScheduleKind);
    if (b.timezone !== undefined && kind !== 'cron') throw AppError.invalid(loc('timezone'), 'timezone applies to cron schedules only');
    if (kind === 'cron') {
      const timezone = b.timezone ?? current?.timezone ?? 'UTC';
      if (!isTimeZone(timezone)) throw AppError.invalid(loc('timezone'), `Unknown time zone "${timezone}": use an IANA name such as Europe/Paris or UTC`);
      const cron = b.cron ?? current!.cron!;
      const problem = cronProblem(cron, timezone, now);
      if (problem) throw AppError.invalid(loc('cron'), problem);
      return { kind, cron, timezone };
    }
    if (kind === 'interval') return { kind, intervalSeconds: b.interval_seconds ?? Number(current!.interval_seconds) };
    const runAt = b.run_at ?? Number(current!.run_at);
    if (b.run_at !== undefined && runAt <= now) throw AppError.invalid(loc('run_at'), 'run_at must be in the future');
    return { kind, runAt };
  }
}

/** NUL in a prompt would be refused at every occurrence (nul-text.ts): refused once, here. */
function checkInvocationText(inv: ScheduledInvocation, loc: LocOf): void {
  const { input, ...rest } = inv;
  if (hasNulText({ text: input.text, ...(input.user ?? {}), ...rest })) throw nulTextError(loc('invocation'));
}
