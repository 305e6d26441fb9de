import { Writable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Db } from '../../src/db/database.js';
import { createLogger } from '../../src/lib/logger.js';
import { TaskRetention, type TaskRetentionOptions } from '../../src/tasks/task-retention.js';
import { createdBeforeQuery, nextOrganizationQuery, TaskRetentionRepository, type RetentionStore } from '../../src/tasks/task-retention.repository.js';
import { TasksRepository } from '../../src/tasks/tasks.repository.js';
import { PG_ADMIN_URL, TEST_DBS } from '../support/databases.js';
import { createTestApp } from '../support/harness.js';
import { openMigratedDb } from '../support/migrated-db.js';
import { pendingTaskRow } from '../support/task-row.js';
import { queryPlan } from '../support/query-plan.js';
import { ScriptedRunner } from './tasks-harness.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 1, 12);
const OLD = NOW - 40 * DAY;
const RECENT = NOW - 2 * DAY;
/** The tables that hold rows under a task (deleteTaskRecords), with the column naming it. */
const RECORDS = ['task_events', 'task_messages', 'task_runs', 'notification_deliveries', 'session_summaries'] as const;

interface Seed {
  status: string;
  created: number;
  finished?: number | null;
  updated?: number;
  /** The status of the task's one notification delivery. */
  delivery?: string;
}

/** A task with two trace events, a thread message, a run, a notification delivery and its attempt, a thread summary. */
async function seed(db: Db, org: string, id: string, s: Seed): Promise<void> {
  const finished = s.finished === undefined ? (['pending', 'executing', 'paused'].includes(s.status) ? null : s.created + 1000) : s.finished;
  const k = db.kysely;
  const row = { ...pendingTaskRow(id, s.created), organization_id: org, status: s.status, input_text: 'secret input', finished_at: finished, updated_at: s.updated ?? finished ?? s.created };
  await k.insertInto('tasks').values(row).execute();
  const at = s.created;
  await k.insertInto('task_events').values([0, 1].map((i) => ({ organization_id: org, task_id: id, type: i ? 'task_finished' : 'task_created', time: at, data: '{}' }))).execute();
  await k.insertInto('task_messages').values({ organization_id: org, task_id: id, run: 1, role: 'user', content: 'secret input', tool_calls: null, tool_call_id: null, created_at: at }).execute();
  await k.insertInto('task_runs').values({ organization_id: org, task_id: id, run: 1, agent_id: 'agent', created_at: at }).execute();
  const status = s.delivery ?? 'delivered';
  await k
    .insertInto('notification_deliveries')
    .values({ organization_id: org, id: `d-${id}`, task_id: id, agent_id: 'agent', event: 'task.completed', channel: 'webhook', target: '{}', payload: '{}', status, attempts: 1, next_attempt_at: at, give_up_at: NOW + DAY, lease_owner: null, lease_expires_at: null, last_error: null, created_at: at, updated_at: at, delivered_at: null })
    .execute();
  await k.insertInto('notification_attempts').values({ organization_id: org, delivery_id: `d-${id}`, attempt: 1, started_at: at, latency_ms: 5, outcome: 'retry', status_code: 500, error: null }).execute();
  await k.insertInto('session_summaries').values({ organization_id: org, task_id: id, covered_run: 1, summary: 'earlier', updated_at: at }).execute();
}

/** Rows stored for the task, table by table (its own row under `tasks`). */
async function rowsOf(db: Db, org: string, id: string): Promise<Record<string, number>> {
  const k = db.kysely as Kysely<any>;
  const out: Record<string, number> = {};
  const count = async (table: string, col: string, value: string) =>
    Number((await k.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where('organization_id', '=', org).where(col, '=', value).executeTakeFirstOrThrow()).n);
  out.tasks = await count('tasks', 'id', id);
  for (const t of RECORDS) out[t] = await count(t, 'task_id', id);
  out.notification_attempts = await count('notification_attempts', 'delivery_id', `d-${id}`);
  return out;
}

const ALL_ONE = { tasks: 1, task_events: 2, task_messages: 1, task_runs: 1, notification_deliveries: 1, session_summaries: 1, notification_attempts: 1 };
const ALL_ZERO = Object.fromEntries(Object.keys(ALL_ONE).map((k) => [k, 0]));

