import { sql, type UpdateQueryBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import { pgTextArray } from '../db/pg-arrays.js';
import type { Database } from '../db/schema.js';
import { RELEASED_ON_FINISH, type NewEventRow, type NewMessageRow, type TaskMessageRow, type TaskRow } from './tasks.repository.js';
import { batches, ROWS_PER_INSERT } from '../db/batches.js';
import type { NewDeliveryRow } from './task-end-notifier.js';
import { finishInOneStatement, outcome } from './task-finish.repository.js';
import { CompiledInsert, CompiledOnce, Slot, slot } from '../db/compiled-once.js';
import { claimStatement, PendingClaims } from './task-claim.repository.js';
import type { FinalEvent, FinishFields, FinishItem, Lease, TraceEvent } from './task-queue.types.js';
import { nextFairRank } from './task-fair-ranks.repository.js';
import { textsOf, withPayload, withPayloads } from './task-payloads.repository.js';

export type { FinalEvent, FinishFields, FinishItem, Lease, TraceEvent } from './task-queue.types.js';

/**
 * The queue: claims with a lease and a fencing number, heartbeats, and the worker's fenced writes.
 * PostgreSQL claims with `FOR UPDATE SKIP LOCKED`, so concurrent workers never take the same row;
 * SQLite claims with one atomic `UPDATE ... WHERE key IN (SELECT ... LIMIT 1) RETURNING` (SQLite has one writer).
 * The claim statements themselves are in task-claim.repository.ts.
 */
export class TaskQueueRepository {
  private readonly pending: PendingClaims;

  constructor(private readonly db: Db) {
    this.pending = new PendingClaims(db);
  }

  /**
   * A read-only probe before claiming: on SQLite even an UPDATE that matches nothing takes the write lock, which
   * idle workers polling several times a second would otherwise keep contending for. Expired leases first (those
   * tasks started earlier), and only when `withExpired`. Pending tasks of the `heldBack` organizations do not count
   * (see claimPendingBatch).
   */
  async nextClaimable(now: number, withExpired: boolean, heldBack: readonly string[] = []): Promise<'expired' | 'pending' | undefined> {
    const k = this.db.kysely;
    if (withExpired && (await this.hasExpired(now))) return 'expired';
    // PostgreSQL: a claim that finds nothing locks nothing and costs what the probe would; skip the round trip.
    if (this.db.dialect === 'postgres') return 'pending';
    const { rows } = await k.executeQuery(this.pending.probe(now, heldBack));
    return rows.length ? 'pending' : undefined;
  }

  private async hasExpired(now: number): Promise<boolean> {
    const expired = await this.db.kysely
      .selectFrom('tasks')
      .select('id')
      .where('status', 'in', ['executing', 'paused'])
      .where('lease_expires_at', '<', now)
      .whereRef('execution_attempts', '<', 'max_attempts')
      .limit(1)
      .executeTakeFirst();
    return !!expired;
  }

  /** Claims the first pending task that is due, in the claim's order (fair ranks: see claimPendingBatch). */
  async claimPending(owner: string, now: number, leaseMs: number): Promise<TaskRow | undefined> {
    return (await this.claimPendingBatch(owner, now, leaseMs, 1))[0];
  }

  /**
   * Claims up to `limit` pending tasks that are due, in one statement (one commit), lowest fair rank first: fair
   * across organizations, oldest first within one (task-fair-ranks.repository.ts; a tie goes to the older). A
   * worker with several free slots fills them in one round trip instead of one each: on PostgreSQL every claim is
   * a commit, and a commit's WAL flush is what a worker's claims queue behind. The new tasks of the `heldBack`
   * organizations (SlotLedger.heldBack) are left pending, in their place; their child tasks are claimed.
   */
  async claimPendingBatch(owner: string, now: number, leaseMs: number, limit: number, heldBack: readonly string[] = []): Promise<TaskRow[]> {
    const { rows } = await this.db.kysely.executeQuery<TaskRow>(this.pending.claim(owner, now, leaseMs, limit, heldBack));
    // A large task's texts, read for the run (its row, claimed above, is small: task-payloads.repository.ts).
    return withPayloads(this.db.kysely, inQueueOrder(rows));
  }

  /** Claims a task whose worker stopped heart-beating (it died), while it has attempts left. */
  async claimExpired(owner: string, now: number, leaseMs: number): Promise<TaskRow | undefined> {
    const rows = await this.claim(
      sql`status in ('executing', 'paused') and lease_expires_at < ${now} and execution_attempts < max_attempts`,
      sql`lease_expires_at`,
      owner,
      now,
      leaseMs,
      1,
    );
    return rows[0];
  }

  private async claim(candidate: ReturnType<typeof sql>, order: ReturnType<typeof sql>, owner: string, now: number, leaseMs: number, limit: number): Promise<TaskRow[]> {
    return withPayloads(this.db.kysely, inQueueOrder((await claimStatement(this.db, candidate, order, owner, now + leaseMs, now, limit).execute(this.db.kysely)).rows));
  }

  /**
   * Ends tasks whose workers died more often than their attempts allow, as `error`.
   * Returns them so the caller can record the trace and wake waiters.
   */
  async sweepExhausted(now: number, result: (attempts: number) => string, plan?: (ended: TaskRow) => Promise<NewDeliveryRow[]>): Promise<TaskRow[]> {
    const rows = await this.db.kysely
      .selectFrom('tasks')
      .selectAll()
      .where('status', 'in', ['executing', 'paused'])
      .where('lease_expires_at', '<', now)
      .whereRef('execution_attempts', '>=', 'max_attempts')
      .limit(100)
      .execute()
      .then((found) => withPayloads(this.db.kysely, found));
    const ended: TaskRow[] = [];
    for (const r of rows) {
      const set = { status: 'error', result: result(r.execution_attempts), ...RELEASED_ON_FINISH, finished_at: now, updated_at: now };
      // The task as this update leaves it, for its notifications, written in the same transaction.
      const outbox = plan ? await plan({ ...r, ...set, fence: Number(r.fence) + 1 }) : [];
      const row = await this.db.kysely.transaction().execute(async (trx) => {
        const updated = await trx
          .updateTable('tasks')
          .set((eb) => ({ ...set, fence: eb('fence', '+', 1) }))
          .where('organization_id', '=', r.organization_id)
          .where('id', '=', r.id)
          .where('fence', '=', r.fence)
          .returningAll()
          .executeTakeFirst()
          .then((u) => u && { ...u, ...textsOf(r) });
        if (updated && outbox.length) await trx.insertInto('notification_deliveries').values(outbox).execute();
        return updated;
      });
      if (row) ended.push(row);
    }
    return ended;
  }

  /** Extends the lease; false when the task is no longer this worker's (stopped, reclaimed, deleted). */
  async heartbeat(l: Lease, now: number, leaseMs: number): Promise<boolean> {
    const r = await this.fenced(this.db.kysely.updateTable('tasks').set({ lease_expires_at: now + leaseMs, heartbeat_at: now }), l).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** What this worker's tasks look like now: fence, status and any approval decision. */
  async owned(owner: string): Promise<Pick<TaskRow, 'organization_id' | 'id' | 'fence' | 'status' | 'hitl_decision'>[]> {
    return this.db.kysely
      .selectFrom('tasks')
      .select(['organization_id', 'id', 'fence', 'status', 'hitl_decision'])
      .where('lease_owner', '=', owner)
      .execute();
  }

  async pause(l: Lease, hitlRequest: string, now: number): Promise<boolean> {
    const q = this.db.kysely.updateTable('tasks').set({ status: 'paused', hitl_request: hitlRequest, hitl_decision: null, updated_at: now });
    const r = await this.fenced(q, l).where('status', '=', 'executing').executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Consumes a decision the API recorded (the task is already back to `executing`). */
  async clearDecision(l: Lease, now: number): Promise<boolean> {
    const r = await this.fenced(this.db.kysely.updateTable('tasks').set({ hitl_decision: null, updated_at: now }), l).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Appends trace events, in order, in one statement, only while the lease holds: a stale worker's events never
   * reach the trace. Returns false when the fence refused them.
   */
  async appendEvents(l: Lease, events: TraceEvent[]): Promise<boolean> {
    if (!events.length) return true;
    // Compiled once per number of events (db/compiled-once.ts).
    const q = this.eventAppend.query(events.length, (s) => {
      if (s.name === 'organization_id') return l.organizationId;
      if (s.name === 'task_id') return l.taskId;
      if (s.name === 'fence') return l.fence;
      return events[s.row]![s.name as keyof TraceEvent];
    });
    const r = await this.db.kysely.executeQuery(q);
    return Number(r.numAffectedRows ?? 0) > 0;
  }

  private readonly eventAppend = new CompiledOnce((n: number) => {
    const pg = this.db.dialect === 'postgres';
    const events = Array.from({ length: n }, (_, i) => ({ type: new Slot('type', i), time: new Slot('time', i), data: new Slot('data', i) }));
    const l = { organizationId: slot('organization_id'), taskId: slot('task_id'), fence: slot('fence') };
    const rows = sql.join(
      events.map((e, i) => (pg ? sql`(${i}::int, ${e.type}::text, ${e.time}::bigint, ${e.data}::text)` : sql`(${i}, ${e.type}, ${e.time}, ${e.data})`)),
    );
    // SQLite names a VALUES list's columns column1..n; PostgreSQL takes an alias list.
    const values = pg ? sql`(values ${rows}) as v(ord, type, time, data)` : sql`(select column1 as ord, column2 as type, column3 as time, column4 as data from (values ${rows})) as v`;
    // PostgreSQL hands out sequence numbers before commit: sharing the task row's lock with the API's writes of the
    // same task (stop, decisions) keeps a task's events committed in sequence order, so followers skip none. Trace
    // events do not wait for their own WAL flush (synchronous_commit off for this statement's implicit transaction):
    // a crash of PostgreSQL can lose only the last events of a run that is then claimed again; the run's outcome
    // (finish) commits synchronously, which flushes every event before it too.
    const q = sql`
      insert into task_events (organization_id, task_id, type, time, data)
      select t.organization_id, t.id, v.type, v.time, v.data from tasks t, ${values}
      where t.organization_id = ${l.organizationId} and t.id = ${l.taskId} and t.fence = ${l.fence}
      ${pg ? sql`and set_config('synchronous_commit', 'off', true) is not null` : sql``}
      order by v.ord
      ${pg ? sql`for share of t` : sql``}`;
    return { compile: () => q.compile(this.db.kysely) };
  }, 512);

  /**
   * Records the outcome, the run's thread messages and its trace ending with the final event, atomically, only
   * while the lease holds. Returns the updated row, or undefined when this worker's attempt is stale (nothing is
   * written). `claimed` is the row as this worker claimed it: on PostgreSQL it lets the whole outcome go in one
   * statement (see finishMany).
   */
  async finish(
    l: Lease,
    f: FinishFields,
    messages: NewMessageRow[],
    trace: TraceEvent[],
    event: FinalEvent,
    now: number,
    claimed?: TaskRow,
  ): Promise<TaskRow | undefined> {
    return (await this.finishMany([{ lease: l, fields: f, messages, trace, event, now, claimed }]))[0];
  }

  /**
   * Several runs' outcomes (each as `finish` records it) in one transaction: one commit for all of them. On
   * PostgreSQL, when every run comes with its claimed row, that is one statement (one round trip) whatever their
   * number. Each outcome is fenced on its own: a stale one is refused (undefined in its place) and the others are
   * recorded all the same. One result per outcome, in order.
   */
  async finishMany(items: FinishItem[]): Promise<(TaskRow | undefined)[]> {
    if (this.db.dialect === 'postgres' && items.every((i) => i.claimed)) return finishInOneStatement(this.db.kysely, items);
    // SQLite: statements compiled once (compiled-once.ts); the outcomes' messages and events go in one insert each
    // after the updates, in the runs' order, so a task's events keep their order and each run's final event is last.
    return this.db.kysely.transaction().execute(async (trx) => {
      const out: (TaskRow | undefined)[] = [];
      const messages: NewMessageRow[] = [];
      const events: NewEventRow[] = [];
      for (const { lease: l, fields: f, messages: mine, trace, event, now, outbox, claimed } of items) {
        const { rows } = await trx.executeQuery<TaskRow>(this.finishUpdate.query(0, (s) => finishValue(s.name, l, f, now)));
        // The final event shows the texts: those of the claimed row when the worker has it (no run changes them).
        const updated = rows[0];
        const row = updated?.payload_stored === 1 && claimed ? { ...updated, ...textsOf(claimed) } : await withPayload(trx, updated);
        out.push(row);
        if (!row) continue;
        messages.push(...mine);
        for (const e of trace) events.push({ organization_id: l.organizationId, task_id: l.taskId, type: e.type, time: e.time, data: e.data });
        events.push({ organization_id: l.organizationId, task_id: l.taskId, type: event.type, time: now, data: event.data(row) });
        if (outbox?.length) await trx.insertInto('notification_deliveries').values(outbox).execute();
      }
      for (const batch of batches(messages, ROWS_PER_INSERT)) {
        const q = this.messageInsert.query(batch);
        await (q ? trx.executeQuery(q) : trx.insertInto('task_messages').values(batch).execute());
      }
      for (const batch of batches(events, ROWS_PER_INSERT)) {
        const q = this.eventInsert.query(batch);
        await (q ? trx.executeQuery(q) : trx.insertInto('task_events').values(batch).execute());
      }
      return out;
    });
  }

  /** SQLite's fenced outcome update (finishMany), its values read by finishValue. */
  private readonly finishUpdate = new CompiledOnce((_: 0) =>
    this.fenced(
      this.db.kysely.updateTable('tasks').set(
        outcome(
          {
            status: slot('status'),
            result: slot('result'),
            tokens: { prompt_tokens: slot('prompt_tokens'), completion_tokens: slot('completion_tokens'), total_tokens: slot('total_tokens') },
            llm_model_provider: slot('llm_model_provider'),
            llm_model_name: slot('llm_model_name'),
          } as unknown as FinishFields,
          slot('now') as unknown as number,
        ),
      ),
      { organizationId: slot('organization_id'), taskId: slot('id'), fence: slot('fence') } as unknown as Lease,
    ).returningAll(),
  );

  private readonly messageInsert = new CompiledInsert((rows) => this.db.kysely.insertInto('task_messages').values(rows as never));
  private readonly eventInsert = new CompiledInsert((rows) => this.db.kysely.insertInto('task_events').values(rows as never));

  /** Puts the task back in the queue (retry after an error, or a worker shutting down), keeping or returning the attempt. */
  async requeue(l: Lease, at: number, now: number, opts: { refundAttempt: boolean; tokens?: FinishFields['tokens'] }): Promise<TaskRow | undefined> {
    // Back of its organization's queue, not of everyone's (task-fair-ranks.repository.ts). A rank reserved for an
    // attempt that is no longer this worker's is a gap, which orders nothing wrong.
    const rank = await nextFairRank(this.db.kysely, this.db.dialect, l.organizationId, now);
    return this.fenced(
      this.db.kysely.updateTable('tasks').set((eb) => ({
        status: 'pending',
        lease_owner: null,
        lease_expires_at: null,
        hitl_request: null,
        hitl_decision: null,
        queued_at: at,
        fair_rank: rank,
        updated_at: now,
        ...(opts.refundAttempt ? { execution_attempts: eb('execution_attempts', '-', 1) } : {}),
        ...(opts.tokens
          ? {
              prompt_tokens: eb('prompt_tokens', '+', opts.tokens.prompt_tokens),
              completion_tokens: eb('completion_tokens', '+', opts.tokens.completion_tokens),
              total_tokens: eb('total_tokens', '+', opts.tokens.total_tokens),
            }
          : {}),
      })),
      l,
    )
      .returningAll()
      .executeTakeFirst()
      .then((r) => withPayload(this.db.kysely, r));
  }

  /** The thread's messages of the runs before `beforeRun`; from run `fromRun` on when given. */
  async history(orgId: string, taskId: string, beforeRun: number, fromRun?: number): Promise<TaskMessageRow[]> {
    let q = this.db.kysely
      .selectFrom('task_messages')
      .selectAll()
      .where('organization_id', '=', orgId)
      .where('task_id', '=', taskId)
      .where('run', '<', beforeRun);
    if (fromRun !== undefined) q = q.where('run', '>=', fromRun);
    return q.orderBy('seq').execute();
  }

  /** PostgreSQL: wakes listeners in other processes (see task-signals.ts), several notifications in one round trip. */
  async notify(channel: string, payloads: string[]): Promise<void> {
    await sql`select pg_notify(${channel}, p) from unnest(${pgTextArray(payloads)}::text[]) as p`.execute(this.db.kysely);
  }

  private fenced<O>(q: UpdateQueryBuilder<Database, 'tasks', 'tasks', O>, l: Lease): UpdateQueryBuilder<Database, 'tasks', 'tasks', O> {
    return q.where('organization_id', '=', l.organizationId).where('id', '=', l.taskId).where('fence', '=', l.fence);
  }
}

/** RETURNING follows no order: claimed rows are put back in the claim's order, which is the order they are started in. */
function inQueueOrder(rows: TaskRow[]): TaskRow[] {
  return rows.length > 1
    ? rows.sort((a, b) => Number(a.fair_rank) - Number(b.fair_rank) || Number(a.queued_at) - Number(b.queued_at) || Number(a.created_at) - Number(b.created_at))
    : rows;
}

/** The value of each slot of TaskQueueRepository's compiled outcome update. */
function finishValue(name: string, l: Lease, f: FinishFields, now: number): unknown {
  switch (name) {
    case 'status':
      return f.status;
    case 'result':
      return f.result;
    case 'prompt_tokens':
      return f.tokens.prompt_tokens;
    case 'completion_tokens':
      return f.tokens.completion_tokens;
    case 'total_tokens':
      return f.tokens.total_tokens;
    case 'llm_model_provider':
      return f.llm_model_provider;
    case 'llm_model_name':
      return f.llm_model_name;
    case 'now':
      return now;
    case 'organization_id':
      return l.organizationId;
    case 'id':
      return l.taskId;
    case 'fence':
      return l.fence;
  }
  throw new Error(`finish update: no value for ${name}`);
}

/** The columns a run's outcome sets (its tokens are added to the task's). */
