import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { PendingClaims } from '../../src/tasks/task-claim.repository.js';
import { TaskQueueRepository } from '../../src/tasks/task-queue.repository.js';
import { eventRow } from '../../src/tasks/task.presenter.js';
import { TasksRepository, type TaskRow } from '../../src/tasks/tasks.repository.js';
import { TEST_DBS } from '../support/databases.js';
import { openMigratedDb } from '../support/migrated-db.js';
import { queryPlan } from '../support/query-plan.js';
import { pendingTaskRow } from '../support/task-row.js';
import { createTasksApp, ScriptedRunner, type TasksApp } from './tasks-harness.js';

const LEASE_MS = 30_000;
const T0 = 1_000_000;

/** A new pending task of `org`, queued at `at`. */
const taskOf = (org: string, id: string, at: number): TaskRow => ({ ...pendingTaskRow(id, at), organization_id: org });

/**
 * Fair claims across organizations (task-fair-ranks.repository.ts): one organization's backlog does not hold
 * another's tasks behind it; backlogs are claimed in turn; within an organization the order stays oldest-first and a
 * retry's back-off holds.
 */
describe.each(TEST_DBS)('fair claims across organizations (%s)', (kind) => {
  let db: Db;
  let close: () => Promise<void>;
  let tasks: TasksRepository;
  let queue: TaskQueueRepository;
  beforeEach(async () => {
    ({ db, close } = await openMigratedDb(kind));
    tasks = new TasksRepository(db);
    queue = new TaskQueueRepository(db);
  });
  afterEach(() => close());

  /** Commits tasks as the group commit and the inbox's move do, in batches of 200. */
  const insert = async (rows: TaskRow[]) => {
    for (let i = 0; i < rows.length; i += 200) {
      await tasks.insertNew(rows.slice(i, i + 200).map((task) => ({ task, event: eventRow(task, 'task_created', task.created_at, {}) })));
    }
  };
  /** Claims one at a time (the order a worker with one free slot sees), `n` times, at `now`. */
  const claimEach = async (n: number, now: number) => {
    const out: TaskRow[] = [];
    for (let i = 0; i < n; i++) {
      const row = await queue.claimPending('w', now, LEASE_MS);
      if (!row) break;
      out.push(row);
    }
    return out;
  };

  it("claims a task of an organization with nothing queued among the first, ahead of another's backlog of 2,000", async () => {
    await insert(Array.from({ length: 2000 }, (_, i) => taskOf('org-a', `a${i}`, T0 + i)));
    await queue.claimPendingBatch('w', T0 + 5000, LEASE_MS, 3);
    await insert([taskOf('org-b', 'b0', T0 + 3000)]);
    // B is ranked just past the claim frontier (A's next task): the third claim at the latest, not the 1,998th.
    const next = await queue.claimPendingBatch('w', T0 + 5000, LEASE_MS, 3);
    expect(next.map((r) => r.id)).toEqual(['a3', 'a4', 'b0']);
    // A's own order is untouched.
    expect((await claimEach(3, T0 + 5000)).map((r) => r.id)).toEqual(['a5', 'a6', 'a7']);
  });

  it('claims two backlogs in turn, each oldest-first, whatever their sizes', async () => {
    await insert(Array.from({ length: 300 }, (_, i) => taskOf('org-a', `a${i}`, T0 + i)));
    await insert(Array.from({ length: 40 }, (_, i) => taskOf('org-b', `b${i}`, T0 + 1000 + i)));
    const claimed = await claimEach(40, T0 + 5000);
    const ofA = claimed.filter((r) => r.organization_id === 'org-a').map((r) => r.id);
    const ofB = claimed.filter((r) => r.organization_id === 'org-b').map((r) => r.id);
    // Round-robin: B, which came after 300 of A's, has half the first 40 claims (within one).
    expect(Math.abs(ofA.length - ofB.length)).toBeLessThanOrEqual(2);
    expect(ofA).toEqual(ofA.map((_, i) => `a${i}`));
    expect(ofB).toEqual(ofB.map((_, i) => `b${i}`));
    // A batch claim takes the same order.
    const batch = (await queue.claimPendingBatch('w', T0 + 5000, LEASE_MS, 10)).map((r) => r.id);
    const next = (org: string, from: number) => batch.filter((id) => id.startsWith(org)).map((_, i) => `${org}${from + i}`);
    expect(batch.filter((id) => id.startsWith('b'))).toEqual(next('b', ofB.length));
    expect(batch.filter((id) => id.startsWith('a'))).toEqual(next('a', ofA.length));
    expect(batch.filter((id) => id.startsWith('b')).length).toBe(5);
  });

  it("keeps a retry's back-off, then puts the retry at the back of its own organization's queue only", async () => {
    await insert(Array.from({ length: 5 }, (_, i) => taskOf('org-a', `a${i}`, T0 + i)));
    await insert(Array.from({ length: 200 }, (_, i) => taskOf('org-b', `b${i}`, T0 + 100 + i)));
    const [first] = await claimEach(1, T0 + 1000);
    expect(first!.id).toBe('a0');
    // The run failed; retried 5 s later.
    const requeued = await queue.requeue({ organizationId: 'org-a', taskId: 'a0', fence: Number(first!.fence) }, T0 + 6000, T0 + 1000, { refundAttempt: false });
    expect(requeued?.status).toBe('pending');
    const before = await claimEach(12, T0 + 5999);
    expect(before.map((r) => r.id)).not.toContain('a0');
    expect(before.filter((r) => r.organization_id === 'org-a').map((r) => r.id)).toEqual(['a1', 'a2', 'a3', 'a4']);
    // Due: behind A's queued tasks (all claimed now), ahead of B's backlog.
    const after = await claimEach(2, T0 + 6000);
    expect(after.map((r) => r.id)).toContain('a0');
  });

  it("never gives two of an organization's tasks one rank, even when batches are ranked at once", async () => {
    // Eight batches at once, each of two organizations, half of them naming the second first.
    await Promise.all(
      Array.from({ length: 8 }, (_, b) => {
        const [first, second] = b % 2 ? ['org-b', 'org-a'] : ['org-a', 'org-b'];
        const rows = Array.from({ length: 50 }, (_, i) => taskOf(i < 25 ? first : second, `t${b}-${i}`, T0 + i));
        return tasks.insertNew(rows.map((task) => ({ task, event: eventRow(task, 'task_created', task.created_at, {}) })));
      }),
    );
    for (const org of ['org-a', 'org-b']) {
      const ranks = (await sql<{ fair_rank: number }>`select fair_rank from tasks where organization_id = ${org}`.execute(db.kysely)).rows.map((r) => Number(r.fair_rank));
      expect(new Set(ranks).size).toBe(200);
    }
  });

  it("skips the held-back organizations' new tasks, in their place, but not their child tasks; the usual statement otherwise", async () => {
    await insert(Array.from({ length: 6 }, (_, i) => taskOf('org-a', `a${i}`, T0 + i)));
    await insert([{ ...taskOf('org-a', 'a-child', T0 + 10), parent_execution: 'a-parent' }]);
    await insert(Array.from({ length: 3 }, (_, i) => taskOf('org-b', `b${i}`, T0 + 20 + i)));
    await insert(Array.from({ length: 2 }, (_, i) => taskOf('org-c', `c${i}`, T0 + 30 + i)));
    // SQLite's read-only probe sees the same thing: with A and C held back, B's tasks and A's child are due.
    expect(await queue.nextClaimable(T0 + 1000, false, ['org-a', 'org-c'])).toBe('pending');
    const claimed = (await queue.claimPendingBatch('w', T0 + 1000, LEASE_MS, 10, ['org-a', 'org-c'])).map((r) => r.id);
    expect(claimed.sort()).toEqual(['a-child', 'b0', 'b1', 'b2']);
    if (kind === 'sqlite') expect(await queue.nextClaimable(T0 + 1000, false, ['org-a', 'org-c'])).toBeUndefined();
    expect(await queue.claimPendingBatch('w', T0 + 1000, LEASE_MS, 10, ['org-a', 'org-c'])).toEqual([]);
    // Released, they are claimed by the ranks they were given (A's 1, 2, 3 ...; C's from the frontier then, 2, 3).
    expect((await queue.claimPendingBatch('w', T0 + 1000, LEASE_MS, 4)).map((r) => r.id)).toEqual(['a0', 'a1', 'c0', 'a2']);
  });

  it('walks the queue index in rank order with or without held-back organizations (EXPLAIN)', async () => {
    await insert(Array.from({ length: 50 }, (_, i) => taskOf(`org-${i % 5}`, `t${i}`, T0 + i)));
    if (kind === 'postgres') await sql`analyze tasks`.execute(db.kysely);
    const claims = new PendingClaims(db);
    for (const heldBack of [[], ['org-1', 'org-2']]) {
      for (const q of [claims.claim('w', T0 + 1000, LEASE_MS, 16, heldBack), claims.probe(T0 + 1000, heldBack)]) {
        const plan = await queryPlan(db, kind, q);
        expect(plan, plan).toContain('tasks_fair_idx');
        // No sort step: the index gives the claim's order, so the walk stops at its limit.
        expect(plan, plan).not.toMatch(/TEMP B-TREE|Sort/i);
      }
    }
  });

  it('ranks a lone insert (a caller-chosen id, a schedule) and a continued conversation past the frontier', async () => {
    await insert(Array.from({ length: 100 }, (_, i) => taskOf('org-a', `a${i}`, T0 + i)));
    await tasks.transaction((trx) => tasks.insert(trx, taskOf('org-b', 'b-lone', T0 + 500)));
    expect((await claimEach(3, T0 + 1000)).map((r) => r.id)).toEqual(['a0', 'a1', 'b-lone']);
    const done = { ...taskOf('org-c', 'c-thread', T0), status: 'completed' };
    await tasks.transaction((trx) => tasks.insert(trx, done));
    const continued = await tasks.transaction((trx) => tasks.continueRun(trx, 'org-c', 'c-thread', done, T0 + 600));
    expect(continued?.status).toBe('pending');
    expect((await claimEach(3, T0 + 1000)).map((r) => r.id)).toEqual(['a2', 'a3', 'c-thread']);
  });
});

