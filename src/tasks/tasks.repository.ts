import { sql, type Compilable, type Insertable, type Selectable, type Transaction } from 'kysely';
import { CompiledInsert } from '../db/compiled-once.js';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { releaseTaskFiles, type ReleasedBlob } from '../files/file-lifetime.repository.js';
import type { TaskStatus } from './task.types.js';
import { whereTextMatches, windowStart } from './task-text-search.js';
import { nextFairRank, rankPending } from './task-fair-ranks.repository.js';
import { insertPayloads, replacePayload, setAside, textsOf, withPayload, withPayloads } from './task-payloads.repository.js';
import { claimDedupKey, deleteDedupKeys, retakeDedupKey, type DedupClaim } from './task-dedup.repository.js';

/** What a task drops when its run ends (finished, failed, stopped): the lease, the user's tokens, a pending approval. */
export const RELEASED_ON_FINISH = { lease_owner: null, lease_expires_at: null, sealed_user_tokens: null, hitl_request: null, hitl_decision: null } as const;

export type TaskRow = Selectable<Database['tasks']>;
export type TaskEventRow = Selectable<Database['task_events']>;
export type TaskMessageRow = Selectable<Database['task_messages']>;
export type NewTaskRow = Insertable<Database['tasks']>;
export type NewEventRow = Omit<Insertable<Database['task_events']>, 'seq'>;
export type NewMessageRow = Omit<Insertable<Database['task_messages']>, 'seq'>;

const ACTIVE: TaskStatus[] = ['pending', 'executing', 'paused'];

export interface TaskFilter {
  agentId?: string;
  status?: TaskStatus;
  userId?: string;
  source?: string;
  /** Sub-tasks of this task (xpander's `parent_task_id` filter). */
  parentExecution?: string;
  fromMs?: number;
  toMs?: number;
  /** Tasks made by one schedule's occurrences (src/schedules/). */
  scheduleId?: string;
  /** Only tasks of agents this owner may see: organizational ones and its own personal ones (src/auth/agent-access.ts). */
  visibleTo?: string;
  /** Text the input, title or result contains (case-insensitive), within the newest tasks (task-text-search.ts). */
  text?: string;
}

/** The fields a continuation resets: a new run of the same conversation, back in the queue. */
export type ContinuationFields = Pick<
  TaskRow,
  | 'agent_version'
  | 'source'
  | 'input_text'
  | 'input_files'
  | 'input_user'
  | 'user_id'
  | 'additional_context'
  | 'expected_output'
  | 'instructions_override'
  | 'output_format'
  | 'output_schema'
  | 'disable_attachment_injection'
  | 'sealed_user_tokens'
  | 'max_attempts'
  | 'parent_execution'
  | 'call_depth'
  | 'callback_url'
>;

/**
 * SQL of the API side of tasks: records, trace, thread and run accounting. Every query filters by organization.
 * The worker's claim and fenced writes live in task-queue.repository.ts.
 */
