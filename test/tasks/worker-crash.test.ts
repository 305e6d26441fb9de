import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { Task, TaskEvent } from '../../src/tasks/task.types.js';
import type { ScriptedLlmServer } from '../fakes/openai-server.js';
import { TEST_DBS } from '../support/harness.js';
import { openaiAgentFields, type TasksApp } from './tasks-harness.js';
import { crashSuite, killHard, WorkerProcesses } from '../support/processes.js';

/**
 * The crash acceptance: real worker processes (`agentry serve` with AGENTRY_ROLES=worker) on the same database
 * as the in-process API, killed with SIGKILL while they run tasks on the real runtime and a scripted model.
 */
describe.each(TEST_DBS)('worker crash recovery (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  const workers = new WorkerProcesses(() => t, { AGENTRY_WORKER_CONCURRENCY: '8' });

  async function finishedEvents(id: string): Promise<number> {
    const events = (await t.req('GET', `/v1/tasks/${id}/events`)).json() as TaskEvent[];
    return events.filter((e) => e.type === 'task_finished').length;
  }

  crashSuite(kind, workers, (app, model) => ((t = app), (llm = model)));

  it('completes a task once, on another worker, after the one running it is killed (execution_attempts 2)', { timeout: 120_000 }, async () => {
    const agentId = await t.createAgent(openaiAgentFields(llm.baseUrl));
    let calls = 0;
    // The first model call hangs until its worker dies; the next one answers.
    llm.handle(() => (++calls === 1 ? { text: 'never', delayMs: 120_000 } : { text: 'recovered' }));
    const task = (await t.req('POST', `/v1/agents/${agentId}/invoke/async`, { input: { text: 'survive' } })).json() as Task;

    // Two worker processes on the same database; whichever claims the task is killed mid-run, the other takes over.
    const t0 = Date.now();
    workers.spawn();
    workers.spawn();
    await llm.waitForRequests(1, 60_000);
    if (process.env.H3A_DEBUG) console.log('first model call after', Date.now() - t0);
    expect((await t.req('GET', `/v1/tasks/${task.id}`)).json()).toMatchObject({ status: 'executing', execution_attempts: 1 });
    const victim = await workers.holderOf(task.id);
    await killHard(victim);

    const done = await t.waitTask(task.id, (x) => x.status === 'completed', 60_000);
    if (process.env.H3A_DEBUG) console.log('completed after', Date.now() - t0);
    expect(done).toMatchObject({ result: 'recovered', execution_attempts: 2 });
    expect(calls).toBe(2);
    expect(await finishedEvents(task.id)).toBe(1);
    const thread = (await t.req('GET', `/v1/tasks/${task.id}/thread`)).json();
    expect(thread.map((m: { content: string }) => m.content)).toEqual(['survive', 'recovered']);

    // Stop reaches a run on another process: the survivor's only slot is freed, so the next task can run.
    llm.handle((req) => (req.lastUserText === 'endless' ? { text: 'never', delayMs: 120_000 } : { text: 'next' }));
    const endless = (await t.req('POST', `/v1/agents/${agentId}/invoke/async`, { input: { text: 'endless' } })).json() as Task;
    await t.waitTask(endless.id, (x) => x.status === 'executing', 30_000);
    expect((await t.req('POST', `/v1/tasks/${endless.id}/stop`)).json().status).toBe('stopped');
    const next = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'after' } });
    expect(next.json()).toMatchObject({ status: 'completed', result: 'next' });
    expect((await t.req('GET', `/v1/tasks/${endless.id}`)).json()).toMatchObject({ status: 'stopped', result: null });
  });

  it('loses none of 100 asynchronous invocations when a worker is killed in the middle', { timeout: 180_000 }, async () => {
    const agentId = await t.createAgent(openaiAgentFields(llm.baseUrl));
    const runs = new Map<string, number>();
    llm.handle((req) => {
      runs.set(req.lastUserText, (runs.get(req.lastUserText) ?? 0) + 1);
      return { text: `done: ${req.lastUserText}`, delayMs: 150 };
    });
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      const r = await t.req('POST', `/v1/agents/${agentId}/invoke/async`, { id: `bulk-${kind}-${i}`, input: { text: `job ${i}` } });
      expect(r.statusCode).toBe(200);
      ids.push(r.json().id);
    }
    const completed = async () => (await t.req('GET', `/v1/agents/${agentId}/tasks?status=completed&per_page=1`)).json().total as number;

    workers.spawn();
    workers.spawn();
    while ((await completed()) < 25) await new Promise((r) => setTimeout(r, 50));
    // The victim is a worker running tasks now: one process may still be starting when the other has done 25 (a
    // worker claims as many tasks as it has free slots at once), and killing an idle one would test nothing.
    let victim: ChildProcess | undefined;
    while (!victim) {
      const running = await t.c.db.kysely.selectFrom('tasks').select('id').where('agent_id', '=', agentId).where('status', '=', 'executing').executeTakeFirst();
      if (running) victim = await workers.holderOf(running.id).catch(() => undefined);
      else await new Promise((r) => setTimeout(r, 20));
    }
    await killHard(victim);
    expect(await completed()).toBeLessThan(100);

    const end = Date.now() + 120_000;
    while ((await completed()) < 100) {
      if (Date.now() > end) {
        const rows = await t.c.db.kysely.selectFrom('tasks').select(['id', 'status', 'execution_attempts', 'lease_owner', 'lease_expires_at', 'result']).where('agent_id', '=', agentId).where('status', '!=', 'completed').execute();
        throw new Error(`only ${await completed()} of 100 completed; now ${Date.now()}: ${JSON.stringify(rows)}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const attempts: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const task = (await t.req('GET', `/v1/tasks/${ids[i]}`)).json() as Task;
      expect(task).toMatchObject({ status: 'completed', result: `done: job ${i}` });
      expect(await finishedEvents(ids[i])).toBe(1);
      // Two processes shared the queue: a task claimed once reached the model once (never on both workers);
      // one claimed again may have died before or after its first model call.
      const calls = runs.get(`job ${i}`) ?? 0;
      if (task.execution_attempts === 1) expect(calls).toBe(1);
      else expect(calls).toBeGreaterThanOrEqual(1);
      expect(calls).toBeLessThanOrEqual(task.execution_attempts);
      attempts.push(task.execution_attempts);
    }
    // Tasks in flight when the worker died were claimed again by the survivor.
    expect(attempts.some((a) => a >= 2)).toBe(true);
  });
});
