import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { migrate } from '../../src/db/migrate.js';
import { TaskQueueRepository } from '../../src/tasks/task-queue.repository.js';
import { TaskRetentionRepository } from '../../src/tasks/task-retention.repository.js';
import { TasksRepository } from '../../src/tasks/tasks.repository.js';
import type { Task } from '../../src/tasks/task.types.js';
import { TEST_DBS } from '../support/harness.js';
import { openMigratedDb } from '../support/migrated-db.js';
import { pendingTaskRow } from '../support/task-row.js';
import { createTasksApp, ScriptedRunner, type TasksApp } from './tasks-harness.js';

/**
 * Large submissions (megabytes of input or context; bodies may be up to AGENTRY_MAX_BODY_BYTES): shown, run, listed,
 * searched, continued and deleted exactly like small ones, while on libsql the `tasks` row the queue reads and
 * rewrites on every claim, heartbeat, fenced event insert and outcome stays small (task-payloads.repository.ts).
 */
describe.each(TEST_DBS)('large task inputs (%s)', (kind) => {
  let t: TasksApp;
  let agentId: string;
  const runner = new ScriptedRunner();
  const seen = new Map<string, { text: string; context: string | null }>();
  beforeAll(async () => {
    runner.handler = async (req) => {
      seen.set(req.task.id, { text: req.task.input.text, context: req.task.additional_context });
      return { result: `read ${req.task.input.text.length}` };
    };
    t = await createTasksApp(kind, { runner });
    agentId = await t.createAgent({ name: 'big-inputs', should_stage_before_publish: false });
  });
  afterAll(() => t?.close());

  /** `mb` megabytes of text with non-ASCII characters, a marker word near its end and a last line. */
  const big = (marker: string, mb: number) => `${marker} first line\n${'abcdefghi é€ '.repeat(Math.round((mb * 1024 * 1024) / 13))} ${marker}-NEEDLE\nend`;
  const invoke = (body: unknown, suffix = '') => t.req('POST', `/v1/agents/${agentId}/invoke${suffix}`, body);
  const get = async (id: string) => (await t.req('GET', `/v1/tasks/${encodeURIComponent(id)}`)).json() as Task;
  const same = (a: unknown, b: unknown) => a === b; // a 2 MB diff in a failure message helps nobody
  const payloadRows = async (id: string) =>
    Number((await t.c.db.kysely.selectFrom('task_payloads').select((eb) => eb.fn.countAll<number>().as('n')).where('task_id', '=', id).executeTakeFirstOrThrow()).n);
  /** Characters of the submission's texts held in the `tasks` row itself. */
  const inRow = async (id: string) => {
    const r = await sql<{ n: number }>`select length(input_text) + coalesce(length(additional_context), 0) + coalesce(length(expected_output), 0)
      + coalesce(length(instructions_override), 0) + coalesce(length(output_schema), 0) as n from tasks where id = ${id}`.execute(t.c.db.kysely);
    return Number(r.rows[0]!.n);
  };
  const finished = async (id: string) => {
    for (let i = 0; i < 200; i++) {
      const task = await get(id);
      if (task.status === 'completed') return task;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`task ${id} did not complete`);
  };

  it('runs, shows, lists, searches and continues a 2 MB input with 1 MB of context exactly', async () => {
    const id = `big-${kind}-1`;
    const text = big('alpha', 2);
    const context = big('ctx', 1);
    const r = await invoke({ id, input: { text }, additional_context: context, expected_output: 'a summary' });
    expect(r.statusCode).toBe(200);
    const done = r.json() as Task;
    expect(done).toMatchObject({ id, status: 'completed', result: `read ${text.length}`, title: 'alpha first line' });
    expect(same(done.input.text, text) && same(done.additional_context, context)).toBe(true);
    expect(same(seen.get(id)?.text, text) && same(seen.get(id)?.context, context)).toBe(true);

    const shown = await get(id);
    expect(same(shown.input.text, text) && same(shown.additional_context, context)).toBe(true);
    expect(shown).toEqual(done);
    const listed = (await t.req('GET', `/v1/agents/${agentId}/tasks`)).json() as { items: Task[] };
    expect(same(listed.items.find((x) => x.id === id)?.input.text, text)).toBe(true);
    const found = (await t.req('GET', `/v1/tasks?q=alpha-needle`)).json() as { items: Task[]; total: number };
    expect([found.total, found.items.map((x) => x.id)]).toEqual([1, [id]]);

    // A small continuation leaves nothing of the large texts behind; a large one is queued, claimed and run whole.
    const small = await invoke({ id, input: { text: 'short' } });
    expect(small.json()).toMatchObject({ id, status: 'completed', input: { text: 'short' }, additional_context: null, result: 'read 5' });
    expect(await get(id)).toMatchObject({ input: { text: 'short' }, additional_context: null });
    if (kind === 'sqlite') expect(await payloadRows(id)).toBe(0);
    const again = big('beta', 1);
    expect((await invoke({ id, input: { text: again } }, '/async')).statusCode).toBe(200);
    const second = await finished(id);
    expect(second.result).toBe(`read ${again.length}`);
    expect(same(second.input.text, again) && same(seen.get(id)?.text, again)).toBe(true);
    expect((await t.req('GET', `/v1/tasks?q=alpha-needle`)).json().total).toBe(0);
    expect((await t.req('GET', `/v1/tasks?q=beta-needle`)).json().total).toBe(1);
  });

  it.runIf(kind === 'sqlite')('keeps the queue\'s row small on libsql: claims, heartbeats and fence checks never read the large text', async () => {
    const id = `big-${kind}-row`;
    const text = big('gamma', 4);
    expect((await invoke({ id, input: { text }, additional_context: big('ctx', 1) }, '/async')).statusCode).toBe(200);
    // Whatever the moment (queued, running or done), the row holds none of the texts.
    expect(await inRow(id)).toBeLessThan(1024);
    const done = await finished(id);
    expect(await inRow(id)).toBeLessThan(1024);
    expect(same(done.input.text, text)).toBe(true);
    // A small input stays in its row: nothing is read or written aside for it.
    const small = await invoke({ id: `small-${kind}`, input: { text: 'hello' } });
    expect(small.json()).toMatchObject({ status: 'completed', input: { text: 'hello' } });
    expect(await payloadRows(`small-${kind}`)).toBe(0);
  });

  it('deleting a large task, or its retention, leaves nothing of it behind', async () => {
    for (const id of [`big-${kind}-del`, `big-${kind}-old`]) {
      expect((await invoke({ id, input: { text: big(id, 1) }, additional_context: big('ctx', 1) })).json()).toMatchObject({ status: 'completed' });
    }
    expect((await t.req('DELETE', `/v1/tasks/big-${kind}-del`)).statusCode).toBeLessThan(300);
    expect((await t.req('GET', `/v1/tasks/big-${kind}-del`)).statusCode).toBe(404);
    expect(await payloadRows(`big-${kind}-del`)).toBe(0);

    const now = Date.now();
    const swept = await new TaskRetentionRepository(t.c.db).deleteExpired(t.orgA, [`big-${kind}-old`], now + 1000, now);
    expect(swept.deleted).toBe(1);
    expect((await t.req('GET', `/v1/tasks/big-${kind}-old`)).statusCode).toBe(404);
    expect(await payloadRows(`big-${kind}-old`)).toBe(0);
  });
});

/** Migration 0031 on tasks an earlier version stored with their texts in the row. */
describe.each(TEST_DBS)('migration 0031 on large tasks already stored (%s)', (kind) => {
  it('keeps them readable, claimable and deletable as they were', async () => {
    const { db, close } = await openMigratedDb(kind, { before: '0031_task_payloads' });
    try {
      const text = `old ${'é'.repeat(2_000_000)} end`;
      const { payload_stored: _aside, ...old } = { ...pendingTaskRow('old-big', Date.now() - 1000), input_text: text, additional_context: 'ctx' };
      await (db.kysely as any).insertInto('tasks').values(old).execute();
      await migrate(db);
      const tasks = new TasksRepository(db);
      const found = await tasks.find('org', 'old-big');
      expect([found?.payload_stored, found?.input_text === text, found?.additional_context]).toEqual([0, true, 'ctx']);
      const claimed = await new TaskQueueRepository(db).claimPending('w', Date.now(), 60_000);
      expect([claimed?.id, claimed?.input_text === text]).toEqual(['old-big', true]);
      expect((await tasks.delete('org', 'old-big', Date.now())).deleted).toBe(true);
    } finally {
      await close();
    }
  });
});
