import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebhookApp } from '../../src/http/webhooks.app.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, ScriptedRunner, type TasksApp } from './tasks-harness.js';

/**
 * A worker whose slots are all busy (a slow model) leaves the task inbox alone: moving it a few entries per accepted
 * call would cost the accept path its CPU in the default deployment (all roles in one process). The first freed
 * slot settles everything accepted meanwhile, at once, and every task still runs.
 */
describe.each(TEST_DBS)('inbox with a busy worker (%s)', (kind) => {
  let t: TasksApp;
  let webhooks: FastifyInstance;
  const runner = new ScriptedRunner();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));

  beforeAll(async () => {
    t = await createTasksApp(kind, { runner, env: { AGENTRY_WORKER_CONCURRENCY: '1' } });
    webhooks = await buildWebhookApp(t.c);
  });
  afterAll(async () => {
    release();
    await webhooks?.close();
    await t?.close();
  });

  const inboxSize = async () => Number((await sql<{ n: number }>`select count(*) as n from task_inbox`.execute(t.c.db.kysely)).rows[0]!.n);

  it('keeps accepted tasks in the inbox while no slot is free, then runs them all', async () => {
    const agentId = await t.createAgent({ model_provider: 'openai', model_name: 'gpt-4o-mini', llm_credentials: { name: 'k', value: 'sk-test' } });
    const path = new URL((await t.req('POST', `/v1/agents/${agentId}/webhook`)).json().url).pathname;
    const accept = (prompt: string) => webhooks.inject({ method: 'POST', url: path, payload: JSON.stringify({ prompt }), headers: { 'content-type': 'application/json' } });
    runner.handler = async (req) => {
      if (req.task.input.text === 'slow') await gate;
      return { result: `done: ${req.task.input.text}` };
    };

    expect((await accept('slow')).statusCode).toBe(200);
    for (let i = 0; i < 100 && runner.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(runner.requests).toHaveLength(1);

    for (let i = 0; i < 5; i++) expect((await accept(`quick ${i}`)).statusCode).toBe(200);
    // Longer than two of the worker's poll intervals (250 ms): every wake-up found its only slot busy.
    await new Promise((r) => setTimeout(r, 700));
    expect(await inboxSize()).toBe(5);
    expect(runner.requests).toHaveLength(1);

    release();
    for (let i = 0; i < 250; i++) {
      const done = (await t.req('GET', `/v1/tasks?agent_id=${agentId}&status=completed`)).json().total;
      if (done === 6) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await t.req('GET', `/v1/tasks?agent_id=${agentId}&status=completed`)).json().total).toBe(6);
    expect(await inboxSize()).toBe(0);
  });
});