function retention(db: Db, o: Partial<TaskRetentionOptions> = {}): TaskRetention {
  return new TaskRetention({ repo: new TaskRetentionRepository(db), clock: { now: () => NOW }, log: createLogger('silent'), days: 30, ...o });
}

/** Wraps a store so a test can see, pace or interrupt each delete transaction of a sweep. */
function observed(inner: RetentionStore, onDelete: (ids: string[]) => Promise<void> | void): RetentionStore {
  const wrap = (s: RetentionStore): RetentionStore => ({
    exclusively: (fn) => s.exclusively((x) => fn(wrap(x))),
    organizationAfter: (a) => s.organizationAfter(a),
    createdBefore: (...a) => s.createdBefore(...a),
    deleteExpired: async (org, ids, cutoff, now) => {
      await onDelete(ids);
      return s.deleteExpired(org, ids, cutoff, now);
    },
  });
  return wrap(inner);
}

describe.each(TEST_DBS)('task retention (%s)', (kind) => {
  let db: Db;
  let close: () => Promise<void>;
  beforeEach(async () => {
    ({ db, close } = await openMigratedDb(kind));
  });
  afterEach(() => close());

  it('deletes final tasks that finished before the retention with every record under them, and keeps the rest', async () => {
    const gone = { 'old-completed': 'completed', 'old-failed': 'failed', 'old-error': 'error', 'old-stopped': 'stopped' };
    for (const [id, status] of Object.entries(gone)) await seed(db, 'org-a', id, { status, created: OLD });
    // No finish time: the last update says when it ended.
    await seed(db, 'org-a', 'old-no-finish', { status: 'completed', created: OLD, finished: null, updated: OLD + 1000 });
    await seed(db, 'org-a', 'recent-completed', { status: 'completed', created: RECENT });
    for (const status of ['pending', 'executing', 'paused']) await seed(db, 'org-a', `old-${status}`, { status, created: OLD });
    // A conversation started long ago whose latest run ended recently (a continuation keeps the first created_at).
    await seed(db, 'org-a', 'old-continued', { status: 'completed', created: OLD, finished: RECENT });
    await seed(db, 'org-a', 'old-no-finish-recent-update', { status: 'failed', created: OLD, finished: null, updated: RECENT });
    // Its notification is still being retried: kept until it is delivered or given up.
    await seed(db, 'org-a', 'old-notifying', { status: 'completed', created: OLD, delivery: 'pending' });
    await seed(db, 'org-b', 'recent-b', { status: 'completed', created: RECENT });
    await seed(db, 'org-b', 'old-b', { status: 'stopped', created: OLD });

    const counted: number[] = [];
    const r = await retention(db, { onExpired: (n) => counted.push(n) }).sweep();

    for (const id of [...Object.keys(gone), 'old-no-finish']) expect([id, await rowsOf(db, 'org-a', id)]).toEqual([id, ALL_ZERO]);
    expect(await rowsOf(db, 'org-b', 'old-b')).toEqual(ALL_ZERO);
    const kept = ['recent-completed', 'old-pending', 'old-executing', 'old-paused', 'old-continued', 'old-no-finish-recent-update', 'old-notifying'];
    for (const id of kept) expect([id, await rowsOf(db, 'org-a', id)]).toEqual([id, ALL_ONE]);
    expect(await rowsOf(db, 'org-b', 'recent-b')).toEqual(ALL_ONE);
    expect(r?.deleted).toBe(6);
    expect(counted.reduce((a, b) => a + b, 0)).toBe(6);
    // A second sweep finds nothing more.
    expect((await retention(db).sweep())?.deleted).toBe(0);
  });

  it('deletes in batches, one transaction each, through tasks created in the same millisecond', async () => {
    for (let i = 0; i < 40; i++) await seed(db, 'org-a', `t${String(i).padStart(2, '0')}`, { status: 'completed', created: OLD });
    for (let i = 0; i < 5; i++) await seed(db, 'org-a', `p${i}`, { status: 'pending', created: OLD });
    const batches: number[] = [];
    const store = observed(new TaskRetentionRepository(db), (ids) => void batches.push(ids.length));
    const r = await retention(db, { repo: store, batch: 7 }).sweep();
    expect(r?.deleted).toBe(40);
    expect(r?.batches).toBe(batches.length);
    expect(batches.length).toBe(Math.ceil(45 / 7));
    expect(Math.max(...batches)).toBeLessThanOrEqual(7);
    const left = await db.kysely.selectFrom('tasks').select('id').orderBy('id').execute();
    expect(left.map((x) => x.id)).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
  });

  it('deletes nothing and schedules nothing when retention is off', async () => {
    await seed(db, 'org-a', 'old', { status: 'completed', created: OLD });
    const off = retention(db, { days: 0, firstDelayMs: 0, intervalMs: 5 });
    expect(off.enabled).toBe(false);
    expect(await off.sweep()).toBeUndefined();
    await off.start();
    await new Promise((r) => setTimeout(r, 50));
    await off.stop();
    expect(await rowsOf(db, 'org-a', 'old')).toEqual(ALL_ONE);
  });

  it('stops on shutdown after the batch in flight, and sweeps no more', async () => {
    for (let i = 0; i < 20; i++) await seed(db, 'org-a', `t${String(i).padStart(2, '0')}`, { status: 'completed', created: OLD });
    let calls = 0;
    let stopping: Promise<void> | undefined;
    const store = observed(new TaskRetentionRepository(db), () => {
      if (++calls === 2) stopping = sweeper.stop();
    });
    const sweeper = retention(db, { repo: store, batch: 2, firstDelayMs: 0, intervalMs: 5 });
    await sweeper.start();
    await until(() => stopping !== undefined);
    await stopping;
    const count = async () => (await db.kysely.selectFrom('tasks').select('id').execute()).length;
    expect(await count()).toBe(16);
    await new Promise((r) => setTimeout(r, 60));
    expect(await count()).toBe(16);
    expect(calls).toBe(2);

    // Stopped before its first sweep: none runs.
    const idle = retention(db, { firstDelayMs: 20 });
    await idle.start();
    await idle.stop();
    await new Promise((r) => setTimeout(r, 60));
    expect(await count()).toBe(16);
  });

  it('pauses after each batch in proportion to its time, and a stop cuts the pause short', async () => {
    for (let i = 0; i < 3; i++) await seed(db, 'org-a', `t${i}`, { status: 'completed', created: OLD });
    let batches = 0;
    const store = observed(new TaskRetentionRepository(db), async () => {
      batches++;
      // Makes the batch take >= 20 ms, so its pause (x 500) would be >= 10 s.
      await new Promise((r) => setTimeout(r, 20));
    });
    const sweeper = retention(db, { repo: store, batch: 1, pace: 500, firstDelayMs: 0 });
    await sweeper.start();
    await until(() => batches === 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(batches).toBe(1);
    const t = Date.now();
    await sweeper.stop();
    expect(Date.now() - t).toBeLessThan(1000);
    expect(batches).toBe(1);
    expect((await db.kysely.selectFrom('tasks').select('id').execute()).length).toBe(2);
  });

  it(kind === 'postgres' ? 'lets one process sweep at a time' : 'lets two processes sweep at once, deleting each task once', async () => {
    const other = await openSecondHandle(kind, db);
    try {
      for (let i = 0; i < 10; i++) await seed(db, 'org-a', `t${i}`, { status: 'completed', created: OLD });
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let entered!: () => void;
      const inside = new Promise<void>((r) => (entered = r));
      const first = retention(db, {
        repo: observed(new TaskRetentionRepository(db), async () => {
          entered();
          await gate;
        }),
      }).sweep();
      await inside;
      // The first sweep holds its turn (PostgreSQL: the lock) while the second one runs.
      const second = await retention(other.db).sweep();
      release();
      const firstResult = await first;
      if (kind === 'postgres') {
        expect(second).toBeUndefined();
        expect(firstResult?.deleted).toBe(10);
      } else {
        expect((second?.deleted ?? 0) + (firstResult?.deleted ?? 0)).toBe(10);
      }
      expect(await db.kysely.selectFrom('tasks').select('id').execute()).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('removes the thread summary with a task deleted through the API too (one list of records)', async () => {
    await seed(db, 'org-a', 'x', { status: 'completed', created: RECENT });
    expect((await new TasksRepository(db).delete('org-a', 'x', NOW)).deleted).toBe(true);
    expect(await rowsOf(db, 'org-a', 'x')).toEqual(ALL_ZERO);
  });

  it('finds the candidates through indexes: organizations by seek, tasks by a range of tasks_list_idx', async () => {
    const range = await queryPlan(db, kind, createdBeforeQuery(db.kysely, 'org-a', NOW, { id: 'x', created_at: OLD }, 500).compile());
    expect(range).toContain('tasks_list_idx');
    const orgs = await queryPlan(db, kind, nextOrganizationQuery(db.kysely, 'org-a').compile());
    if (kind === 'sqlite') {
      expect(range).toContain('SEARCH tasks USING INDEX tasks_list_idx (organization_id=? AND created_at');
      expect(orgs).toMatch(/SEARCH tasks USING COVERING INDEX \S+ \(organization_id>\?\)/);
    } else {
      expect(range).not.toMatch(/Seq Scan/);
      expect(orgs).toMatch(/Index Only Scan using \S+ on tasks/);
      expect(orgs).toMatch(/Index Cond: \(organization_id > /);
    }
  });

  it('logs the count and duration of a sweep that deleted something, never task contents', async () => {
    await seed(db, 'org-a', 'old', { status: 'completed', created: OLD });
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _e, cb) => (lines.push(String(chunk)), cb()) });
    await retention(db, { log: createLogger('info', 'json', sink) }).sweep();
    await retention(db, { log: createLogger('info', 'json', sink) }).sweep();
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ tasks_expired: 1, batches: 1, duration_ms: expect.any(Number), retention_days: 30 });
    expect(lines[0]).not.toContain('secret input');
  });

  it('is wired into the container: a task expired by the sweep is gone from the API and counted in /metrics', async () => {
    let offset = 0;
    const runner = new ScriptedRunner();
    const t = await createTestApp(kind, { roles: 'api,worker', runner, startWorker: true, clock: { now: () => Date.now() + offset }, env: { AGENTRY_TASK_RETENTION_DAYS: '1' } });
    try {
      const agent = await t.createAgent({ model_provider: 'openai', llm_credentials: { name: 'k', value: 'sk-x' }, should_stage_before_publish: false });
      const task = (await t.req('POST', `/v1/agents/${agent}/invoke`, { input: { text: 'hello' } })).json();
      expect(task.status).toBe('completed');
      expect((await t.c.taskRetention.sweep())?.deleted).toBe(0);
      offset = 2 * DAY;
      expect((await t.c.taskRetention.sweep())?.deleted).toBe(1);
      expect((await t.req('GET', `/v1/tasks/${task.id}`)).statusCode).toBe(404);
      const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(metrics).toMatch(/^agentry_tasks_expired_total 1$/m);
    } finally {
      await t.close();
    }
  });
});