/**
 * Pending tasks waiting during the upgrade are ranked by their organization's own order (migration 0030), so the
 * backlog is shared at once.
 */
describe.each(TEST_DBS)('migration 0030 on a waiting backlog (%s)', (kind) => {
  it("ranks each organization's pending tasks 1, 2, 3 ... in their order and leaves other tasks unranked", async () => {
    const { db, close } = await openMigratedDb(kind, { before: '0030_fair_queue' });
    try {
      const k = db.kysely as any;
      const row = (org: string, id: string, at: number, status = 'pending') => {
        const { fair_rank: _rank, payload_stored: _aside, ...r } = taskOf(org, id, at);
        return { ...r, status };
      };
      for (let i = 0; i < 50; i++) await k.insertInto('tasks').values(row('org-a', `a${i}`, T0 + i)).execute();
      for (let i = 0; i < 3; i++) await k.insertInto('tasks').values(row('org-b', `b${i}`, T0 + 100 + i)).execute();
      await k.insertInto('tasks').values(row('org-b', 'done', T0, 'completed')).execute();
      await migrate(db);
      const ranks = (await sql<{ id: string; fair_rank: number | null }>`select id, fair_rank from tasks order by id`.execute(db.kysely)).rows;
      const rankOf = new Map(ranks.map((r) => [r.id, r.fair_rank === null ? null : Number(r.fair_rank)]));
      expect([rankOf.get('a0'), rankOf.get('a1'), rankOf.get('a49')]).toEqual([1, 2, 50]);
      expect([rankOf.get('b0'), rankOf.get('b1'), rankOf.get('b2')]).toEqual([1, 2, 3]);
      expect(rankOf.get('done')).toBeNull();
      const claimed = await new TaskQueueRepository(db).claimPendingBatch('w', T0 + 1000, LEASE_MS, 6);
      expect(claimed.map((r) => r.id)).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'b2']);
      // The organizations' last ranks came along: A's next task goes behind its 50, a new organization's at the front.
      const tasks = new TasksRepository(db);
      await tasks.transaction((trx) => tasks.insert(trx, taskOf('org-a', 'a-next', T0 + 900)));
      await tasks.transaction((trx) => tasks.insert(trx, taskOf('org-c', 'c0', T0 + 900)));
      const after = (await sql<{ id: string; fair_rank: number }>`select id, fair_rank from tasks where id in ('a-next', 'c0') order by id`.execute(db.kysely)).rows;
      expect(after.map((r) => [r.id, Number(r.fair_rank)])).toEqual([['a-next', 51], ['c0', 5]]);
    } finally {
      await close();
    }
  });
});