export class TasksRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return this.db.kysely.transaction().execute(fn);
  }

  /** duplication_prevention: the task of an earlier event with the key, else the key taken for `c.taskId` (task-dedup.repository.ts). */
  claimDedupKey(trx: Transaction<Database>, c: DedupClaim): Promise<string | undefined> {
    return claimDedupKey(trx, c);
  }

  retakeDedupKey(trx: Transaction<Database>, c: DedupClaim, goneTaskId: string): Promise<void> {
    return retakeDedupKey(trx, c, goneTaskId);
  }

  async find(orgId: string, id: string, trx: Transaction<Database> | Db['kysely'] = this.db.kysely): Promise<TaskRow | undefined> {
    return withPayload(trx, await trx.selectFrom('tasks').selectAll().where('organization_id', '=', orgId).where('id', '=', id).executeTakeFirst());
  }

  /** A lone new task; a pending one is ranked first (task-fair-ranks.repository.ts). */
  async insert(trx: Transaction<Database>, row: NewTaskRow): Promise<void> {
    const ranked = { ...row };
    await rankPending(trx, this.db.dialect, [ranked]);
    const { rows, payloads } = setAside(this.db.dialect, [ranked as TaskRow]);
    await trx.insertInto('tasks').values(rows[0]!).execute();
    await insertPayloads(trx, payloads);
  }

  /** Starts the next run of a finished conversation; false when the task is not final (still queued or running). */
  async continueRun(trx: Transaction<Database>, orgId: string, id: string, fields: ContinuationFields, now: number): Promise<TaskRow | undefined> {
    // Reserved before it is known whether the task is final: a refused continuation rolls the transaction back.
    const rank = await nextFairRank(trx, this.db.dialect, orgId, now);
    const stored = await replacePayload(trx, this.db.dialect, orgId, id, fields);
    const row = await trx
      .updateTable('tasks')
      .set((eb) => ({
        ...stored,
        status: 'pending',
        result: null,
        run: eb('run', '+', 1),
        execution_attempts: 0,
        is_manually_stopped: 0,
        lease_owner: null,
        lease_expires_at: null,
        heartbeat_at: null,
        hitl_request: null,
        hitl_decision: null,
        queued_at: now,
        fair_rank: rank,
        updated_at: now,
        started_at: null,
        finished_at: null,
      }))
      .where('organization_id', '=', orgId)
      .where('id', '=', id)
      .where('status', 'not in', ACTIVE)
      .returningAll()
      .executeTakeFirst();
    // The texts as given, not read back (a refused continuation rolls the payload's replacement back with it).
    return row && { ...row, ...textsOf(fields) };
  }

  /**
   * Commits brand-new tasks together (group commit, task-submissions.ts): their rows, their first runs and their
   * `task_created` events, in one transaction of three multi-row statements. Returns each task's event seq, in
   * the order given.
   */
  async insertNew(items: { task: NewTaskRow; event: NewEventRow }[]): Promise<number[]> {
    // PostgreSQL: one statement is its own transaction (and one round trip); SQLite: three in one transaction.
    return this.db.dialect === 'postgres' ? this.insertNewIn(this.db.kysely, items) : this.transaction((trx) => this.insertNewIn(trx, items));
  }

  /** insertNew within the caller's transaction (the task inbox moves its rows with it). */
  async insertNewIn(trx: Transaction<Database> | Db['kysely'], items: { task: NewTaskRow; event: NewEventRow }[]): Promise<number[]> {
    const given = items.map((i) => i.task);
    // The claim's order of the pending ones; a batch of synchronous runs (inserted claimed) reads nothing here.
    await rankPending(trx, this.db.dialect, given);
    // A large task's texts go to task_payloads (libsql only: insertNew's PostgreSQL statement stays one statement).
    const { rows: tasks, payloads } = setAside(this.db.dialect, given as TaskRow[]);
    const runs = items.map(({ task: t }) => ({ organization_id: t.organization_id, task_id: t.id, run: t.run ?? 1, agent_id: t.agent_id, created_at: t.created_at }));
    const events = items.map((i) => i.event);
    let seqs: { task_id: string; seq: number }[];
    // The statements are compiled once per shape (db/compiled-once.ts); rows of another shape are built as usual.
    if (this.db.dialect === 'postgres') {
      // One statement, so one round trip: data-modifying CTEs.
      const q = this.newTasksInsert.query(tasks, runs, events);
      seqs = q ? (await trx.executeQuery<{ task_id: string; seq: number }>(q)).rows : await newTasksStatement(trx, tasks, runs, events).execute();
    } else {
      const [t, r, e] = [this.taskInsert.query(tasks), this.runInsert.query(runs), this.createdInsert.query(events)];
      await (t ? trx.executeQuery(t) : trx.insertInto('tasks').values(tasks).execute());
      await (r ? trx.executeQuery(r) : trx.insertInto('task_runs').values(runs).execute());
      await insertPayloads(trx, payloads);
      seqs = e ? (await trx.executeQuery<{ task_id: string; seq: number }>(e)).rows : await trx.insertInto('task_events').values(events).returning(['task_id', 'seq']).execute();
    }
    const byTask = new Map(seqs.map((r) => [r.task_id, Number(r.seq)]));
    return items.map((i) => byTask.get(i.task.id)!);
  }

  private readonly newTasksInsert = new CompiledInsert((t, r, e) => newTasksStatement(this.db.kysely, t as never, r as never, e as never));
  private readonly taskInsert = new CompiledInsert((rows) => this.db.kysely.insertInto('tasks').values(rows as never));
  private readonly runInsert = new CompiledInsert((rows) => this.db.kysely.insertInto('task_runs').values(rows as never));
  private readonly createdInsert = new CompiledInsert((rows) => this.db.kysely.insertInto('task_events').values(rows as never).returning(['task_id', 'seq']));

  /** A task end's notification outbox rows, in the transaction that records the end (task-end-notifier.ts). */
  async insertDeliveries(trx: Transaction<Database>, rows: Insertable<Database['notification_deliveries']>[]): Promise<void> {
    await trx.insertInto('notification_deliveries').values(rows).execute();
  }

  async insertRun(trx: Transaction<Database>, row: Insertable<Database['task_runs']>): Promise<void> {
    await trx.insertInto('task_runs').values(row).execute();
  }

  /**
   * Serialises the submissions of one agent until the transaction ends, so counting its runs and inserting one is
   * atomic (the daily limit). SQLite transactions are already serial (`begin immediate`); PostgreSQL takes a
   * transaction-scoped advisory lock on the agent.
   */
  async lockAgentRuns(trx: Transaction<Database>, orgId: string, agentId: string): Promise<void> {
    if (this.db.dialect !== 'postgres') return;
    await sql`select pg_advisory_xact_lock(hashtextextended(${`agent-runs:${orgId}:${agentId}`}, 0))`.execute(trx);
  }

  async countRunsSince(orgId: string, agentId: string, sinceMs: number, trx: Transaction<Database> | Db['kysely'] = this.db.kysely): Promise<number> {
    const r = await trx
      .selectFrom('task_runs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', orgId)
      .where('agent_id', '=', agentId)
      .where('created_at', '>=', sinceMs)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async list(orgId: string, f: TaskFilter, offset: number, limit: number): Promise<{ rows: TaskRow[]; total: number }> {
    let q = this.db.kysely.selectFrom('tasks').where('organization_id', '=', orgId);
    if (f.agentId) q = q.where('agent_id', '=', f.agentId);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.userId) q = q.where('user_id', '=', f.userId);
    if (f.source) q = q.where('source', '=', f.source);
    if (f.parentExecution) q = q.where('parent_execution', '=', f.parentExecution);
    if (f.fromMs !== undefined) q = q.where('created_at', '>=', f.fromMs);
    if (f.toMs !== undefined) q = q.where('created_at', '<=', f.toMs);
    if (f.scheduleId !== undefined) q = q.where('schedule_id', '=', f.scheduleId);
    if (f.visibleTo !== undefined) {
      const owner = f.visibleTo;
      q = q.where('agent_id', 'not in', (eb) =>
        eb.selectFrom('agents').select('id').where('organization_id', '=', orgId).where('personal', '=', 1).where('owner', 'is not', null).where('owner', '!=', owner),
      );
    }
    // Their cost grows with the organization's tasks: off the event loop on libsql, a few at a time (list-reads.ts).
    const read = <R>(query: Compilable<R>) => this.db.lists.all(orgId, query);
    if (f.text) q = whereTextMatches(q, f.text, await windowStart(q, read));
    const [rows, count] = await Promise.all([
      read(q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').offset(offset).limit(limit)),
      read(q.select((eb) => eb.fn.countAll<number>().as('n'))),
    ]);
    return { rows: await withPayloads(this.db.kysely, rows, read), total: Number(count[0]?.n ?? 0) };
  }

  /** Child task ids (sub-agent runs) of the given tasks, in creation order. */
  async children(orgId: string, parentIds: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (parentIds.length === 0) return out;
    // Sorted here, not by the query: with ORDER BY created_at the planners prefer walking the organization's
    // whole (organization_id, created_at) index to avoid a sort, which read every task of a busy organization on
    // every task presented; children are few, the parent index finds them directly.
    const rows = await this.db.kysely
      .selectFrom('tasks')
      .select(['id', 'parent_execution', 'created_at'])
      .where('organization_id', '=', orgId)
      .where('parent_execution', 'in', parentIds)
      .execute();
    rows.sort((a, b) => Number(a.created_at) - Number(b.created_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const r of rows) {
      const list = out.get(r.parent_execution!) ?? [];
      list.push(r.id);
      out.set(r.parent_execution!, list);
    }
    return out;
  }

  /** Ends a queued, running or paused task as stopped, taking it from its worker (the fence moves on). */
  async stop(trx: Transaction<Database>, orgId: string, id: string, now: number): Promise<TaskRow | undefined> {
    return trx
      .updateTable('tasks')
      .set((eb) => ({
        status: 'stopped',
        is_manually_stopped: 1,
        fence: eb('fence', '+', 1),
        ...RELEASED_ON_FINISH,
        finished_at: now,
        updated_at: now,
      }))
      .where('organization_id', '=', orgId)
      .where('id', '=', id)
      .where('status', 'in', ACTIVE)
      .returningAll()
      .executeTakeFirst()
      .then((r) => withPayload(trx, r));
  }

  /** Records a person's decision on a paused task; the worker that holds it picks the decision up. */
  async decide(trx: Transaction<Database>, orgId: string, id: string, decision: 'approved' | 'rejected', now: number): Promise<TaskRow | undefined> {
    return trx
      .updateTable('tasks')
      .set({ status: 'executing', hitl_decision: decision, hitl_request: null, updated_at: now })
      .where('organization_id', '=', orgId)
      .where('id', '=', id)
      .where('status', '=', 'paused')
      .where('hitl_request', 'is not', null)
      .returningAll()
      .executeTakeFirst()
      .then((r) => withPayload(trx, r));
  }

  /** Deletes the task with its records; `released`: its uploads' blobs, to remove once this has committed. */
  async delete(orgId: string, id: string, now: number): Promise<{ deleted: boolean; released: ReleasedBlob[] }> {
    return this.transaction(async (trx) => {
      const released = await deleteTaskRecords(trx, orgId, [id], now);
      const r = await trx.deleteFrom('tasks').where('organization_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      return { deleted: Number(r.numDeletedRows) > 0, released };
    });
  }

  /** Appends a trace event written by the API side (submission, stop, decisions); returns its sequence number. */
  async appendEvent(
    trx: Transaction<Database> | undefined,
    e: { organization_id: string; task_id: string; type: string; time: number; data: string },
  ): Promise<number> {
    const r = await (trx ?? this.db.kysely).insertInto('task_events').values(e).returning('seq').executeTakeFirstOrThrow();
    return Number(r.seq);
  }

  async events(orgId: string, taskId: string, afterSeq: number, limit: number): Promise<TaskEventRow[]> {
    return this.db.kysely
      .selectFrom('task_events')
      .selectAll()
      .where('organization_id', '=', orgId)
      .where('task_id', '=', taskId)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
  }

  /** The task's latest event of one type (the runtime's durable state in the trace, e.g. a deep-planning plan). */
  async lastEventOfType(orgId: string, taskId: string, type: string): Promise<TaskEventRow | undefined> {
    return this.db.kysely
      .selectFrom('task_events')
      .selectAll()
      .where('organization_id', '=', orgId)
      .where('task_id', '=', taskId)
      .where('type', '=', type)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  async thread(orgId: string, taskId: string): Promise<TaskMessageRow[]> {
    return this.db.kysely
      .selectFrom('task_messages')
      .selectAll()
      .where('organization_id', '=', orgId)
      .where('task_id', '=', taskId)
      .orderBy('seq')
      .execute();
  }
}

/**
 * Removes the blobs of uploads deleted with their tasks, after the commit (src/files/file-disposal.ts). Best effort:
 * it never throws, and a blob it could not remove is retried by the worker role's file sweep.
 */
export type RemoveReleasedBlobs = (released: readonly ReleasedBlob[]) => Promise<unknown>;

/**
 * Deletes what is stored under the given tasks besides their rows: trace, thread and its summary, run records,
 * duplicate-event keys, notifications, uploaded files. One list for every way a task goes (the API's delete above,
 * the retention sweep in task-retention.repository.ts), so none leaves rows behind. At most VALUES_PER_IN_LIST ids (db/batches.ts).
 * Returns the blobs of the deleted uploads: the caller removes them once the transaction has committed
 * (RemoveReleasedBlobs); until then they are recorded in `file_blob_deletions`, written here.
 */
export async function deleteTaskRecords(trx: Transaction<Database>, orgId: string, taskIds: readonly string[], now: number): Promise<ReleasedBlob[]> {
  if (taskIds.length === 0) return [];
  const ids = [...taskIds];
  await trx.deleteFrom('task_events').where('organization_id', '=', orgId).where('task_id', 'in', ids).execute();
  await trx.deleteFrom('task_messages').where('organization_id', '=', orgId).where('task_id', 'in', ids).execute();
  // The summary of the thread's earlier runs (src/memory/): left behind, a new task given the same id would be
  // handed the old conversation's summary.
  await trx.deleteFrom('session_summaries').where('organization_id', '=', orgId).where('task_id', 'in', ids).execute();
  await trx.deleteFrom('task_runs').where('organization_id', '=', orgId).where('task_id', 'in', ids).execute();
  // A large task's texts (task-payloads.repository.ts).
  await trx.deleteFrom('task_payloads').where('organization_id', '=', orgId).where('task_id', 'in', ids).execute();
  await deleteDedupKeys(trx, orgId, ids);
  // Its notifications go with it, sent or not (docs/notifications.md).
  const deliveries = trx.selectFrom('notification_deliveries').select('id').where('organization_id', '=', orgId).where('task_id', 'in', ids);
  await trx.deleteFrom('notification_attempts').where('organization_id', '=', orgId).where('delivery_id', 'in', deliveries).execute();
  await trx.deleteFrom('notification_deliveries').where('organization_id', '=', orgId).where('task_id', 'in', ids).execute();
  // Its uploads (files.task_id, every run's): the rows now, the blobs after the commit (docs/decisions.md, "Files:
  // lifetime"). A file whose URL was copied into another task's input still goes: a URL is not a reference.
  return releaseTaskFiles(trx, orgId, ids, now);
}

/** PostgreSQL: new tasks, their first runs and their `task_created` events in one statement (data-modifying CTEs). */
function newTasksStatement(
  k: Transaction<Database> | Db['kysely'],
  tasks: NewTaskRow[],
  runs: Insertable<Database['task_runs']>[],
  events: NewEventRow[],
) {
  return k
    .with('t', (db) => db.insertInto('tasks').values(tasks))
    .with('r', (db) => db.insertInto('task_runs').values(runs))
    .insertInto('task_events')
    .values(events)
    .returning(['task_id', 'seq']);
}
