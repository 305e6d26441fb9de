import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { RELEASED_ON_FINISH, type NewMessageRow, type TaskRow } from './tasks.repository.js';
import type { FinishFields, FinishItem, TraceEvent } from './task-queue.types.js';
import { pgBigintArray, pgIntArray, pgTextArray } from '../db/pg-arrays.js';

/** The columns a run's outcome sets, token counts aside (each adds to the task's earlier runs'). */
function outcomeColumns(f: FinishFields, now: number) {
  return {
    status: f.status,
    result: f.result,
    llm_model_provider: f.llm_model_provider,
    llm_model_name: f.llm_model_name,
    ...RELEASED_ON_FINISH,
    finished_at: now,
    updated_at: now,
  };
}

/** The columns a run's outcome sets, on both dialects. */
export function outcome(f: FinishFields, now: number) {
  return {
    ...outcomeColumns(f, now),
    prompt_tokens: sql<number>`prompt_tokens + ${f.tokens.prompt_tokens}`,
    completion_tokens: sql<number>`completion_tokens + ${f.tokens.completion_tokens}`,
    total_tokens: sql<number>`total_tokens + ${f.tokens.total_tokens}`,
  };
}

/** The claimed row as the outcome leaves it (what the final event shows), computed before the update. */
function finishedRow(claimed: TaskRow, f: FinishFields, now: number): TaskRow {
  return {
    ...claimed,
    ...outcomeColumns(f, now),
    prompt_tokens: Number(claimed.prompt_tokens) + f.tokens.prompt_tokens,
    completion_tokens: Number(claimed.completion_tokens) + f.tokens.completion_tokens,
    total_tokens: Number(claimed.total_tokens) + f.tokens.total_tokens,
  };
}

/** Whether every column of the committed row holds exactly (===) what was predicted for it. */
function sameColumns(row: TaskRow, predicted: TaskRow): boolean {
  for (const c in row) if (row[c as keyof TaskRow] !== predicted[c as keyof TaskRow]) return false;
  return true;
}

/**
 * PostgreSQL: the outcomes, messages and events as data-modifying CTEs of one statement (its own transaction).
 * Each final event shows its task as finished, which is known before the update: the claimed row with the outcome
 * applied (under the fence, nothing else writes the columns a task shows). Should a row that comes back show
 * otherwise all the same, its event is corrected from it at once.
 */
