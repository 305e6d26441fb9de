import { CompiledQuery, sql } from 'kysely';
import type { Db } from '../db/database.js';
import { pgTextArray } from '../db/pg-arrays.js';
import type { NewEventRow, TaskRow, TasksRepository } from './tasks.repository.js';

/**
 * SQL of the task inbox (task-inbox.ts): appends, and the move of the oldest entries into `tasks`. The inbox is a
 * system queue, not an organization's record: each entry carries its organization inside the row it holds.
 */
export class TaskInboxRepository {
  constructor(
    private readonly db: Db,
    private readonly tasks: TasksRepository,
  ) {}

  /**
   * One insert of every entry (the row as task-inbox.ts encodes it). PostgreSQL takes them as one array (in its
   * binary format, pg-arrays.ts), so the statement's text is the same for any number of entries and is prepared once
   * per connection (pg-pool.ts); entries are numbered in the order given. SQLite binds one parameter per entry.
   * `rows` is never empty (a group commit's batch).
   */
  async append(rows: string[]): Promise<void> {
    if (this.db.dialect === 'postgres') {
      await sql`insert into task_inbox (row) select v.row from unnest(${pgTextArray(rows)}::text[]) with ordinality as v(row, ord) order by v.ord`.execute(this.db.kysely);
      return;
    }
    // Written out, not built with Kysely: compiling a many-row insert cost ~1.5 us per entry, per call on the accept.
    await this.db.kysely.executeQuery(CompiledQuery.raw(`insert into "task_inbox" ("row") values ${'(?), '.repeat(rows.length - 1)}(?)`, rows));
  }

  /** The newest entry's number, or undefined when the inbox is empty: a read, so it costs no write lock (SQLite). */
  async lastSeq(): Promise<number | undefined> {
    const r = await this.db.kysely.selectFrom('task_inbox').select('seq').orderBy('seq', 'desc').limit(1).executeTakeFirst();
    return r ? Number(r.seq) : undefined;
  }

  /**
   * Moves up to `limit` of the oldest entries numbered up to `upTo` into `tasks`, with their first runs and the
   * events `toEvent` gives, in one transaction: an entry is either still in the inbox or a task, never both or
   * neither. `more` says whether entries up to `upTo` may remain.
   *
   * Two movers never take the same entry. On SQLite transactions are serial. On PostgreSQL the entries are locked
   * (FOR UPDATE, not SKIP LOCKED): a mover that meets another's entries waits for its commit, so when `more` turns
   * false every entry up to `upTo` is a task, whoever moved it; a reader that settled sees all of them.
   */
  async move(limit: number, upTo: number, toRow: (entry: string) => TaskRow, toEvent: (row: TaskRow) => NewEventRow): Promise<{ rows: TaskRow[]; more: boolean }> {
    return this.tasks.transaction(async (trx) => {
      let taken: { seq: number; row: string }[];
      if (this.db.dialect === 'postgres') {
        const r = await sql<{ seq: number; row: string }>`
          delete from task_inbox where seq in (
            select seq from task_inbox where seq <= ${upTo} order by seq limit ${limit} for update)
          returning seq, row`.execute(trx);
        taken = r.rows.sort((a, b) => Number(a.seq) - Number(b.seq));
      } else {
        taken = await trx.selectFrom('task_inbox').select(['seq', 'row']).where('seq', '<=', upTo).orderBy('seq').limit(limit).execute();
        if (taken.length) await trx.deleteFrom('task_inbox').where('seq', '<=', taken[taken.length - 1]!.seq).execute();
      }
      const rows = taken.map((t) => toRow(t.row));
      if (rows.length) await this.tasks.insertNewIn(trx, rows.map((task) => ({ task, event: toEvent(task) })));
      // PostgreSQL: fewer than asked may only mean another mover held some (now gone); ask until none are left.
      return { rows, more: this.db.dialect === 'postgres' ? rows.length > 0 : rows.length === limit };
    });
  }
}