/**
 * The webhook's path: asynchronous calls wait in the task inbox, whose worker moves only its oldest entries. A task
 * of another organization behind a backlog there is moved (and so ranked) at the next free slot, not after the
 * backlog.
 */
describe.each(TEST_DBS)('fair claims through the task inbox (%s)', (kind) => {
  let t: TasksApp;
  const runner = new ScriptedRunner();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  beforeAll(async () => {
    t = await createTasksApp(kind, { runner, env: { AGENTRY_WORKER_CONCURRENCY: '1' } });
  });
  afterAll(async () => {
    release();
    await t?.close();
  });

  it("runs an organization's webhook task among the next ones though 300 of another's wait in the inbox before it", async () => {
    const fields = { model_provider: 'openai', model_name: 'gpt-4o-mini', llm_credentials: { name: 'k', value: 'sk-test' } };
    const agentA = await t.createAgent(fields);
    const agentB = (await t.req('POST', '/v1/agents', { name: 'b-agent', ...fields }, { 'x-api-key': t.keyB })).json().id as string;
    const hookOf = async (agent: string, key: string) => new URL((await t.req('POST', `/v1/agents/${agent}/webhook`, undefined, { 'x-api-key': key })).json().url).pathname;
    const [pathA, pathB] = [await hookOf(agentA, t.keyA), await hookOf(agentB, t.keyB)];
    const accept = async (path: string, prompt: string) => {
      const r = await t.webhooks.inject({ method: 'POST', url: path, payload: JSON.stringify({ prompt }), headers: { 'content-type': 'application/json' } });
      expect(r.statusCode).toBe(200);
    };
    runner.handler = async (req) => {
      if (req.task.input.text === 'slow') await gate;
      return { result: 'ok' };
    };
    await accept(pathA, 'slow');
    for (let i = 0; i < 250 && runner.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(runner.requests).toHaveLength(1);

    for (let i = 0; i < 300; i++) await accept(pathA, `a ${i}`);
    await accept(pathB, 'b');
    release();
    for (let i = 0; i < 500 && runner.requests.length < 6; i++) await new Promise((r) => setTimeout(r, 20));
    const order = runner.requests.map((r) => r.task.input.text);
    expect(order.slice(0, 5)).toContain('b');
    // A's tasks still run oldest-first.
    const ofA = order.filter((x) => x.startsWith('a ')).slice(0, 3);
    expect(ofA).toEqual(['a 0', 'a 1', 'a 2'].slice(0, ofA.length));
  });
});
