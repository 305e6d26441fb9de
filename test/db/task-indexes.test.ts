import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { SQLITE_INBOX_DEPTH } from '../../src/observability/queue-stats.repository.js';
import { TEST_DBS } from '../support/databases.js';
import { openMigratedDb } from '../support/migrated-db.js';

/**
 * Migration 0009 made three task indexes partial (IS NOT NULL), 0026 the queue index (`status = 'pending'`), which
 * 0030 keyed by fair rank (and the frontier of an idle queue, `task_queue_ranks_last_idx`). The
 * queries that need them must still use them: a partial index is only chosen when the query implies its condition.
 */
const QUERIES: [string, string][] = [
  ['tasks_owner_idx', `select organization_id, id from tasks where lease_owner = 'w'`],
  ['tasks_lease_idx', `select id from tasks where status in ('executing', 'paused') and lease_expires_at < 5 and execution_attempts < max_attempts limit 1`],
  // (Without the ORDER BY of the real query: on an empty table either index is as cheap; usability is the point.)
  ['tasks_parent_idx', `select id from tasks where organization_id = 'o' and parent_execution in ('a', 'b')`],
  // The claim's candidates (TaskQueueRepository.claimStatement), SQLite's pending probe, and the /metrics reads.
  ['tasks_fair_idx', `select organization_id, id from tasks where status = 'pending' and queued_at <= 5 order by fair_rank, queued_at limit 4`],
  ['tasks_fair_idx', `select id from tasks where status = 'pending' and queued_at <= 5 limit 1`],
  ['tasks_fair_idx', `select count(*), min(queued_at) from tasks where status = 'pending'`],
  // The ranks of tasks entering the queue (task-fair-ranks.repository.ts): the frontier, in the queue
  // or, when nothing there is due, the highest rank given.
  ['tasks_fair_idx', `select fair_rank from tasks where status = 'pending' and queued_at <= 5 and fair_rank is not null order by fair_rank limit 1`],
  ['task_queue_ranks_last_idx', `select last_rank from task_queue_ranks order by last_rank desc limit 1`],
  ['tasks_lease_idx', `select status, count(*) from tasks where status in ('executing', 'paused') and lease_expires_at is not null group by status`],
];

describe.each(TEST_DBS)('partial task indexes (%s)', (kind) => {
  let db: Db;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await openMigratedDb(kind));
  });
  afterAll(() => close());

  it.each(QUERIES)('%s serves %s', async (index, query) => {
    expect(await plan(db.kysely, kind, query)).toContain(index);
  });

  // (SQLite only: PostgreSQL counts the inbox, see QueueStatsRepository.)
  if (kind === 'sqlite') {
    it('reads the task inbox depth from the ends of its key, not by a scan (/metrics)', async () => {
      const detail = await plan(db.kysely, kind, SQLITE_INBOX_DEPTH);
      expect(detail).toContain('SEARCH task_inbox');
      expect(detail).not.toContain('SCAN task_inbox');
    });
  }

  it('keeps no index of every task by status (0026 dropped it: finished tasks need no queue entry)', async () => {
    const q =
      kind === 'sqlite'
        ? sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'tasks'`
        : sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'tasks'`;
    const names = (await q.execute(db.kysely)).rows.map((r) => r.name);
    expect(names).toContain('tasks_fair_idx');
    expect(names).not.toContain('tasks_pending_idx');
    expect(names).not.toContain('tasks_queue_idx');
  });
});

async function plan(k: Kysely<any>, kind: string, query: string): Promise<string> {
  if (kind === 'sqlite') {
    const r = await sql.raw<{ detail: string }>(`explain query plan ${query}`).execute(k);
    return r.rows.map((x) => x.detail).join('\n');
  }
  // An empty table would be scanned; forbid that so the planner shows whether the index is usable at all.
  return k.connection().execute(async (c) => {
    await sql`set enable_seqscan = off`.execute(c);
    const r = await sql.raw<{ 'QUERY PLAN': string }>(`explain ${query}`).execute(c);
    await sql`reset enable_seqscan`.execute(c);
    return r.rows.map((x) => x['QUERY PLAN']).join('\n');
  });
}
