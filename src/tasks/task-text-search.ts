import { sql, type Compilable, type ExpressionBuilder, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * Text search over tasks (`q` on the task lists): a case-insensitive substring match on the input, the title and
 * the result, over a bounded window of the newest tasks that pass the other filters.
 *
 * Why a scan and not an index (docs/decisions.md, "Console workspace"): an FTS5 table (libsql) or a tsvector
 * column (PostgreSQL) is maintained on every insert and on every result write, i.e. on the webhook accept path and
 * at every task end; a bounded scan costs nothing on writes and reads at most SEARCH_WINDOW rows, found through the
 * (organization_id[, agent_id], created_at) indexes. Older tasks are reached by narrowing with agent or dates.
 */
export const SEARCH_WINDOW = 5_000;

type TasksQuery = SelectQueryBuilder<Database, 'tasks', object>;

/** `%`, `_` and the escape character itself match literally: the user's text is text, not a pattern. */
export function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Where the window starts: the creation time of the SEARCH_WINDOW-th newest task passing the other filters, read
 * from the (organization_id[, agent_id], created_at) index without touching the text; undefined when there are
 * fewer. A range on created_at then bounds the scan (an `id IN (newest ...)` form let the planners walk the whole
 * index instead, testing the text on every row of the organization).
 */
export async function windowStart(filtered: TasksQuery, read: ListRead): Promise<number | undefined> {
  const [row] = await read(filtered.select('created_at').orderBy('created_at', 'desc').offset(SEARCH_WINDOW - 1).limit(1));
  return row ? Number(row.created_at) : undefined;
}

/** How the repository runs a list's reads (Db.lists: off the event loop on libsql). */
type ListRead = <R>(q: Compilable<R>) => Promise<R[]>;

/** Narrows `q` (already filtered) to tasks created from `since` on whose input, title or result contains `text`. */
export function whereTextMatches(q: TasksQuery, text: string, since: number | undefined): TasksQuery {
  const pattern = likePattern(text);
  // LOWER(..) LIKE works the same on both dialects (PostgreSQL LIKE is case-sensitive, SQLite's only for ASCII).
  const matches = (col: 'input_text' | 'title' | 'result') => sql<boolean>`lower(coalesce(${sql.ref(col)}, '')) like ${pattern} escape '\\'`;
  const bounded = since === undefined ? q : q.where('created_at', '>=', since);
  // A large task's input is in task_payloads (task-payloads.repository.ts): looked up only for such a task.
  const asideMatches = sql<boolean>`(tasks.payload_stored = 1 and exists (select 1 from task_payloads p where p.organization_id = tasks.organization_id
    and p.task_id = tasks.id and lower(p.input_text) like ${pattern} escape '\\'))`;
  return bounded.where((eb: ExpressionBuilder<Database, 'tasks'>) => eb.or([matches('input_text'), matches('title'), matches('result'), asideMatches]));
}
