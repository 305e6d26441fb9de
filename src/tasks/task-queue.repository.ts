import { sql, type UpdateQueryBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { RELEASED_ON_FINISH, type NewMessageRow, type TaskMessageRow, type TaskRow } from './tasks.repository.js';
import { batches, ROWS_PER_INSERT } from '../db/batches.js';
import type { NewDeliveryRow } from './task-end-notifier.js';

/** A claimed task as one worker holds it: every write below names this fence and is refused once it moved on. */
export interface Lease {
  organizationId: string;
  taskId: string;
  fence: number;
}

/** A trace event as the worker buffers it: its time and data are taken when the run emits it. */
export interface TraceEvent {
  type: string;
  time: number;
  data: string;
}

/** The final event of a run, made from the row as its outcome leaves it. */
export interface FinalEvent {
  type: string;
  data: (row: TaskRow) => string;
}

/** One run's outcome, as `finish` takes it. */
export interface FinishItem {
  lease: Lease;
  fields: FinishFields;
  messages: NewMessageRow[];
  trace: TraceEvent[];
  event: FinalEvent;
  now: number;
  claimed?: TaskRow;
  /** Notification outbox rows, committed with the outcome (only when its fenced update matched). */
  outbox?: NewDeliveryRow[];
}

export interface FinishFields {
  status: 'completed' | 'failed' | 'error';
  result: string;
  tokens: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  llm_model_provider: string | null;
  llm_model_name: string | null;
}

/**
 * The queue: claims with a lease and a fencing number, heartbeats, and the worker's fenced writes.
 * PostgreSQL claims with `FOR UPDATE SKIP LOCKED`, so concurrent workers never take the same row;
 * SQLite claims with one atomic `UPDATE ... WHERE key IN (SELECT ... LIMIT 1) RETURNING` (SQLite has one writer).
 */
export class TaskQueueRepository {
  constructor(private readonly db: Db) {}

  /**
   * A read-only probe before claiming: on SQLite even an UPDATE that matches nothing takes the write lock, which
   * idle workers polling several times a second would otherwise keep contending for. Expired leases first (those
   * tasks started earlier), and only when `withExpired`.
   */
  async nextClaimable(now: number, withExpired: boolean): Promise<'expired' | 'pending' | undefined> {
    const k = this.db.kysely;
    if (withExpired && (await this.hasExpired(now))) return 'expired';
    // PostgreSQL: a claim that finds nothing locks nothing and costs what the probe would; skip the round trip.
    if (this.db.dialect === 'postgres') return 'pending';
    const pending = await k.selectFrom('tasks').select('id').where('status', '=', 'pending').where('queued_at', '<=', now).limit(1).executeTakeFirst();
    return pending ? 'pending' : undefined;
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

  /** Claims the oldest pending task that is due. */
  async claimPending(owner: string, now: number, leaseMs: number): Promise<TaskRow | undefined> {
    return (await this.claimPendingBatch(owner, now, leaseMs, 1))[0];
  }

  /**
   * Claims up to `limit` of the oldest pending tasks that are due, in one statement (one commit), oldest first. A
   * worker with several free slots fills them in one round trip instead of one each: on PostgreSQL every claim is
   * a commit, and a commit's WAL flush is what a worker's claims queue behind.
   */
  claimPendingBatch(owner: string, now: number, leaseMs: number, limit: number): Promise<TaskRow[]> {
    return this.claim(sql`status = 'pending' and queued_at <= ${now}`, sql`queued_at`, owner, now, leaseMs, limit);
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
    const set = sql`status = 'executing', lease_owner = ${owner}, lease_expires_at = ${now + leaseMs}, heartbeat_at = ${now},
      fence = fence + 1, execution_attempts = execution_attempts + 1, hitl_request = null, hitl_decision = null,
      started_at = coalesce(started_at, ${now}), updated_at = ${now}`;
    const k = this.db.kysely;
    // RETURNING follows no order: the rows are put back in queue order, which is the order they are started in.
    const inOrder = (rows: TaskRow[]) => (rows.length > 1 ? rows.sort((a, b) => Number(a.queued_at) - Number(b.queued_at) || Number(a.created_at) - Number(b.created_at)) : rows);
    if (this.db.dialect === 'postgres') {
      const r = await sql<TaskRow>`
        with c as (select organization_id, id from tasks where ${candidate} order by ${order} limit ${limit} for update skip locked)
        update tasks t set ${set} from c where t.organization_id = c.organization_id and t.id = c.id returning t.*`.execute(k);
      return inOrder(r.rows);
    }
    const r = await sql<TaskRow>`
      update tasks set ${set}
      where (organization_id, id) in (select organization_id, id from tasks where ${candidate} order by ${order} limit ${limit})
      returning *`.execute(k);
    return inOrder(r.rows);
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
      .execute();
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
          .executeTakeFirst();
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
    const pg = this.db.dialect === 'postgres';
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
    const r = await sql`
      insert into task_events (organization_id, task_id, type, time, data)
      select t.organization_id, t.id, v.type, v.time, v.data from tasks t, ${values}
      where t.organization_id = ${l.organizationId} and t.id = ${l.taskId} and t.fence = ${l.fence}
      ${pg ? sql`and set_config('synchronous_commit', 'off', true) is not null` : sql``}
      order by v.ord
      ${pg ? sql`for share of t` : sql``}`.execute(this.db.kysely);
    return Number(r.numAffectedRows ?? 0) > 0;
  }

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
    if (this.db.dialect === 'postgres' && items.every((i) => i.claimed)) return this.finishInOneStatement(items);
    return this.db.kysely.transaction().execute(async (trx) => {
      const out: (TaskRow | undefined)[] = [];
      for (const { lease: l, fields: f, messages, trace, event, now, outbox } of items) {
        const row = await this.fenced(trx.updateTable('tasks').set(outcome(f, now)), l)
          .returningAll()
          .executeTakeFirst();
        out.push(row);
        if (!row) continue;
        for (const batch of batches(messages, ROWS_PER_INSERT)) await trx.insertInto('task_messages').values(batch).execute();
        const events = [...trace, { type: event.type, time: now, data: event.data(row) }];
        for (const batch of batches(events, ROWS_PER_INSERT)) {
          await trx
            .insertInto('task_events')
            .values(batch.map((e) => ({ organization_id: l.organizationId, task_id: l.taskId, type: e.type, time: e.time, data: e.data })))
            .execute();
        }
        if (outbox?.length) await trx.insertInto('notification_deliveries').values(outbox).execute();
      }
      return out;
    });
  }

  /**
   * PostgreSQL: the outcomes, messages and events as data-modifying CTEs of one statement (its own transaction).
   * Each final event shows its task as finished, which is known before the update: the claimed row with the outcome
   * applied (under the fence, nothing else writes the columns a task shows). Should a row that comes back show
   * otherwise all the same, its event is corrected from it at once.
   */
  private async finishInOneStatement(items: FinishItem[]): Promise<(TaskRow | undefined)[]> {
    const k = this.db.kysely;
    const finals = items.map(({ fields: f, claimed, event, now }) =>
      event.data({
        ...claimed!,
        ...outcome(f, now),
        prompt_tokens: Number(claimed!.prompt_tokens) + f.tokens.prompt_tokens,
        completion_tokens: Number(claimed!.completion_tokens) + f.tokens.completion_tokens,
        total_tokens: Number(claimed!.total_tokens) + f.tokens.total_tokens,
      }),
    );
    // Every row goes as one element of a column array (unnest), so the statement's text is the same whatever the
    // number of runs, messages and events: it is prepared once per connection (pg-pool.ts). A message or event
    // names its run by the run's position in `items` (`i`); nothing of a run is written unless its fenced update
    // matched, and its events follow that row lock, so a task's events stay committed in sequence order.
    const runs = items.map((i) => ({ ...i.lease, ...i.fields, ...i.fields.tokens, now: i.now }));
    const messages = items.flatMap((i, n) => i.messages.map((m) => ({ ...m, n })));
    const events = items.flatMap((i, n) => [...i.trace, { type: i.event.type, time: i.now, data: finals[n]! }].map((e) => ({ ...e, n })));
    const col = <T, K extends keyof T>(rows: T[], name: K) => rows.map((r) => r[name] ?? null);
    const released = sql.join(Object.keys(RELEASED_ON_FINISH).map((c) => sql`${sql.ref(c)} = null`));
    // Notifications (rare): their outbox rows in the same statement, only for runs whose update matched. Without any,
    // the statement's text is the one it always was.
    const outbox = items.flatMap((i, n) => (i.outbox ?? []).map((o) => ({ ...o, n })));
    const outboxCte = outbox.length
      ? sql`,
      o as (insert into notification_deliveries (organization_id, id, task_id, agent_id, event, channel, target, payload, status, attempts,
          next_attempt_at, give_up_at, created_at, updated_at)
        select ov.organization_id, ov.id, ov.task_id, ov.agent_id, ov.event, ov.channel, ov.target, ov.payload, 'pending', 0,
          ov.next_attempt_at, ov.give_up_at, ov.created_at, ov.created_at
        from unnest(${col(outbox, 'n')}::int[], ${col(outbox, 'organization_id')}::text[], ${col(outbox, 'id')}::text[],
          ${col(outbox, 'task_id')}::text[], ${col(outbox, 'agent_id')}::text[], ${col(outbox, 'event')}::text[], ${col(outbox, 'channel')}::text[],
          ${col(outbox, 'target')}::text[], ${col(outbox, 'payload')}::text[], ${col(outbox, 'next_attempt_at')}::bigint[],
          ${col(outbox, 'give_up_at')}::bigint[], ${col(outbox, 'created_at')}::bigint[])
          as ov(n, organization_id, id, task_id, agent_id, event, channel, target, payload, next_attempt_at, give_up_at, created_at)
        join t on t.n = ov.n)`
      : sql``;
    const r = await sql<TaskRow & { n: number; final_seq: number }>`
      with v as (
        select * from unnest(${col(runs, 'organizationId')}::text[], ${col(runs, 'taskId')}::text[], ${col(runs, 'fence')}::bigint[],
          ${col(runs, 'status')}::text[], ${col(runs, 'result')}::text[], ${col(runs, 'prompt_tokens')}::bigint[],
          ${col(runs, 'completion_tokens')}::bigint[], ${col(runs, 'total_tokens')}::bigint[], ${col(runs, 'llm_model_provider')}::text[],
          ${col(runs, 'llm_model_name')}::text[], ${col(runs, 'now')}::bigint[])
          with ordinality as v(organization_id, id, fence, status, result, prompt_tokens, completion_tokens, total_tokens,
            llm_model_provider, llm_model_name, now, n)),
      t as (update tasks set status = v.status, result = v.result, prompt_tokens = tasks.prompt_tokens + v.prompt_tokens,
          completion_tokens = tasks.completion_tokens + v.completion_tokens, total_tokens = tasks.total_tokens + v.total_tokens,
          llm_model_provider = v.llm_model_provider, llm_model_name = v.llm_model_name, ${released},
          finished_at = v.now, updated_at = v.now
        from v where tasks.organization_id = v.organization_id and tasks.id = v.id and tasks.fence = v.fence
        returning tasks.*, v.n - 1 as n),
      m as (insert into task_messages (organization_id, task_id, run, role, content, tool_calls, tool_call_id, created_at)
        select t.organization_id, t.id, mv.run, mv.role, mv.content, mv.tool_calls, mv.tool_call_id, mv.created_at
        from unnest(${col(messages, 'n')}::int[], ${col(messages, 'run')}::int[], ${col(messages, 'role')}::text[],
          ${col(messages, 'content')}::text[], ${col(messages, 'tool_calls')}::text[], ${col(messages, 'tool_call_id')}::text[],
          ${col(messages, 'created_at')}::bigint[]) with ordinality as mv(n, run, role, content, tool_calls, tool_call_id, created_at, ord)
        join t on t.n = mv.n order by mv.ord),
      e as (insert into task_events (organization_id, task_id, type, time, data)
        select t.organization_id, t.id, ev.type, ev.time, ev.data
        from unnest(${col(events, 'n')}::int[], ${col(events, 'type')}::text[], ${col(events, 'time')}::bigint[], ${col(events, 'data')}::text[])
          with ordinality as ev(n, type, time, data, ord)
        join t on t.n = ev.n order by ev.ord returning seq, organization_id, task_id)${outboxCte}
      select t.*, (select max(e.seq) from e where e.organization_id = t.organization_id and e.task_id = t.id) as final_seq from t`.execute(k);
    const out: (TaskRow | undefined)[] = items.map(() => undefined);
    for (const { n, final_seq: finalSeq, ...row } of r.rows) {
      const i = Number(n);
      out[i] = row;
      const actual = items[i]!.event.data(row);
      if (actual !== finals[i]) await k.updateTable('task_events').set({ data: actual }).where('seq', '=', finalSeq).execute();
    }
    return out;
  }

  /** Puts the task back in the queue (retry after an error, or a worker shutting down), keeping or returning the attempt. */
  async requeue(l: Lease, at: number, now: number, opts: { refundAttempt: boolean; tokens?: FinishFields['tokens'] }): Promise<TaskRow | undefined> {
    return this.fenced(
      this.db.kysely.updateTable('tasks').set((eb) => ({
        status: 'pending',
        lease_owner: null,
        lease_expires_at: null,
        hitl_request: null,
        hitl_decision: null,
        queued_at: at,
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
      .executeTakeFirst();
  }

  async history(orgId: string, taskId: string, beforeRun: number): Promise<TaskMessageRow[]> {
    return this.db.kysely
      .selectFrom('task_messages')
      .selectAll()
      .where('organization_id', '=', orgId)
      .where('task_id', '=', taskId)
      .where('run', '<', beforeRun)
      .orderBy('seq')
      .execute();
  }

  /** PostgreSQL: wakes listeners in other processes (see task-signals.ts), several notifications in one round trip. */
  async notify(channel: string, payloads: string[]): Promise<void> {
    await sql`select pg_notify(${channel}, p) from unnest(${payloads}::text[]) as p`.execute(this.db.kysely);
  }

  private fenced<O>(q: UpdateQueryBuilder<Database, 'tasks', 'tasks', O>, l: Lease): UpdateQueryBuilder<Database, 'tasks', 'tasks', O> {
    return q.where('organization_id', '=', l.organizationId).where('id', '=', l.taskId).where('fence', '=', l.fence);
  }
}

/** The columns a run's outcome sets (its tokens are added to the task's). */
function outcome(f: FinishFields, now: number) {
  return {
    status: f.status,
    result: f.result,
    prompt_tokens: sql<number>`prompt_tokens + ${f.tokens.prompt_tokens}`,
    completion_tokens: sql<number>`completion_tokens + ${f.tokens.completion_tokens}`,
    total_tokens: sql<number>`total_tokens + ${f.tokens.total_tokens}`,
    llm_model_provider: f.llm_model_provider,
    llm_model_name: f.llm_model_name,
    ...RELEASED_ON_FINISH,
    finished_at: now,
    updated_at: now,
  };
}