describe('AGENTRY_TASK_RETENTION_DAYS', () => {
  const base = { AGENTRY_DATA_DIR: '/nonexistent' };
  it('is off unless set, and takes whole or fractional days from 1 on', () => {
    expect(loadConfig(base).taskRetentionDays).toBe(0);
    expect(loadConfig({ ...base, AGENTRY_TASK_RETENTION_DAYS: '' }).taskRetentionDays).toBe(0);
    expect(loadConfig({ ...base, AGENTRY_TASK_RETENTION_DAYS: '0' }).taskRetentionDays).toBe(0);
    expect(loadConfig({ ...base, AGENTRY_TASK_RETENTION_DAYS: '30' }).taskRetentionDays).toBe(30);
    expect(loadConfig({ ...base, AGENTRY_TASK_RETENTION_DAYS: '1.5' }).taskRetentionDays).toBe(1.5);
  });

  it.each(['0.5', '-1', 'abc', 'Infinity', '30d'])('refuses %s at start, naming the variable', (v) => {
    expect(() => loadConfig({ ...base, AGENTRY_TASK_RETENTION_DAYS: v })).toThrow(/Invalid configuration:[\s\S]*AGENTRY_TASK_RETENTION_DAYS/);
  });
});

/** Another handle on the same database, as a second process would have. */
async function openSecondHandle(kind: 'sqlite' | 'postgres', db: Db): Promise<{ db: Db; close(): Promise<void> }> {
  if (kind === 'postgres') {
    const name = (await sql<{ d: string }>`select current_database() as d`.execute(db.kysely)).rows[0]!.d;
    const u = new URL(PG_ADMIN_URL);
    u.pathname = '/' + name;
    const other = openDatabase({ url: u.toString(), sqlitePath: '' });
    return { db: other, close: () => other.close() };
  }
  const file = (await sql<{ file: string }>`select file from pragma_database_list where name = 'main'`.execute(db.kysely)).rows[0]!.file;
  const other = openDatabase({ sqlitePath: file });
  return { db: other, close: () => other.close() };
}

async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 2));
  }
}