export async function finishInOneStatement(k: Kysely<Database>, items: FinishItem[]): Promise<(TaskRow | undefined)[]> {
  const predicted = items.map(({ fields: f, claimed, now }) => finishedRow(claimed!, f, now));
  const finals = items.map((i, n) => i.event.data(predicted[n]!));
  // Every row goes as one element of a column array (unnest; sent in PostgreSQL's binary format, pg-arrays.ts), so
  // the statement's text is the same whatever the number of runs, messages and events: it is prepared once per
  // connection (pg-pool.ts). A message or event names its run by the run's position in `items` (`n`); nothing of a
  // run is written unless its fenced update matched, and its events follow that row lock, so a task's events stay
  // committed in sequence order. Each column is read by its own accessor: one function reading fields by a
  // dynamic name was ~1.5% of a synchronous run's CPU.
  const messages: NewMessageRow[] = [];
  const messageRun: number[] = [];
  const events: TraceEvent[] = [];
  const eventRun: number[] = [];
  items.forEach((i, n) => {
    for (const m of i.messages) messages.push(m), messageRun.push(n);
    for (const e of i.trace) events.push(e), eventRun.push(n);
    events.push({ type: i.event.type, time: i.now, data: finals[n]! });
    eventRun.push(n);
  });
  const released = sql.join(Object.keys(RELEASED_ON_FINISH).map((c) => sql`${sql.ref(c)} = null`));
  // Notifications (rare): their outbox rows in the same statement, only for runs whose update matched. Without any,
  // the statement's text is the one it always was.
  const outbox = items.flatMap((i, n) => (i.outbox ?? []).map((o) => ({ ...o, n })));
  const col = <T, K extends keyof T>(rows: T[], name: K) => rows.map((r) => r[name] ?? null);
  const outboxCte = outbox.length
    ? sql`,
    o as (insert into notification_deliveries (organization_id, id, task_id, agent_id, event, channel, target, payload, status, attempts,
        next_attempt_at, give_up_at, created_at, updated_at)
      select ov.organization_id, ov.id, ov.task_id, ov.agent_id, ov.event, ov.channel, ov.target, ov.payload, 'pending', 0,
        ov.next_attempt_at, ov.give_up_at, ov.created_at, ov.created_at
      from unnest(${pgIntArray(col(outbox, 'n'))}::int[], ${pgTextArray(col(outbox, 'organization_id'))}::text[], ${pgTextArray(col(outbox, 'id'))}::text[],
        ${pgTextArray(col(outbox, 'task_id'))}::text[], ${pgTextArray(col(outbox, 'agent_id'))}::text[], ${pgTextArray(col(outbox, 'event'))}::text[], ${pgTextArray(col(outbox, 'channel'))}::text[],
        ${pgTextArray(col(outbox, 'target'))}::text[], ${pgTextArray(col(outbox, 'payload'))}::text[], ${pgBigintArray(col(outbox, 'next_attempt_at'))}::bigint[],
        ${pgBigintArray(col(outbox, 'give_up_at'))}::bigint[], ${pgBigintArray(col(outbox, 'created_at'))}::bigint[])
        as ov(n, organization_id, id, task_id, agent_id, event, channel, target, payload, next_attempt_at, give_up_at, created_at)
      join t on t.n = ov.n)`
    : sql``;
  const run = <V>(get: (i: FinishItem) => V) => items.map(get);
  const r = await sql<TaskRow & { n: number; final_seq: number }>`
    with v as (
      select * from unnest(${pgTextArray(run((i) => i.lease.organizationId))}::text[], ${pgTextArray(run((i) => i.lease.taskId))}::text[],
        ${pgBigintArray(run((i) => i.lease.fence))}::bigint[], ${pgTextArray(run((i) => i.fields.status))}::text[],
        ${pgTextArray(run((i) => i.fields.result))}::text[], ${pgBigintArray(run((i) => i.fields.tokens.prompt_tokens))}::bigint[],
        ${pgBigintArray(run((i) => i.fields.tokens.completion_tokens))}::bigint[], ${pgBigintArray(run((i) => i.fields.tokens.total_tokens))}::bigint[],
        ${pgTextArray(run((i) => i.fields.llm_model_provider))}::text[], ${pgTextArray(run((i) => i.fields.llm_model_name))}::text[],
        ${pgBigintArray(run((i) => i.now))}::bigint[])
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
      from unnest(${pgIntArray(messageRun)}::int[], ${pgIntArray(messages.map((m) => m.run))}::int[], ${pgTextArray(messages.map((m) => m.role))}::text[],
        ${pgTextArray(messages.map((m) => m.content))}::text[], ${pgTextArray(messages.map((m) => m.tool_calls))}::text[],
        ${pgTextArray(messages.map((m) => m.tool_call_id))}::text[], ${pgBigintArray(messages.map((m) => m.created_at))}::bigint[])
        with ordinality as mv(n, run, role, content, tool_calls, tool_call_id, created_at, ord)
      join t on t.n = mv.n order by mv.ord),
    e as (insert into task_events (organization_id, task_id, type, time, data)
      select t.organization_id, t.id, ev.type, ev.time, ev.data
      from unnest(${pgIntArray(eventRun)}::int[], ${pgTextArray(events.map((e) => e.type))}::text[], ${pgBigintArray(events.map((e) => e.time))}::bigint[],
        ${pgTextArray(events.map((e) => e.data))}::text[]) with ordinality as ev(n, type, time, data, ord)
      join t on t.n = ev.n order by ev.ord returning seq, organization_id, task_id)${outboxCte}
    select t.*, (select max(e.seq) from e where e.organization_id = t.organization_id and e.task_id = t.id) as final_seq from t`.execute(k);
  const out: (TaskRow | undefined)[] = items.map(() => undefined);
  for (const { n, final_seq: finalSeq, ...row } of r.rows) {
    const i = Number(n);
    out[i] = row;
    // Presenting and serialising the row again only when some column differs from the prediction (~1% of a run).
    if (sameColumns(row, predicted[i]!)) continue;
    const actual = items[i]!.event.data(row);
    if (actual !== finals[i]) await k.updateTable('task_events').set({ data: actual }).where('seq', '=', finalSeq).execute();
  }
  return out;
}
