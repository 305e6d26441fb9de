import { sql, type ExpressionBuilder, type SelectQueryBuilder } from 'kysely';
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
 * Narrows `q` (already filtered by organization and the other filters) to the tasks among the newest
 * SEARCH_WINDOW of `window` (the same filters) whose text contains `text`.
 */
export function whereTextMatches(q: TasksQuery, window: TasksQuery, text: string): TasksQuery {
  const pattern = likePattern(text);
  // LOWER(..) LIKE works the same on both dialects (PostgreSQL LIKE is case-sensitive, SQLite's only for ASCII).
  const matches = (col: 'input_text' | 'title' | 'result') => sql<boolean>`lower(coalesce(${sql.ref(col)}, '')) like ${pattern} escape '\\'`;
  const newest = window.select('id').orderBy('created_at', 'desc').limit(SEARCH_WINDOW);
  return q
    .where('id', 'in', newest as unknown as SelectQueryBuilder<Database, 'tasks', { id: string }>)
    .where((eb: ExpressionBuilder<Database, 'tasks'>) => eb.or([matches('input_text'), matches('title'), matches('result')]));
}
