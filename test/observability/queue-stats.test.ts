import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { QueueStatsRepository } from '../../src/observability/queue-stats.repository.js';
import { TaskQueueRepository } from '../../src/tasks/task-queue.repository.js';
import { RELEASED_ON_FINISH } from '../../src/tasks/tasks.repository.js';
import { TEST_DBS } from '../support/databases.js';
import { openMigratedDb } from '../support/migrated-db.js';
import { pendingTaskRow } from '../support/task-row.js';

/**
 * The /metrics queue gauges read indexes only (migration 0026): pending tasks from the partial queue index, executing
 * and paused ones from the lease index. Tasks are moved through the queue's own statements (claim, pause, finish), so
 * the counts hold only while those keep a lease on every executing and paused task.
 */
describe.each(TEST_DBS)('queue statistics (%s)', (kind) => {
  let db: Db;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await openMigratedDb(kind));
  });
  afterAll(() => close());

  it('counts pending, executing and paused tasks and gives the oldest pending one', async () => {
    const stats = new QueueStatsRepository(db);
    expect(await stats.read()).toEqual({ byStatus: { pending: 0 }, inbox: 0, oldestPendingAt: null });

    const queue = new TaskQueueRepository(db);
    const t0 = 1_000_000;
    for (let i = 0; i < 6; i++) {
      await db.kysely.insertInto('tasks').values(pendingTaskRow(`t${i}`, t0 + i) as never).execute();
    }
    // The three oldest are claimed; one of them pauses for a decision, one ends.
    const claimed = await queue.claimPendingBatch('w', t0 + 10, 30_000, 3);
    expect(claimed.map((r) => r.id)).toEqual(['t0', 't1', 't2']);
    const lease = (id: string) => ({ organizationId: 'org', taskId: id, fence: 1 });
    expect(await queue.pause(lease('t1'), '{}', t0 + 11)).toBe(true);
    await db.kysely
      .updateTable('tasks')
      .set({ status: 'completed', ...RELEASED_ON_FINISH, finished_at: t0 + 12 })
      .where('id', '=', 't2')
      .execute();
    await db.kysely.insertInto('task_inbox').values({ row: '[]' } as never).execute();

    expect(await stats.read()).toEqual({ byStatus: { pending: 3, executing: 1, paused: 1 }, inbox: 1, oldestPendingAt: t0 + 3 });
  });

  it('gives the task inbox depth as entries are appended and moved from its oldest end, also once it empties', async () => {
    const stats = new QueueStatsRepository(db);
    const inbox = async () => (await stats.read()).inbox;
    const counted = async () => Number((await db.kysely.selectFrom('task_inbox').select(db.kysely.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    await db.kysely.deleteFrom('task_inbox').execute();
    expect(await inbox()).toBe(0);
    const append = (n: number) => db.kysely.insertInto('task_inbox').values(Array.from({ length: n }, () => ({ row: '[]' })) as never).execute();
    // As TaskInboxRepository.move takes them: the oldest entries, up to the last one taken.
    const moveOldest = async (n: number) => {
      const taken = await db.kysely.selectFrom('task_inbox').select('seq').orderBy('seq').limit(n).execute();
      await db.kysely.deleteFrom('task_inbox').where('seq', '<=', taken[taken.length - 1]!.seq).execute();
    };
    await append(7);
    await moveOldest(3);
    await append(2);
    expect(await inbox()).toBe(6);
    expect(await inbox()).toBe(await counted());
    await moveOldest(6);
    expect(await inbox()).toBe(0);
    await append(4);
    expect(await inbox()).toBe(4);
    expect(await inbox()).toBe(await counted());
  });
});
