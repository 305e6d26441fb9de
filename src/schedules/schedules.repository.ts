import { type Insertable, type Selectable, type Transaction, type Updateable } from 'kysely';
import { serialiseOn } from '../db/advisory-lock.js';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { pageAndTotal } from '../db/paging.js';

export type ScheduleRow = Selectable<Database['schedules']>;
export type NewScheduleRow = Insertable<Database['schedules']>;
export type ScheduleChanges = Updateable<Database['schedules']>;
export type OccurrenceRow = Selectable<Database['schedule_occurrences']>;
type Trx = Transaction<Database>;

/** Occurrences kept per schedule (the newest): an every-minute schedule would otherwise add half a million a year. */
export const OCCURRENCES_KEPT = 1000;

export interface ScheduleFilter {
  agentId?: string;
  createdBy?: 'api' | 'agent';
}

/** The fields an occurrence's claim writes, beside moving next_run_at. */
export interface OccurrenceRecord {
  dueAt: number;
  firedAt: number;
  next: number | null;
  outcome: string;
  taskId: string | null;
  detail: string | null;
  /** A run counts in run_count, anything else in skipped_count. */
  started: boolean;
  /** Pauses the schedule (its agent is gone). */
  disable?: boolean;
}

/** SQL of schedules and their occurrences. Every query filters by organization, except the scheduler's due scan. */
export class SchedulesRepository {
  constructor(
    private readonly db: Db,
    private readonly kept = OCCURRENCES_KEPT,
  ) {}

  transaction<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    return this.db.kysely.transaction().execute(fn);
  }

  async insert(row: NewScheduleRow, trx: Trx | Db['kysely'] = this.db.kysely): Promise<void> {
    await trx.insertInto('schedules').values(row).execute();
  }

  find(orgId: string, id: string): Promise<ScheduleRow | undefined> {
    return this.db.kysely.selectFrom('schedules').selectAll().where('organization_id', '=', orgId).where('id', '=', id).executeTakeFirst();
  }

  async list(orgId: string, f: ScheduleFilter, offset: number, limit: number): Promise<{ rows: ScheduleRow[]; total: number }> {
    let q = this.db.kysely.selectFrom('schedules').where('organization_id', '=', orgId);
    if (f.agentId !== undefined) q = q.where('agent_id', '=', f.agentId);
    if (f.createdBy !== undefined) q = q.where('created_by_type', '=', f.createdBy);
    const { rows, total } = await pageAndTotal(q, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').offset(offset).limit(limit));
    return { rows, total };
  }

  async countForAgent(orgId: string, agentId: string, trx: Trx | Db['kysely'] = this.db.kysely, selfMadeActive = false): Promise<number> {
    let q = trx.selectFrom('schedules').where('organization_id', '=', orgId).where('agent_id', '=', agentId);
    // "Active" self-made schedules: those that will still fire (enabled, with a next occurrence). Otherwise every
    // schedule but the finished ones (a one-off that ran is history, and must not use up the agent's allowance).
    if (selfMadeActive) q = q.where('created_by_type', '=', 'agent').where('enabled', '=', 1).where('next_run_at', 'is not', null);
    else q = q.where((eb) => eb.or([eb('enabled', '=', 0), eb('next_run_at', 'is not', null)]));
    const r = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /**
   * Serialises schedule creation per agent, so a count and the insert after it hold together (the limits on
   * schedules per agent and on self-made ones). SQLite: the write transaction already serialises writers.
   */
  async lockAgentSchedules(trx: Trx, orgId: string, agentId: string): Promise<void> {
    await serialiseOn(this.db, trx, `agent-schedules:${orgId}:${agentId}`);
  }

  async update(orgId: string, id: string, changes: ScheduleChanges): Promise<ScheduleRow | undefined> {
    return this.db.kysely.updateTable('schedules').set(changes).where('organization_id', '=', orgId).where('id', '=', id).returningAll().executeTakeFirst();
  }

  delete(orgId: string, id: string): Promise<boolean> {
    return this.transaction(async (trx) => {
      const r = await trx.deleteFrom('schedules').where('organization_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) return false;
      await trx.deleteFrom('schedule_occurrences').where('organization_id', '=', orgId).where('schedule_id', '=', id).execute();
      return true;
    });
  }

  /**
   * Schedules of every organization whose occurrence is due: the scheduler's scan (like the task queue's claim, it
   * serves all tenants; each firing then works within the row's organization).
   */
  due(now: number, limit: number): Promise<ScheduleRow[]> {
    return this.db.kysely
      .selectFrom('schedules')
      .selectAll()
      .where('enabled', '=', 1)
      .where('next_run_at', 'is not', null)
      .where('next_run_at', '<=', now)
      .orderBy('next_run_at')
      .limit(limit)
      .execute();
  }

  /**
   * Claims the occurrence due at `dueAt`: moves next_run_at on only if it still is `dueAt` and the schedule is
   * enabled. Under concurrent claims one wins: PostgreSQL re-checks the condition on the row the winner committed
   * (the loser waits on its row lock), SQLite lets one writer at a time. False: another process has it, or the
   * schedule changed since it was read.
   */
  async claim(trx: Trx, orgId: string, id: string, dueAt: number, next: number | null, now: number): Promise<boolean> {
    const r = await trx
      .updateTable('schedules')
      .set({ next_run_at: next, last_run_at: now, updated_at: now })
      .where('organization_id', '=', orgId)
      .where('id', '=', id)
      .where('enabled', '=', 1)
      .where('next_run_at', '=', dueAt)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Writes what came of a claimed occurrence: its row (the primary key refuses a second) and the schedule's counters. */
  async record(trx: Trx, orgId: string, id: string, o: OccurrenceRecord): Promise<void> {
    await trx
      .insertInto('schedule_occurrences')
      .values({ organization_id: orgId, schedule_id: id, due_at: o.dueAt, fired_at: o.firedAt, outcome: o.outcome, task_id: o.taskId, detail: o.detail })
      .execute();
    await trx
      .updateTable('schedules')
      .set((eb) => ({
        last_outcome: o.outcome,
        last_task_id: o.taskId,
        run_count: o.started ? eb('run_count', '+', 1) : eb.ref('run_count'),
        skipped_count: o.started ? eb.ref('skipped_count') : eb('skipped_count', '+', 1),
        ...(o.disable ? { enabled: 0, next_run_at: null } : {}),
      }))
      .where('organization_id', '=', orgId)
      .where('id', '=', id)
      .execute();
    // Older than the newest `kept`: one range delete on the primary key (nothing while there are fewer).
    await trx
      .deleteFrom('schedule_occurrences')
      .where('organization_id', '=', orgId)
      .where('schedule_id', '=', id)
      .where('due_at', '<=', (eb) =>
        eb
          .selectFrom('schedule_occurrences')
          .select('due_at')
          .where('organization_id', '=', orgId)
          .where('schedule_id', '=', id)
          .orderBy('due_at', 'desc')
          .limit(1)
          .offset(this.kept),
      )
      .execute();
  }

  occurrences(orgId: string, scheduleId: string, offset: number, limit: number): Promise<OccurrenceRow[]> {
    return this.db.kysely
      .selectFrom('schedule_occurrences')
      .selectAll()
      .where('organization_id', '=', orgId)
      .where('schedule_id', '=', scheduleId)
      .orderBy('due_at', 'desc')
      .offset(offset)
      .limit(limit)
      .execute();
  }

  async countOccurrences(orgId: string, scheduleId: string): Promise<number> {
    const r = await this.db.kysely
      .selectFrom('schedule_occurrences')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', orgId)
      .where('schedule_id', '=', scheduleId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
}
