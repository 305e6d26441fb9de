/**
 * The queue with a deep backlog of several organizations, in process, through the repositories the service uses:
 * how fast new tasks are committed into it (the group commit's batches of 200, which rank each pending task) and how
 * fast workers claim from it (batches of 16, a worker's free slots). Runs on any revision that has the same
 * repository calls, so an old and a new checkout can be compared one after the other:
 *
 *   npx tsx bench/claim-backlog.ts [sqlite|postgres] [backlog, 100000] [--explain]
 *
 * The backlog is split unevenly over five organizations (60%, 25%, 10%, 4%, 1%; `ONE_ORG=1`: one organization),
 * committed oldest first, one organization after another. Printed: the backlog's commit rate, then, at the full backlog, the commit rate of one
 * more organization's 5,000 tasks and the claim rate over 20,000 claims, each as wall time and this process's CPU
 * (on PostgreSQL the server's CPU is not counted). `--explain` prints the plans of the claim and of the rank reads
 * at the full backlog.
 */
import { sql } from 'kysely';
import { eventRow } from '../src/tasks/task.presenter.js';
import { TaskQueueRepository } from '../src/tasks/task-queue.repository.js';
import { TasksRepository, type TaskRow } from '../src/tasks/tasks.repository.js';
import { openMigratedDb } from '../test/support/migrated-db.js';
import { pendingTaskRow } from '../test/support/task-row.js';

const kind = (process.argv[2] ?? 'sqlite') as 'sqlite' | 'postgres';
const backlog = Number(process.argv[3] ?? 100_000);
const explain = process.argv.includes('--explain');
const SHARES = process.env.ONE_ORG ? [1] : [0.6, 0.25, 0.1, 0.04, 0.01];
const BATCH = 200;
const CLAIM = 16;
const CLAIMS = 20_000;

const { db, close } = await openMigratedDb(kind);
const tasks = new TasksRepository(db);
const queue = new TaskQueueRepository(db);
let clock = 1_000_000;

/** Commits `n` tasks of `org` in batches; returns wall and CPU ms. */
async function commit(org: string, n: number): Promise<{ wall: number; cpu: number }> {
  const [t0, c0] = [performance.now(), process.cpuUsage()];
  for (let i = 0; i < n; i += BATCH) {
    const rows: TaskRow[] = [];
    for (let j = i; j < Math.min(n, i + BATCH); j++) rows.push({ ...pendingTaskRow(`${org}-${j}`, ++clock), organization_id: org });
    await tasks.insertNew(rows.map((task) => ({ task, event: eventRow(task, 'task_created', task.created_at, {}) })));
  }
  const c = process.cpuUsage(c0);
  return { wall: performance.now() - t0, cpu: (c.user + c.system) / 1000 };
}

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);

let total = 0;
const [w0, c0] = [performance.now(), process.cpuUsage()];
for (const [i, share] of SHARES.entries()) {
  const n = Math.round(backlog * share);
  await commit(`org-${i}`, n);
  total += n;
}
const cb = process.cpuUsage(c0);
console.log(`${kind}: backlog of ${total} committed at ${rate(total, performance.now() - w0)}/s (${(((cb.user + cb.system) / total) | 0)} us CPU each)`);

const more = await commit('org-new', 5000);
console.log(`${kind}: 5000 more at the full backlog: ${rate(5000, more.wall)}/s, ${Math.round((more.cpu * 1000) / 5000)} us CPU each`);

if (explain) {
  const now = clock + 1;
  const queries = [
    `select organization_id, id from tasks where status = 'pending' and queued_at <= ${now} order by fair_rank, queued_at limit ${CLAIM}`,
    `select fair_rank from tasks where status = 'pending' and queued_at <= ${now} and fair_rank is not null order by fair_rank limit 1`,
    `select last_rank from task_queue_ranks order by last_rank desc limit 1`,
    `select last_rank from task_queue_ranks where organization_id = 'org-0'`,
    `select count(*), min(queued_at) from tasks where status = 'pending'`,
  ];
  if (kind === 'postgres') await sql`analyze tasks`.execute(db.kysely);
  for (const q of queries) {
    const text = kind === 'sqlite' ? `explain query plan ${q}` : `explain ${q}`;
    const rows = (await sql.raw<Record<string, string>>(text).execute(db.kysely)).rows;
    console.log(`\n${q}\n  ${rows.map((r) => r.detail ?? r['QUERY PLAN']).join('\n  ')}`);
  }
}

let claimed = 0;
const [t1, c1] = [performance.now(), process.cpuUsage()];
while (claimed < CLAIMS) {
  const rows = await queue.claimPendingBatch('bench', ++clock, 60_000, CLAIM);
  if (!rows.length) break;
  claimed += rows.length;
}
const cc = process.cpuUsage(c1);
const wall = performance.now() - t1;
console.log(`${kind}: ${claimed} claims at the backlog, ${CLAIM} a statement: ${rate(claimed, wall)}/s, ${Math.round((cc.user + cc.system) / claimed)} us CPU each`);
await close();
