import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { DialectName } from '../db/database.js';
import { pgTextArray } from '../db/pg-arrays.js';
import type { Database } from '../db/schema.js';

type Runner = Kysely<Database> | Transaction<Database>;
/** What ranking a row reads and writes. */
type RankedRow = { organization_id: string; status: string; queued_at: number; fair_rank?: number | null };

/**
 * Fair ranks: the claim's order across organizations (start-time fair queueing; docs/decisions.md, "Fair claims
 * across organizations"). Tasks entering the queue get, one after another,
 *
 *   fair_rank = max(V, the organization's last rank) + 1
 *
 * where V, the claim frontier, is the lowest rank of a pending task that is due (else the highest rank given, else
 * 0), and an organization's last rank is the highest it was given (`task_queue_ranks`). The claim takes the lowest
 * ranks first. So an organization with nothing queued is ranked just past the frontier, ahead of any other's
 * backlog; organizations with backlogs alternate (their k-th waiting tasks share a rank, a tie going to the older);
 * within one organization the ranks rise in the order its tasks entered, so it stays oldest-first.
 *
 * One statement per batch reserves each organization's ranks (an upsert of its row, RETURNING the new last rank), so
 * two processes ranking at once never give one organization's tasks the same rank. V is one descent of the queue
 * index (`tasks_fair_idx`, migration 0030) and one of `task_queue_ranks_last_idx`. The last ranks live in their own
 * small table rather than being read from the pending tasks: an index of pending tasks by organization cost every
 * claim one more index delete (~3 us of 30 on libsql, measured with a 100,000-task backlog).
 */

/** The frontier V, as an SQL expression (`now`: what is due). */
function frontier(now: number): RawBuilder<number> {
  return sql<number>`coalesce(
    (select f.fair_rank from tasks f where f.status = 'pending' and f.queued_at <= ${now} and f.fair_rank is not null order by f.fair_rank limit 1),
    (select r.last_rank from task_queue_ranks r order by r.last_rank desc limit 1),
    0)`;
}

/**
 * Reserves `counts.get(org)` consecutive ranks for each organization; returns the first of each. `now`: what is
 * due, for the frontier.
 */
async function reserve(k: Runner, dialect: DialectName, counts: Map<string, number>, now: number): Promise<Map<string, number>> {
  const v = frontier(now);
  // The organization's new last rank: max(V, its last) + n, with n = the inserted value - V.
  const pg = dialect === 'postgres';
  const greatest = pg ? sql`greatest` : sql`max`;
  const source = pg
    ? // In one order (the organizations' ids) whoever ranks: two batches locking the same rows in turn cannot deadlock.
      sql`select o.org, ${v} + o.n from unnest(${pgTextArray([...counts.keys()])}::text[], ${`{${[...counts.values()].join(',')}}`}::bigint[]) as o(org, n) order by o.org`
    : // SQLite: `where true` tells its parser the ON CONFLICT below is the upsert's, not a join's.
      sql`select json_extract(o.value, '$[0]'), ${v} + json_extract(o.value, '$[1]') from json_each(${JSON.stringify([...counts])}) as o where true`;
  const r = await sql<{ organization_id: string; last_rank: number }>`
    insert into task_queue_ranks (organization_id, last_rank) ${source}
    on conflict (organization_id) do update set last_rank = ${greatest}(task_queue_ranks.last_rank, ${v}) + (excluded.last_rank - ${v})
    returning organization_id, last_rank`.execute(k);
  const first = new Map<string, number>();
  for (const row of r.rows) first.set(row.organization_id, Number(row.last_rank) - counts.get(row.organization_id)! + 1);
  return first;
}

/**
 * Gives every pending row its rank (in place), in the order given: one statement for the whole batch, whatever its
 * organizations. Rows that are not pending (a synchronous run inserted already claimed, a reported run) are left
 * unranked, and a batch of only those costs nothing.
 */
export async function rankPending(k: Runner, dialect: DialectName, rows: RankedRow[]): Promise<void> {
  let counts: Map<string, number> | undefined;
  // "Due" as of the batch's newest task: what a claim running as it commits sees (no clock in a repository).
  let now = 0;
  for (const r of rows) {
    if (r.status !== 'pending') continue;
    counts ??= new Map();
    counts.set(r.organization_id, (counts.get(r.organization_id) ?? 0) + 1);
    if (Number(r.queued_at) > now) now = Number(r.queued_at);
  }
  if (!counts) return;
  const next = await reserve(k, dialect, counts, now);
  for (const r of rows) {
    if (r.status !== 'pending') continue;
    const rank = next.get(r.organization_id)!;
    r.fair_rank = rank;
    next.set(r.organization_id, rank + 1);
  }
}

/** The rank of one task of `orgId` entering the queue now (a continuation, a retry, a lone insert). */
export async function nextFairRank(k: Runner, dialect: DialectName, orgId: string, now: number): Promise<number> {
  return (await reserve(k, dialect, new Map([[orgId, 1]]), now)).get(orgId)!;
}
