import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, ScriptedRunner, type TasksApp } from './tasks-harness.js';
import { SEARCH_WINDOW } from '../../src/tasks/task-text-search.js';
import type { Task } from '../../src/tasks/task.types.js';

/** `q` on the task lists (bounded text scan) and the per-day activity counts behind the console's chart. */
describe.each(TEST_DBS)('task search and activity (%s)', (kind) => {
  let t: TasksApp;
  const runner = new ScriptedRunner();
  let agent: string;
  let other: string;
  beforeAll(async () => {
    runner.handler = async (req) => {
      const text = req.task.input.text;
      if (text.includes('explode')) return { status: 'failed', result: 'the upstream exploded' };
      return { result: `Answer about ${text.toLowerCase().includes('invoice 42') ? 'the Zebra ledger' : 'nothing special'}` };
    };
    t = await createTasksApp(kind, { runner });
    agent = await t.createAgent();
    other = await t.createAgent();
    const run = async (a: string, text: string) => {
      const r = await t.req('POST', `/v1/agents/${a}/invoke`, { input: { text } });
      expect(r.statusCode, r.body).toBe(200);
      return r.json() as Task;
    };
    await run(agent, 'Where is my Invoice 42?');
    await run(agent, 'Reset my password please');
    await run(agent, 'Discount of 100% for 50_items');
    await run(agent, 'please explode now');
    await run(other, 'Another invoice question');
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const search = async (url: string) => {
    const r = await t.req('GET', url);
    expect(r.statusCode, r.body).toBe(200);
    const page = r.json() as { items: Task[]; total: number };
    return { total: page.total, inputs: page.items.map((x) => x.input.text).sort() };
  };

  it('matches input, title and result case-insensitively, combined with the other filters', async () => {
    expect(await search('/v1/tasks?q=INVOICE')).toEqual({ total: 2, inputs: ['Another invoice question', 'Where is my Invoice 42?'] });
    expect(await search(`/v1/tasks?q=invoice&agent_id=${agent}`)).toEqual({ total: 1, inputs: ['Where is my Invoice 42?'] });
    expect(await search(`/v1/agents/${other}/tasks?q=invoice`)).toEqual({ total: 1, inputs: ['Another invoice question'] });
    // The result only: "zebra" appears in no input.
    expect(await search(`/v1/tasks?q=zebra%20ledger&agent_id=${agent}`)).toEqual({ total: 1, inputs: ['Where is my Invoice 42?'] });
    expect(await search('/v1/tasks?q=exploded&status=failed')).toEqual({ total: 1, inputs: ['please explode now'] });
    expect(await search('/v1/tasks?q=exploded&status=completed')).toEqual({ total: 0, inputs: [] });
  });

  it('takes the text literally: % and _ are not wildcards', async () => {
    expect(await search('/v1/tasks?q=100%25')).toEqual({ total: 1, inputs: ['Discount of 100% for 50_items'] });
    expect(await search('/v1/tasks?q=50_i')).toEqual({ total: 1, inputs: ['Discount of 100% for 50_items'] });
    expect((await search('/v1/tasks?q=%25')).total).toBe(1);
    expect((await search('/v1/tasks?q=_')).total).toBe(1);
  });

  it('refuses an empty or oversized q with 422', async () => {
    for (const q of ['%20%20', 'x'.repeat(201)]) {
      const r = await t.req('GET', `/v1/tasks?q=${q}`);
      expect(r.statusCode).toBe(422);
      expect(r.json().detail[0].loc).toEqual(['query', 'q']);
    }
  });

  it('searches only the newest tasks of the window: older matches need a narrower filter', async () => {
    const win = await t.createAgent();
    const now = Date.now();
    // Rows written directly: SEARCH_WINDOW invocations would take minutes. The oldest one matches.
    const rows = Array.from({ length: SEARCH_WINDOW + 1 }, (_, i) => ({
      organization_id: t.orgA,
      id: `win-${String(i).padStart(5, '0')}`,
      agent_id: win,
      agent_version: 'draft',
      status: 'completed',
      source: 'api',
      input_text: i === 0 ? 'needle in the oldest task' : `filler ${i}`,
      input_files: '[]',
      disable_attachment_injection: 0,
      call_depth: 0,
      is_manually_stopped: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
      run: 1,
      execution_attempts: 1,
      max_attempts: 1,
      fence: 1,
      queued_at: now - 1_000_000 + i,
      created_at: now - 1_000_000 + i,
      updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += 500) await t.c.db.kysely.insertInto('tasks').values(rows.slice(i, i + 500)).execute();
    expect((await search(`/v1/tasks?q=needle&agent_id=${win}`)).total).toBe(0);
    expect((await search(`/v1/tasks?q=filler%201&agent_id=${win}`)).total).toBeGreaterThan(0);
    const until = new Date(now - 1_000_000 + 10).toISOString();
    expect(await search(`/v1/tasks?q=needle&agent_id=${win}&to_date=${until}`)).toEqual({ total: 1, inputs: ['needle in the oldest task'] });
  }, 60_000);

  it("counts an agent's tasks and failures per UTC day, empty days included", async () => {
    const r = await t.req('GET', `/v1/agents/${agent}/tasks/activity?days=3`);
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json();
    expect(body.agent_id).toBe(agent);
    expect(body.buckets).toHaveLength(3);
    const today = new Date().toISOString().slice(0, 10);
    expect(body.buckets[2]).toEqual({ date: today, tasks: 4, failed: 1 });
    expect(body.buckets.slice(0, 2).map((b: { tasks: number }) => b.tasks)).toEqual([0, 0]);
    expect((await t.req('GET', `/v1/agents/${other}/tasks/activity`)).json().buckets).toHaveLength(14);
    expect((await t.req('GET', '/v1/agents/nope/tasks/activity')).statusCode).toBe(404);
    expect((await t.req('GET', `/v1/agents/${agent}/tasks/activity?days=91`)).statusCode).toBe(422);
    const otherOrg = await t.app.inject({ method: 'GET', url: `/v1/agents/${agent}/tasks/activity`, headers: { 'x-api-key': t.keyB } });
    expect(otherOrg.statusCode).toBe(404);
  });
});
