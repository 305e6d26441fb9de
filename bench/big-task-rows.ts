/**
 * Large task inputs on libsql (docs/benchmarks.md, "Large task inputs"): how long each statement of one task's life
 * holds the event loop when its input is 0, 1, 4 or 8 MB. libsql runs statements on the main thread, so a
 * statement's wall time is the time the loop is blocked. Uses the repositories directly on a fresh libsql file.
 *
 *   npx tsx bench/big-task-rows.ts            (BIG_ROWS_MB=0,1,4,8  BIG_ROWS_REPEAT=5  BIG_ROWS_DB=postgres: a fresh database
 *                                              on AGENTRY_TEST_PG_URL's server, where the time is the client's share)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { TaskQueueRepository } from '../src/tasks/task-queue.repository.js';
import { TasksRepository } from '../src/tasks/tasks.repository.js';
import { createPgDatabase } from '../test/support/databases.js';
import { pendingTaskRow } from '../test/support/task-row.js';

const SIZES = (process.env.BIG_ROWS_MB ?? '0,1,4,8').split(',').map(Number);
const REPEAT = Number(process.env.BIG_ROWS_REPEAT ?? 5);
const KINDS = ['insert', 'claim', 'event', 'heartbeat', 'finish', 'get'] as const;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agentry-bigrows-'));
  const pg = process.env.BIG_ROWS_DB === 'postgres' ? await createPgDatabase() : undefined;
  const db = openDatabase({ url: pg?.url, sqlitePath: join(dir, 'x.db') });
  await migrate(db, {});
  const tasks = new TasksRepository(db);
  const queue = new TaskQueueRepository(db);
  const samples: Record<string, Record<string, number[]>> = {};
  const time = async (mb: number, kind: (typeof KINDS)[number], fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    const ms = performance.now() - t0;
    ((samples[`${mb} MB`] ??= {})[kind] ??= []).push(ms);
  };
  let n = 0;
  for (let r = 0; r < REPEAT; r++) {
    for (const mb of SIZES) {
      const id = `t${n++}`;
      const now = Date.now();
      const row = { ...pendingTaskRow(id, now), input_text: 'x'.repeat(Math.max(1, mb * 1024 * 1024)) };
      await time(mb, 'insert', () => tasks.insertNew([{ task: row, event: { organization_id: 'org', task_id: id, type: 'task_created', time: now, data: '{}' } }]));
      let claimed: Awaited<ReturnType<TaskQueueRepository['claimPending']>>;
      await time(mb, 'claim', async () => (claimed = await queue.claimPending('w', now, 60_000)));
      const lease = { organizationId: 'org', taskId: id, fence: Number(claimed!.fence) };
      for (let i = 0; i < 5; i++) await time(mb, 'event', () => queue.appendEvents(lease, [{ type: 'chunk', time: now, data: '{"text":"a"}' }]));
      for (let i = 0; i < 3; i++) await time(mb, 'heartbeat', () => queue.heartbeat(lease, now + i, 60_000));
      const fields = { status: 'completed' as const, result: 'done', tokens: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, llm_model_provider: null, llm_model_name: null };
      await time(mb, 'finish', () => queue.finish(lease, fields, [], [], { type: 'task_finished', data: () => '{}' }, now, claimed));
      await time(mb, 'get', () => tasks.find('org', id));
    }
  }
  const r1 = (ms: number) => Math.round(ms * 10) / 10;
  const cell = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return `${r1(s[Math.floor(s.length / 2)]!)} / ${r1(s[s.length - 1]!)}`;
  };
  console.log(`statement time, median / max (ms), over ${REPEAT} tasks of each size, ${pg ? 'PostgreSQL' : 'libsql'}, one process`);
  console.table(Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, Object.fromEntries(KINDS.map((c) => [c, cell(v[c]!)]))])));
  await db.close();
  await pg?.drop();
  rmSync(dir, { recursive: true, force: true });
}

void main();
